"""``bytepair serve`` under load and abuse (issue 17, item 2), against the
real command (``python -m bytepair serve``, a separate process) on
127.0.0.1.

- Load: 32 client threads on keep-alive connections send
  ``SERVE_LOAD_REQUESTS`` requests in all (default 2,000; the figures of a
  20,000-request run are in SECURITY.md), random texts of
  tests/data/multilingual.txt to two tokenizers (byte and char models).
  Every reply is a 200 whose ids equal ``encode_ordinary`` of the text,
  computed in this process (the server's ``special`` is false: special-token
  text is plain text). p50/p99 latency and the server's RSS (from
  /proc/PID/status, after a warm-up round and after each of four more) are
  reported; RSS may not grow by more than ``RSS_GROWTH_MIB`` from the end of
  the first round after the warm-up to the end of the run.
- Abuse: a body over ``--max-bytes`` gets 413 while most of it is still
  unsent; a client trickling bytes, or silent, is cut off by
  ``--request-timeout``; malformed JSON, deep nesting, wrong content types,
  invalid UTF-8, lone surrogates, unknown tokenizer names, truncated bodies
  each get a 4xx with a JSON ``error``; more connections than
  ``--max-connections`` get 503. After all of it the server still answers
  and has printed no traceback.

The loops are bounded and every socket has a timeout (hang guards); no
assertion is on speed.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from bytepair import Tokenizer

HERE = Path(__file__).resolve().parent
LINES = [line for line in (HERE / "data" / "multilingual.txt").read_text(encoding="utf-8").splitlines() if line]
REQUESTS = int(os.environ.get("SERVE_LOAD_REQUESTS", "2000"))
CLIENTS = 32
RSS_GROWTH_MIB = 8  # measured growth with the worker pool: under 1 MiB (SECURITY.md)
MAX_BYTES = 65536
REQUEST_TIMEOUT = 10.0
SLOW_CLIENT_TIMEOUT = 2.0  # the slow-client tests' server: each such test lasts about this long
MAX_CONNECTIONS = 48
TIMEOUT = 60  # seconds any socket operation of the tests may wait (a hang guard)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def start_server(tmp_path_factory, request_timeout: float):
    """A ``bytepair serve`` process on two trained tokenizers, stopped when the generator ends."""
    tmp = tmp_path_factory.mktemp("serve")
    corpus = "\n".join(LINES * 3)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toks = {"bytes.json": Tokenizer.train(corpus, vocab_size=600),
                "chars.json": Tokenizer.train(corpus, model="char", num_merges=300)}
    for name, tok in toks.items():
        tok.save(str(tmp / name))
    cmd = [sys.executable, "-m", "bytepair", "serve", "-t", str(tmp / "bytes.json"), "-t", str(tmp / "chars.json"),
           "--port", "0", "--max-bytes", str(MAX_BYTES), "--request-timeout", str(request_timeout),
           "--max-connections", str(MAX_CONNECTIONS)]
    err = open(tmp / "stderr.txt", "wb")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, cwd=tmp)
    box: Dict[str, bytes] = {}
    reader = threading.Thread(target=lambda: box.setdefault("line", proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=60)
    url = re.search(r"http://127\.0\.0\.1:(\d+)/", box.get("line", b"").decode())
    assert url, (box, proc.poll())
    try:
        yield {"port": int(url.group(1)), "proc": proc, "toks": toks, "stderr": tmp / "stderr.txt"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()
        err.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from start_server(tmp_path_factory, REQUEST_TIMEOUT)


@pytest.fixture(scope="module")
def impatient_server(tmp_path_factory):
    """A server that gives up on a request after SLOW_CLIENT_TIMEOUT seconds (the slow-client tests wait that long)."""
    yield from start_server(tmp_path_factory, SLOW_CLIENT_TIMEOUT)


def post(port: int, body: bytes, headers: Dict[str, str] = None, conn: http.client.HTTPConnection = None
         ) -> Tuple[int, dict]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request("POST", "/api/tokenize", body=body,
                     headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        data = r.read()
        assert r.getheader("Content-Type", "").startswith("application/json"), (r.status, data[:200])
        return r.status, json.loads(data)
    finally:
        if own:
            conn.close()


def alive(srv) -> None:
    assert srv["proc"].poll() is None, "the server died"
    status, reply = post(srv["port"], json.dumps({"text": "still here"}).encode())
    assert status == 200 and reply["ids"] == srv["toks"]["bytes.json"].encode_ordinary("still here")


# ---------------------------------------------------------------- load


def test_load_32_clients(server, record_property):
    rng = random.Random(17)
    texts = []
    for _ in range(400):
        k = rng.randint(1, 4)
        start = rng.randrange(len(LINES))
        texts.append("\n".join(LINES[start:start + k])[: rng.choice([20, 200, 2000, 20000])])
    names = list(server["toks"])
    expected = {(n, t): server["toks"][n].encode_ordinary(t) for n in names for t in texts}
    jobs = [(rng.choice(names), rng.choice(texts)) for _ in range(REQUESTS)]
    latencies: List[float] = []
    errors: List[str] = []
    lock = threading.Lock()

    def client(share: List[Tuple[str, str]]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server["port"], timeout=TIMEOUT)
        try:
            for name, text in share:
                t0 = time.perf_counter()
                status, reply = post(server["port"], json.dumps({"text": text, "tokenizer": name}).encode(),
                                     conn=conn)
                dt = time.perf_counter() - t0
                ok = status == 200 and reply["ids"] == expected[name, text] and reply["tokenizer"] == name
                with lock:
                    latencies.append(dt)
                    if not ok:
                        errors.append(f"{status} {name} {text[:40]!r}: {str(reply)[:200]}")
        except Exception as e:  # reported below, with the others
            with lock:
                errors.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    def run(share_of: List[Tuple[str, str]]) -> None:
        threads = [threading.Thread(target=client, args=(share_of[k::CLIENTS],)) for k in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=1800)
            assert not t.is_alive(), "a client hangs"

    # a warm-up round (the server's threads, caches and allocator arenas fill), then four rounds with the
    # RSS sampled after each: it may not keep growing with the number of requests
    quarter = len(jobs) // 5
    rss = []
    for k in range(5):
        run(jobs[k * quarter: (k + 1) * quarter if k < 4 else len(jobs)])
        rss.append(rss_kib(server["proc"].pid))
    rss_before, rss_after = rss[1], rss[-1]
    assert not errors, f"{len(errors)} bad replies, first: {errors[:5]}"
    assert len(latencies) == len(jobs)
    q = statistics.quantiles(latencies, n=100)
    figures = {"requests": len(jobs), "clients": CLIENTS, "p50_ms": round(q[49] * 1000, 2),
               "p99_ms": round(q[98] * 1000, 2), "rss_before_mib": round(rss_before / 1024, 1),
               "rss_after_mib": round(rss_after / 1024, 1), "rss_rounds_mib": [round(r / 1024, 1) for r in rss]}
    record_property("serve_load", figures)
    print("serve load:", figures)
    assert rss_after - rss_before < RSS_GROWTH_MIB * 1024, figures
    alive(server)


# ---------------------------------------------------------------- abuse


def raw(port: int, data: bytes, *, read: bool = True) -> bytes:
    """Sends ``data`` on a new connection and reads the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(data)
        if not read:
            return b""
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
        return out


