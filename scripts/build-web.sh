#!/usr/bin/env bash
# Writes the static explorer to DIR (default target/web): the explorer page of `kalah serve`
# (src/cli/serve/explorer.html, its few words about the server changed for a page that needs
# none), web/static/explorer.js and worker.js (the page's questions answered in a Web Worker),
# and kalah.wasm, the core compiled to WebAssembly (the kalah-web crate, the `web` profile).
# Any static HTTP server serves DIR, for example `python3 -m http.server -d DIR`; docs/web.md
# says more. The WebAssembly target is installed with rustup if missing.
#
# Usage: scripts/build-web.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/web}

rustup target list --installed | grep -qx wasm32-unknown-unknown ||
  rustup target add wasm32-unknown-unknown
cargo rustc --locked -p kalah-web --target wasm32-unknown-unknown --profile web --crate-type cdylib
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

mkdir -p "$out"
cp "$target_dir/wasm32-unknown-unknown/web/kalah_web.wasm" "$out/kalah.wasm"
cp web/static/explorer.js web/static/worker.js "$out/"

# The served page, its script loaded after explorer.js; each change must find its text, so
# that a change of the page cannot leave the static one saying "server" unnoticed.
python3 - src/cli/serve/explorer.html "$out/index.html" <<'PY'
import sys

source, target = sys.argv[1], sys.argv[2]
page = open(source, encoding="utf-8").read()
changes = [
    ("<script>\n'use strict';", "<script src=\"explorer.js\"></script>\n<script>\n'use strict';"),
    ("searched within this server's time budget", "searched in this browser within the time budget"),
    ("(<code>kalah serve --budget S</code> raises it, up to 60 s)",
     "(the budget at the top of the page raises it, up to 60 s)"),
    ("' (kalah serve --budget S raises it, up to 60 s).'",
     "' (the budget at the top of the page raises it, up to 60 s).'"),
    ("this server\\'s budget", "this page\\'s budget"),
    ("Check that kalah serve is still running, then try again.", "Reload the page, then try again."),
    ("'The server refused this request: '", "'Refused: '"),
    ("'The server answered with an error (HTTP '", "'The page\\'s search failed (HTTP '"),
    ("'The answer of the server could not be shown: '", "'The answer could not be shown: '"),
]
for old, new in changes:
    if old not in page:
        sys.exit(f"build-web.sh: {source} no longer holds {old!r}: update the changes")
    page = page.replace(old, new)
open(target, "w", encoding="utf-8").write(page)
PY

wasm_bytes=$(wc -c <"$out/kalah.wasm")
wasm_gzip=$(gzip -9 -c "$out/kalah.wasm" | wc -c)
echo "the static explorer is in $out: kalah.wasm $wasm_bytes bytes ($wasm_gzip gzipped)," \
  "index.html, explorer.js, worker.js"
