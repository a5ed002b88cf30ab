//! Which endgame databases a command reads: `--db DIR`, else the database home, or none with
//! `--no-db`; and `--dir` of the `db` commands, which defaults to the home too.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use kalah::Rules;
use kalah::db::home::HOME_VAR;
use kalah::db::tablebase::{level_files, levels_in};
use kalah::db::{Access, Tablebase};
use serde_json::json;

use super::CliError;

/// The databases of a command that reads them.
#[derive(Args, Debug, Clone, Default)]
pub struct DbChoice {
    /// Endgame database directory (see `kalah db build`): boards with few enough seeds are
    /// looked up instead of searched. [default: the database home ($KALAH_DB, else
    /// $XDG_DATA_HOME/kalah, else ~/.local/share/kalah) when it holds levels for the variant]
    /// Every level from 0 to the highest one there must be present (a gap is an error naming
    /// the missing level; see --max-level).
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,

    /// Read no endgame database, not even the database home's.
    #[arg(long, conflicts_with_all = ["db", "max_level"])]
    pub no_db: bool,

    /// Use only the levels 0..=K of the database (all of which must be there), ignoring any
    /// above: to work below a missing or damaged level on purpose, or with fewer levels.
    #[arg(long, value_name = "K", value_parser = super::args::max_level())]
    pub max_level: Option<u32>,
}

impl DbChoice {
    /// The directory to read for any variant (a bot meets several board sizes): --db if
    /// given; else the database home if it exists; else none.
    /// An error if the home is there but cannot be a directory.
    pub fn dir(&self) -> Result<Option<PathBuf>, CliError> {
        match (&self.db, self.no_db) {
            (_, true) => Ok(None),
            (Some(dir), false) => Ok(Some(dir.clone())),
            (None, false) => match kalah::db::home::home() {
                Some(home) if home_usable(&home)? => Ok(Some(home)),
                _ => Ok(None),
            },
        }
    }