def status_and_json(answer: bytes) -> Tuple[int, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"application/json" in head, head
    return status, json.loads(body)


def test_body_over_limit_gets_413_unread(server):
    declared = 10**9
    with socket.create_connection(("127.0.0.1", server["port"]), timeout=TIMEOUT) as s:
        s.sendall(b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % declared)
        s.sendall(b'{"text": "' + b"a" * 4096)  # a sliver of the declared body
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    status, reply = status_and_json(answer)
    assert status == 413 and str(MAX_BYTES) in reply["error"]
    # the same for a body sent whole (the client sends it all before reading)
    body = json.dumps({"text": "x" * (MAX_BYTES + 10)}).encode()
    status, reply = status_and_json(raw(server["port"], b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\n"
                                        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
                                        + body))
    assert status == 413
    alive(server)


@pytest.mark.parametrize("kind", ["trickle", "silent", "slow-body"])
def test_slow_clients_time_out(impatient_server, kind):
    """The server closes the connection by itself (a recv returns nothing or
    fails) while the client is still trickling, long before the 60 s this
    loop could take."""
    server = impatient_server
    port = server["port"]
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        if kind == "slow-body":
            s.sendall(b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n")
        closed = False
        for k in range(120):  # at most 60 s
            try:
                if kind == "trickle":
                    s.sendall(b"POST /api/tokenize HTTP/1.1\r\n"[k % 30:k % 30 + 1] if k < 30 else b"X")
                elif kind == "slow-body":
                    s.sendall(b"a")
                s.settimeout(0.5)
                chunk = s.recv(4096)
                if not chunk:
                    closed = True
                    break
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                closed = True
                break
        assert closed, f"a {kind} client was not cut off"
    alive(server)


BAD = {
    "malformed-json": (b'{"text": "a",', {}),
    "not-an-object": (b'[1, 2]', {}),
    "text-not-a-string": (b'{"text": 3}', {}),
    "deep-nesting": (b'{"text": ' + b"[" * 60000 + b"]" * 60000 + b"}", {}),
    "invalid-utf8": (b'{"text": "caf\xe9"}', {}),
    "lone-surrogate": (b'{"text": "\\ud800x"}', {}),
    "unknown-tokenizer": (b'{"text": "a", "tokenizer": "nope.json"}', {}),
    "tokenizer-not-a-string": (b'{"text": "a", "tokenizer": {"a": 1}}', {}),
    "wrong-type-octet": (b'{"text": "a"}', {"Content-Type": "application/octet-stream"}),
    "wrong-type-multipart": (b'{"text": "a"}', {"Content-Type": "multipart/form-data; boundary=x"}),
    "wrong-type-html": (b'{"text": "a"}', {"Content-Type": "text/html"}),
    "wrong-charset": (b'{"text": "a"}', {"Content-Type": "application/json; charset=latin-1"}),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_requests_get_4xx_json(server, name):
    body, headers = BAD[name]
    status, reply = post(server["port"], body, headers)
    assert 400 <= status < 500, (status, reply)
    assert isinstance(reply.get("error"), str) and reply["error"] and "\n" not in reply["error"]
    alive(server)


def test_raw_protocol_abuse(server):
    port = server["port"]
    cases = [
        b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n",  # no length: 411
        b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        b"POST /api/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
        b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
    ]
    for data in cases:
        status, reply = status_and_json(raw(port, data.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)))
        assert 400 <= status < 500 and reply["error"], (data, status, reply)
    # a body shorter than its Content-Length, then the client stops sending
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"text\": \"a\"}")
        s.shutdown(socket.SHUT_WR)
        answer = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    status, reply = status_and_json(answer)
    assert status == 400 and "ended" in reply["error"]
    # garbage instead of HTTP: http.server answers 400 (HTML) or closes; the server lives on
    raw(port, b"\x00\xff\x16\x03\x01garbage\r\n\r\n")
    raw(port, b"A" * 70000 + b"\r\n\r\n")  # a request line over http.server's 65536
    alive(server)


def test_connection_flood_gets_503(server):
    port = server["port"]
    socks = []
    try:
        for _ in range(MAX_CONNECTIONS + 8):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT))
        time.sleep(0.5)
        # the connections past the limit were answered 503 and closed
        refused = 0
        for s in socks[MAX_CONNECTIONS:]:
            s.settimeout(10)
            answer = s.recv(65536)
            if answer.startswith(b"HTTP/1.1 503"):
                status, reply = status_and_json(answer)
                assert "busy" in reply["error"]
                refused += 1
        assert refused >= 1
    finally:
        for s in socks:
            s.close()
    time.sleep(0.5)
    alive(server)


def test_never_crashed(server):
    """Last in the module: the server lived through everything above."""
    alive(server)
    assert "Traceback" not in server["stderr"].read_text(errors="replace")


def test_pieces_shared_by_threads():
    """The race the load test found: the first requests to a char model,
    on several threads at once, shared a token table another thread was
    still filling (``tokenize and encode disagree``). Fresh tokenizers, 8
    threads released together, every result equal to one thread's."""
    import warnings

    from bytepair.cli._pieces import pieces

    text = "\n".join(LINES[:40])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = Tokenizer.train("\n".join(LINES * 2), model="char", num_merges=800)
    expected = [(p.text, p.ids, p.kind) for p in pieces(Tokenizer.from_dict(base.to_dict()), text)]
    failures: List[str] = []
    for _ in range(15):
        tok = Tokenizer.from_dict(base.to_dict())  # a new object: nothing computed for it yet
        start = threading.Barrier(8)

        def work() -> None:
            try:
                start.wait(timeout=60)
                got = [(p.text, p.ids, p.kind) for p in pieces(tok, text)]
                if got != expected:
                    failures.append("different pieces")
            except Exception as e:  # reported below
                failures.append(f"{type(e).__name__}: {e}")

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    assert not failures, failures[:3]
