"""Progress reports and prompt, clean interruption of training."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time

from bytepair import Tokenizer
from bytepair.cli import main
from childproc import default_sigint


def random_words(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 12))) for _ in range(n))


def test_progress_callable_sees_counting_and_merging():
    seen = []
    Tokenizer.train([random_words(20_000)] * 2, vocab_size=3000, progress=lambda *a: seen.append(a))
    stages = [s for s, _, _ in seen]
    assert stages[0] == "count" and stages[-1] == "merge"
    merges = [(d, t) for s, d, t in seen if s == "merge"]
    assert merges[-1][0] == merges[-1][1] == 3000 - 256
    assert [d for d, _ in merges] == sorted(d for d, _ in merges)


def test_cli_json_progress(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(random_words(5000), encoding="utf-8")
    assert main(["train", str(corpus), "--vocab-size", "1000", "--progress", "json", "-o", str(tmp_path / "t.json")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    assert {r["stage"] for r in lines} == {"count", "merge"}
    assert lines[-1] == {**lines[-1], "stage": "merge", "done": 744, "total": 744}


def test_ctrl_c_stops_training_promptly_and_writes_nothing(tmp_path):
    corpus = tmp_path / "big.txt"
    corpus.write_text(random_words(400_000), encoding="utf-8")
    out = tmp_path / "tok.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bytepair", "train", str(corpus), "--vocab-size", "150000",
         "--progress", "json", "-o", str(out)],
        stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )
    # wait until merging has started, then interrupt
    for line in proc.stderr:
        if '"merge"' in line:
            break
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    proc.wait(timeout=30)
    assert time.monotonic() - sent < 2.0
    assert proc.returncode == 130
    assert "interrupted" in rest and "Traceback" not in rest
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["big.txt"]
