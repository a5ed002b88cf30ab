#!/usr/bin/env python3
"""Tries the release binary as an adversarial user would, and counts what goes wrong.

Usage: cargo build --release && python3 scripts/trust-check.py [--flips N] [--dir DIR]

Uses `target/release/kalah` (build it first: the peak memory printed is that of the runs of
kalah alone), builds databases of 4 houses (levels 0..16) and 6 houses (0..14)
under DIR (default /tmp/kalah-trust-check, emptied first), and runs:

- single-byte flips at random offsets of random level files (header, entries, padding, block
  table), each followed by every probing command (query, analyze --db, solve --db, query -,
  db info, db verify) on positions whose answers were recorded on the intact files;
- truncations, a missing middle level, a FIFO and a directory in a level's place;
- two builds into one directory at once, two games recording into one file at once;
- out-of-range values of every class of numeric option;
- /dev/zero and FIFOs on every input (query -, replay, play --resume, play's prompt, learner
  files, --table-file, kgp and mankalah logs, mankalah's stdin);
- hostile lines from a fake KGP server, hostile ManKalah engine messages;
- forged ledgers in a database directory (well-formed facts that agree with each other but not
  with the game; a checks file beside them with made-up digests): no answer may read them as a
  value, every one shows them as unchecked claims, and `db verify` fails once
  `prove --check --all` has found them wrong;
- files changed under a running reader: `kalah serve` asked the same positions before and after
  another rule set's level is copied over one of its levels in place, a level is cut short
  under its map, bytes are flipped in place; `db build` with a kept level changed in place
  while it builds the levels above (a level forged with valid checksums under the levels built
  on it is tests/damage.rs's: it needs XXH3, which Python's standard library lacks).

Every run has a time limit. Pass: zero wrong values (an answer that differs from the intact
one), zero aborts (a signal, or a panic message), zero hangs (the time limit reached), memory
bounded (the largest peak of any run is printed), and every error one line on stderr.
Prints one line per check and a summary; the exit code is 1 if any check failed.
"""

import argparse
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KALAH = os.path.join(ROOT, "target", "release", "kalah")
LIMIT = 60  # seconds a run may take

failures = []
counts = {"runs": 0, "errors": 0, "answers": 0}


def run(args, stdin=b"", limit=LIMIT):
    """Runs kalah; returns (exit code or 'hang', stdout, stderr)."""
    counts["runs"] += 1
    try:
        p = subprocess.run([KALAH] + args, input=stdin, capture_output=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return "hang", b"", b""
    return p.returncode, p.stdout, p.stderr


def check(name, ok, detail=""):
    if not ok:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}")


def well_behaved(name, code, err, expect_error=None):
    """No hang, no signal, no panic; an error is one line."""
    text = err.decode("utf-8", "replace")
    check(name, code != "hang", "hung")
    if code == "hang":
        return False
    check(name, code >= 0, f"killed by signal {-code}")
    check(name, "panicked" not in text and code != 101, f"panicked: {text[:300]}")
    if code not in (0, 130):
        counts["errors"] += 1
        lines = [l for l in text.splitlines() if l.strip()]
        check(name, len(lines) >= 1 and len(lines[-1]) < 2000, f"error not one short line: {text[:300]!r}")
        check(name, "\x1b" not in text, "raw escape in the error")
    if expect_error is not None:
        check(name, (code not in (0, 130)) == expect_error, f"exit {code}: {text[:300]}")
    return True


def build(houses, top, directory):
    code, _, err = run(["db", "build", "-m", str(houses), "--max-seeds", str(top), "--dir", directory], limit=600)
    assert code == 0, err


def positions(rng, houses, lo, hi, count):
    out = []
    while len(out) < count:
        seeds = rng.randint(lo, hi)
        h = [0] * (2 * houses)
        for _ in range(seeds):
            h[rng.randrange(2 * houses)] += 1
        if sum(h[:houses]) and sum(h[houses:]):
            out.append(f"<{houses},{rng.randint(0, 5)},{rng.randint(0, 5)}," + ",".join(map(str, h)) + ">")
    return out


def answer_fields(out):
    d = json.loads(out)
    return {k: d.get(k) for k in ("value", "best", "moves", "pv")}


