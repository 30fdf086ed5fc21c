#!/usr/bin/env bash
# Fast editable install for development (debug-optimised Rust, no LTO).
set -euo pipefail
cd "$(dirname "$0")/.."
MATURIN_PEP517_ARGS="--profile dev-fast" pip install -q --no-build-isolation -e .
