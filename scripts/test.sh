#!/usr/bin/env bash
# The whole test suite: the Rust core's unit tests, then pytest (property
# tests against the reference, seeds, CLI, formats, conformance with peers).
# Needs the package installed with its test extra: pip install ".[test]"
#
#   bash scripts/test.sh            everything (the README's test command)
#   bash scripts/test.sh --quick    the quick tier for iterating: pytest without the tests
#                                   marked slow (tests/conftest.py), no Rust tests, no browser
#
# Other arguments go to pytest. pytest runs on every core (pytest-xdist, `-n auto`), a test file's
# tests on one worker (`--dist loadfile`: module fixtures, such as test_wheel.py's build, run once), the
# files handed out in collection order (`--no-loadscope-reorder`), which puts the costliest first
# (tests/conftest.py, FIRST); BYTEPAIR_TEST_WORKERS sets the number of workers (0: no xdist, one process).
# Installs the headless browser of the serve test when it is missing (scripts/ci-browser.sh: Debian's
# chromium, as root or with sudo), and llama-cpp-python, the GGUF tests' oracle (scripts/ci-llama-cpp.sh: built
# from its sdist with only its tokenizer), both in the background while the Rust tests build and run (downloads,
# cmake's configure and the links leave cores idle); pytest starts once all three have succeeded, and a failed
# install prints its log and fails the run.
# Runs the same in the foreground or in the background (nohup, `&`, setsid):
# the tests that interrupt a child restore its default SIGINT handling.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then
    quick=1
    shift
fi
workers="${BYTEPAIR_TEST_WORKERS:-auto}"
if [ "$quick" = 1 ]; then
    exec python3 -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder -m "not slow" "$@"
fi
logs="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$logs"' EXIT
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    bash scripts/ci-browser.sh </dev/null >"$logs/browser" 2>&1 &
    pids+=($!)
fi
bash scripts/ci-llama-cpp.sh </dev/null >"$logs/llama-cpp" 2>&1 &
pids+=($!)
# the tests' data (sha256-checked downloads into data/, which the tests' fixtures would otherwise fetch while the
# other worker waits for the fetch lock): fetched here, in the background too
(python3 scripts/get_vocabs.py && python3 scripts/get_tokenizers.py && python3 scripts/get_published.py \
    && python3 scripts/get_gguf_vocabs.py) </dev/null >/dev/null 2>"$logs/data" &
pids+=($!)
# the dev-fast profile of `pip install .`: the dependencies it compiled are reused, only the tests are built;
# --lib: the unit tests alone (the crate has no doctests, whose harness would compile the library once more)
cargo test --lib --no-default-features --profile dev-fast --quiet
echo "test.sh: the Rust tests passed after ${SECONDS} s" >&2
for pid in "${pids[@]}"; do
    if ! wait "$pid"; then
        cat "$logs"/* >&2
        echo "test.sh: installing the browser or llama-cpp-python, or fetching the test data, failed (log above)" >&2
        exit 1
    fi
done
pids=()
cat "$logs"/*
echo "test.sh: the installs and the data were ready after ${SECONDS} s; pytest starts" >&2
python3 -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
