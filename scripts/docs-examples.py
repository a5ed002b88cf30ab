#!/usr/bin/env python3
"""Runs the examples of the README and of docs/*.md and writes, or checks, what they print.

    cargo build --release --locked
    python3 scripts/docs-examples.py [--check] [--heavy] [FILE.md ...]

Every ```console block is a list of `$ COMMAND` lines, each followed by what it prints (stdout
and stderr together). The blocks of a file run in order, as a new user would run them: HOME is
an empty directory (so the database home, ~/.local/share/kalah, starts empty), the working
directory a fresh one, both shared by the blocks of that file and by nothing else, stdin empty,
`kalah` the release binary (target/release/kalah). A block that needs a database or a file gets
it from a command before it in the same block or file, as a reader would make it
(`kalah db build ... > /dev/null` when its output is beside the point). Without --check, each
output that no longer matches is rewritten with what its command prints now (outputs longer
than 24 lines cut to their first 14 and last 6 lines around a `...` line); the others are kept
as written.

--check rewrites nothing: it exits 1, with a unified diff for each block that differs (file
and line named), when an output or a stated size (SIZES below) no longer matches.

Comparing. Both sides are normalised first, so that what differs from run to run and from
machine to machine is not compared: times and durations (`0.028 s`, `11m38s`, `"time_ms":3`),
rates (`1.0 M nodes/s`, `30.9k entries/s`), dates, free disk space, thread counts, process ids
and temporary paths, and the node counts of searches on more than one thread (a parallel
search's count varies). Everything else must match exactly: values, moves, boards, sizes in
bytes, MB or GB, entries, single-threaded node counts. In the file's text, a line `...` stands
for any number of lines and `...` within a line for any text, so an example may show part of
an output (a block that matches is left as it is).

Markers. An HTML comment on the line just before a block's fence (invisible on the page):

    <!-- example: skip (why) -->    never run: commands that need a game server, another
                                    program or a person (`kgp`, `mankalah`, `play` at a
                                    terminal), MPI jobs, builds of many GB; the block is kept
                                    as written.
    <!-- example: heavy (why) -->   run only with --heavy: minutes of work or GBs of disk
                                    (6-house levels 0..24 and up); CI runs the rest. The
                                    heavy blocks of a file share a home and directory of
                                    their own, so what they build changes no other output.
    <!-- example: background -->    the block's last command (a server) runs in the
                                    background until the file's examples are done; its
                                    output is what it printed first (as many lines as the
                                    block shows, within 30 s). The blocks after it talk to it.

Stated sizes. Sizes stated in prose are listed in SIZES below: a file, a phrase that must
appear in it, the figure it states and the build it is the size of. `kalah db build --dry-run`
says what that build would write, without building; the figure must be its exact entries or
bytes rounded to the figure's digits. A phrase no longer in its file is an error too (update
SIZES with the text). Both modes check them; neither rewrites prose.
"""

import argparse
import difflib
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "kalah"
MAX_LINES = 24
HEAD, TAIL = 14, 6
TIMEOUT = 3600

FENCE = re.compile(r"^(\s*)```console\s*$")
MARKER = re.compile(r"^\s*<!--\s*example:\s*(skip|heavy|background)\b.*-->\s*$")
BACKGROUND_WAIT = 30  # seconds for a background command's first lines

