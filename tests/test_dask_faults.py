"""Dask under faults (issue 17, item 3), on a real cluster of separate
processes started here: ``dask scheduler`` and ``dask worker`` (without
nannies, so that a SIGKILL takes a worker away for good).

- A worker killed in the middle of ``encode-dataset --dask`` and of
  ``train --dask`` (the real commands, in a child process): the job finishes
  through Dask's own rescheduling, with shards and a tokenizer byte-identical
  to an undisturbed run without Dask.
- A scheduler that is unreachable: a one-line error within the client's
  30 s timeout (hang guard 180 s), exit status 1, no output.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

HERE = Path(__file__).resolve().parent
HANG_GUARD = 600


def _start_worker(scheduler_file: Path, name: str, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
         "--nthreads", "1", "--nworkers", "1", "--no-nanny", "--no-dashboard", "--name", name,
         "--memory-limit", "0", "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=open(log, "wb"))


def _n_workers(address: str) -> int:
    from distributed import Client

    with Client(address, timeout="30s") as c:
        return len(c.scheduler_info()["workers"])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    sfile = tmp / "scheduler.json"
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", ":0", "--scheduler-file", str(sfile)],
        stdout=subprocess.DEVNULL, stderr=open(tmp / "scheduler.log", "wb"))
    state: Dict[str, object] = {"scheduler": scheduler, "workers": [], "tmp": tmp, "sfile": sfile}
    try:
        for _ in range(600):
            if sfile.exists() and sfile.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(sfile.read_text())["address"]
        state["address"] = address
        yield state
    finally:
        for w in state["workers"]:  # type: ignore[attr-defined]
            if w.poll() is None:
                w.kill()
            w.wait(timeout=60)
        scheduler.terminate()
        scheduler.wait(timeout=60)


def ensure_workers(cluster, n: int) -> List[subprocess.Popen]:
    """``n`` live workers (new ones started as needed)."""
    live = [w for w in cluster["workers"] if w.poll() is None]
    while len(live) < n:
        k = len(cluster["workers"])
        w = _start_worker(cluster["sfile"], f"w{k}", cluster["tmp"] / f"worker{k}.log")
        cluster["workers"].append(w)
        live.append(w)
    for _ in range(600):
        if _n_workers(cluster["address"]) == n:
            return live
        time.sleep(0.2)
    raise AssertionError("the workers did not join")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> List[str]:
    folder = tmp_path_factory.mktemp("corpus")
    lines = [line for line in (HERE / "data" / "multilingual.txt").read_text("utf-8").splitlines() if line]
    rng = random.Random(9)
    paths = []
    for k in range(6):
        text = "".join(" ".join(rng.sample(lines, 3)) + "\n" for _ in range(6000))
        path = folder / f"part{k}.txt"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def bytepair(*args: str) -> List[str]:
    return [sys.executable, "-m", "bytepair", *args]


def tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def wait_for_work(address: str, proc: subprocess.Popen) -> bool:
    """Waits until the scheduler has tasks processing on workers (the job is
    under way); False if ``proc`` ended first."""
    from distributed import Client

    def processing(dask_scheduler) -> int:  # runs on the scheduler (a nested function: pickled by value)
        return sum(1 for ts in dask_scheduler.tasks.values() if ts.state == "processing")

    with Client(address, timeout="60s") as c:
        t0 = time.monotonic()
        while proc.poll() is None and time.monotonic() - t0 < 300:
            if c.run_on_scheduler(processing) > 0:
                return True
            time.sleep(0.1)
    return False


def run_and_kill_a_worker(cmd: List[str], cluster, progress: Path) -> str:
    """Runs ``cmd`` on the cluster and SIGKILLs one worker once tasks are
    processing on the workers; returns what happened."""
    workers = ensure_workers(cluster, 2)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    victim = workers[0]
    what = "finished before the kill"
    t0 = time.monotonic()
    if wait_for_work(cluster["address"], proc):
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=60)
        what = f"killed a worker after {time.monotonic() - t0:.1f} s, tasks processing"
    out, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
    return what


def test_encode_dataset_survives_a_killed_worker(cluster, corpus, tmp_path, record_property):
    from bytepair import Tokenizer

    tok = Tokenizer.train([Path(corpus[0]).read_text("utf-8")[:100000]], vocab_size=800,
                          special_tokens=["<|endoftext|>"])
    tok.save(str(tmp_path / "tok.json"))
    args = ["encode-dataset", "-t", str(tmp_path / "tok.json"), *corpus, "--shard-mb", "0.25", "--append-eot"]
    done = subprocess.run(bytepair(*args, "-o", str(tmp_path / "ref")), capture_output=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    what = run_and_kill_a_worker(bytepair(*args, "-o", str(tmp_path / "out"), "--dask", cluster["address"]),
                                 cluster, tmp_path / "out.partial" / "parts")
    record_property("dask_fault", {"encode-dataset": what})
    assert "killed" in what, what
    assert tree(tmp_path / "out") == tree(tmp_path / "ref")
    assert not (tmp_path / "out.partial").exists()


def test_train_survives_a_killed_worker(cluster, corpus, tmp_path, record_property):
    args = ["train", *(corpus * 4), "--vocab-size", "1500"]
    done = subprocess.run(bytepair(*args, "-o", str(tmp_path / "ref.json")), capture_output=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    what = run_and_kill_a_worker(bytepair(*args, "-o", str(tmp_path / "out.json"), "--dask", cluster["address"]),
                                 cluster, tmp_path / "never")
    record_property("dask_fault", {"train": what})
    assert "killed" in what, what
    assert (tmp_path / "out.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_unreachable_scheduler_is_a_clear_error(corpus, tmp_path):
    import socket

    from bytepair import Tokenizer

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    Tokenizer.train("a b c", vocab_size=260).save(str(tmp_path / "enc.json"))
    # both commands at once: each waits for the client's connect timeout, Dask's setting (30 s by default,
    # 3 s here through Dask's environment variable: the command must follow the user's Dask configuration)
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="3s")
    runs = {args[0]: subprocess.Popen(bytepair(*args, "--dask", f"tcp://127.0.0.1:{port}"), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, env=env)
            for args in (["train", *corpus[:1], "--vocab-size", "300", "-o", str(tmp_path / "t.json")],
                         ["encode-dataset", "-t", str(tmp_path / "enc.json"), *corpus[:1], "-o", str(tmp_path / "out")])}
    try:
        for command, proc in runs.items():
            _, err = proc.communicate(timeout=180)
            err = err.decode(errors="replace").strip()
            assert proc.returncode == 1, (command, err[-2000:])
            assert "Dask scheduler" in err and f"127.0.0.1:{port}" in err, err[-2000:]
            assert len(err.splitlines()) == 1 and "Traceback" not in err, err[-2000:]
    finally:
        for proc in runs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("command", ["encode-dataset", "train"])
def test_scheduler_going_away_is_a_clear_error(corpus, tmp_path, command):
    """A scheduler SIGKILLed during a job (its own small cluster): the
    command ends within the hang guard with a one-line error and exit
    status 1; no output (encode-dataset keeps OUTDIR.partial to resume)."""
    from bytepair import Tokenizer

    sfile = tmp_path / "scheduler.json"
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", ":0", "--scheduler-file", str(sfile)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        for _ in range(600):
            if sfile.exists() and sfile.stat().st_size:
                break
            time.sleep(0.1)
        worker = _start_worker(sfile, "lonely", tmp_path / "worker.log")
        address = json.loads(sfile.read_text())["address"]
        for _ in range(600):
            if _n_workers(address) == 1:
                break
            time.sleep(0.2)
        Tokenizer.train("a b c", vocab_size=260).save(str(tmp_path / "t.json"))
        if command == "train":
            # the same files several times: counting on the one worker outlasts the kill
            args = ["train", *(corpus * 8), "--vocab-size", "1500", "-o", str(tmp_path / "out.json")]
        else:
            args = ["encode-dataset", "-t", str(tmp_path / "t.json"), *corpus, "-o", str(tmp_path / "out")]
        proc = subprocess.Popen(bytepair(*args, "--dask", address), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert wait_for_work(address, proc), "the job ended before the scheduler was killed"
        scheduler.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=180)
    finally:
        for p in (scheduler, worker):
            if p is not None and p.poll() is None:
                p.kill()
            if p is not None:
                p.wait(timeout=60)
    text = err.decode(errors="replace").strip()
    assert proc.returncode == 1, text[-3000:]
    assert len(text.splitlines()) == 1 and "went away" in text and address in text, text[-3000:]
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.json").exists()


def test_a_forgotten_task_is_submitted_again():
    """A task the scheduler cancelled with the client still connected (its worker killed while holding what the
    task needs: "already forgotten") is submitted again when the caller can; otherwise the error stands."""
    from bytepair.distributed import result_of

    class FutureCancelledError(Exception):  # distributed's, by name
        pass

    class Forgotten:
        def result(self):
            raise FutureCancelledError("encode_unit-1 cancelled for reason: already forgotten.")

    class Done:
        def result(self):
            return 7

    calls = []
    assert result_of(Forgotten(), resubmit=lambda: calls.append(1) or Done()) == 7 and calls == [1]
    with pytest.raises(FutureCancelledError):
        result_of(Forgotten())
