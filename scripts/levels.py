"""The database the benchmark scripts read, and a holder that keeps its levels mapped."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def home():
    """The database home, as kalah finds it: $KALAH_DB, else $XDG_DATA_HOME/kalah."""
    return os.environ.get("KALAH_DB") or str(
        Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "kalah"
    )


def others():
    """Other kalah processes that keep memory while a benchmark runs, as (pid, what) pairs:
    holders of levels (`db warm --hold`) and campaigns (`prove`, running or stopped, which keep
    their table and map the levels). Either can make the page cache give back the levels being
    measured, which then come back in 4 KiB pieces: the subtrees on 0..32 once ran 2-5 times
    slower so (docs/performance.md)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in args[1:4]]
        if words[:2] == ["db", "warm"] and b"--hold" in args:
            found.append((int(entry.name), "holds levels (db warm --hold)"))
        elif words[:1] == ["prove"] and b"--status" not in args:
            found.append((int(entry.name), "runs a campaign (prove)"))
    return found


def hold(kalah, db, max_level, who):
    """Starts `kalah db warm --hold` on the levels 0..max_level of `db` and returns it, with
    the summary it printed (a dict), once the levels are read and held; exits naming `who`
    and saying why if it fails. The caller ends it (terminate, wait)."""
    for pid, what in others():
        print(
            f"{who}: warning: process {pid} {what}; stop it before measuring, or the levels "
            "measured may be pushed out of the page cache",
            file=sys.stderr,
        )
    cmd = [kalah, "db", "warm", "--dir", db, "--max-level", str(max_level), "--hold"]
    # Its stderr goes to a file, read only if it fails: a pipe nobody reads could fill.
    errors = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd + ["--json"], stdout=subprocess.PIPE, stderr=errors, text=True)
    said = proc.stdout.readline()
    if not said:
        proc.wait()
        errors.seek(0)
        why = errors.read().strip()
        sys.exit(
            f"{who}: `{' '.join(cmd)}` failed (exit {proc.returncode})" + (f": {why}" if why else "")
        )
    return proc, json.loads(said)
