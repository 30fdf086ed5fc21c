# Included right after llama.cpp's project() while llama-cpp-python builds it (CMAKE_PROJECT_llama.cpp_INCLUDE):
# the tests only tokenize with vocab_only models, so the common library (chat templates, argument parsing, which
# llama-cpp-python forces on) and every backend are left out; llama and ggml-base/ggml are all that is built.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "" FORCE)
set(GGML_CPU OFF CACHE BOOL "" FORCE)
