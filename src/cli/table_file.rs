//! `--table-file`: the transposition table of a long solve or campaign kept on disk. It is
//! loaded at the start, saved every few minutes while the search runs and saved again at its
//! end, so work that was stopped resumes with what it had proven.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use kalah::search::table_file::{TableOrigin, read_header};
use kalah::{Algorithm, Rules, Solver, SolverConfig};

use super::CliError;

/// The table file options of `solve`, `analyze` and `prove`.
#[derive(Args, Debug, Clone, Default)]
pub struct TableFileArgs {
    /// Keep the transposition table in FILE. If FILE exists it is loaded first: it must be a
    /// table of the same houses and rules, and its size sets the table's. While the search runs
    /// (a solve, or a campaign's tests) the table is saved to FILE every --save-every minutes,
    /// and once more at the end; Ctrl-C saves it before the process ends. Work stopped in any
    /// way (Ctrl-C, a crash, a reboot) and run again with the same FILE resumes with all it had
    /// proven by the last save. The bounds hold for every position of the same houses and
    /// rules, so one FILE also serves other positions (and every test of a campaign). With
    /// `prove --certify`, the table of the checks: a file only checks on as many levels or
    /// fewer filled, never a campaign's (the header says whose searches filled it).
    #[arg(long, value_name = "FILE")]
    pub table_file: Option<PathBuf>,

    /// Minutes between saves of --table-file while the search runs, 0.01 to 1440 (more often
    /// than every 0.6 s a search would do little but save; a day apart is as good as never).
    #[arg(
        long,
        value_name = "MIN",
        default_value = "10",
        value_parser = super::args::minutes(0.01, 1440.0),
        allow_negative_numbers = true,
        requires = "table_file"
    )]
    pub save_every: Duration,

    /// The error of the last save, if it failed (shared by the clones of these options).
    #[arg(skip)]
    failed: Arc<Mutex<Option<String>>>,
}

impl TableFileArgs {
    /// Sizes `config`'s table as the existing file's, checking its variant and that a solver of
    /// origin `user` may load it ([`TableOrigin::serves`]: a certificate's checks never load a
    /// campaign's table); `tt_mb` is --tt-mb if given, which must then agree. Only MTD(f) has a
    /// table to keep. The file must be a regular file or nothing, in a directory where it can
    /// be written: else the solve would hang on it, or end without saving what it proved.
    pub fn fit(
        &self,
        config: &mut SolverConfig,
        houses: usize,
        rules: Rules,
        tt_mb: Option<usize>,
        user: TableOrigin,
    ) -> Result<(), CliError> {
        if self.table_file.is_some() && config.algorithm != Algorithm::Mtdf {
            return Err(CliError::input(format!(
                "--table-file keeps the transposition table of --algorithm mtdf; {} has none",
                config.algorithm
            )));
        }
        if let Some(path) = &self.table_file {
            if let Some(what) = kalah::files::not_regular(path) {
                return Err(CliError::input(format!(
                    "--table-file {}: it is {what}, not a regular file",
                    kalah::text::quote(&path.to_string_lossy())
                )));
            }
            kalah::files::check_writable(path).map_err(|e| {
                CliError::input(format!(
                    "--table-file {} cannot be written: {e}",
                    path.display()
                ))
            })?;
        }
        let Some(path) = self.existing() else {
            return Ok(());
        };
        let header =
            read_header(path).map_err(|e| CliError::failure(format!("--table-file: {e}")))?;
        header
            .check_variant(houses, rules, path)
            .and_then(|()| header.check_origin(user, path))
            .map_err(|e| CliError::input(format!("--table-file: {e}")))?;
        match tt_mb {
            Some(mib) if mib != header.mib() => Err(CliError::input(format!(
                "--table-file: {} holds a {} MiB table, but --tt-mb asks for {mib}",
                path.display(),
                header.mib()
            ))),
            _ => {
                config.tt_mib = header.mib();
                Ok(())
            }
        }
    }

    fn existing(&self) -> Option<&PathBuf> {
        self.table_file.as_ref().filter(|p| p.exists())
    }

    /// Loads the file into `solver` if it exists; returns a line saying so.
    pub fn load(&self, solver: &Solver) -> Result<Option<String>, CliError> {
        let Some(path) = self.existing() else {
            return Ok(None);
        };
        let started = Instant::now();
        solver
            .load_table(path)
            .map_err(|e| CliError::failure(format!("--table-file: {e}")))?;
        Ok(Some(format!(
            "table loaded from {} ({} MiB) in {:.1} s",
            path.display(),
            solver.config().tt_mib,
            started.elapsed().as_secs_f64()
        )))
    }

    /// Saves `solver`'s table ([`TableFileArgs::save`]) if there is a file and --save-every
    /// has passed since `last`, which then restarts; returns the line saying how it went.
    pub fn save_if_due(&self, solver: &Solver, last: &mut Instant) -> Option<String> {
        if self.period().is_none_or(|period| last.elapsed() < period) {
            return None;
        }
        let line = self.save(solver);
        *last = Instant::now();
        line
    }

    /// On a thread of `scope`, saves the table of `solver()` (when it gives one) every
    /// --save-every minutes until `done` is set; without a file, nothing. An error if the
    /// thread cannot be started.
    pub fn save_while<'scope, 'env, S, F>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        done: &'env AtomicBool,
        solver: F,
    ) -> Result<(), CliError>
    where
        S: std::ops::Deref<Target = Solver>,
        F: Fn() -> Option<S> + Send + 'env,
    {
        if self.period().is_none() {
            return Ok(());
        }
        super::threads::spawn_scoped(scope, "table-saver", move || {
            let mut saved = Instant::now();
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                if done.load(Ordering::Relaxed) {
                    break;
                }
                if let Some(line) = solver().and_then(|s| self.save_if_due(&s, &mut saved)) {
                    eprintln!("{line}");
                }
            }
        })
        .map(drop)
    }

    /// The time between saves, if there is a file.
    pub fn period(&self) -> Option<Duration> {
        self.table_file.as_ref().map(|_| self.save_every)
    }

    /// Saves `solver`'s table to the file, if there is one; returns a line saying how it went.
    /// A failed save is a warning while the solve goes on; if the last save fails,
    /// [`TableFileArgs::check_saved`] makes it the command's error.
    pub fn save(&self, solver: &Solver) -> Option<String> {
        let path = self.table_file.as_ref()?;
        let started = Instant::now();
        let saved = solver.save_table(path);
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        *failed = saved.as_ref().err().map(ToString::to_string);
        Some(match saved {
            Ok(()) => format!(
                "table saved to {} ({} MiB) in {:.1} s",
                path.display(),
                solver.config().tt_mib,
                started.elapsed().as_secs_f64()
            ),
            Err(e) => format!("warning: the table was not saved to --table-file: {e}"),
        })
    }

    /// An error (exit code 1) if the last save failed: what was proven since the save before
    /// it is not on disk.
    pub fn check_saved(&self) -> Result<(), CliError> {
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        match (&*failed, &self.table_file) {
            (Some(e), Some(path)) => Err(CliError::failure(format!(
                "--table-file {} was not saved at the end: {e}",
                path.display()
            ))),
            _ => Ok(()),
        }
    }
}
