#!/usr/bin/env bash
# The whole test suite: the Rust core's unit tests, then pytest (property
# tests against the reference, seeds, CLI, formats, conformance with peers).
#
#   bash scripts/test.sh --install  installs the package with its test extra into the active Python (what
#                                   `pip install ".[test]"` installs), then runs everything: the README's
#                                   test command, and CI's
#   bash scripts/test.sh            everything, with the package already installed (pip install ".[test]",
#                                   or scripts/dev-install.sh)
#   bash scripts/test.sh --quick    the quick tier for iterating: pytest without the tests
#                                   marked slow (tests/conftest.py), no Rust tests, no browser
#
# Other arguments go to pytest. pytest runs on every core (pytest-xdist, `-n auto`), a test file's
# tests on one worker (`--dist loadfile`: module fixtures, such as test_wheel.py's build, run once), the
# files handed out in collection order (`--no-loadscope-reorder`), which puts the costliest first
# (tests/conftest.py, FIRST); BYTEPAIR_TEST_WORKERS sets the number of workers (0: no xdist, one process).
# Installs the headless browser of the serve test when it is missing (scripts/ci-browser.sh: Debian's
# chromium, as root or with sudo) and fetches the tests' data, both in the background; pytest starts once both
# have succeeded and the Rust tests have passed, and a failed install prints its log and fails the run. With
# --install, all of that starts first, and uv installs the dependencies (llama.cpp for the GGUF tests among them,
# prebuilt) beside pip's build of the package's wheel (`pip install ".[test]"` does one after the other, and
# spends twice the CPU on the dependencies); the wheel is then installed with its test extra, which checks that
# nothing is missing.
# Runs the same in the foreground or in the background (nohup, `&`, setsid):
# the tests that interrupt a child restore its default SIGINT handling.
set -euo pipefail
cd "$(dirname "$0")/.."
# Python writes the bytecode of what it imports, once, as it does by default: the suite starts hundreds of Pythons
# (pytest's workers, the CLI, dask), and with PYTHONDONTWRITEBYTECODE set each compiled its imports again
# (13% more CPU). So the installs need not compile all of every package (uv's --compile-bytecode: 41 CPU seconds
# for 96 packages, of which the tests import a fraction).
unset PYTHONDONTWRITEBYTECODE
# the suite's builds of the crate (the wheel, the Rust tests, tests/test_wheel.py's) skip the ThinLTO across the
# dev-fast profile's codegen units: the same code, 38 CPU seconds less to compile the crate and its dependencies,
# the tests no slower (docs/decisions.md). `pip install .` keeps it.
export CARGO_PROFILE_DEV_FAST_LTO=off
quick=0
install=0
case "${1:-}" in
    --quick) quick=1; shift ;;
    --install) install=1; shift ;;
esac
workers="${BYTEPAIR_TEST_WORKERS:-auto}"
if [ "$quick" = 1 ]; then
    exec python3 -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder -m "not slow" "$@"
fi
work="$(mktemp -d)"
logs="$work/logs"  # the background jobs' output, printed once they are done
mkdir "$logs"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
# waits for the background jobs: a failed one prints every log and fails the run
wait_for_jobs() {
    for pid in "${pids[@]}"; do
        if ! wait "$pid"; then
            cat "$logs"/* >&2
            echo "test.sh: installing the browser or the package, or fetching the test data, failed (log above)" >&2
            exit 1
        fi
    done
    pids=()
}
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    bash scripts/ci-browser.sh </dev/null >"$logs/browser" 2>&1 &
    pids+=($!)
fi
# the tests' data (sha256-checked downloads into data/, which the tests' fixtures would otherwise fetch while the
# other worker waits for the fetch lock): fetched here, in the background too. get_tokenizers.py writes files with
# bytepair, so it comes once the package is installed.
fetch="python3 scripts/get_vocabs.py && python3 scripts/get_published.py && python3 scripts/get_gguf_vocabs.py"
if [ "$install" = 1 ]; then
    (eval "$fetch") </dev/null >/dev/null 2>"$logs/data" &
    pids+=($!)
    # the installer: uv (from PyPI), which installs what pip would in half of pip's CPU (the dependencies: 35 CPU
    # seconds against 63), as a private copy in the work directory, not in the environment under test; pip's
    # index settings carry over. --system: into python3's environment, a virtual one or not, as pip does. No
    # --compile-bytecode: Python writes the bytecode of what the tests import (above).
    python="$(python3 -c 'import sys; print(sys.executable)')"
    uv_install() {
        local index=()
        [ -z "${PIP_INDEX_URL:-}" ] || index+=(--index-url "$PIP_INDEX_URL")
        [ -z "${PIP_EXTRA_INDEX_URL:-}" ] || index+=(--extra-index-url "$PIP_EXTRA_INDEX_URL")
        "$work/uv/bin/uv" pip install --python "$python" --system ${index[@]+"${index[@]}"} "$@"
    }
    # the package's dependencies and its test extra, as pyproject.toml lists them, installed beside the build of
    # the wheel; then the wheel, and the tests' files that bytepair writes. The Rust tests run meanwhile.
    python3 -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]
print("\n".join(p.get("dependencies", []) + p["optional-dependencies"]["test"]))' >"$work/requirements.txt"
    install_package() {
        python3 -m pip install --quiet --target "$work/uv" "uv>=0.5" &&
            uv_install -r "$work/requirements.txt" &&
            until [ -e "$work/wheel/built" ] || ! kill -0 $$ 2>/dev/null; do sleep 1; done &&  # $$: test.sh
            uv_install --reinstall --no-deps "$work"/wheel/bytepair-*.whl &&
            uv_install "$(echo "$work"/wheel/bytepair-*.whl)[test]" &&  # the extra is complete
            echo "test.sh: the package was installed after ${SECONDS} s" &&
            python3 scripts/get_tokenizers.py
    }
    install_package </dev/null >"$logs/package" 2>&1 &
    pids+=($!)
    python3 -m pip wheel --no-deps --wheel-dir "$work/wheel" .
    touch "$work/wheel/built"
else
    (eval "$fetch" && python3 scripts/get_tokenizers.py) </dev/null >/dev/null 2>"$logs/data" &
    pids+=($!)
fi
# the dev-fast profile of `pip install .`: the dependencies it compiled are reused, only the tests are built,
# and at opt-level 1 (the crate alone: 66-75 CPU seconds against 79-89 at 3, the tests as fast, since their time
# goes to the optimised dependencies); --lib: the unit tests alone (the crate has no doctests, whose harness
# would compile the library once more)
cargo test --lib --no-default-features --profile dev-fast --config 'profile.dev-fast.package.bytepair.opt-level=1' --quiet
echo "test.sh: the Rust tests passed after ${SECONDS} s" >&2
wait_for_jobs
cat "$logs"/*
echo "test.sh: the installs and the data were ready after ${SECONDS} s; pytest starts" >&2
python3 -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
