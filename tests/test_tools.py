"""The tools around a tokenizer: ``show``, ``inspect``, ``compare``,
``serve`` (its JSON API and page, without a browser: see
test_serve_browser.py for the browser), and ``count`` with glob patterns.
Everything in-process through ``bytepair.cli.main`` except one subprocess
run of ``serve``; no network but loopback."""

from __future__ import annotations

import html.parser
import json
import re
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer
from bytepair.cli import build_parser, main
from bytepair.cli._pieces import all_ids, pieces
from bytepair.cli.compare import script_of, script_runs
from bytepair.cli.parser import COMMANDS
from cli_runner import run

TEXT = "the cat sat on the mat. the dog sat on the log! <|endoftext|> naïve café 🙂\n" * 5
EN = "The quick brown fox jumps over the lazy dog while the cat sleeps in the sun.\n" * 8
HI = "भारत एक विशाल देश है और यहाँ अनेक भाषाएँ बोली जाती हैं।\n" * 4
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def quiet_train(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Tokenizer.train(*args, **kwargs)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("tools")


@pytest.fixture(scope="module")
def byte_tok(folder):
    tok = quiet_train(TEXT + EN, vocab_size=320, special_tokens=["<|endoftext|>"])
    path = folder / "bytes.json"
    tok.save(str(path))
    return tok, path


@pytest.fixture(scope="module")
def char_tok(folder):
    tok = quiet_train(TEXT + EN, model="char", num_merges=60, end_of_word="</w>", byte_fallback=True)
    path = folder / "chars.json"
    tok.save(str(path))
    return tok, path


@pytest.fixture(scope="module")
def seed_tok(folder):
    """Seed 000's tokenizer: marker '_' separate (often a token on its own)."""
    tok = quiet_train(["lower", "lowest", "newer", "newest", "wider", "low", "new"],
                      model="char", end_of_word="_", tie_break="alphabetical", num_merges=6)
    path = folder / "seed.json"
    tok.save(str(path))
    return tok, path


# ---------------------------------------------------------------- all commands


MINE = ["bytepair.cli.show", "bytepair.cli.inspect", "bytepair.cli.compare", "bytepair.cli.serve"]


def test_commands_are_registered():
    assert set(MINE) <= set(COMMANDS)


@pytest.mark.parametrize("command", ["show", "serve", "compare", "inspect"])
def test_help_is_complete(command, capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    p = sub.choices[command]
    assert p.description and "examples:" in (p.epilog or "")
    for action in p._actions:
        assert action.help, f"{command} {action.option_strings or action.dest} has no help"
    assert next(c for c in sub._choices_actions if c.dest == command).help  # listed in bytepair --help
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    assert f"bytepair {command}" in capsys.readouterr().out


def test_missing_tokenizer_is_one_line_error(folder, capsys):
    for argv in (["show", "-t", folder / "nope.json", "x"], ["inspect", "-t", folder / "nope.json"],
                 ["compare", "-t", folder / "nope.json", "-"], ["serve", "-t", folder / "nope.json", "--port", "0"]):
        status, _ = run(*argv)
        assert status == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no such tokenizer file" in err


# ---------------------------------------------------------------- pieces (show and serve draw these)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list("the cat ñé🙂中\n\t.,<|>endoftx")), max_size=40))
def test_pieces_spell_the_text_and_carry_encode_ids(byte_tok, char_tok, text):
    tok = byte_tok[0]
    ps = pieces(tok, text)
    assert "".join(p.text for p in ps) == text
    assert all_ids(ps) == tok.encode_ordinary(text)
    assert all(p.ids for p in ps)
    special = pieces(tok, text, allowed_special="all")
    assert all_ids(special) == tok.encode(text, allowed_special="all")
    assert "".join(p.text for p in special) == text
    ctok = char_tok[0]
    cps = pieces(ctok, text)
    assert all_ids(cps) == ctok.encode_ordinary(text)
    assert "".join(p.text for p in cps if p.kind != "marker") == text
    for p in cps:
        assert text[p.start : p.end] == (p.text if p.kind != "marker" else "")


@pytest.fixture(scope="module")
def char_variants():
    """Char models of every kind: fused marker, a marker that is also a
    character of the text, no marker, a regex pre-tokenizer; unk or byte
    fallback or neither."""
    text = "the cat sat on the mat. the_dog sat on the log! naïve café 🙂\n" * 5
    return [
        quiet_train(text, model="char", num_merges=40, end_of_word_fused=True, unk_token="<unk>"),
        quiet_train(text, model="char", num_merges=40, end_of_word="_", unk_token="<unk>"),
        quiet_train(text, model="char", num_merges=40, end_of_word=None, byte_fallback=True),
        quiet_train(text, model="char", num_merges=40, pattern=r"\w+|[^\w\s]+", byte_fallback=True),
        quiet_train(text, model="char", num_merges=40, end_of_word="_"),
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list("the cat_ñé🙂中\n\t.,<|>dogx")), max_size=40))
def test_char_pieces_align_with_the_text(char_variants, text):
    for tok in char_variants:
        ps = pieces(tok, text)
        try:
            ids = tok.encode_ordinary(text)
        except Exception:  # an unknown character and neither unk nor fallback
            ids = None
        if ids is not None:
            assert all_ids(ps) == ids
        assert "".join(text[p.start : p.end] for p in ps) == text
        for p in ps:
            assert text[p.start : p.end] == (p.text if p.kind != "marker" else "")


