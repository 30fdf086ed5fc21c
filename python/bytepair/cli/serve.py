"""``bytepair serve``: a local web page to try tokenizers live.

One types text and sees it cut into coloured tokens (the ids on hover), the
list of ids and the token count, updated on every keystroke; a menu switches
between the tokenizers given with ``-t``, and the counts of all of them are
shown side by side. Pieces are drawn as in ``bytepair show`` (byte-model
tokens that hold part of a UTF-8 character are grouped into whole
characters, one piece with all their ids).

The server is the standard library's ``http.server`` (threaded) and listens
on 127.0.0.1 by default; ``--port 0`` picks a free port. The first line
printed (on standard output) is the page's address and nothing else. Requests are bounded: bodies of at most
``--max-bytes`` (1 MiB by default; a larger one gets 413 unread), 15 seconds
for any read or write, 30 seconds for a whole request (a client trickling
bytes is cut off), at most 64 connections at once (more get 503). The body
must be UTF-8 JSON (``Content-Type: application/json``; ``text/plain`` and
the form type that ``curl -d`` sends are accepted, anything else gets 415);
every refusal is a 4xx with ``{"error": "..."}``.

JSON API (what the page uses):

- ``GET /api/tokenizers`` -> ``{"tokenizers": [{"name", "model", "n_vocab",
  "special_tokens"}]}``
- ``POST /api/tokenize`` (other methods get 405 naming POST) with ``{"text": str, "tokenizer": name (default:
  the first), "special": bool (special-token text as special tokens;
  default false: plain text, as ``count``)}`` -> ``{"tokenizer", "count",
  "chars", "ids", "tokens": [{"id", "text"}], "pieces": [{"text", "ids",
  "kind", "start"}], "counts": {name: count for every tokenizer}, "unknown": n}``
  (``unknown``: char-model characters without an id, which ``encode`` would
  refuse; each is counted as one token). A token's ``text`` shows invalid
  UTF-8 (part of a character) as ``\\xNN``.
- ``POST /api/explain`` with ``{"text", "tokenizer", "offset"}`` -> how the
  piece holding character ``offset`` is encoded: ``bytepair.explain``'s data
  plus ``"lesson"``, the text ``bytepair explain`` prints (the page shows it
  for a clicked token).

Examples::

    $ bytepair serve -t tok.json
    http://127.0.0.1:8000/
    $ bytepair serve -t gpt2.json -t mine.json --port 0
    $ curl -s localhost:8000/api/tokenize -H 'Content-Type: application/json' -d '{"text": "hello world"}'

>>> import json, threading, urllib.request
>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("hello world " * 20, vocab_size=266)
>>> server = make_server({"tok": tok}, "127.0.0.1", 0)
>>> thread = threading.Thread(target=server.serve_forever, daemon=True); thread.start()
>>> req = urllib.request.Request(server.url + "api/tokenize", data=b'{"text": "hello world"}',
...                              headers={"Content-Type": "application/json"})
>>> reply = json.load(urllib.request.urlopen(req, timeout=10))
>>> reply["count"], reply["ids"] == tok.encode("hello world")
(2, True)
>>> server.shutdown(); server.server_close()
"""

from __future__ import annotations

import argparse
import html
import sys
from typing import TYPE_CHECKING, Any, Dict, TextIO

from bytepair.cli._pieces import HTML_STYLE, all_ids, pieces
from bytepair.cli.common import labels, load
from bytepair.cli.options import CliError, add_described, tokenizer_options, wrap
from bytepair.errors import BytepairError
from bytepair.tokenizer import Tokenizer

if TYPE_CHECKING:  # http.server is imported when serving (bytepair --help stays fast)
    from bytepair.cli._http import Server

