#!/usr/bin/env bash
# The whole test suite: the Rust core's unit tests, then pytest (property
# tests against the reference, seeds, CLI, formats, conformance with peers).
# Needs the package installed with its test extra: pip install ".[test]"
# Installs the headless browser of the serve test first when it is missing
# (scripts/ci-browser.sh: Debian's chromium, as root or with sudo).
# Runs the same in the foreground or in the background (nohup, `&`, setsid):
# the tests that interrupt a child restore its default SIGINT handling.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    bash scripts/ci-browser.sh </dev/null
fi
cargo test --no-default-features --quiet
python3 -m pytest -q "$@"
