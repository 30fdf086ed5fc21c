"""The HTTP side of ``bytepair serve`` (see :mod:`bytepair.cli.serve`):
a threaded ``http.server`` with the page and the JSON API, bounded requests.
Imported only when serving, so that ``bytepair --help`` stays fast.

It knows nothing of tokenizing: the server gives it the reply function of
each JSON endpoint (:func:`handler`), and the timeouts and limits
(``make_server`` in :mod:`bytepair.cli.serve` sets them on the server)."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from http import HTTPStatus
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Type

from bytepair.errors import BytepairError
from bytepair.tokenizer import Tokenizer

# a JSON endpoint: (the server's tokenizers, the tokenizer's name, the request's JSON object) -> the answer
Reply = Callable[[Dict[str, Tokenizer], str, Dict[str, Any]], Dict[str, Any]]
GET_PATHS = ("/", "/index.html", "/api/tokenizers")  # the page and the list of tokenizers


def handler(replies: Mapping[str, Reply], idle_timeout: float) -> Type[BaseHTTPRequestHandler]:
    """The request handler class of a server: ``POST`` to a path of
    ``replies`` is answered by its function (once the body is checked: UTF-8
    JSON with a ``text`` string and a known ``tokenizer``); a read or write
    may wait ``idle_timeout`` seconds.

    >>> Handler = handler({"/count": lambda toks, name, body: {"count": toks[name].count(body["text"])}}, 5.0)
    >>> sorted(Handler.replies), Handler.timeout
    (['/count'], 5.0)
    """
    return type("Handler", (_Handler,), {"replies": dict(replies), "timeout": idle_timeout})


class _Handler(BaseHTTPRequestHandler):
    server: "Server"
    replies: Dict[str, Reply] = {}  # set by handler()
    timeout: Optional[float] = None  # seconds a connection may stay idle (socket timeout), set by handler()
    server_version = "bytepair-serve"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        if self.server.log:
            sys.stderr.write("bytepair serve: %s %s\n" % (self.address_string(), format % args))

    def _send(self, status: int, body: bytes, content_type: str,
              headers: Optional[Mapping[str, str]] = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._json(status, {"error": message})

    def _wrong_method(self, path: str, allowed: str) -> None:
        """405 naming the method that ``path`` takes (and ``Allow``, as HTTP asks)."""
        body = json.dumps({"error": f"{path}: use {allowed} ({self.command} is not supported here)"})
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, body.encode("utf-8"), "application/json; charset=utf-8",
                   {"Allow": allowed if allowed == "POST" else "GET, HEAD"})

    def handle_one_request(self) -> None:
        # a request (from waiting for its first line to the end of the reply) has server.request_timeout seconds:
        # a client sending a byte now and then is cut off, which the per-read idle timeout alone would not do
        token = self.server.watchdog.arm(self.connection, self.server.request_timeout)
        try:
            super().handle_one_request()
        except (ConnectionError, socket.timeout, TimeoutError):
            self.close_connection = True
        finally:
            if self.server.watchdog.disarm(token):  # the watchdog cut it off
                self.close_connection = True

    def _linger(self) -> None:
        """After refusing a body unread: stop sending, then discard what the
        client still sends for a moment (at most LINGER_BYTES, LINGER_SECONDS),
        so that closing does not reset the connection before the client has
        read the answer (nginx's lingering close)."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER_SECONDS
            left = LINGER_BYTES
            while left > 0 and time.monotonic() < deadline:
                self.connection.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = self.connection.recv(min(65536, left))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:
            pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path in GET_PATHS[:2]:
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif path == "/api/tokenizers":
            self._json(HTTPStatus.OK, {"tokenizers": [
                {"name": n, "model": t.model, "n_vocab": t.n_vocab, "special_tokens": sorted(t.special_tokens)}
                for n, t in self.server.tokenizers.items()
            ]})
        elif path in self.replies:
            self._wrong_method(path, "POST")
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no such page: {path}")

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path not in self.replies:
            self.close_connection = True  # the body is not read
            if path in GET_PATHS:
                self._wrong_method(path, "GET")
            else:
                self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {path}")
            return
        try:
            self._answer(path)
        except Exception as e:  # never a dropped connection without an answer
            if isinstance(e, (ConnectionError, socket.timeout, TimeoutError)):
                raise
            self.close_connection = True
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {type(e).__name__}")

    def _answer(self, path: str) -> None:
        ctype = (self.headers.get("Content-Type") or "").lower()
        mime, _, params = ctype.partition(";")
        charset = params.split("charset=", 1)[1].strip().strip('"') if "charset=" in params else "utf-8"
        if mime.strip() not in JSON_TYPES or charset not in ("utf-8", "utf8"):
            self.close_connection = True  # the body is not read
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                        f"the body must be UTF-8 JSON (Content-Type: application/json), not {ctype or 'none'!r}"[:300])
            self._linger()
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._error(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is required")
            return
        if int(length) > self.server.max_bytes:
            self.close_connection = True  # the body is not read
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the request is larger than {self.server.max_bytes} bytes")
            self._linger()
            return
        raw = self.rfile.read(int(length))
        if len(raw) < int(length):
            self.close_connection = True
            self._error(HTTPStatus.BAD_REQUEST, f"the body ended after {len(raw)} of {length} bytes")
            return
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            self._error(HTTPStatus.BAD_REQUEST, f"the body is not UTF-8 JSON: {e}")
            return
        except RecursionError:
            self._error(HTTPStatus.BAD_REQUEST, "the body is not UTF-8 JSON: nested too deeply")
            return
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            self._error(HTTPStatus.BAD_REQUEST, 'expected a JSON object {"text": "...", "tokenizer": "..."}')
            return
        try:
            data["text"].encode("utf-8")
        except UnicodeEncodeError as e:
            self._error(HTTPStatus.BAD_REQUEST, f"the text holds a lone surrogate ({e.object[e.start]!r}) at "
                        f"character {e.start}: it is not Unicode text")
            return
        names = list(self.server.tokenizers)
        name = data.get("tokenizer") or names[0]
        if not isinstance(name, str) or name not in self.server.tokenizers:
            self._error(HTTPStatus.BAD_REQUEST, f"unknown tokenizer {name!r}: use one of {', '.join(names)}")
            return
        try:
            reply = self.server.workers.submit(self.replies[path], self.server.tokenizers, name, data).result()
        except BytepairError as e:
            self._error(HTTPStatus.BAD_REQUEST, str(e).splitlines()[0])
            return
        self._json(HTTPStatus.OK, reply)


LINGER_SECONDS = 2.0
LINGER_BYTES = 1 << 20

# what a client may send the JSON as: curl -d and urllib send form-urlencoded unless told otherwise
JSON_TYPES = {"application/json", "text/plain", "application/x-www-form-urlencoded", ""}


class _Watchdog:
    """Cuts off (shuts down) the connections whose request runs past its
    deadline: one thread for the whole server, waking twice a second."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: Dict[int, Tuple[socket.socket, float]] = {}
        self._fired: set = set()
        self._next = 0
        self._thread: Optional[threading.Thread] = None

    def arm(self, sock: socket.socket, seconds: float) -> int:
        with self._lock:
            self._next += 1
            self._armed[self._next] = (sock, time.monotonic() + seconds)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="bytepair-serve-watchdog", daemon=True)
                self._thread.start()
            return self._next

    def disarm(self, token: int) -> bool:
        """Whether the deadline had passed (the connection was cut off)."""
        with self._lock:
            self._armed.pop(token, None)
            if token in self._fired:
                self._fired.discard(token)
                return True
            return False

    def _run(self) -> None:
        while True:
            time.sleep(0.5)
            now = time.monotonic()
            with self._lock:
                late = [(t, s) for t, (s, deadline) in self._armed.items() if deadline < now]
                for t, _ in late:
                    del self._armed[t]
                    self._fired.add(t)
            for _, sock in late:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Server(ThreadingHTTPServer):
    """The threaded HTTP server with the tokenizers and the page. At most
    ``max_connections`` connections are served at once (more get a 503 and
    are closed); each request has ``request_timeout`` seconds.

    The replies are computed by a pool of one worker per core, not by the
    connections' threads: the core keeps a bounded cache per thread, so the
    memory is the pool's few caches (warm across connections), not one per
    connection ever opened (a thread per connection left glibc's arenas
    holding a cache's worth each)."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog (socketserver's 5 resets bursts of connections)
    tokenizers: Dict[str, Tokenizer]
    page: bytes
    max_bytes: int
    log: bool
    url: str
    request_timeout: float  # set before __init__ (see bytepair.cli.serve.make_server)
    max_connections: int

    def server_activate(self) -> None:
        super().server_activate()
        self.watchdog = _Watchdog()
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self.workers = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="bytepair-serve")

    def server_close(self) -> None:
        super().server_close()
        if hasattr(self, "workers"):
            self.workers.shutdown(wait=False, cancel_futures=True)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)
                body = json.dumps({"error": f"busy: {self.max_connections} connections are open; try again"}).encode()
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                b"Connection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that goes away is not an error of the server's; the rest is printed when logging
        if self.log and not isinstance(sys.exc_info()[1], (ConnectionError, socket.timeout, TimeoutError)):
            super().handle_error(request, client_address)


class Server6(Server):
    """The same on an IPv6 address."""

    address_family = socket.AF_INET6