def test_pieces_partial_modes(byte_tok):
    tok = byte_tok[0]
    ids = tok.encode("🙂")
    assert len(ids) > 1  # the emoji is split inside its UTF-8 bytes
    (group,) = pieces(tok, "🙂")
    assert group.text == "🙂" and group.ids == ids
    replaced = pieces(tok, "🙂", partial="replace")
    assert [p.ids for p in replaced] == [[i] for i in ids] and "\ufffd" in "".join(p.text for p in replaced)
    hexed = pieces(tok, "🙂", partial="hex")
    assert "".join(p.text for p in hexed) == "\\xf0\\x9f\\x99\\x82"
    assert [p.ids for p in hexed] == [[i] for i in ids]


def test_pieces_char_model_markers_and_unknowns(seed_tok):
    tok = seed_tok[0]
    ps = pieces(tok, "slower  low")
    assert [(p.text, p.kind) for p in ps][:3] == [("s", "token"), ("lowe", "token"), ("r", "token")]
    assert ps[3].kind == "gap" and ps[3].text == "  "
    assert all_ids(ps) == tok.encode("slower  low")
    # 'q' is not in the alphabet and there is no fallback: encode refuses it, show still works
    qs = pieces(tok, "low q")
    assert [p for p in qs if p.kind == "unknown"][0].ids == []
    markers = [p for p in pieces(tok, "new") if p.kind == "marker"]
    assert all(p.start == p.end and p.text == "_" for p in markers)


# ---------------------------------------------------------------- show


def test_show_plain_and_ids(byte_tok):
    tok, path = byte_tok
    status, out = run("show", "-t", path, "--ids", "--color", "never", "the cat sat")
    assert status == 0
    line1, line2 = out.splitlines()
    assert line1 == "".join(f"[{tok.decode([i])}]" for i in tok.encode("the cat sat"))
    assert line2.split() == [str(i) for i in tok.encode("the cat sat")]


def test_show_colour_is_the_text(byte_tok):
    tok, path = byte_tok
    text = "the dog sat on the log 🙂"
    status, out = run("show", "-t", path, "--color", "always", text)
    assert status == 0
    assert ANSI.search(out)
    assert ANSI.sub("", out) == text + "\n"
    # a StringIO is no terminal: auto means no colour
    status, out = run("show", "-t", path, text)
    assert not ANSI.search(out) and out.startswith("[")