def probes(directory, houses, top, inside, above):
    """Every probing command on the positions: a list of (name, answer or None for an error)."""
    got = []
    for p in inside:
        for cmd in (["query", p], ["analyze", p, "--tt-mb", "16"]):
            code, out, err = run(cmd + ["--db", directory, "--json"])
            if well_behaved(f"{cmd[0]} {p}", code, err):
                got.append((f"{cmd[0]} {p}", answer_fields(out) if code == 0 else None))
    for p in above:
        code, out, err = run(["query", p, "--db", directory, "--json", "--tt-mb", "16"])
        if well_behaved(f"search {p}", code, err):
            got.append((f"search {p}", answer_fields(out) if code == 0 else None))
    code, out, err = run(["query", "-", "--db", directory, "--json", "--tt-mb", "16"], ("\n".join(inside) + "\n").encode())
    if well_behaved("query -", code, err):
        for i, line in enumerate(out.decode().splitlines()):
            d = json.loads(line)
            got.append((f"query - line {i}", None if "error" in d else answer_fields(line)))
    for cmd in (["db", "info"], ["db", "verify", "--sample", "2000"]):
        code, _, err = run(cmd + ["--dir", directory])
        well_behaved(" ".join(cmd), code, err)
        got.append((" ".join(cmd), "ok" if code == 0 else None))
    return got


def compare(name, got, good):
    good = dict(good)
    for key, answer in got:
        if answer is None:
            continue
        counts["answers"] += 1
        check(name, answer == good.get(key), f"{key}: wrong answer {answer} (intact {good.get(key)})")


def flips(base, work, houses, top, n, rng):
    inside = positions(rng, houses, 4, top, 4)
    above = positions(rng, houses, top + 1, top + 2, 1)
    good = probes(base, houses, top, inside, above)
    assert all(a is not None for _, a in good), good
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    files = sorted(f for f in os.listdir(work) if f.endswith(".kdb"))
    for i in range(n):
        name = rng.choice(files)
        path = os.path.join(work, name)
        data = bytearray(open(path, "rb").read())
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        open(path, "wb").write(data)
        compare(f"{houses} houses, flip {name} byte {at}", probes(work, houses, top, inside, above), good)
        shutil.copy(os.path.join(base, name), path)
    print(f"ok   {n} byte flips in {houses}-house levels, every probing command")
    return inside, above, good


