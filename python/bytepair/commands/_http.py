"""The HTTP side of ``bytepair serve`` (see :mod:`bytepair.commands.serve`):
a threaded ``http.server`` with the page and the JSON API, bounded requests.
Imported only when serving, so that ``bytepair --help`` stays fast."""

from __future__ import annotations

import json
import socket
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict

from bytepair.commands.serve import IDLE_TIMEOUT, explain_reply, tokenize_reply
from bytepair.errors import BytepairError
from bytepair.tokenizer import Tokenizer


class _Handler(BaseHTTPRequestHandler):
    server: "Server"
    timeout = IDLE_TIMEOUT  # seconds a connection may stay idle (socket timeout)
    server_version = "bytepair-serve"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        if self.server.log:
            sys.stderr.write("bytepair serve: %s %s\n" % (self.address_string(), format % args))

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
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

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif path == "/api/tokenizers":
            self._json(HTTPStatus.OK, {"tokenizers": [
                {"name": n, "model": t.model, "n_vocab": t.n_vocab, "special_tokens": sorted(t.special_tokens)}
                for n, t in self.server.tokenizers.items()
            ]})
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no such page: {path}")

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path not in ("/api/tokenize", "/api/explain"):
            self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {path}")
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._error(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is required")
            return
        if int(length) > self.server.max_bytes:
            self.close_connection = True  # the body is not read
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the request is larger than {self.server.max_bytes} bytes")
            return
        raw = self.rfile.read(int(length))
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            self._error(HTTPStatus.BAD_REQUEST, f"the body is not UTF-8 JSON: {e}")
            return
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            self._error(HTTPStatus.BAD_REQUEST, 'expected a JSON object {"text": "...", "tokenizer": "..."}')
            return
        names = list(self.server.tokenizers)
        name = data.get("tokenizer") or names[0]
        if not isinstance(name, str) or name not in self.server.tokenizers:
            self._error(HTTPStatus.BAD_REQUEST, f"unknown tokenizer {name!r}: use one of {', '.join(names)}")
            return
        try:
            if path == "/api/explain":
                reply = explain_reply(self.server.tokenizers, name, data["text"], data.get("offset"))
            else:
                reply = tokenize_reply(self.server.tokenizers, name, data["text"], bool(data.get("special")))
        except BytepairError as e:
            self._error(HTTPStatus.BAD_REQUEST, str(e).splitlines()[0])
            return
        self._json(HTTPStatus.OK, reply)


class Server(ThreadingHTTPServer):
    """The threaded HTTP server with the tokenizers and the page."""

    daemon_threads = True
    tokenizers: Dict[str, Tokenizer]
    page: bytes
    max_bytes: int
    log: bool
    url: str


class Server6(Server):
    """The same on an IPv6 address."""

    address_family = socket.AF_INET6