    /// --db, if given, once it is known to be a directory (an error naming it otherwise).
    pub fn given_dir(&self) -> Result<Option<&PathBuf>, CliError> {
        let Some(dir) = &self.db else {
            return Ok(None);
        };
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => Ok(Some(dir)),
            Ok(_) => Err(CliError::input(format!(
                "--db {}: not a directory",
                dir.display()
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(CliError::input(format!(
                "--db {}: no such directory",
                dir.display()
            ))),
            Err(e) => Err(CliError::failure(format!("--db {}: {e}", dir.display()))),
        }
    }

    /// The directory to read for `houses` houses under `rules`: --db if given; else the
    /// database home if it holds a level of that variant; else none.
    pub fn locate(&self, houses: usize, rules: Rules) -> Result<Option<PathBuf>, CliError> {
        if self.no_db {
            return Ok(None);
        }
        if let Some(dir) = self.given_dir()? {
            return Ok(Some(dir.clone()));
        }
        let Some(home) = kalah::db::home::home() else {
            return Ok(None);
        };
        // A home that is not there (or is empty) simply holds no database; one that cannot
        // be a directory (XDG_DATA_HOME names a file, say) is an error, not silence.
        if !home_usable(&home)? {
            return Ok(None);
        }
        match levels_in(&home, houses, rules) {
            Ok(levels) if !levels.is_empty() => Ok(Some(home)),
            Ok(_) => Ok(None),
            Err(e) => Err(CliError::failure(format!(
                "cannot read the database home {}: {e} (--no-db searches without it)",
                home.display()
            ))),
        }
    }

    /// The database for `houses` houses under `rules` (see [`DbChoice::locate`]), its levels
    /// up to --max-level if given, opened for probing. `None` if there is none; an error if
    /// --max-level was given and there is none, or if the levels found cannot be opened.
    pub fn open(&self, houses: usize, rules: Rules) -> Result<Option<Arc<Tablebase>>, CliError> {
        let Some(dir) = self.locate(houses, rules)? else {
            if let Some(k) = self.max_level {
                return Err(CliError::input(format!(
                    "--max-level {k}: {}",
                    self.none_found(houses, rules)
                )));
            }
            return Ok(None);
        };
        Tablebase::open_up_to(&dir, houses, rules, Access::Map, self.max_level)
            .map(|t| Some(Arc::new(t)))
            .map_err(|e| {
                let home = if self.db.is_none() {
                    " (the database home; --no-db searches without it)"
                } else {
                    ""
                };
                CliError::failure(format!(
                    "cannot open the database in {}{home}: {e}",
                    dir.display()
                ))
            })
    }

    /// Every database in the directory ([`DbChoice::dir`]), one per board size and rules with
    /// level files there, each up to --max-level if given, opened and its levels checked now.
    /// An error if --db names a directory without a level file, or if a database found cannot
    /// be opened.
    pub fn open_every(&self) -> Result<Vec<Arc<Tablebase>>, CliError> {
        let Some(dir) = self.dir()? else {
            return Ok(Vec::new());
        };
        let listing = level_files(&dir).map_err(|e| {
            CliError::failure(format!(
                "cannot read the databases in {}: {e}",
                dir.display()
            ))
        })?;
        let mut variants: Vec<(usize, Rules)> =
            listing.iter().map(|f| (f.houses, f.rules)).collect();
        variants.dedup();
        if variants.is_empty() && self.db.is_some() {
            return Err(CliError::input(format!(
                "--db {}: no level files there (`kalah db build` makes them)",
                dir.display()
            )));
        }
        variants
            .into_iter()
            .map(|(houses, rules)| {
                // Every level is opened and checked now, not at the first request.
                let db = Tablebase::open_up_to(&dir, houses, rules, Access::Map, self.max_level)
                    .and_then(|db| {
                        db.slices()?;
                        Ok(db)
                    })
                    .map_err(|e| {
                        CliError::failure(format!(
                            "cannot open the database for {houses} houses, {rules} rules in \
                             {}: {e}",
                            dir.display()
                        ))
                    })?;
                Ok(Arc::new(db))
            })
            .collect()
    }

    /// Why no database is read for `houses` houses under `rules`, for people.
    pub fn none_found(&self, houses: usize, rules: Rules) -> String {
        if self.no_db {
            return "no endgame database (--no-db)".to_owned();
        }
        if houses > kalah::db::MAX_DB_HOUSES {
            return format!(
                "no endgame database (none are built for {houses} houses: 1 to {})",
                kalah::db::MAX_DB_HOUSES
            );
        }
        match kalah::db::home::home() {
            None => format!("no endgame database (no database home: set {HOME_VAR} or HOME)"),
            Some(home) => format!(
                "no endgame database for {houses} houses, {rules} rules in {} (`kalah db build \
                 --houses {houses} --max-seeds K{}` makes one)",
                home.display(),
                rules.option()
            ),
        }
    }
}

/// The line that names the levels read, for people: their directory, or that they were
/// built in memory (a tablebase built in memory has no directory).
pub fn files_line(db: &Tablebase) -> String {
    if db.dir().as_os_str().is_empty() {
        return format!("endgame levels 0..={} built in memory", db.max_level());
    }
    format!(
        "endgame levels 0..={} read from {}",
        db.max_level(),
        db.dir().display()
    )
}

/// The JSON field `db`: `{"dir", "max_level"}` of the levels read (`dir` is `null` for levels
/// built in memory), or `null` for none.
pub fn files_json(db: Option<&Tablebase>) -> serde_json::Value {
    match db {
        Some(db) if db.dir().as_os_str().is_empty() => {
            json!({"dir": null, "max_level": db.max_level()})
        }
        Some(db) => json!({"dir": db.dir().display().to_string(), "max_level": db.max_level()}),
        None => serde_json::Value::Null,
    }
}

/// `--dir` of the `db` commands: the directory given, else the database home (an error if it
/// is there and is not a directory).
pub fn dir_or_home(dir: &Option<PathBuf>) -> Result<PathBuf, CliError> {
    dir_or_home_made(dir)
}

/// [`dir_or_home`] for the commands that read a directory (`db info`, `verify`, `warm`,
/// `upgrade`): a --dir that is not there, or not a directory, is the user's mistake (exit
/// code 2), said as `query --db` says it.
pub fn existing_dir_or_home(dir: &Option<PathBuf>) -> Result<PathBuf, CliError> {
    if let Some(d) = dir {
        if !d.exists() {
            return Err(CliError::input(format!(
                "--dir {}: no such directory",
                d.display()
            )));
        }
        if let Some(what) = kalah::files::not_a_directory(d) {
            return Err(CliError::input(format!(
                "--dir {}: it is {what}, not a directory",
                d.display()
            )));
        }
    }
    dir_or_home_made(dir)
}

fn dir_or_home_made(dir: &Option<PathBuf>) -> Result<PathBuf, CliError> {
    match dir {
        Some(dir) => Ok(dir.clone()),
        None => {
            let home = kalah::db::home::home().ok_or_else(|| {
                CliError::input(format!(
                    "no database home: give --dir DIR, or set {HOME_VAR} or HOME"
                ))
            })?;
            home_usable(&home)?;
            Ok(home)
        }
    }
}

/// Whether the database home `home` is there (a directory): `false` if it is not there at
/// all, an error naming where it came from if it cannot be one (a file, or below a file) or
/// cannot be looked at.
fn home_usable(home: &std::path::Path) -> Result<bool, CliError> {
    let unusable = |why: String| {
        CliError::failure(format!(
            "the database home {} {why} (it comes from {HOME_VAR}, else XDG_DATA_HOME, else \
             HOME; --db DIR, or --dir DIR of the db commands, names another directory)",
            home.display()
        ))
    };
    match std::fs::metadata(home) {
        Ok(meta) if meta.is_dir() => Ok(true),
        Ok(_) => Err(unusable("is not a directory".to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(unusable(format!("cannot be read: {e}"))),
    }
}