def test_show_stdin_and_newlines(byte_tok):
    tok, path = byte_tok
    status, out = run("show", "-t", path, "--color", "always", stdin="the cat\nthe dog\n".encode())
    assert status == 0
    assert ANSI.sub("", out) == "the cat\nthe dog\n"
    for line in out.splitlines():
        assert not line or line.endswith("\x1b[0m") or not ANSI.search(line)  # colour never runs past a line


def test_show_grouped_partial_characters(byte_tok):
    tok, path = byte_tok
    ids = tok.encode("🙂")
    status, out = run("show", "-t", path, "--ids", "--color", "never", "🙂")
    assert out.splitlines() == ["[🙂]", "+".join(map(str, ids))]
    status, out = run("show", "-t", path, "--ids", "--color", "never", "--partial", "replace", "🙂")
    shown = [tok.decode_single_token_bytes(i).decode("utf-8", "replace") for i in ids]
    assert out.splitlines()[0] == "".join(f"[{s}]" for s in shown) and "\ufffd" in out
    assert out.splitlines()[1].split() == [str(i) for i in ids]
    status, out = run("show", "-t", path, "--color", "never", "--partial", "hex", "🙂")
    assert "\\xf0" in out


def test_show_special_tokens(byte_tok):
    tok, path = byte_tok
    text = "hi<|endoftext|>"
    status, out = run("show", "-t", path, "--ids", "--color", "never", text)
    assert status == 0 and out.splitlines()[1].split() == [str(i) for i in tok.encode_ordinary(text)]
    status, out = run("show", "-t", path, "--ids", "--color", "never", "--allowed-special", "all", text)
    assert "[<|endoftext|>]" in out and str(tok.eot_token) in out.splitlines()[1].split()
    status, out = run("show", "-t", path, "--color", "always", "--allowed-special", "<|endoftext|>", text)
    assert "\x1b[1;97;41m<|endoftext|>" in out
    status, _ = run("show", "-t", path, "--allowed-special", "<|nope|>", text)
    assert status == 1


def test_show_control_characters_are_escaped(byte_tok):
    tok, path = byte_tok
    status, out = run("show", "-t", path, "--color", "always", "a\x1b[31mb")
    assert "\x1b[31m" not in out and "\\x1b" in out


def test_show_char_model(seed_tok):
    tok, path = seed_tok
    status, out = run("show", "-t", path, "--ids", "--color", "never", "slower lowest")
    assert status == 0
    line1, line2 = out.splitlines()
    assert line1.startswith("[s][lowe][r]")
    assert " " in line1  # the gap between the words, outside the brackets
    assert [int(x) for x in line2.replace("+", " ").split()] == tok.encode("slower lowest")


class _Spans(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.spans, self.depth, self.text, self.external = [], 0, [], []
        self.in_tokens = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "link", "img") and (attrs.get("src") or attrs.get("href")):
            self.external.append(tag)
        if attrs.get("id") == "tokens":
            self.in_tokens = True
        elif self.in_tokens and tag == "span":
            title = attrs.get("title") or ""
            ids = title.split(" ", 1)[1].replace(" (special token)", "") if title.startswith("id") else ""
            self.spans.append({"title": title, "ids": ids, "text": ""})
            self.depth += 1

    def handle_endtag(self, tag):
        if self.in_tokens and tag == "span" and self.depth:
            self.depth -= 1
        elif self.in_tokens and tag == "div":
            self.in_tokens = False

    def handle_data(self, data):
        if self.in_tokens:
            self.text.append(data)
            if self.depth:
                self.spans[-1]["text"] += data


