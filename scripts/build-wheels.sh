#!/usr/bin/env bash
# Release artifacts: one wheel per CPython version for Linux x86-64 (3.9 to 3.14; not abi3, which is slower:
# docs/decisions.md) and an sdist, written to OUT (default dist/). Needs maturin (pip install "bytepair[release]"
# or ".[release]").
#
#   bash scripts/build-wheels.sh [OUT]
#
# The wheel is tagged manylinux2014 (glibc >= 2.17: installs on nearly every Linux) when zig is found, on PATH or
# as PyPI's `ziglang` package (maturin links against an old glibc through it); without zig it is built for this
# machine's glibc and tagged by maturin's audit (manylinux_2_34 on Debian 12). Environment:
#   BYTEPAIR_WHEEL_PROFILE  cargo profile (default release: fat LTO; dev-fast builds in a fraction of the time)
#   BYTEPAIR_WHEEL_ZIG      auto (default), 1 (require zig: manylinux2014), 0 (never: this machine's glibc)
#   PYTHON                  the interpreter that runs maturin (default python3)
#   BYTEPAIR_WHEEL_PYTHONS  the CPython versions to build for (default "3.9 3.10 3.11 3.12 3.13 3.14"); maturin uses
#                           its bundled description of a version that is not installed
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-dist}"
PROFILE="${BYTEPAIR_WHEEL_PROFILE:-release}"
ZIG="${BYTEPAIR_WHEEL_ZIG:-auto}"
PY="${PYTHON:-python3}"
PYTHONS="${BYTEPAIR_WHEEL_PYTHONS:-3.9 3.10 3.11 3.12 3.13 3.14}"

if "$PY" -m maturin --version >/dev/null 2>&1; then
    MATURIN=("$PY" -m maturin)
elif command -v maturin >/dev/null 2>&1; then
    MATURIN=(maturin)
else
    echo "build-wheels: maturin is not installed for $PY: pip install 'maturin>=1.5,<2' (or the [release] extra)" >&2
    exit 1
fi

zig_args=()
if [ "$ZIG" != 0 ]; then
    if ! command -v zig >/dev/null 2>&1; then
        # PyPI's ziglang ships the zig binary inside the package: put its folder on PATH for maturin
        zig_dir="$("$PY" -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))' 2>/dev/null || true)"
        if [ -n "$zig_dir" ] && [ -x "$zig_dir/zig" ]; then
            export PATH="$zig_dir:$PATH"
        fi
    fi
    if command -v zig >/dev/null 2>&1; then
        zig_args=(--zig --compatibility manylinux2014)
    elif [ "$ZIG" = 1 ]; then
        echo "build-wheels: BYTEPAIR_WHEEL_ZIG=1 but zig is not found: pip install ziglang" >&2
        exit 1
    else
        echo "build-wheels: zig not found (pip install ziglang for a manylinux2014 wheel); building for this machine's glibc" >&2
    fi
fi

interpreters=()
for version in $PYTHONS; do
    interpreters+=("python$version")
done

mkdir -p "$OUT"
"${MATURIN[@]}" build --profile "$PROFILE" ${zig_args[@]+"${zig_args[@]}"} --interpreter "${interpreters[@]}" --out "$OUT"
"${MATURIN[@]}" sdist --out "$OUT"
ls -l "$OUT"
