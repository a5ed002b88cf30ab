#!/usr/bin/env python3
"""The static explorer measured in headless Chromium against the native binary.

Builds nothing: run scripts/build-web.sh (DIR, default target/web) and `cargo build --release`
first. Serves DIR with Python's http.server on the loopback, drives Chromium through
chromedriver's WebDriver API (plain HTTP, no client library) and prints, with the machine:

- the page's size: kalah.wasm raw and gzipped, and the other files;
- the first answer: from opening the page to the Kalah(6,4) start shown (+8, from the book);
- each start of Kalah(4,3), (5,3), (6,3) answered by the page's worker (every move's value,
  one thread, a 64 MiB table, as the page searches), against `kalah query` of the same start
  with one thread and a 64 MiB table, both from a cold start (the page's module fresh, the
  binary's process new): the same search (the node counts must be equal), and the ratio is
  the browser's time over the native one.

Usage: scripts/bench-web.py [--dir DIR] [--runs N]
"""

import argparse
import gzip
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from functools import partial

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import machine  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# In the page: a fresh worker answers one request; resolves to [milliseconds, reply].
SOLVE_IN_PAGE = """
const [request, done] = [arguments[0], arguments[arguments.length - 1]];
const worker = new Worker('worker.js');
const started = performance.now();
worker.onmessage = (e) => { const ms = performance.now() - started; worker.terminate(); done([ms, e.data.reply]); };
worker.postMessage({ id: 1, request, budgetMs: 600000 });
"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    """Python's static server, without its access log."""

    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def webdriver(url, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=900) as res:
        return json.load(res)["value"]


def wait_for(url, patience=30):
    started = time.time()
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.time() - started > patience:
                raise
            time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "web"))
    ap.add_argument("--runs", type=int, default=3, help="runs of each solve (the best is kept)")
    a = ap.parse_args()
    kalah = os.path.join(ROOT, "target", "release", "kalah")
    for path in (os.path.join(a.dir, "kalah.wasm"), kalah, CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            sys.exit(f"bench-web.py: {path} is missing (scripts/build-web.sh, cargo build --release)")

    print(f"machine: {machine()}")
    wasm = open(os.path.join(a.dir, "kalah.wasm"), "rb").read()
    print(f"kalah.wasm: {len(wasm):,} bytes, {len(gzip.compress(wasm, 9)):,} gzipped")
    for name in ("index.html", "explorer.js", "worker.js"):
        text = open(os.path.join(a.dir, name), "rb").read()
        print(f"{name}: {len(text):,} bytes, {len(gzip.compress(text, 9)):,} gzipped")

    handler = partial(Quiet, directory=a.dir)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"

    port = free_port()
    driver = subprocess.Popen([CHROMEDRIVER, f"--port={port}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wd = f"http://127.0.0.1:{port}"
        wait_for(wd + "/status")
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-dev-shm-usage"]
        session = webdriver(wd + "/session", "POST", {"capabilities": {"alwaysMatch": {
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args}}}})["sessionId"]
        s = f"{wd}/session/{session}"
        webdriver(s + "/timeouts", "POST", {"script": 900_000})
        try:
            # The first answer: the page opened fresh, until the Kalah(6,4) start is drawn.
            firsts = []
            for _ in range(a.runs):
                webdriver(s + "/url", "POST", {"url": "about:blank"})
                started = time.time()
                webdriver(s + "/url", "POST", {"url": base + "?houses=6&seeds=4"})
                while True:
                    state = webdriver(s + "/execute/sync", "POST", {
                        "script": "return [document.body.dataset.state, "
                                  "(document.getElementById('value')||{}).textContent];",
                        "args": []})
                    if state[0] == "ready":
                        break
                    time.sleep(0.01)
                firsts.append(time.time() - started)
                assert state[1].strip() == "+8", state
            print(f"first answer (Kalah(6,4) start, +8, page opened cold): "
                  f"{min(firsts):.2f} s (best of {a.runs})")

            print("every move's value of the start | nodes | in the browser | native (1 thread) | ratio")
            for houses in (4, 5, 6):
                request = f"api/v1/start?houses={houses}&seeds=3"
                literal = f"<{houses},0,0" + ",3" * (2 * houses) + ">"
                page = []
                for _ in range(a.runs):
                    ms, reply = webdriver(s + "/execute/async", "POST",
                                          {"script": SOLVE_IN_PAGE, "args": [request]})
                    assert reply["status"] == 200, reply
                    body = reply["body"]
                    page.append((ms / 1000, body["value"], body["nodes"]))
                native = []
                for _ in range(a.runs):
                    started = time.time()
                    out = subprocess.run([kalah, "query", literal, "--threads", "1", "--tt-mb", "64",
                                          "--json"], capture_output=True, text=True, check=True,
                                         env=dict(os.environ, KALAH_DB="/nonexistent"))
                    answer = json.loads(out.stdout)
                    native.append((time.time() - started, answer["value"], answer["nodes"]))
                (pt, pv, pn), (nt, nv, nn) = min(page), min(native)
                assert (pv, pn) == (nv, nn), (houses, page, native)
                print(f"Kalah({houses},3) = {pv:+} | {pn:,} | {pt:.2f} s | {nt:.2f} s | {pt / nt:.1f}")
        finally:
            webdriver(s, "DELETE")
    finally:
        driver.terminate()
        driver.wait()
        server.shutdown()


if __name__ == "__main__":
    main()
