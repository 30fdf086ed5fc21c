#!/usr/bin/env bash
# llama.cpp itself, the oracle of the GGUF tests (tests/test_gguf_llama_cpp.py), installed when it is missing:
# llama-cpp-python has only an sdist on PyPI, so pip builds it, here with only what tokenizing a vocab_only
# model needs (scripts/llama-cpp-vocab-only.cmake drops the common library and every backend, CPU included;
# no examples, tests, tools, server, OpenMP or native code; -O1: -O0 compiles hardly faster and tokenizes 8x
# slower). About 190 CPU seconds. An installed llama-cpp-python (a full build, any version) is left alone.
#
#   bash scripts/ci-llama-cpp.sh                    builds and installs it
#   bash scripts/ci-llama-cpp.sh --wheel-dir DIR    only builds its wheel into DIR (`pip wheel`, which leaves the
#                                                   environment alone, so it can run beside another pip install);
#                                                   the caller installs it
set -euo pipefail
cd "$(dirname "$0")/.."
wheel_dir=""
if [ "${1:-}" = "--wheel-dir" ]; then
    wheel_dir="$2"
fi
if python3 -c "import llama_cpp" >/dev/null 2>&1; then
    exit 0
fi
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
export CMAKE_ARGS="-DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/scripts/llama-cpp-vocab-only.cmake -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_BLAS=OFF -DGGML_METAL=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DGGML_BUILD_EXAMPLES=OFF -DGGML_BUILD_TESTS=OFF -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1"
echo "building llama-cpp-python (llama.cpp's tokenizer, for the GGUF tests; a few minutes)" >&2
if [ -n "$wheel_dir" ]; then
    python3 -m pip wheel --no-deps --wheel-dir "$wheel_dir" "llama-cpp-python==0.3.36"
else
    python3 -m pip install "llama-cpp-python==0.3.36"
fi
