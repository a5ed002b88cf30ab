//! `kalah db build --mpi` under Open MPI's `mpirun` (only with the `mpi` feature: `cargo test
//! --features mpi --test mpi`, which `.ci/run` runs): 1, 2 and 3 ranks (oversubscribed on a
//! small machine) write the same bytes as `kalah db build`; a job killed in the middle of a
//! level and run again resumes to the same bytes; a job whose ranks get SIGTERM (as Slurm's
//! scancel sends) says what it kept and resumes; a failing rank stops the job with its error.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod temp_dir;
use temp_dir::TempDir;

const KALAH: &str = env!("CARGO_BIN_EXE_kalah");

/// `mpirun -np N kalah db build ... --mpi`: every rank on this machine, none bound to a core
/// (ranks share the cores), shared memory between them, allowed as root (CI runs as root).
fn mpirun(np: usize, dir: &Path, houses: usize, top: u32) -> Command {
    let mut command = Command::new("mpirun");
    command
        .args([
            "--oversubscribe",
            "--bind-to",
            "none",
            "--mca",
            "btl",
            "self,vader",
        ])
        .args([
            "-np",
            &np.to_string(),
            KALAH,
            "db",
            "build",
            "--mpi",
            "--yes",
        ])
        .args([
            "--houses",
            &houses.to_string(),
            "--max-seeds",
            &top.to_string(),
        ])
        .args(["--threads", "1", "--dir"])
        .arg(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(Stdio::null());
    command
}

fn run(mut command: Command) -> Output {
    command.output().expect("mpirun (Open MPI) runs")
}

fn single(dir: &Path, houses: usize, top: u32) {
    let output = run({
        let mut c = Command::new(KALAH);
        c.args(["db", "build", "--yes", "--houses", &houses.to_string()])
            .args(["--max-seeds", &top.to_string(), "--dir"])
            .arg(dir);
        c
    });
    assert!(output.status.success(), "{output:?}");
}

/// The level files of `dir` (by name) with their bytes; nothing else may be there but the
/// lock file.
fn levels(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != ".kalah-build.lock")
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(name.ends_with(".kdb"), "{name} left in {}", dir.display());
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn one_two_and_three_ranks_write_the_single_builds_bytes() {
    let expected = TempDir::new("mpi", "single");
    single(&expected.0, 4, 18);
    for np in 1..=3 {
        let dir = TempDir::new("mpi", &format!("np{np}"));
        let output = run(mpirun(np, &dir.0, 4, 18));
        assert!(output.status.success(), "{output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        // Rank 0 alone prints the report.
        assert_eq!(stdout.matches("levels 0..=18").count(), 1, "{stdout}");
        assert!(stdout.contains(&format!("on {np} MPI rank")), "{stdout}");
        assert!(levels(&dir.0) == levels(&expected.0), "{np} ranks");
    }
}

#[test]
fn a_killed_job_resumes_to_the_same_bytes() {
    let (houses, top, kill_in) = (6, 16, 16);
    let expected = TempDir::new("mpi", "kill-single");
    single(&expected.0, houses, top);
    let dir = TempDir::new("mpi", "kill");
    let mut job = mpirun(2, &dir.0, houses, top)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once a pair file of the top level is on disk and the level is not.
    let killed = in_level(&mut job, &dir.0, houses, kill_in, |job| job.kill().unwrap());
    let _ = job.wait();
    assert!(
        killed,
        "the job ended before it could be killed in level {kill_in}"
    );
    // The killed ranks let go of the build lock as they die: until then a new job is told
    // that the directory is busy (exit code 2), and tried again. A launch that fails before
    // kalah says anything (mpirun tripping over what the killed job left) is tried again too,
    // up to 3 times; any error of kalah's is a failure.
    let start = Instant::now();
    let mut launches_failed = 0;
    let output = loop {
        let output = run(mpirun(2, &dir.0, houses, top));
        let said = String::from_utf8_lossy(&output.stderr).contains("kalah: ");
        let busy = output.status.code() == Some(2) && said;
        let unlaunched = !output.status.success() && !said && launches_failed < 3;
        launches_failed += usize::from(unlaunched);
        if !(busy || unlaunched) || start.elapsed() > Duration::from_secs(60) {
            break output;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        output.status.success(),
        "{:?}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("already built (checksum ok), kept"),
        "{stderr}"
    );
    assert!(levels(&dir.0) == levels(&expected.0));
}

/// Does `stop` to `job` once a pair file of level `level` is in `dir` and the level is not;
/// false if the job ended first (or after five minutes).
fn in_level(
    job: &mut std::process::Child,
    dir: &Path,
    houses: usize,
    level: u32,
    stop: impl FnOnce(&mut std::process::Child),
) -> bool {
    let file = format!("kalah-{houses}-standard-{level:03}.kdb");
    let pairs = format!("{file}.tables-");
    let start = Instant::now();
    loop {
        let paired = std::fs::read_dir(dir).unwrap().flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&pairs) && !name.ends_with(".tmp")
        });
        if paired && !dir.join(&file).exists() {
            stop(job);
            return true;
        }
        if job.try_wait().unwrap().is_some() || start.elapsed() > Duration::from_secs(300) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The processes whose parent is `parent`, from /proc.
fn children(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: the command may hold spaces and parentheses.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if after.split_whitespace().nth(1) == Some(&parent.to_string()) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn ranks_stopped_by_sigterm_say_what_they_kept_and_resume() {
    let (houses, top) = (6, 20);
    let dir = TempDir::new("mpi", "sigterm");
    let mut job = mpirun(2, &dir.0, houses, top)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stopped once a pair file of the top level is on disk (the level takes seconds more).
    let signalled = in_level(&mut job, &dir.0, houses, top, |job| {
        let ranks = children(job.id());
        assert_eq!(ranks.len(), 2, "the ranks of the job");
        for rank in ranks {
            Command::new("kill")
                .args(["-TERM", &rank.to_string()])
                .status()
                .unwrap();
        }
    });
    let output = job.wait_with_output().unwrap();
    assert!(signalled, "the job ended before its top level");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // mpirun returns rank 0's code; rank 0 alone speaks.
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("kalah: "))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].starts_with(
            "kalah: interrupted: the pairs of tables finished in the level under way and every \
             finished level are kept in "
        ),
        "{stderr}"
    );
    assert!(
        !dir.0
            .join(format!("kalah-{houses}-standard-{top:03}.kdb"))
            .exists()
    );
    let output = run(mpirun(2, &dir.0, houses, top));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("already built (checksum ok), kept"),
        "{stderr}"
    );
}

