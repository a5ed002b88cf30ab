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


def hold(kalah, db, max_level, who):
    """Starts `kalah db warm --hold` on the levels 0..max_level of `db` and returns it, with
    the summary it printed (a dict), once the levels are read and held; exits naming `who`
    and saying why if it fails. The caller ends it (terminate, wait)."""
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