def damage(base, work, houses, top, inside, above, good):
    files = sorted(f for f in os.listdir(base) if f.endswith(".kdb"))
    middle = files[len(files) // 2]
    for cut in (0, 10, 64, 100, -8, -1):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(base, work)
        path = os.path.join(work, middle)
        data = open(path, "rb").read()
        open(path, "wb").write(data[:cut] if cut >= 0 else data[:len(data) + cut])
        compare(f"truncated {middle} at {cut}", probes(work, houses, top, inside, above), good)
    for what in ("missing", "fifo", "directory"):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(base, work)
        path = os.path.join(work, middle)
        os.remove(path)
        if what == "fifo":
            os.mkfifo(path)
        elif what == "directory":
            os.mkdir(path)
        got = probes(work, houses, top, inside, above)
        compare(f"{what} {middle}", got, good)
        check(f"{what} {middle}", all(a is None for k, a in got if not k.startswith("search")), "a command ignored the gap")
    print(f"ok   truncations, a missing level, a FIFO and a directory in its place ({houses} houses)")


def concurrency(directory):
    d = os.path.join(directory, "race")
    shutil.rmtree(d, ignore_errors=True)
    procs = [subprocess.Popen([KALAH, "db", "build", "-m", "5", "--max-seeds", "18", "--dir", d],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = [p.communicate(timeout=600) + (p.returncode,) for p in procs]
    codes = sorted(r[2] for r in results)
    check("two builds", codes in ([0, 0], [0, 2]), f"exit codes {codes}: {[r[1][:200] for r in results]}")
    code, _, err = run(["db", "verify", "--dir", d])
    check("two builds leave a sound database", code == 0, err.decode()[:300])
    record = os.path.join(directory, "race.txt")
    if os.path.exists(record):
        os.remove(record)
    args = [KALAH, "play", "-m", "3", "-n", "3", "--south", "engine:200ms", "--north", "engine:200ms", "--record", record]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    code, _, err = run(args[1:])
    first.communicate(timeout=LIMIT)
    check("two games on one record", code == 2, f"second game exit {code}: {err.decode()[:200]}")
    print("ok   two builds into one directory, two games into one record")


def options():
    cases = [
        ["solve", "-m", "4", "-n", "3", "--threads", "20000"],
        ["solve", "-m", "4", "-n", "3", "--threads", "100000"],
        ["solve", "-m", "4", "-n", "3", "--tt-mb", "0"],
        ["solve", "-m", "4", "-n", "3", "--tt-mb", "99999999"],
        ["match", "random", "random", "--games", "4294967296"],
        ["solve", "-m", "4", "-n", "3", "--table-file", "/tmp/x.ktt", "--save-every", "4e17"],
        ["solve", "-m", "4", "-n", "3", "--table-file", "/tmp/x.ktt", "--save-every", "nan"],
        ["solve", "-m", "3", "-n", "6148914691236517206"],
        ["perft", "-m", "6", "-n", "4", "-d", "4294967295"],
        ["db", "verify", "--dir", "/tmp", "--sample", "18446744073709551615"],
        ["kgp", "--host", "127.0.0.1", "--port", "0"],
        ["kgp", "--host", "127.0.0.1", "--port", "1", "--time-per-move", "1e400"],
        ["mankalah", "--time-budget", "-1"],
        ["play", "--south", "engine:1e300s"],
        ["play", "--south", "minimax:4294967296"],
        ["query", "x", "--rules", "a\rb\x07c\u202ed"],
        ["query", "x", "--rules", "x" * 100000],
    ]
    for args in cases:
        code, _, err = run(args, limit=20)
        well_behaved(" ".join(a[:40] for a in args), code, err, expect_error=True)
        check(" ".join(args)[:80], code == 2, f"exit {code}")
        check(" ".join(args)[:80], len(err) < 1000, f"{len(err)} bytes of error")
    code, _, err = run(["match", "random", "random", "--games", "1000000", "-m", "1", "-n", "1"], limit=300)
    well_behaved("a million games", code, err, expect_error=False)
    print(f"ok   {len(cases)} out-of-range options, a million-game match")


def inputs(directory, db4):
    fifo = os.path.join(directory, "fifo")
    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    zero = open("/dev/zero", "rb")
    cases = [
        (["query", "-", "--db", db4], zero),
        (["replay", "/dev/zero"], None),
        (["replay", fifo], None),
        (["play", "--resume", "/dev/zero"], None),
        (["play", "--resume", fifo], None),
        (["play", "-m", "3", "-n", "2", "--south", "human", "--north", "random", "--record", os.path.join(directory, "z.txt"), "--force"], zero),
        (["play", "-m", "3", "-n", "2", "--south", "learner:/dev/zero", "--north", "random"], None),
        (["play", "-m", "3", "-n", "2", "--south", f"learner:{fifo}", "--north", "random"], None),
        (["solve", "-m", "3", "-n", "2", "--table-file", fifo], None),
        (["solve", "-m", "3", "-n", "2", "--table-file", "/dev/zero"], None),
        (["kgp", "--host", "127.0.0.1", "--port", "1", "--log", fifo, "--retries", "0"], None),
        (["mankalah", "--log", fifo], None),
        (["mankalah"], zero),
        (["query", "--db", fifo, "<4,0,0,1,1,1,1,1,1,1,1>"], None),
    ]
    for args, stdin in cases:
        counts["runs"] += 1
        try:
            p = subprocess.run([KALAH] + args, stdin=stdin or subprocess.DEVNULL, capture_output=True, timeout=LIMIT)
            code, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            code, err = "hang", b""
        well_behaved(" ".join(args)[:80], code, err)
    print(f"ok   /dev/zero and FIFOs on {len(cases)} inputs")


def kgp_server(lines):
    """A fake KGP server on 127.0.0.1 that sends `lines` and then a real state; returns the port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    def serve():
        conn, _ = server.accept()
        conn.sendall(b"kgp 1 0 0\n")
        for line in lines:
            try:
                conn.sendall(line + b"\n")
            except OSError:
                return
        conn.sendall(b"7 state <3,0,0,1,1,1,1,1,1>\n")
        time.sleep(1.5)
        conn.sendall(b"goodbye\n")
        time.sleep(0.2)
        conn.close()
        server.close()
    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1]


def protocols(directory):
    hostile = [
        b"1 state <9223372036854775807>",
        b"2 state <18446744073709551615,0,0>",
        b"3 state <3,0,0,99999999999999999999,1,1,1,1,1>",
        b"4 state <3,-1,0,1,1,1,1,1,1>",
        b"5 state <4611686018427387904," + b"1," * 100 + b"1>",
        b"error \x1b[2J\x1b[31mred",
        b"\xff\xfe\xfd",
        b"x" * (3 << 20),
        b"@18446744073709551616 stop",
        b"set time:clock nan",
        b"set time:clock 1e400",
    ]
    port = kgp_server(hostile)
    log = os.path.join(directory, "kgp.log")
    code, _, err = run(["kgp", "--host", "127.0.0.1", "--port", str(port), "--retries", "0", "--log", log], limit=30)
    well_behaved("kgp with a hostile server", code, err, expect_error=False)
    text = open(log, "rb").read()
    check("kgp log", b"\x1b" not in text, "raw escape in the log")
    messages = [
        b"START;North\n", b"CHANGE;Swap;\x1b[2J;YOU\n", b"CHANGE;1;" + b"4294967295," * 16 + b";OPP\n",
        b"\xff\n", b"x" * 100000 + b"\n", b"CHANGE;99999999999999999999;1;YOU\n", b"END\n",
    ]
    for m in messages:
        code, _, err = run(["mankalah", "--time-budget", "5"], b"START;South\n" + m)
        well_behaved(f"mankalah {m[:30]!r}", code, err)
    print("ok   hostile KGP server lines and ManKalah messages")


def forged_ledgers(directory, db4):
    """A Kalah(4,3) book of depth 1 with the start and its best move shifted by +14 (the facts
    agree with each other): never a value; a claim, marked unchecked."""
    work = os.path.join(directory, "forged")
    shutil.copytree(db4, work)
    start = "<4,0,0,3,3,3,3,3,3,3,3>"
    true_book = os.path.join(directory, "true-book.jsonl")
    code, _, err = run(["prove", start, "--book", "1", "--no-db", "--ledger", true_book])
    assert code == 0, err
    code, out, _ = run(["query", start, "--no-book", "--json", "--db", work])
    value = json.loads(out)["value"]
    facts = [json.loads(l) for l in open(true_book)]
    best_child = None
    for f in facts:
        if f["position"] == start:
            continue
        if not f["position"].endswith("north") and f["lower"] == value:
            best_child = f["position"]
    with open(os.path.join(work, "forged.jsonl"), "w") as out_file:
        for f in facts:
            if f["position"] in (start, best_child):
                f["lower"] += 14
                f["upper"] += 14
            out_file.write(json.dumps(f, sort_keys=True, separators=(",", ":")) + "\n")
    with open(os.path.join(work, "forged.checks.jsonl"), "w") as c:
        for i in range(len(facts)):
            c.write(json.dumps({"check": 1, "digest": f"{i:032x}", "position": start, "rules": "standard",
                                "lower": 0, "upper": 0, "by": "alphabeta", "levels": {"top": None, "rules": "standard"},
                                "holds": True, "why": None, "nodes": 1, "cpu_s": 0.0, "fact_at": ""}) + "\n")
    for cmd in (["query", start, "--json", "--db", work], ["analyze", start, "--json", "--db", work],
                ["solve", "-m", "4", "-n", "3", "--json", "--db", work]):
        code, out, err = run(cmd)
        if not well_behaved(f"forged ledger: {cmd[0]}", code, err, expect_error=False):
            continue
        got = json.loads(out)
        check(f"forged ledger: {cmd[0]}", got["value"] == value, f"answered {got['value']}, the value is {value}")
        counts["answers"] += 1
        if cmd[0] != "solve":
            claims = got.get("claims") or []
            check(f"forged ledger: {cmd[0]} claims", any(c["checked"] is False and c["holds"] is False for c in claims),
                  f"the forged claim is not shown as unchecked and wrong: {claims}")
    code, out, err = run(["prove", "--check", os.path.join(work, "forged.jsonl"), "--all", "--db", work])
    well_behaved("forged ledger: prove --check --all", code, err, expect_error=True)
    code, out, err = run(["db", "verify", "--dir", work, "--sample", "0"])
    well_behaved("forged ledger: db verify", code, err, expect_error=True)
    check("forged ledger: db verify names it", b"forged.jsonl" in err, err.decode()[:300])
    print("ok   forged ledgers in a database directory: never a value, shown as unchecked claims")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flips", type=int, default=150)
    parser.add_argument("--dir", default="/tmp/kalah-trust-check")
    args = parser.parse_args()
    if not os.path.exists(KALAH):
        sys.exit(f"{KALAH} is missing: run cargo build --release first")
    shutil.rmtree(args.dir, ignore_errors=True)
    os.makedirs(args.dir)
    os.chdir(args.dir)
    rng = random.Random(14)
    started = time.time()
    for houses, top in ((4, 16), (6, 14)):
        base = os.path.join(args.dir, f"d{houses}")
        build(houses, top, base)
        work = os.path.join(args.dir, f"w{houses}")
        inside, above, good = flips(base, work, houses, top, args.flips, rng)
        damage(base, work, houses, top, inside, above, good)
    concurrency(args.dir)
    under_readers(args.dir, os.path.join(args.dir, "d4"), rng)
    options()
    inputs(args.dir, os.path.join(args.dir, "d4"))
    protocols(args.dir)
    forged_ledgers(args.dir, os.path.join(args.dir, "d4"))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"{counts['runs']} runs, {counts['answers']} answers compared, {counts['errors']} errors, "
          f"peak memory of any run {peak / 1024:.0f} MB, {time.time() - started:.0f} s")
    if failures:
        print(f"{len(failures)} FAILED")
        sys.exit(1)
    print("all passed: no wrong value, no abort, no hang")


def serve_answers(port, positions):
    """Asks a running `kalah serve` about each position: (status, value or None) each."""
    import urllib.error
    import urllib.parse
    import urllib.request

    out = []
    for p in positions:
        url = f"http://127.0.0.1:{port}/api/v1/position?" + urllib.parse.urlencode({"position": p})
        try:
            with urllib.request.urlopen(url, timeout=LIMIT) as r:
                out.append((r.status, json.loads(r.read()).get("value")))
        except urllib.error.HTTPError as e:
            out.append((e.code, None))
        except OSError:
            out.append(("dead", None))
    return out


def under_readers(root, d4, rng):
    """Files changed under a running reader: no answer from a changed level, no signal."""
    other = os.path.join(root, "d4-ec")
    code, _, err = run(["db", "build", "-m", "4", "--max-seeds", "16", "--rules", "empty-capture",
                        "--dir", other], limit=600)
    check("build empty-capture", code == 0, err.decode()[:200])
    attacks = {
        "copy of another rule set's level in place": lambda f, k: shutil.copyfile(
            os.path.join(other, f"kalah-4-empty-capture-{k:03}.kdb"), f),
        "cut short under the map": lambda f, k: os.truncate(f, 100),
        "three bytes flipped in place": lambda f, k: flip_in_place(f, rng),
    }
    for name, attack in attacks.items():
        work = os.path.join(root, "under")
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(d4, work)
        k = 12
        target = os.path.join(work, f"kalah-4-standard-{k:03}.kdb")
        port = free_port()
        srv = subprocess.Popen([KALAH, "serve", "--db", work, "--bind", f"127.0.0.1:{port}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(port)
            pos = positions(rng, 4, k, k, 300)
            before = serve_answers(port, pos)
            check(f"serve before: {name}", all(c == 200 for c, _ in before), str(before[:3]))
            attack(target, k)
            after = serve_answers(port, pos)
            for (c0, v0), (c1, v1), p in zip(before, after, pos):
                counts["runs"] += 1
                check(f"serve after {name}", c1 != "dead", "the server died")
                if c1 == 200:
                    counts["answers"] += 1
                    check(f"serve after {name}", v1 == v0, f"{p}: {v1}, was {v0}")
                else:
                    counts["errors"] += 1
            check(f"serve after {name}", srv.poll() is None, f"ended with {srv.returncode}")
        finally:
            srv.terminate()
            srv.wait()
    # A kept level changed in place while a build writes the levels above it.
    work = os.path.join(root, "under-build")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(d4, work)
    for k in (15, 16):
        os.remove(os.path.join(work, f"kalah-4-standard-{k:03}.kdb"))
    build_proc = subprocess.Popen([KALAH, "db", "build", "-m", "4", "--max-seeds", "16", "--dir", work],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(0.3)
    flip_in_place(os.path.join(work, "kalah-4-standard-014.kdb"), rng)
    _, err = build_proc.communicate(timeout=600)
    code = build_proc.returncode
    well_behaved("build under a changed level", code, err)
    if code == 0:
        # Finished before the flip: the levels it wrote must then answer as the intact ones.
        code, _, err = run(["db", "verify", "--dir", work, "--sample", "5000"])
        check("build under a changed level", code != 0 or b"damaged" not in err, err.decode()[:200])
    else:
        check("build under a changed level", b"written while in use" in err or b"damaged" in err,
              err.decode()[:300])


def flip_in_place(path, rng):
    """Three random bytes of `path` flipped, written in place."""
    with open(path, "r+b") as f:
        size = os.path.getsize(path)
        for _ in range(3):
            at = rng.randrange(64, max(65, size))
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([(b[0] if b else 0) ^ 0x5A]))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port):
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)


if __name__ == "__main__":
    main()