def test_show_html(byte_tok, folder, capsys):
    tok, path = byte_tok
    text = "the cat <b>&</b> 🙂\nnaïve"
    page = folder / "show.html"
    status, out = run("show", "-t", path, "--html", page, text)
    assert status == 0 and out == ""
    assert "wrote" in capsys.readouterr().err
    source = page.read_text(encoding="utf-8")
    assert source.startswith("<!DOCTYPE html>") and "<style>" in source
    parser = _Spans()
    parser.feed(source)
    assert not parser.external  # standalone
    assert "".join(parser.text) == text
    ids = tok.encode(text)
    assert [int(i) for s in parser.spans for i in s["ids"].split()] == ids
    single = [s for s in parser.spans if len(s["ids"].split()) == 1]
    assert single and all(s["title"] == f"id {s['ids']}" for s in single)
    assert any(s["title"].startswith("ids ") for s in parser.spans)  # the grouped emoji
    assert not list(folder.glob(".bytepair-*"))  # written atomically, no temporary left


def test_show_html_bad_folder(byte_tok, folder):
    _, path = byte_tok
    status, _ = run("show", "-t", path, "--html", folder / "no" / "such" / "x.html", "hi")
    assert status == 1


# ---------------------------------------------------------------- inspect


def test_inspect_merges(byte_tok):
    tok, path = byte_tok
    status, out = run("inspect", "-t", path)
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == len(tok.merges)
    for k, (line, (a, b)) in enumerate(zip(lines, tok.merges)):
        assert line.endswith(f" {256 + k}")
        assert tok.decode_single_token_bytes(256 + k) == a + b
    first = tok.merges[0]
    show = lambda t: t.decode().replace(" ", "␣")  # noqa: E731
    assert lines[0] == f"[{show(first[0])}][{show(first[1])}] -> [{show(first[0] + first[1])}] 256"
    assert any("␣" in line for line in lines)


def test_inspect_escapes_partial_utf8(byte_tok):
    tok, path = byte_tok
    status, out = run("inspect", "-t", path, "--grep", r"\\x")
    lines = out.splitlines()
    assert lines and all(re.search(r"\\x[0-9a-f]{2}", line) for line in lines)
    status, out = run("inspect", "-t", path, "--vocab", "--limit", "300")
    assert "10 [\\n]" in out.splitlines() and "32 [␣]" in out.splitlines() and "92 [\\\\]" in out.splitlines()
    assert "255 [\\xff]" in out.splitlines()


def test_inspect_grep_limit_vocab_json(byte_tok):
    tok, path = byte_tok
    status, out = run("inspect", "-t", path, "--grep", "^ the")
    assert status == 0 and out and all("[␣the" in line.split(" -> ")[1] for line in out.splitlines())
    status, out = run("inspect", "-t", path, "--limit", "3")
    assert len(out.splitlines()) == 3
    status, out = run("inspect", "-t", path, "--limit", "0")
    assert out == ""
    status, out = run("inspect", "-t", path, "--vocab", "--grep", "endoftext")
    assert out.splitlines() == [f"{tok.eot_token} [<|endoftext|>] (special)"]
    status, out = run("inspect", "-t", path, "--vocab", "--json", "--grep", "^ cat$")
    (item,) = json.loads(out)
    assert item == {"id": tok.encode(" cat")[0], "token": " cat", "special": False}
    status, out = run("inspect", "-t", path, "--json", "--limit", "2")
    items = json.loads(out)
    assert [i["rank"] for i in items] == [1, 2] and items[0]["id"] == 256
    assert status == 0


def test_inspect_bad_arguments(byte_tok, capsys):
    _, path = byte_tok
    assert run("inspect", "-t", path, "--grep", "(")[0] == 1
    assert "not a valid regular expression" in capsys.readouterr().err
    assert run("inspect", "-t", path, "--limit", "-1")[0] == 1


def test_inspect_char_model(seed_tok):
    tok, path = seed_tok
    status, out = run("inspect", "-t", path)
    vocab = tok.vocab()
    by_text = {t: i for i, t in sorted(vocab.items(), reverse=True)}
    lines = out.splitlines()
    assert lines[0] == f"[w][e] -> [we] {by_text['we']}"
    assert len(lines) == 6
    status, out = run("inspect", "-t", path, "--vocab")
    assert out.splitlines()[0] == f"0 [{vocab[0]}]"


