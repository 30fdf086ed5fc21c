#!/usr/bin/env bash
# The whole test suite: the Rust core's unit tests, then pytest (property
# tests against the reference, seeds, CLI, formats, conformance with peers).
# Needs the package installed with its test extra: pip install ".[test]"
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --no-default-features --quiet
python3 -m pytest -q "$@"
