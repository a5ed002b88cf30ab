#!/usr/bin/env bash
# The Python package's tests: makes a virtual environment (target/venv, kept for the next run),
# installs what the tests need from PyPI when missing (maturin, pytest, numpy, open_spiel),
# checks the extension's formatting and lints, builds and installs the package from ./python,
# builds the kalah binary the tests compare
# against ($CARGO_TARGET_DIR/release/kalah, else target/release/kalah), and runs pytest on
# python/tests. Extra arguments go to pytest.
#
# Usage: scripts/test-python.sh [PYTEST ARGS...]
#   PYTHON   the interpreter for the environment (default python3; 3.9 or newer)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/venv
python=${PYTHON:-python3}
# Where cargo puts the binary: $CARGO_TARGET_DIR if set (relative to here, as cargo reads it).
bin_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv" || {
    echo "test-python: cannot make a virtual environment with $python (Debian: apt-get install python3-venv)" >&2
    exit 1
  }
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "maturin>=1.5,<2" "pytest>=7" "numpy>=1.21" "open_spiel>=1.5" "pettingzoo>=1.24" "gymnasium>=0.29"
cargo build --release --locked
# python/Cargo.lock is its own: after a change of the root crate's dependencies, `cargo check`
# in python/ brings it up to date (commit it), or --locked stops here.
(cd python && cargo fmt --check && cargo clippy --release --locked -- -D warnings)
VIRTUAL_ENV="$PWD/$venv" "$venv/bin/python" -m pip install --quiet ./python
# From outside the source tree, so that the installed package is the one imported.
cd target
KALAH_BIN="$bin_dir/kalah" "$PWD/venv/bin/python" -m pytest -q ../python/tests "$@"