MAX_BYTES = 1 << 20
IDLE_TIMEOUT = 15.0  # seconds a read or write may wait
REQUEST_TIMEOUT = 30.0  # seconds a whole request may take (a slow client is cut off)
MAX_CONNECTIONS = 64  # connections served at once; more get 503

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bytepair serve</title>
<style>%(style)s
header { display: flex; gap: 1.5em; align-items: center; flex-wrap: wrap; margin-bottom: 1em; }
header h1 { font-size: 1.3em; margin: 0; }
textarea { width: 100%%; box-sizing: border-box; min-height: 8em; font: 15px ui-monospace, monospace;
           padding: .6em; border: 1px solid #bbb; border-radius: 4px; }
.meta b { color: #000; }
#status { color: #c62828; }
.panel { border: 1px solid #ddd; border-radius: 4px; padding: .6em; min-height: 2em; margin-top: .5em; }
</style></head>
<body>
<header>
  <h1>bytepair</h1>
  <label>tokenizer <select id="tokenizer">%(options)s</select></label>
  <label title="encode special-token text (e.g. &lt;|endoftext|&gt;) as the special token">
    <input type="checkbox" id="special"> special tokens</label>
  <span id="status" role="status"></span>
</header>
<textarea id="text" placeholder="Type or paste text here" autofocus spellcheck="false"></textarea>
<p class="meta"><b id="count">0</b> tokens, <span id="chars">0</span> characters
  <span id="unknown"></span> &middot; <span id="counts"></span></p>
<div class="tokens panel" id="tokens" title="hover over a token to see its id"></div>
<h2 style="font-size:1em">ids</h2>
<div class="ids panel" id="ids"></div>
<h2 style="font-size:1em">how a clicked token is encoded</h2>
<pre class="panel" id="explain">click a token</pre>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let seq = 0, timer = null;
window.bytepairRendered = null;   // {text, tokenizer, special} on screen (tests wait for it)
function span(text, cls, title) {
  const s = document.createElement("span");
  s.textContent = text; s.className = cls; if (title) s.title = title; return s;
}
function render(data, request) {
  const tokens = $("tokens"), ids = $("ids");
  tokens.replaceChildren(); ids.replaceChildren();
  let k = 0;
  for (const p of data.pieces) {
    const start = p.kind === "marker" ? Math.max(0, p.start - 1) : p.start;  // a marker: its word
    if (p.kind === "gap") { tokens.append(p.text); continue; }
    const cls = "c" + (k %% 5) + (p.kind === "token" ? "" : " " + p.kind);
    const label = p.ids.length ? (p.ids.length > 1 ? "ids " : "id ") + p.ids.join(" ") : "no id";
    const s = span(p.text, cls, label + (p.kind === "special" ? " (special token)" : ""));
    s.dataset.ids = p.ids.join(" ");
    s.dataset.offset = start;
    s.addEventListener("click", () => explain(request, start));
    tokens.append(s);
    for (const id of p.ids) { ids.append(span(String(id), "c" + (k %% 5), p.text), " "); }
    k++;
  }
  $("count").textContent = data.count;
  $("chars").textContent = data.chars;
  $("unknown").textContent = data.unknown ? "(" + data.unknown + " unknown characters: encode would fail)" : "";
  $("counts").textContent = Object.entries(data.counts).map(([n, c]) => n + ": " + c).join(" \\u00b7 ");
  $("status").textContent = "";
  window.bytepairRendered = request;
}
async function update() {
  const request = {text: $("text").value, tokenizer: $("tokenizer").value, special: $("special").checked};
  const my = ++seq;
  const ctl = new AbortController(), timeout = setTimeout(() => ctl.abort(), 10000);
  try {
    const r = await fetch("api/tokenize", {
      method: "POST", headers: {"Content-Type": "application/json"}, signal: ctl.signal,
      body: JSON.stringify(request),
    });
    const data = await r.json();
    if (my !== seq) return;
    if (!r.ok) { $("status").textContent = data.error || r.statusText; return; }
    render(data, request);
  } catch (e) {
    if (my === seq) $("status").textContent = "request failed: " + e;
  } finally { clearTimeout(timeout); }
}
async function explain(request, offset) {
  try {
    const r = await fetch("api/explain", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({text: request.text, tokenizer: request.tokenizer, offset: offset}),
    });
    const data = await r.json();
    $("explain").textContent = r.ok ? data.lesson : (data.error || r.statusText);
  } catch (e) { $("explain").textContent = "request failed: " + e; }
}
function schedule() { clearTimeout(timer); timer = setTimeout(update, 60); }
$("text").addEventListener("input", schedule);
$("tokenizer").addEventListener("change", update);
$("special").addEventListener("change", update);
update();
</script>
</body></html>
"""


def tokenize_reply(toks: Dict[str, Tokenizer], name: str, text: str, special: bool) -> Dict[str, Any]:
    """The answer of ``POST /api/tokenize``."""
    allowed = "all" if special else ()
    reply: Dict[str, Any] = {"tokenizer": name}
    counts = {}
    for other, tok in toks.items():
        ps = pieces(tok, text, allowed_special=allowed)
        counts[other] = sum(p.n_tokens for p in ps)
        if other == name:
            ids = all_ids(ps)
            reply.update(
                count=counts[other],
                chars=len(text),
                ids=ids,
                tokens=[{"id": i, "text": tok.decode_single_token_bytes(i).decode("utf-8", "backslashreplace")}
                        for i in ids],
                pieces=[{"text": p.text, "ids": p.ids, "kind": p.kind, "start": p.start} for p in ps],
                unknown=sum(1 for p in ps if p.kind == "unknown" and not p.ids),
            )
    reply["counts"] = counts
    return reply


def explain_reply(toks: Dict[str, Tokenizer], name: str, text: str, offset: Any) -> Dict[str, Any]:
    """The answer of ``POST /api/explain``: how the piece of ``text`` that
    holds the character ``offset`` is encoded (:mod:`bytepair.explain`), as
    data and as the text ``bytepair explain`` prints."""
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < max(1, len(text)):
        raise BytepairError(f"offset must be a character position in the text, got {offset!r}")
    explanation = toks[name].explain(text, at=offset)
    reply = explanation.to_dict()
    reply.update(tokenizer=name, offset=offset, lesson=str(explanation))
    return reply


# the JSON endpoints: path -> reply (the HTTP handler checks the request, then calls it)
ENDPOINTS = {
    "/api/tokenize": lambda toks, name, data: tokenize_reply(toks, name, data["text"], bool(data.get("special"))),
    "/api/explain": lambda toks, name, data: explain_reply(toks, name, data["text"], data.get("offset")),
}


def make_server(
    tokenizers: Dict[str, Tokenizer],
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    max_bytes: int = MAX_BYTES,
    log: bool = False,
    request_timeout: float = REQUEST_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
) -> "Server":
    """A server (not yet serving: call ``serve_forever``) for the named
    tokenizers; ``port=0`` picks a free port. ``server.url`` is the page."""
    # http.server takes about 75 ms to import: only when serving (bytepair --help stays fast)
    from bytepair.cli._http import Server, Server6, handler

    cls = Server6 if ":" in host else Server
    server = cls.__new__(cls)
    server.request_timeout = request_timeout
    server.max_connections = max_connections
    server.__init__((host, port), handler(ENDPOINTS, IDLE_TIMEOUT))  # type: ignore[misc]
    server.tokenizers = dict(tokenizers)
    options = "".join(f'<option value="{html.escape(n)}">{html.escape(n)}</option>' for n in tokenizers)
    server.page = (PAGE % {"style": HTML_STYLE, "options": options}).encode("utf-8")
    server.max_bytes = max_bytes
    server.log = log
    bound_port = server.server_address[1]
    server.url = f"http://{'[' + host + ']' if ':' in host else host}:{bound_port}/"
    return server


def run(args: argparse.Namespace, out: TextIO) -> int:
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port} is not a port number (0-65535; 0 picks a free port)")
    if args.max_bytes < 1:
        raise CliError("--max-bytes must be at least 1")
    if not args.request_timeout > 0:
        raise CliError("--request-timeout must be more than 0 seconds")
    if args.max_connections < 1:
        raise CliError("--max-connections must be at least 1")
    names = labels(args.tokenizer)
    toks = {n: load(p, args) for n, p in zip(names, args.tokenizer)}
    try:
        server = make_server(toks, args.host, args.port, max_bytes=args.max_bytes, log=args.log,
                             request_timeout=args.request_timeout, max_connections=args.max_connections)
    except OSError as e:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}") from None
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"bytepair serve: warning: listening on {args.host}: anyone who can reach it can use the page",
              file=sys.stderr)
    print(server.url, file=out, flush=True)  # the first line is the address alone, for scripts
    print("bytepair serve: serving the page above (Ctrl-C to stop)", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        print("bytepair serve: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "serve",
        help="a local web page to try tokenizers live",
        description=wrap(
            "Serve a web page where one types text and sees its tokens (coloured, id on hover), "
            "their ids and the token count live, switching between the tokenizers given with -t "
            "(the counts of all of them are shown side by side). Special-token text is plain text "
            "unless the page's 'special tokens' box is ticked. The first line printed on standard "
            "output is the page's address alone (http://HOST:PORT/); Ctrl-C stops the server.",
            "JSON API: GET /api/tokenizers; POST /api/tokenize {\"text\": ..., \"tokenizer\": name, "
            "\"special\": false} -> {count, ids, tokens: [{id, text}], pieces, counts}.",
        ),
        epilog=(
            "examples:\n"
            "  bytepair serve -t tok.json\n"
            "  bytepair serve -t gpt2.json -t mine.json --port 0\n"
            "  curl -s localhost:8000/api/tokenize -H 'Content-Type: application/json' -d '{\"text\": \"hello world\"}'"
        ),
    )
    tokenizer_options(p, multiple=True, read_input=False)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 for every interface)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free port)")
    p.add_argument("--max-bytes", type=int, default=MAX_BYTES, metavar="N",
                   help=f"largest request body accepted (default {MAX_BYTES}, 1 MiB)")
    p.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT, metavar="SECONDS",
                   help=f"time a whole request may take, slow clients are cut off (default {REQUEST_TIMEOUT:g})")
    p.add_argument("--max-connections", type=int, default=MAX_CONNECTIONS, metavar="N",
                   help=f"connections served at once; more get 503 (default {MAX_CONNECTIONS})")
    p.add_argument("--log", action="store_true", help="print each request on standard error")
    p.set_defaults(run=run)
