"""Crash safety (issue 17, item 4): ``encode-dataset`` and ``train`` from
files, the real commands in child processes, killed with SIGKILL at random
moments, then run again to the end: the output is byte-identical to an
undisturbed run's and no temporary file or ``.partial`` folder is left.

CI runs ``KILL_TIMES`` kills (default 6) per command on a corpus of
``KILL_CORPUS_MB`` MB (default 8); SECURITY.md gives the figures of longer
runs (``KILL_TIMES=30 KILL_CORPUS_MB=200``, with ``KILL_CORPUS_KIND=zipf``
for a corpus of 200,000 distinct words instead of one small text's, and
``KILL_LOG=path`` for a line per run). The moments are drawn (seeded) over the duration of the undisturbed
run, measured first, so that the kills land before, during and after the
writing of outputs; ``encode-dataset`` resumes from its ``.partial``
folder, ``train`` starts over. A run that ends before its kill is checked
and its output removed, so that every kill lands in a run with work left.
"""

from __future__ import annotations

import glob
import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
import shutil
from typing import Callable, List

import pytest

HERE = Path(__file__).resolve().parent
KILLS = int(os.environ.get("KILL_TIMES", "6"))
CORPUS_MB = float(os.environ.get("KILL_CORPUS_MB", "8"))
HANG_GUARD = 1800


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> List[str]:
    folder = tmp_path_factory.mktemp("corpus")
    lines = [line for line in (HERE / "data" / "multilingual.txt").read_text("utf-8").splitlines() if line]
    rng = random.Random(3)
    target = int(CORPUS_MB * 2**20) // 8
    zipf = os.environ.get("KILL_CORPUS_KIND") == "zipf"
    if zipf:  # many distinct words (Zipf-distributed), so that training's merges take a real share of the run
        syllables = [a + b for a in "bcdfghklmnprstvz" for b in "aeiouy"] + [w for line in lines for w in line.split()]
        words = ["".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(200_000)]
        cum = list(itertools.accumulate(1 / (r + 1) for r in range(len(words))))
    paths = []
    for k in range(8):
        out, size = [], 0
        while size < target:
            if zipf:
                line = " ".join(rng.choices(words, cum_weights=cum, k=4000)) + "\n"
            else:
                line = " ".join(rng.sample(lines, 3)) + "\n"
            out.append(line)
            size += len(line.encode())
        path = folder / f"part{k}.txt"
        path.write_text("".join(out), encoding="utf-8")
        paths.append(str(path))
    return paths


def bytepair(*args: str) -> List[str]:
    return [sys.executable, "-m", "bytepair", *args]


def tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(root: Path) -> List[str]:
    return [p for p in glob.glob(str(root / "**" / "*"), recursive=True) + glob.glob(str(root / "**" / ".*"),
                                                                                      recursive=True)
            if p.endswith(".tmp") or ".partial" in p or os.path.basename(p).startswith(".bytepair-")]