# Sizes stated in prose: (file, a phrase of it, the figure the phrase states, the build whose
# size it is, as `kalah db build` options). `kalah db build --dry-run` gives the build's exact
# entries and bytes; the figure must be them rounded to the figure's digits (prefixes k, M, G,
# T are powers of 1000).
SIZES = [
    ("README.md", "the 4-house levels up to 24 take 6.7 MB", "6.7 MB", "--houses 4 --max-seeds 24"),
    ("README.md", "the 6-house levels up to 24 0.80 GB", "0.80 GB", "--houses 6 --max-seeds 24"),
    ("README.md", "up to 28 3.6 GB", "3.6 GB", "--houses 6 --max-seeds 28"),
    ("README.md", "up to 32 14.2 GB", "14.2 GB", "--houses 6 --max-seeds 32"),
    ("README.md", "| `--houses 6 --max-seeds 24` | 0.80 GB |", "0.80 GB",
     "--houses 6 --max-seeds 24"),
    ("README.md", "| `--max-seeds 28` | 3.6 GB |", "3.6 GB", "--houses 6 --max-seeds 28"),
    ("README.md", "| `--max-seeds 32` | 14.2 GB |", "14.2 GB", "--houses 6 --max-seeds 32"),
    ("README.md", "| 2.4 GB, 2.6 GB |", "2.4 GB", "--houses 7 --max-seeds 22"),
    ("README.md", "| 2.4 GB, 2.6 GB |", "2.6 GB", "--houses 8 --max-seeds 19"),
    ("docs/commands.md", "levels up to 24 take 0.80 GB", "0.80 GB", "--houses 6 --max-seeds 24"),
    ("docs/commands.md", "up to 28 3.6 GB and", "3.6 GB", "--houses 6 --max-seeds 28"),
    ("docs/commands.md", "and up to 32 14.2 GB", "14.2 GB", "--houses 6 --max-seeds 32"),
    ("docs/commands.md", "(21.1 G entries, 14.2 GB)", "21.1 G entries",
     "--houses 6 --max-seeds 32"),
    ("docs/commands.md", "(21.1 G entries, 14.2 GB)", "14.2 GB", "--houses 6 --max-seeds 32"),
    ("docs/commands.md", "# 1.25 G entries, 0.80 GB", "1.25 G entries",
     "--houses 6 --max-seeds 24"),
    ("docs/commands.md", "# 1.25 G entries, 0.80 GB", "0.80 GB", "--houses 6 --max-seeds 24"),
    ("docs/commands.md", "--max-seeds 28 --dir db --yes > /dev/null 2>&1 # 3.6 GB", "3.6 GB",
     "--houses 6 --max-seeds 28"),
    ("docs/commands.md", "(2.42 GB and 2.56 GB of disk", "2.42 GB", "--houses 7 --max-seeds 22"),
    ("docs/commands.md", "(2.42 GB and 2.56 GB of disk", "2.56 GB", "--houses 8 --max-seeds 19"),
    ("docs/bots.md", "| 7 houses, 0..22 | 3.79 G | 2.42 GB |", "3.79 G",
     "--houses 7 --max-seeds 22"),
    ("docs/bots.md", "| 7 houses, 0..22 | 3.79 G | 2.42 GB |", "2.42 GB",
     "--houses 7 --max-seeds 22"),
    ("docs/bots.md", "| 8 houses, 0..19 | 4.06 G | 2.56 GB |", "4.06 G",
     "--houses 8 --max-seeds 19"),
    ("docs/bots.md", "| 8 houses, 0..19 | 4.06 G | 2.56 GB |", "2.56 GB",
     "--houses 8 --max-seeds 19"),
    ("docs/bots.md", "a laptop, 2.4 GB and 2.6 GB of disk", "2.4 GB", "--houses 7 --max-seeds 22"),
    ("docs/bots.md", "a laptop, 2.4 GB and 2.6 GB of disk", "2.6 GB", "--houses 8 --max-seeds 19"),
    ("docs/cluster.md", "| 24 | 0.42 G | 0.27 GB | 0.80 GB |", "0.80 GB",
     "--houses 6 --max-seeds 24"),
    ("docs/cluster.md", "| 28 | 1.68 G | 1.07 GB | 3.58 GB |", "3.58 GB",
     "--houses 6 --max-seeds 28"),
    ("docs/cluster.md", "| 32 | 5.75 G | 4.40 GB | 14.22 GB |", "14.22 GB",
     "--houses 6 --max-seeds 32"),
    ("docs/cluster.md", "| 33 | 7.67 G | 5.87 GB | 20.10 GB |", "20.10 GB",
     "--houses 6 --max-seeds 33"),
    ("docs/cluster.md", "| 34 | 10.15 G | 7.77 GB | 27.87 GB |", "27.87 GB",
     "--houses 6 --max-seeds 34"),
    ("docs/cluster.md", "| 35 | 13.34 G | 10.21 GB | 38.08 GB |", "38.08 GB",
     "--houses 6 --max-seeds 35"),
    ("docs/cluster.md", "| 36 | 17.42 G | 13.33 GB | 51.41 GB |", "51.41 GB",
     "--houses 6 --max-seeds 36"),
    ("docs/cluster.md", "| 37 | 22.59 G | 17.30 GB | 68.71 GB |", "68.71 GB",
     "--houses 6 --max-seeds 37"),
    ("docs/cluster.md", "| 38 | 29.13 G | 22.31 GB | 91.02 GB |", "91.02 GB",
     "--houses 6 --max-seeds 38"),
    ("docs/cluster.md", "| 39 | 37.35 G | 28.60 GB | 119.61 GB |", "119.61 GB",
     "--houses 6 --max-seeds 39"),
    ("docs/cluster.md", "| 40 | 47.62 G | 36.46 GB | 156.08 GB |", "156.08 GB",
     "--houses 6 --max-seeds 40"),
    ("docs/cluster.md", "(standard, 1.25 G entries, 0.80 GB)", "1.25 G entries",
     "--houses 6 --max-seeds 24"),
    ("docs/cluster.md", "(standard, 1.25 G entries, 0.80 GB)", "0.80 GB",
     "--houses 6 --max-seeds 24"),
    ("src/cli/db/build.rs", "levels up to 24 take 0.80 GB", "0.80 GB", "--houses 6 --max-seeds 24"),
    ("src/cli/db/build.rs", "up to 28 3.6 GB", "3.6 GB", "--houses 6 --max-seeds 28"),
    ("src/cli/db/build.rs", "up to 32 14.2 GB", "14.2 GB", "--houses 6 --max-seeds 32"),
    ("scripts/build-deep.sh", "14.2 GB of disk", "14.2 GB", "--houses 6 --max-seeds 32"),
]

