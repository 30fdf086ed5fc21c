"""The fetch scripts (scripts/get_vocabs.py, and get_tokenizers.py / get_published.py through it) when several
processes or threads ask for the same file at once, as pytest-xdist workers' session fixtures do: one fetches,
the others wait and find the file in place."""

from __future__ import annotations

import hashlib
import os
import threading
import time

from conftest import _get_vocabs_module


def test_concurrent_fetches_of_one_file_fetch_it_once(tmp_path, monkeypatch):
    g = _get_vocabs_module()
    data = b"a vocabulary\n"
    v = g.Vocab("sub/v.txt", "unused==1", [], "unused.whl", "v.txt", hashlib.sha256(data).hexdigest())
    inside, most, fetched = [0], [0], []
    lock = threading.Lock()

    def fake_fetch(vocab, cache, path):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.3)  # long enough for the other thread to reach the lock
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        fetched.append(threading.get_ident())
        with lock:
            inside[0] -= 1
        return path

    monkeypatch.setattr(g, "_fetch", fake_fetch)
    results = []
    threads = [threading.Thread(target=lambda: results.append(g.get_vocab(v, str(tmp_path)))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [str(tmp_path / "sub" / "v.txt")] * 3
    assert most[0] == 1 and len(fetched) == 1


def test_a_file_is_written_under_a_temporary_name_and_renamed(tmp_path, monkeypatch):
    """A reader never sees a half-written file: nothing is at the final path until the rename."""
    g = _get_vocabs_module()
    data = b"x" * 1000
    v = g.Vocab("v.txt", "unused==1", [], "unused.whl", "v.txt", hashlib.sha256(data).hexdigest())
    monkeypatch.setattr(g, "_archive", lambda vocab, folder: "unused.whl")
    monkeypatch.setattr(g, "_member", lambda archive, name: data)
    renames = []
    real_replace = os.replace

    def replace(src, dst):
        renames.append((os.path.basename(src), os.path.exists(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(g.os, "replace", replace)
    assert g.get_vocab(v, str(tmp_path)) == str(tmp_path / "v.txt")
    assert (tmp_path / "v.txt").read_bytes() == data
    assert len(renames) == 1 and renames[0][0].startswith(".get_vocabs-") and renames[0][1] is False
