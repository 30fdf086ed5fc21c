"""``Tokenizer.explain`` / ``bytepair explain``: the steps of encoding a word.

The oracle for the ids is the tokenizer's own encoder (Rust core):
``explain(text).ids == encode_ordinary(text)`` on random words for each
kind of model (byte: trained and the real cl100k_base; char: separate and
fused marker, no marker, byte fallback, unk, subword-nmt's lowest-rank
rule; Hugging Face pipelines: Llama 3, DeepSeek V3, Qwen2 with NFC,
Mistral's SentencePiece layouts, and bytepair's own ``tokenizer.json``
export read as a pipeline). Every step is checked to be one merge of two
adjacent symbols into the next symbol list. Seed 001's rules, its encoded
words and its ``t · h · e · <w>`` diagram come from the seed text.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer
from bytepair.cli import main
from bytepair.pipeline import from_hf_json
from seeds import _text, seed_001
from unicode_versions import stable_text

S1 = seed_001()


@pytest.fixture(scope="module")
def toks(real_texts, vocab_paths, published_tokenizers, tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain")
    sample = real_texts[:4]
    byte = Tokenizer.train(sample, vocab_size=800, pattern="cl100k", special_tokens=["<|endoftext|>"])
    char = Tokenizer.train(sample, model="char", num_merges=300, byte_fallback=True)
    lowest = Tokenizer.from_dict({**char.to_dict(), "merge_rule": "lowest-rank"})
    export = folder / "tokenizer.json"
    byte.save(str(export), format="hf")
    out = {
        "byte": byte,
        "cl100k": Tokenizer.load(vocab_paths["cl100k_base.tiktoken"]),
        "char-fallback": char,
        "char-fused": Tokenizer.train(sample, model="char", num_merges=300, end_of_word_fused=True, unk_token="<unk>"),
        "char-no-marker": Tokenizer.train(sample, model="char", num_merges=300, end_of_word=None,
                                          unk_token="<unk>"),
        "char-lowest-rank": lowest,
        "export-as-pipeline": from_hf_json(export.read_text(encoding="utf-8")),
    }
    for name in ("llama3", "deepseek-v3", "mistral-v1-legacy", "mistral-v3-metaspace", "qwen2"):
        out[name] = Tokenizer.load(published_tokenizers[name])
    assert out["export-as-pipeline"].model == "pipeline" and out["llama3"].model == "pipeline"
    return out


KINDS = ["byte", "cl100k", "char-fallback", "char-fused", "char-no-marker", "char-lowest-rank", "export-as-pipeline",
         "llama3", "deepseek-v3", "mistral-v1-legacy", "mistral-v3-metaspace", "qwen2"]

WORDS = st.text(alphabet=st.sampled_from("abcdeilnorstuwxyz THÉéñü日本語😀👍🏽'-.,!?0123\n\t"), max_size=24) | stable_text(max_size=12)


def merge_all(symbols, pair):
    out, i = [], 0
    while i < len(symbols):
        if tuple(symbols[i:i + 2]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def check(tok, text):
    e = tok.explain(text)
    assert e.ids == tok.encode_ordinary(text), text
    for p in e.pieces:
        before = p.symbols
        for s in p.steps:
            assert s.left + s.right == s.merged
            if e.kind == "char":
                # a rule is applied over the whole word (seed 001's encode), every occurrence
                assert s.symbols == merge_all(before, (s.left, s.right)) != before
            else:
                # one merge of two adjacent symbols (the leftmost of lowest rank), the rest unchanged
                i = next(k for k in range(len(before) - 1) if before[k:k + 2] == [s.left, s.right])
                assert before[:i] + [s.merged] + before[i + 2:] == s.symbols
            before = s.symbols
        if e.kind == "byte":
            assert all(tok.decode_single_token_bytes(s.rank) == s.merged for s in p.steps)
            assert b"".join(p.tokens) == p.text
        if e.kind == "char" and tok.merge_rule == "in-order":
            ranks = [s.rank for s in p.steps]
            assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
            assert [tok.merges[s.rank] for s in p.steps] == [(s.left, s.right) for s in p.steps]
    str(e)  # prints
    json.dumps(e.to_dict())
    return e


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=WORDS)
def test_explanation_ids_are_encode_ids(toks, kind, text):
    check(toks[kind], text)


@pytest.mark.parametrize("kind", KINDS)
def test_real_text(toks, real_texts, kind):
    for line in real_texts[0].splitlines()[:40]:
        check(toks[kind], line)


def test_seed_001_words_and_diagram():
    tok = Tokenizer.from_merges(S1.rules, model="char", end_of_word="<w>", alphabet="abcdefghijklmnopqrstuvwxyz")
    for word, pieces in S1.encoded.items():
        e = check(tok, word)
        assert tuple(e.pieces[0].tokens) == pieces
        # each rule that changes the word is one step, in the seed's order
        assert [f"{s.left} + {s.right}" for s in e.pieces[0].steps] == [
            f"{a} + {b}" for a, b in S1.rules if f"{a} + {b}" in {f"{s.left} + {s.right}" for s in e.pieces[0].steps}]
    # the seed's diagram: t · h · e · <w>  ↓  th · e · <w>  ↓  the · <w>
    seed_lines = [line.strip() for line in _text("001").splitlines() if re.fullmatch(r"\S+( · \S+)* · <w>", line.strip())]
    assert seed_lines[:4] == ["t · h · e · <w>", "th · e · <w>", "th · e · <w>", "the · <w>"]
    shown = [line.strip() for line in str(tok.explain("the")).splitlines()]
    assert shown.index(seed_lines[0]) < shown.index(seed_lines[1]) < shown.index(seed_lines[3])
    assert "merge 1: t + h -> th" in shown and "merge 2: th + e -> the" in shown and "merge 3: the + <w> -> the<w>" in shown
    assert shown[-1] == f"tokens: the<w> = ids {tok.encode('the')[0]}"


def test_byte_fallback_and_unknown_are_noted(toks):
    e = toks["char-fallback"].explain("a😀")
    assert any("byte fallback <0xF0> <0x9F> <0x98> <0x80>" in n for p in e.pieces for n in p.notes)
    e = toks["mistral-v3-metaspace"].explain("\U0001F9FF")
    assert e.ids == toks["mistral-v3-metaspace"].encode_ordinary("\U0001F9FF")
    e = toks["char-fused"].explain("a😀")
    assert any("<unk>" in n for p in e.pieces for n in p.notes)


def test_pipeline_shows_normalized_text_and_added_tokens(toks):
    tok = toks["mistral-v1-legacy"]
    e = check(tok, "Hello world")
    assert e.normalized == ["▁Hello▁world"]
    assert [p.text for p in e.pieces] == ["▁Hello▁world"]
    tok = toks["llama3"]
    text = "hi <|begin_of_text|>"
    e = tok.explain(text)
    assert e.ids == tok.encode_ordinary(text)
    e = tok.explain("<|reserved_special_token_0|>")  # specials stay text, as in encode_ordinary
    assert e.ids == tok.encode_ordinary("<|reserved_special_token_0|>")


def test_cli(toks, tmp_path):
    path = tmp_path / "seed001.json"
    Tokenizer.from_merges(S1.rules, model="char", end_of_word="<w>", alphabet="abcdefghijklmnopqrstuvwxyz").save(str(path))
    out = io.StringIO()
    assert main(["explain", "-t", str(path), "quickest"], out=out) == 0
    text = out.getvalue()
    assert "merge 10: q + u -> qu" in text and "tokens: qu · i · c · k · e · s · t<w>" in text
    out = io.StringIO()
    assert main(["explain", "-t", str(path), "dog", "--json"], out=out) == 0
    d = json.loads(out.getvalue())
    assert d["pieces"][0]["tokens"] == ["dog<w>"]
    assert re.search(r"merge 9: dog \+ <w> -> dog<w>", str(Tokenizer.load(str(path)).explain("dog")))


def test_serve_api_explains_the_piece_at_an_offset(toks):
    import threading
    import urllib.error
    import urllib.request

    from bytepair.cli.serve import make_server

    server = make_server({"byte": toks["byte"], "char": toks["char-fallback"], "llama3": toks["llama3"]})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def post(body):
        req = urllib.request.Request(server.url + "api/explain", data=json.dumps(body).encode())
        return json.load(urllib.request.urlopen(req, timeout=30))

    try:
        text = "the lowest naïve café 😀"
        for name in ("byte", "char", "llama3"):
            tok = {"byte": toks["byte"], "char": toks["char-fallback"], "llama3": toks["llama3"]}[name]
            whole = tok.explain(text)
            for offset in (0, 5, 12, len(text) - 1):
                reply = post({"text": text, "tokenizer": name, "offset": offset})
                assert len(reply["pieces"]) == 1
                (piece,) = [p for p in whole.pieces if p.span[0] <= offset < p.span[1]]
                assert reply["pieces"][0]["ids"] == piece.ids and reply["pieces"][0]["span"] == list(piece.span)
                assert reply["lesson"] == str(tok.explain(text, at=offset))
        with pytest.raises(urllib.error.HTTPError) as e:
            post({"text": "ab", "offset": 7})
        assert e.value.code == 400 and "offset must be" in json.load(e.value)["error"]
    finally:
        server.shutdown()
        server.server_close()
