#!/usr/bin/env python3
"""Refreshes the outputs of the README's tour: runs every `$ kalah ...` line of its console
blocks, in order, as a new user would (HOME an empty directory, so the database home starts
empty, and a fresh working directory), and writes what each printed under it.

    cargo build --release && python3 scripts/readme-tour.py [README.md]

Outputs longer than 24 lines are cut to their first 14 and last 6 lines around a `...` line;
the temporary home directory is written `~`.
Times and rates differ from run to run; the machine is the one that ran the script.
"""

import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAX_LINES = 24


def run_tour(readme: pathlib.Path) -> None:
    binary = ROOT / "target" / "release" / "kalah"
    if not binary.exists():
        sys.exit("build the release binary first: cargo build --release")
    lines = readme.read_text().split("\n")
    with tempfile.TemporaryDirectory(prefix="kalah-tour-") as tmp:
        tmp = pathlib.Path(tmp)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "kalah").symlink_to(binary)
        home = tmp / "home"
        home.mkdir()
        work = tmp / "work"
        work.mkdir()
        env = {
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "COLUMNS": "100",
        }
        out = []
        in_console = False
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("```console"):
                in_console = True
                out.append(line)
                i += 1
                continue
            if in_console and line.startswith("```"):
                in_console = False
                out.append(line)
                i += 1
                continue
            if in_console and line.startswith("$ "):
                out.append(line)
                command = line[2:]
                done = subprocess.run(
                    ["bash", "-c", command + " 2>&1"],
                    cwd=work,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                text = done.stdout.replace(str(home), "~")
                printed = text.rstrip("\n").split("\n") if text.strip() else []
                if len(printed) > MAX_LINES:
                    printed = printed[:14] + ["..."] + printed[-6:]
                out.extend(printed)
                # Skip the old output, up to the next command, blank line + command, or the end.
                i += 1
                while i < len(lines) and not lines[i].startswith("$ ") and not lines[i].startswith("```"):
                    if lines[i] == "" and i + 1 < len(lines) and lines[i + 1].startswith("$ "):
                        break
                    i += 1
                continue
            out.append(line)
            i += 1
    readme.write_text("\n".join(out))


if __name__ == "__main__":
    run_tour(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "README.md")