def test_inspect_vocabulary_of_ranks(folder):
    """A vocabulary given as ranks (as tiktoken's): merges are derived and
    each merge's id is the rank of its token."""
    import base64

    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"xyz", b"abc"]
    tok = Tokenizer.from_dict({"bytepair": 1, "model": "byte", "pattern": r"\S+|\s+",
                               "tokens_base64": [base64.b64encode(t).decode() for t in tokens],
                               "special_tokens": {}})
    path = folder / "ranks.json"
    tok.save(str(path))
    status, out = run("inspect", "-t", path)
    assert out.splitlines() == ["[a][b] -> [ab] 256", "[ab][c] -> [abc] 258"]


# ---------------------------------------------------------------- compare


def test_script_of():
    assert script_of("a") == "Latin" and script_of("Ж") == "Cyrillic" and script_of("α") == "Greek"
    assert script_of("क") == "Devanagari" and script_of("中") == "Han" and script_of("の") == "Hiragana"
    assert script_of("Ａ") == "Latin"  # FULLWIDTH LATIN CAPITAL LETTER A
    assert script_of("1") is None and script_of(" ") is None and script_of("🙂") is None
    # marks follow their letter; punctuation its word; whitespace the next word
    assert script_runs("कि, ab") == [(0, 3, "Devanagari"), (3, 6, "Latin")]
    assert script_runs("42 🙂") == [(0, 4, "Common")]
    assert script_runs("") == []


@pytest.fixture(scope="module")
def texts(folder):
    d = folder / "texts"
    d.mkdir()
    (d / "en.txt").write_text(EN, encoding="utf-8")
    (d / "hi.txt").write_text(HI, encoding="utf-8")
    (d / "mixed.txt").write_text(EN[:80] + HI[:60] + "東京は日本の首都です。 42", encoding="utf-8")
    return d


def test_compare_json_is_consistent(byte_tok, char_tok, texts):
    _, bpath = byte_tok
    ctok, cpath = char_tok
    status, out = run("compare", "-t", bpath, "-t", cpath, texts / "en.txt", texts / "hi.txt",
                      texts / "mixed.txt", "--json")
    assert status == 0
    rows = json.loads(out)["rows"]
    toks = {"bytes.json": byte_tok[0], "chars.json": ctok}
    for name, tok in toks.items():
        for f in ("en.txt", "hi.txt", "mixed.txt"):
            text = (texts / f).read_text(encoding="utf-8")
            mine = [r for r in rows if r["tokenizer"] == name and r["file"].endswith(f)]
            total, scripts = mine[0], mine[1:]
            assert total["script"] == "all"
            assert total["tokens"] == len(tok.encode_ordinary(text))
            assert total["bytes"] == len(text.encode()) and total["chars"] == len(text)
            assert total["words"] == len(text.split())
            for key in ("tokens", "bytes", "chars", "words", "whole_word_bytes"):
                assert sum(r[key] for r in scripts) == total[key]
            assert total["tokens_per_byte"] == pytest.approx(total["tokens"] / total["bytes"])
            assert 0 <= total["whole_word_share"] <= 1
            assert all(0 <= r["whole_word_share"] <= 1 for r in scripts)
    scripts = {r["script"] for r in rows if r["file"].endswith("mixed.txt")}
    assert {"Latin", "Devanagari", "Han", "Hiragana"} <= scripts


def test_compare_shows_that_hindi_costs_more(byte_tok, texts):
    """Seed 002's point: a tokenizer trained on English spends many more
    tokens per word on Hindi."""
    _, path = byte_tok
    status, out = run("compare", "-t", path, texts / "en.txt", texts / "hi.txt", "--json", "--no-scripts")
    en, hi = json.loads(out)["rows"]
    assert en["script"] == hi["script"] == "all"
    assert hi["tokens_per_word"] > 4 * en["tokens_per_word"]
    assert hi["whole_word_share"] < en["whole_word_share"]


