"""The fetch scripts (scripts/get_vocabs.py, and get_tokenizers.py / get_published.py through it) when several
processes or threads ask for the same file at once, as pytest-xdist workers' session fixtures do: one fetches,
the others wait and find the file in place."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import os
import threading
import time
import types

import pytest

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


@contextlib.contextmanager
def _index(files: dict, digests: dict):
    """A package index's simple pages on localhost, for the files ``{name: bytes}`` of project ``some-pkg``, each
    link with the sha256 ``digests`` gives (the true one where absent)."""
    links = "".join(f'<a href="../../files/{n}#sha256={digests.get(n, hashlib.sha256(d).hexdigest())}">{n}</a>'
                    for n, d in files.items())

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/simple/some-pkg/":
                body = f"<html><body>{links}</body></html>".encode()
            elif self.path.startswith("/files/") and self.path[7:] in files:
                body = files[self.path[7:]]
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()


def test_release_files_come_from_the_index_page_and_pip_only_where_it_lacks_them(tmp_path, monkeypatch):
    """An archive is read straight from the index's simple page (PIP_INDEX_URL), its sha256 checked, with no
    `pip download` (which prepares an sdist's metadata by installing its build backend); a file the page does
    not list is left to pip; a file whose digest differs from the page's is refused by name."""
    g = _get_vocabs_module()
    sdist = b"an sdist's bytes"
    pip_calls = []
    monkeypatch.setattr(g.subprocess, "run", lambda cmd, **kw: pip_calls.append(cmd) or
                        types.SimpleNamespace(returncode=1, stdout=b"no network"))
    with _index({"some_pkg-1.0.tar.gz": sdist, "bad-1.0.tar.gz": b"x"}, {"bad-1.0.tar.gz": "0" * 64}) as url:
        monkeypatch.setenv("PIP_INDEX_URL", url)
        v = g.Vocab("v.txt", "Some_Pkg==1.0", ["--no-binary", "some-pkg"], "some_pkg-1.0.tar.gz", "v.txt", "")
        path = g._archive(v, str(tmp_path / "a"))
        assert open(path, "rb").read() == sdist and pip_calls == []
        missing = v._replace(archive="some_pkg-2.0.tar.gz")
        with pytest.raises(g.FetchError, match="pip download"):
            g._archive(missing, str(tmp_path / "b"))
        assert len(pip_calls) == 1 and pip_calls[0][-1] == "Some_Pkg==1.0"
        with pytest.raises(g.FetchError, match="bad-1.0.tar.gz: sha256 .* the index says 0000"):
            g._archive(v._replace(archive="bad-1.0.tar.gz"), str(tmp_path / "c"))
        assert not os.path.exists(tmp_path / "c" / "bad-1.0.tar.gz")
