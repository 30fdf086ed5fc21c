"""A pipeline description built in Python (a GGUF file's, a trained tokenizer's as_pipeline(), a native
file's) reaches the core with its vocabulary and merges as lists (spec._pipeline_core), never written as JSON:
the core must be the one its JSON text gives, and where the JSON text is refused, the same error."""

from __future__ import annotations

import json
import random

import pytest

from bytepair import Tokenizer, _core
from bytepair.errors import BytepairError
from bytepair.spec import PipelineSpec, _bpe_lists, _regexes, build_core
from hostile_text import hostile_texts


def trained_description(model):
    corpus = " ".join(hostile_texts(3, 40)) + " low lower lowest newer wider " * 20
    kwargs = {"pattern": "gpt2"} if model == "byte" else {"end_of_word": "</w>", "end_of_word_fused": True}
    tok = Tokenizer.train(corpus, model=model, num_merges=120, special_tokens=["<|s|>"], **kwargs)
    return tok.as_pipeline().description


def outcome(build, texts):
    """The ids and decodings of ``build()``'s core on ``texts``, or the first error's type and message."""
    try:
        core = build()
        out = []
        for text in texts:
            ids = core.encode(text, None, [])
            out.append((ids, core.encode(text, [], [], True), core.decode_bytes(ids)))
        return out, core.n_vocab
    except BytepairError as e:
        return type(e).__name__, str(e).removeprefix("<string>: ")  # without the path the Python side puts first


def by_json(desc):
    regexes = {}
    _regexes(desc, regexes)
    return lambda: _core.CorePipeline(json.dumps(desc), regexes)


def variants(desc):
    """The description, and the same with its merges written other ways, and broken ways."""
    model = desc["model"]
    merges = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in model["merges"]]
    yield "pairs", dict(desc, model=dict(model, merges=merges))
    yield "tuples", dict(desc, model=dict(model, merges=[tuple(m) for m in merges]))
    yield "strings", dict(desc, model=dict(model, merges=[" ".join(m) for m in merges]))
    yield "mixed", dict(desc, model=dict(model, merges=[merges[0], " ".join(merges[1]), *merges[2:]]))
    yield "no space", dict(desc, model=dict(model, merges=["".join(merges[0]), *merges[1:]]))
    yield "not a token", dict(desc, model=dict(model, merges=[*merges, [merges[0][0], "\u2603\u2603"]]))
    yield "result not a token", dict(desc, model=dict(model, merges=[*merges, [merges[-1][0], merges[0][1]]]))
    yield "not strings", dict(desc, model=dict(model, merges=[*merges, [1, 2]]))
    tokens = list(model["vocab"])
    yield "int keys", dict(desc, model=dict(model, vocab={**model["vocab"], 7: len(tokens)}))
    yield "ids out of order", dict(desc, model=dict(model, vocab=dict(reversed(model["vocab"].items()))))
    yield "unk not a token", dict(desc, model=dict(model, unk_token="\u2603"))


@pytest.mark.parametrize("model", ["byte", "char"])
def test_lists_route_is_the_json_route(model):
    texts = hostile_texts(11, 60, ["<|s|>"]) + ["low lower lowest", "newer wider </w>"]
    taken = 0
    for name, desc in variants(trained_description(model)):
        if _bpe_lists(desc) is not None:
            taken += 1
        got = outcome(lambda: build_core(PipelineSpec(desc)), texts)
        assert got == outcome(by_json(desc), texts), name
    assert taken >= 8  # the lists route was the one tried for most variants


def test_lists_route_on_random_vocabularies():
    """Random small vocabularies, with merges that may or may not make tokens, in every merge form."""
    rng = random.Random(5)
    alphabet = ["a", "b", "c", " ", "\u00e9", "\u2581", "<0x41>"]
    for case in range(150):
        tokens = list(dict.fromkeys(rng.choice(alphabet) for _ in range(6)))
        merges = []
        for _ in range(rng.randrange(8)):
            left, right = rng.choice(tokens), rng.choice(tokens)
            if rng.random() < 0.8 and left + right not in tokens:
                tokens.append(left + right)
            merges.append(" ".join((left, right)) if rng.random() < 0.5 else [left, right])
        desc = {"model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges,
                          "byte_fallback": rng.random() < 0.3},
                "pre_tokenizer": rng.choice([None, {"type": "Whitespace"}])}
        texts = ["".join(rng.choice(alphabet + ["x"]) for _ in range(rng.randrange(12))) for _ in range(10)]
        assert outcome(lambda: build_core(PipelineSpec(desc)), texts) == outcome(by_json(desc), texts), (case, desc)
