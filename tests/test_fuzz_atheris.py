"""Coverage-guided fuzzing with atheris, bounded runs: FUZZ_ATHERIS_RUNS
inputs (default 500) per harness in one libFuzzer process each (the first
byte of an input picks the variant): fuzz/fuzz_loaders.py (every loader) and
fuzz/fuzz_pipelines.py (tokenizer.json pipelines in three layouts,
SentencePiece .model, tekken.json). A crash (any exception but a
BytepairError naming the file, a failed usability check, over 2 GB of
memory, an input taking over 60 s) fails the test with libFuzzer's report."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

from childproc import with_fresh_peak

import atheris  # noqa: F401  (the test extra installs it: a missing one fails here, never skips)
import pytest

FUZZ = pathlib.Path(__file__).resolve().parents[1] / "fuzz"
HARNESS = FUZZ / "fuzz_pipelines.py"
RUNS = int(os.environ.get("FUZZ_ATHERIS_RUNS", "500"))
VARIANTS = {
    "fuzz_loaders.py": {"bytepair", "hf", "tiktoken", "gpt2", "subword-nmt", "counts", "gguf"},
    "fuzz_pipelines.py": {"hf-pipeline", "hf-metaspace", "hf-legacy", "sentencepiece", "tekken"},
}


@pytest.mark.parametrize("harness", sorted(VARIANTS))
def test_atheris_fuzzes_every_loader(harness, tmp_path, record_property):
    counts = tmp_path / "counts.json"
    env = dict(os.environ, BYTEPAIR_FUZZ_COUNTS=str(counts), TMPDIR=str(tmp_path))
    proc = subprocess.run(
        with_fresh_peak([sys.executable, str(FUZZ / harness), "all", f"-runs={RUNS}", "-seed=1",
                         f"-artifact_prefix={tmp_path}/", str(tmp_path / "corpus")]),
        capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    done = re.search(r"Done (\d+) runs", proc.stderr)
    assert done and int(done.group(1)) >= RUNS, proc.stderr[-2000:]
    per_variant = json.loads(counts.read_text())
    assert set(per_variant) == VARIANTS[harness], per_variant
    record_property("fuzz_inputs", {f"{v} (atheris)": n for v, n in per_variant.items()})


DATA = pathlib.Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("harness, folder", [(HARNESS, "fuzz_pipelines"),
                                             (HARNESS.parent / "fuzz_loaders.py", "fuzz_loaders")])
def test_crashes_found_stay_fixed(tmp_path, harness, folder):
    """Every input a fuzzer crashed on (tests/data/fuzz_*; the first byte
    picks the variant as in ``all``), run again through its harness:
    libFuzzer runs the given files once each and fails on a crash.

    - fuzz_pipelines/pipeline-count-*: ``count`` of a pipeline tokenizer
      raised AttributeError (it went to a core that pipelines do not have);
    - fuzz_loaders/pipeline-encode-allowed-special-*: a mutated
      tokenizer.json loaded as a pipeline, whose ``encode`` refused
      ``allowed_special`` (TypeError) and whose ``to_dict`` could not go
      back through ``Tokenizer.from_dict`` (KeyError).
    """
    inputs = sorted((DATA / folder).iterdir())
    assert inputs
    proc = subprocess.run(with_fresh_peak([sys.executable, str(harness), "all", *map(str, inputs)]), capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert proc.stderr.count("Executed ") == len(inputs), proc.stderr[-2000:]