PREFIX = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

# What varies from run to run or machine to machine, in the order applied.
NORMALISE = [
    (re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?(?: UTC)?)?"), "<DATE>"),
    (re.compile(r'"(\w*(?:_ms|_us|_per_second))":\s*[\d.eE+-]+'), r'"\1":<T>'),
    (re.compile(r'"threads":\s*\d+'), '"threads":<N>'),
    (re.compile(r"\d[\d.,]*\s?[kMG]?(?: ?[a-z]+)?/s\b"), "<RATE>"),
    (re.compile(r"\b\d+h\d+m(?:\d+s)?|\b\d+m\d+(?:\.\d+)?s\b"), "<T>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|µs|us|ns|min|m|h)\b"), "<T>"),
    (re.compile(r"\b\d+(?:\.\d+)? [kMGT]?i?B free\b"), "<FREE> free"),
    (re.compile(r"\b\d+ threads?\b"), "<N> threads"),
    (re.compile(r"\b(pid|process) \d+"), r"\1 <PID>"),
    (re.compile(r"\.\d+-\d+\.tmp\b"), ".<PID>.tmp"),
    (re.compile(r"/tmp/[^\s'\",)]+"), "<TMP>"),
]
PARALLEL = re.compile(r'\b(?:[2-9]|\d\d+) threads\b|"threads":\s*(?:[2-9]|\d\d+)\b')
NODES = [(re.compile(r"\b\d+ nodes\b"), "<N> nodes"), (re.compile(r'"nodes":\s*\d+'), '"nodes":<N>')]


def normalise(line: str) -> str:
    if PARALLEL.search(line):
        for pattern, replacement in NODES:
            line = pattern.sub(replacement, line)
    for pattern, replacement in NORMALISE:
        line = pattern.sub(replacement, line)
    # Columns padded to the width of a varying figure.
    return re.sub(r"(?<=\S) +(?=<[A-Z]+>)", " ", line).rstrip()