def test_compare_whole_words(folder):
    tok = quiet_train("hello world " * 50, vocab_size=266)
    path = folder / "hw.json"
    tok.save(str(path))
    f = folder / "hw.txt"
    f.write_text("hello world hello", encoding="utf-8")
    status, out = run("compare", "-t", path, f, "--json", "--no-scripts")
    (row,) = json.loads(out)["rows"]
    assert row["tokens"] == 3 and row["tokens_per_word"] == 1.0 and row["whole_word_share"] == 1.0
    f.write_text("helloworld hellos", encoding="utf-8")  # a token inside a longer word is not a whole word
    status, out = run("compare", "-t", path, f, "--json", "--no-scripts")
    assert json.loads(out)["rows"][0]["whole_word_share"] == 0.0


def test_compare_table_globs_and_stdin(byte_tok, texts):
    _, path = byte_tok
    status, out = run("compare", "-t", path, texts / "*.txt")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["tokenizer", "file", "script", "bytes", "words", "tokens", "tok/byte",
                                "tok/word", "whole-word"]
    assert sum(" all " in line for line in lines) == 3
    assert any("Devanagari" in line for line in lines)
    status, out = run("compare", "-t", path, "-", stdin=EN.encode())
    assert "<stdin>" in out
    assert run("compare", "-t", path, texts / "*.nothing")[0] == 1


def test_compare_plot(byte_tok, char_tok, texts, folder):
    png = folder / "costs.png"
    status, _ = run("compare", "-t", byte_tok[1], "-t", char_tok[1], texts / "*.txt", "--plot", png)
    assert status == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 1000 and height >= 300
    assert not list(folder.glob(".bytepair-*"))


def test_compare_empty_file(byte_tok, folder):
    f = folder / "empty.txt"
    f.write_text("", encoding="utf-8")
    status, out = run("compare", "-t", byte_tok[1], f, "--json")
    assert status == 0
    (row,) = json.loads(out)["rows"]
    assert row["tokens"] == 0 and row["tokens_per_word"] is None


# ---------------------------------------------------------------- serve (JSON API, no browser)