def kill_and_finish(cmd: List[str], seconds: float, seed: int, finished: Callable[[], None]) -> List[str]:
    """Runs ``cmd`` KILLS times, each killed after a random delay, then once
    to the end; returns what happened to each run. A run that ends before
    its kill calls ``finished`` (which checks the output and removes it, so
    that the next kills land in runs that have work left)."""
    rng = random.Random(seed)
    outcomes = []
    for k in range(KILLS):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        delay = rng.uniform(0.0, seconds * 1.05)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=HANG_GUARD)
        assert proc.returncode in (0, -signal.SIGKILL), err.decode(errors="replace")[-2000:]
        outcomes.append("killed" if proc.returncode else "finished")
        log(f"{cmd[3]} run {k + 1}/{KILLS}: {outcomes[-1]} (kill at {delay:.1f} s of {seconds:.1f} s)")
        if proc.returncode == 0:
            finished()
    done = subprocess.run(cmd, capture_output=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return outcomes


def log(line: str) -> None:
    """Progress of long runs (``KILL_LOG=path`` appends there; seen with ``pytest -s`` otherwise)."""
    path = os.environ.get("KILL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%H:%M:%S')} {line}\n")


def timed(cmd: List[str]) -> float:
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return time.monotonic() - t0


def test_encode_dataset_killed_at_random(corpus, tmp_path, record_property):
    from bytepair import Tokenizer

    tok = Tokenizer.train([Path(corpus[0]).read_text("utf-8")[:200000]], vocab_size=1000,
                          special_tokens=["<|endoftext|>"])
    tok.save(str(tmp_path / "tok.json"))
    args = ["encode-dataset", "-t", str(tmp_path / "tok.json"), *corpus, "--shard-mb", "0.5", "--append-eot"]
    seconds = timed(bytepair(*args, "-o", str(tmp_path / "ref")))
    def finished() -> None:
        assert tree(tmp_path / "out") == tree(tmp_path / "ref")
        shutil.rmtree(tmp_path / "out")

    outcomes = kill_and_finish(bytepair(*args, "-o", str(tmp_path / "out")), seconds, seed=1, finished=finished)
    record_property("kills", {"encode-dataset": outcomes})
    assert outcomes.count("killed") >= 1, outcomes
    assert tree(tmp_path / "out") == tree(tmp_path / "ref")
    assert not leftovers(tmp_path), leftovers(tmp_path)


def test_train_killed_at_random(corpus, tmp_path, record_property):
    args = ["train", *corpus, "--vocab-size", "2000"]
    (tmp_path / "ref").mkdir()
    seconds = timed(bytepair(*args, "-o", str(tmp_path / "ref" / "tok.json")))
    log(f"train: corpus {sum(os.path.getsize(p) for p in corpus) / 2**20:.1f} MiB, undisturbed run {seconds:.1f} s")
    (tmp_path / "out").mkdir()
    def finished() -> None:
        assert (tmp_path / "out" / "tok.json").read_bytes() == (tmp_path / "ref" / "tok.json").read_bytes()
        (tmp_path / "out" / "tok.json").unlink()

    outcomes = kill_and_finish(bytepair(*args, "-o", str(tmp_path / "out" / "tok.json")), seconds, seed=2,
                               finished=finished)
    record_property("kills", {"train": outcomes})
    assert outcomes.count("killed") >= 1, outcomes
    assert (tmp_path / "out" / "tok.json").read_bytes() == (tmp_path / "ref" / "tok.json").read_bytes()
    assert not leftovers(tmp_path), leftovers(tmp_path)
    log(f"train: {outcomes.count('killed')} killed, {outcomes.count('finished')} finished first; output identical, "
        "nothing left behind")


def test_encode_dataset_killed_before_its_plan(corpus, tmp_path):
    """A kill between creating ``OUT.partial/parts`` and writing its plan
    (found by the random kills) left a folder every later run refused as
    "an unfinished run with other inputs"; it holds no work, so the next
    run starts it afresh and ends as an undisturbed run."""
    from bytepair import Tokenizer

    tok = Tokenizer.train([Path(corpus[0]).read_text("utf-8")[:100000]], vocab_size=400)
    tok.save(str(tmp_path / "tok.json"))
    args = ["encode-dataset", "-t", str(tmp_path / "tok.json"), corpus[0], "--shard-mb", "0.5"]
    timed(bytepair(*args, "-o", str(tmp_path / "ref")))
    for state in ("folder", "parts"):  # killed after the first or the second makedirs
        (tmp_path / "out.partial" / "parts").mkdir(parents=True)
        if state == "folder":
            (tmp_path / "out.partial" / "parts").rmdir()
        done = subprocess.run(bytepair(*args, "-o", str(tmp_path / "out")), capture_output=True, timeout=HANG_GUARD)
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
        assert tree(tmp_path / "out") == tree(tmp_path / "ref")
        assert not leftovers(tmp_path), leftovers(tmp_path)
        shutil.rmtree(tmp_path / "out")


def test_temporary_files_of_killed_writers_are_removed(tmp_path):
    """A run killed while writing its output leaves its temporary file (the
    random kills of ``train`` found ``.bytepair-*.tmp`` next to the
    tokenizer); the next write into that folder removes those of processes
    that are no longer running, and no other file."""
    from bytepair import _io

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(child.stdout)
    host = _io._temp_tag().split(".")[1]
    stale = tmp_path / f".bytepair-{dead}.{host}-abc123.tmp"
    mine = tmp_path / f".bytepair-{_io._temp_tag()}-def456.tmp"  # a write in progress in this process
    other_host = tmp_path / f".bytepair-{dead}.{(int(host, 16) ^ 1):08x}-ghi789.tmp"
    unrelated = tmp_path / ".bytepair-abc.tmp"
    for p in (stale, mine, other_host, unrelated):
        p.write_bytes(b"half")
    _io.atomic_write_text(tmp_path / "tok.json", "{}")
    assert (tmp_path / "tok.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, other_host.name, unrelated.name, "tok.json"])