def line_matches(expected: str, actual: str) -> bool:
    """`...` in an expected line stands for any text."""
    expected, actual = normalise(expected), normalise(actual)
    if "..." not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def output_matches(expected: list, actual: list) -> bool:
    """A line `...` of the expected output stands for any number of lines."""
    memo = {}

    def match(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            result = j == len(actual)
        elif expected[i].strip() == "...":
            result = any(match(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            result = j < len(actual) and line_matches(expected[i], actual[j]) and match(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * (len(expected) + len(actual)) + 100))
    return match(0, 0)


def cut(lines: list) -> list:
    return lines[:HEAD] + ["..."] + lines[-TAIL:] if len(lines) > MAX_LINES else lines


class Block:
    """A console block: its fence's line index, indentation, marker and commands."""

    def __init__(self, start: int, end: int, indent: str, marker, lines: list):
        self.start, self.end, self.indent, self.marker = start, end, indent, marker
        self.commands = []  # [command, [expected output lines]]
        for line in lines:
            text = line[len(indent):] if line.startswith(indent) else line.lstrip()
            if text.startswith("$ "):
                self.commands.append([text[2:], []])
            elif self.commands:
                self.commands[-1][1].append(text)
            elif text.strip():
                raise ValueError(f"output before the first command: {text!r}")
        for command in self.commands:  # a blank line before the next command separates them
            while command[1] and not command[1][-1].strip():
                command[1].pop()

    def render(self, outputs: list) -> list:
        lines = []
        for n, (command, output) in enumerate(zip(self.commands, outputs)):
            lines.append("$ " + command[0])
            lines.extend(output)
            if output and n + 1 < len(self.commands):
                lines.append("")
        return [(self.indent + line).rstrip() if line else "" for line in lines]


def blocks_of(lines: list) -> list:
    blocks = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent = fence.group(1)
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        blocks.append(Block(i, end, indent, marker.group(1) if marker else None, lines[i + 1:end]))
        i = end + 1
    return blocks


class Sandbox:
    """An empty home, a fresh working directory and `kalah` on the PATH."""

    def __init__(self, tmp: pathlib.Path):
        self.home, self.work, bin_dir = tmp / "home", tmp / "work", tmp / "bin"
        for directory in (self.home, self.work, bin_dir):
            directory.mkdir(parents=True)
        (bin_dir / "kalah").symlink_to(BINARY)
        self.env = {
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "COLUMNS": "100",
            "KALAH_PROGRESS_EVERY": "0",  # no progress lines: their number depends on the time taken
        }

    def start(self, command: str, lines: int) -> tuple:
        """Starts `command` in the background (a session of its own); returns it and its first
        `lines` lines of output (fewer if it prints less within BACKGROUND_WAIT seconds)."""
        process = subprocess.Popen(
            ["bash", "-c", "exec " + command],
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        printed = []
        reader = threading.Thread(target=lambda: printed.extend(iter(process.stdout.readline, "")), daemon=True)
        reader.start()
        deadline = time.monotonic() + BACKGROUND_WAIT
        while len(printed) < max(lines, 1) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        time.sleep(0.1)
        return process, self.lines_of("".join(printed[:max(lines, 1)]))

    @staticmethod
    def stop(process: subprocess.Popen) -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def run(self, command: str) -> list:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT,
        )
        return self.lines_of(done.stdout)

    def lines_of(self, text: str) -> list:
        """What a command printed, as the reader sees it: its lines, the working directory's
        paths relative and the home written `~`."""
        text = text.replace(str(self.work) + "/", "").replace(str(self.home), "~")
        return text.rstrip("\n").split("\n") if text.strip() else []


def run_file(path: pathlib.Path, check: bool, heavy: bool) -> bool:
    """Runs the examples of one file; returns whether all matched (rewriting them if not check)."""
    lines = path.read_text().split("\n")
    blocks = blocks_of(lines)
    if not blocks:
        return True
    name = path.relative_to(ROOT)
    ok = True
    replacements = []
    servers = []
    with tempfile.TemporaryDirectory(prefix="kalah-examples-") as tmp:
        # The heavy blocks run in a home and directory of their own, so that what they build
        # (levels in the home) changes nothing that the other blocks print.
        light, heavy_box = Sandbox(pathlib.Path(tmp) / "light"), Sandbox(pathlib.Path(tmp) / "heavy")
        try:
            for block in blocks:
                if block.marker == "skip" or (block.marker == "heavy" and not heavy):
                    continue
                sandbox = heavy_box if block.marker == "heavy" else light
                ok = run_block(name, lines, block, sandbox, servers, check, replacements) and ok
        finally:
            for server in servers:
                Sandbox.stop(server)
    if replacements and not check:
        for start, end, new in reversed(replacements):
            lines[start:end] = new
        path.write_text("\n".join(lines))
        print(f"{name}: rewritten", file=sys.stderr)
    return ok


def run_block(name, lines: list, block: Block, sandbox: Sandbox, servers: list, check: bool, replacements: list) -> bool:
    """Runs one block; returns whether its outputs match (noting the block's new text if not)."""
    started = time.monotonic()
    outputs = []
    for n, (command, expected) in enumerate(block.commands):
        if block.marker == "background" and n + 1 == len(block.commands):
            server, output = sandbox.start(command, len(expected))
            servers.append(server)
            outputs.append(output)
        else:
            outputs.append(sandbox.run(command))
    seconds = time.monotonic() - started
    matched = [output_matches(expected, actual) for (_, expected), actual in zip(block.commands, outputs)]
    if all(matched):
        print(f"{name}:{block.start + 1}: ok ({seconds:.1f} s)", file=sys.stderr)
        return True
    # The outputs that still match are kept as written (their times, their `...`).
    new = block.render([
        expected if same else cut(actual)
        for (_, expected), actual, same in zip(block.commands, outputs, matched)
    ])
    old = lines[block.start + 1:block.end]
    if check:
        diff = difflib.unified_diff(
            [normalise(line) for line in old],
            [normalise(line) for line in new],
            f"{name}:{block.start + 2} (as written, normalised)",
            f"{name}:{block.start + 2} (as run now, normalised)",
            lineterm="",
        )
        print("\n".join(diff))
    print(f"{name}:{block.start + 1}: differs ({seconds:.1f} s)", file=sys.stderr)
    replacements.append((block.start + 1, block.end, new))
    return False


def size_matches(stated: str, output: str) -> bool:
    """Whether `stated` (`0.78 GB`, `6.5 MB` in bytes; `3.79 G entries` or `3.79 G` in entries)
    is what the dry run's output (`N entries, B bytes`) says, rounded to its digits."""
    found = re.search(r"(\d+) entries, (\d+) bytes", output)
    figure = re.fullmatch(r"(\d+(?:\.(\d+))?) ?([kMGT]?) ?(B|entries)?", stated)
    if not found or not figure:
        return False
    number, decimals, prefix, unit = figure.groups()
    actual = int(found.group(2) if unit == "B" else found.group(1)) / PREFIX[prefix]
    return f"{actual:.{len(decimals or '')}f}" == number


def check_sizes(files: list) -> bool:
    """The sizes stated in prose against what `kalah db build --dry-run` says."""
    ok = True
    outputs = {}
    with tempfile.TemporaryDirectory(prefix="kalah-sizes-") as tmp:
        sandbox = Sandbox(pathlib.Path(tmp))
        for file, phrase, stated, build in SIZES:
            path = ROOT / file
            if path not in files and path.suffix == ".md":  # files not asked for
                continue
            text = " ".join(path.read_text().split())
            if phrase not in text or stated not in phrase:
                print(f"{file}: does not state {phrase!r} (update SIZES in scripts/docs-examples.py)")
                ok = False
                continue
            command = f"kalah db build --dry-run {build}"
            if command not in outputs:
                outputs[command] = "\n".join(sandbox.run(command))
            if not size_matches(stated, outputs[command]):
                print(f"{file}: states {stated} in {phrase!r}, but `{command}` says:\n{outputs[command]}")
                ok = False
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 on a mismatch")
    parser.add_argument("--heavy", action="store_true", help="run the blocks marked heavy too")
    parser.add_argument("files", nargs="*", type=pathlib.Path, help="default: README.md, docs/*.md")
    args = parser.parse_args()
    if not BINARY.exists():
        print(f"{BINARY} is missing: cargo build --release --locked", file=sys.stderr)
        return 2
    files = [f.resolve() for f in args.files] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    started = time.monotonic()
    ok = all([run_file(f, args.check, args.heavy) for f in files])
    ok = check_sizes(files) and ok
    print(f"{'all examples match' if ok else 'examples differ'} ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