@pytest.fixture()
def served(byte_tok, char_tok):
    from bytepair.cli.serve import make_server

    server = make_server({"bytes.json": byte_tok[0], "chars.json": char_tok[0]}, "127.0.0.1", 0, max_bytes=4096)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _post(server, body: bytes, path="api/tokenize", headers=None):
    req = urllib.request.Request(server.url + path, data=body, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        with e:
            return e.code, json.load(e)


def test_serve_tokenize(served, byte_tok, char_tok):
    tok = byte_tok[0]
    text = "the cat 🙂 <|endoftext|>"
    status, reply = _post(served, json.dumps({"text": text, "tokenizer": "bytes.json"}).encode())
    assert status == 200
    assert reply["ids"] == tok.encode_ordinary(text) and reply["count"] == len(reply["ids"])
    assert [t["id"] for t in reply["tokens"]] == reply["ids"]
    assert "".join(p["text"] for p in reply["pieces"]) == text
    assert reply["counts"] == {"bytes.json": reply["count"], "chars.json": char_tok[0].count(text)}
    assert any("\\x" in t["text"] for t in reply["tokens"])  # part of the emoji
    status, reply = _post(served, json.dumps({"text": text, "special": True}).encode())
    assert reply["tokenizer"] == "bytes.json" and reply["ids"] == tok.encode(text, allowed_special="all")
    status, reply = _post(served, json.dumps({"text": text, "tokenizer": "chars.json"}).encode())
    assert reply["ids"] == char_tok[0].encode_ordinary(text)


def test_serve_bad_requests(served):
    assert _post(served, b"not json")[0] == 400
    assert _post(served, b'{"text": 3}')[0] == 400
    assert _post(served, b"[1]")[0] == 400
    assert _post(served, b'{"text": "a", "tokenizer": ["x"]}')[0] == 400
    status, reply = _post(served, b'{"text": "a", "tokenizer": "nope"}')
    assert status == 400 and "bytes.json" in reply["error"]
    assert _post(served, b'{"text": "' + b"a" * 5000 + b'"}')[0] == 413
    assert _post(served, b"{}", path="api/other")[0] == 404
    with socket.create_connection(served.server_address, timeout=10) as s:  # no Content-Length
        s.sendall(b"POST /api/tokenize HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 411")


def test_serve_page_and_tokenizers(served):
    with urllib.request.urlopen(served.url, timeout=10) as r:
        page = r.read().decode()
        assert r.headers["Content-Type"].startswith("text/html")
    assert '<option value="bytes.json">' in page and '<option value="chars.json">' in page
    assert 'id="count"' in page and 'id="ids"' in page and "fetch(" in page
    with urllib.request.urlopen(served.url + "api/tokenizers", timeout=10) as r:
        info = json.load(r)["tokenizers"]
    assert [t["name"] for t in info] == ["bytes.json", "chars.json"]
    assert info[0]["special_tokens"] == ["<|endoftext|>"]
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(served.url + "nope", timeout=10)
    assert e.value.code == 404
    e.value.close()


def test_serve_command_errors(byte_tok, capsys):
    _, path = byte_tok
    assert run("serve", "-t", path, "--port", "70000")[0] == 1
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        assert run("serve", "-t", path, "--port", port)[0] == 1
    assert "cannot listen" in capsys.readouterr().err


def test_serve_command_subprocess(byte_tok, char_tok):
    """The real command: prints its address first, serves, stops on SIGTERM."""
    cmd = [sys.executable, "-m", "bytepair", "serve", "-t", str(byte_tok[1]), "-t", str(char_tok[1]), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        box = {}
        reader = threading.Thread(target=lambda: box.setdefault("line", proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=30)
        line = box.get("line", b"").decode()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, (line, proc.poll())
        body = json.dumps({"text": "the cat", "tokenizer": "chars.json"}).encode()
        with urllib.request.urlopen(urllib.request.Request(url.group(0) + "api/tokenize", data=body), timeout=10) as r:
            assert json.load(r)["ids"] == char_tok[0].encode("the cat")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


# ---------------------------------------------------------------- count with glob patterns


def test_count_globs(byte_tok, folder):
    """``count`` expands glob patterns (see bytepair.cli.common.expand_paths)."""
    tok, path = byte_tok
    d = folder / "globbed"
    (d / "sub").mkdir(parents=True)
    texts = {"a.txt": "the cat", "b.txt": "the dog sat <|endoftext|>", "sub/c.txt": "naïve 🙂", "x.md": "no"}
    for name, text in texts.items():
        (d / name).write_text(text, encoding="utf-8")
    n = {name: tok.count(text) for name, text in texts.items()}
    status, out = run("count", "-t", path, d / "*.txt")
    assert status == 0
    assert out.splitlines() == [f"{n['a.txt']}\t{d / 'a.txt'}", f"{n['b.txt']}\t{d / 'b.txt'}",
                                f"{n['a.txt'] + n['b.txt']}\ttotal"]
    status, out = run("count", "-t", path, d / "**" / "*.txt", "--json")
    got = json.loads(out)
    assert got["files"] == {str(d / k): n[k] for k in ("a.txt", "b.txt", "sub/c.txt")}
    assert got["total"] == n["a.txt"] + n["b.txt"] + n["sub/c.txt"]
    status, out = run("count", "-t", path, d / "?.md", d / "a.txt")
    assert out.splitlines()[:2] == [f"{n['x.md']}\t{d / 'x.md'}", f"{n['a.txt']}\t{d / 'a.txt'}"]
    status, _ = run("count", "-t", path, d / "*.nothing")
    assert status == 1