#[test]
fn a_failing_rank_stops_the_job_with_its_error() {
    let dir = TempDir::new("mpi", "fail");
    // A directory (not empty) where rank 1 of 2 writes the pair file of tables 2 and 6 of
    // level 8 (3 houses): rank 1 fails, and rank 0 says so.
    let blocked = dir.0.join("kalah-3-standard-008.kdb.tables-2-6");
    std::fs::create_dir_all(blocked.join("in-the-way")).unwrap();
    let output = run(mpirun(2, &dir.0, 3, 8));
    // mpirun returns rank 0's code: the other ranks end with 0.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("kalah: "))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].starts_with("kalah: cannot build the database: rank 1 of the build: ")
            && said[0].contains("tables-2-6"),
        "{stderr}"
    );
}

#[test]
fn without_mpirun_it_is_a_job_of_one() {
    let expected = TempDir::new("mpi", "alone-single");
    single(&expected.0, 3, 10);
    let dir = TempDir::new("mpi", "alone");
    let output = run({
        let mut c = Command::new(KALAH);
        c.args([
            "db",
            "build",
            "--mpi",
            "--houses",
            "3",
            "--max-seeds",
            "10",
            "--dir",
        ])
        .arg(&dir.0)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(Stdio::null());
        c
    });
    assert!(output.status.success(), "{output:?}");
    assert!(levels(&dir.0) == levels(&expected.0));
}
