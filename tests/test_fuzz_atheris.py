"""Coverage-guided fuzzing of every loader with atheris (fuzz/fuzz_loaders.py),
a bounded run: FUZZ_ATHERIS_RUNS inputs (default 500) over all loader
variants in one libFuzzer process (the first byte of an input picks the
variant). A crash (any exception but a BytepairError naming the file, a
failed usability check, over 2 GB of memory, an input taking over 60 s)
fails the test with libFuzzer's report."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import atheris  # noqa: F401  (the test extra installs it: a missing one fails here, never skips)

HARNESS = pathlib.Path(__file__).resolve().parents[1] / "fuzz" / "fuzz_loaders.py"
RUNS = int(os.environ.get("FUZZ_ATHERIS_RUNS", "500"))


def test_atheris_fuzzes_every_loader(tmp_path, record_property):
    counts = tmp_path / "counts.json"
    env = dict(os.environ, BYTEPAIR_FUZZ_COUNTS=str(counts), TMPDIR=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, str(HARNESS), "all", f"-runs={RUNS}", "-seed=1", f"-artifact_prefix={tmp_path}/",
         str(tmp_path / "corpus")],
        capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    done = re.search(r"Done (\d+) runs", proc.stderr)
    assert done and int(done.group(1)) >= RUNS, proc.stderr[-2000:]
    per_loader = json.loads(counts.read_text())
    assert len(per_loader) == 6  # bytepair, hf, tiktoken, gpt2, subword-nmt, counts
    record_property("fuzz_inputs", {f"{loader} (atheris)": n for loader, n in per_loader.items()})
