"""Parity-aware BPE (Tokenizer.train_parity): the Rust core against the
pure-Python reference (bytepair.reference_parity) on random multilingual
corpora over tiny alphabets, and against Hugging Face's ParityBpeTrainer
(the peer that defines the algorithm's behaviour) on real multilingual text.
"""

from __future__ import annotations

import json
import os
import warnings
from unittest import mock
from pathlib import Path

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import pre_tokenizers, trainers

import bytepair
from bytepair import Tokenizer, parity
from bytepair import reference as ref
from bytepair import reference_parity as refp

EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
DATA = Path(__file__).parent / "data"


def run_both(*args, **kwargs):
    """reference and core; both succeed alike (same warnings) or raise the same class."""
    out = []
    for impl in (refp.train_parity, Tokenizer.train_parity):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                r = impl(*args, **kwargs)
            except bytepair.BytepairError as e:
                r = type(e)
        out.append((r, sorted({type(w.message).__name__ for w in caught})))
    (r, rw), (c, cw) = out
    if isinstance(r, type) or isinstance(c, type):
        assert r == c, f"reference gave {r!r}, core gave {c!r}"
        return None, None
    assert rw == cw
    return r, c


# ------------------------------------------------------------------ core vs reference

words = st.text(alphabet="abc", min_size=1, max_size=6)
corpus = st.lists(st.lists(words, min_size=1, max_size=5).map(" ".join), min_size=1, max_size=6)


@SETTINGS
@given(
    langs=st.lists(corpus, min_size=1, max_size=4),
    with_dev=st.booleans(),
    dev_docs=st.lists(corpus, min_size=4, max_size=4),
    ratio=st.one_of(st.none(), st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]), min_size=4, max_size=4)),
    model=st.sampled_from(["char", "byte"]),
    end_of_word=st.sampled_from([None, "_", "</w>"]),
    fused=st.booleans(),
    tie_break=st.sampled_from(ref.TIE_BREAKS),
    variant=st.sampled_from(["base", "window"]),
    global_merges=st.integers(0, 3),
    window_size=st.integers(1, 4),
    alpha=st.sampled_from([0.5, 1.0, 2.0]),
    num_merges=st.integers(0, 14),
    min_frequency=st.integers(1, 3),
)
def test_core_matches_reference(langs, with_dev, dev_docs, ratio, model, end_of_word, fused, tie_break, variant,
                                global_merges, window_size, alpha, num_merges, min_frequency):
    n = len(langs)
    kwargs = dict(
        dev=dev_docs[:n] if with_dev else None, ratio=ratio[:n] if ratio else None, model=model,
        end_of_word=end_of_word, end_of_word_fused=fused, tie_break=tie_break, variant=variant,
        global_merges=global_merges, window_size=window_size, alpha=alpha, num_merges=num_merges,
        min_frequency=min_frequency, pattern=r"\S+|\s+" if model == "byte" else None,
    )
    r, c = run_both({f"l{i}": docs for i, docs in enumerate(langs)}, **kwargs)
    if r is None:
        return
    assert c.merges == r.merges
    assert c.merge_counts == list(r.merge_counts)
    text = " ".join(d for docs in langs for d in docs)
    assert c.encode(text) == r.encode(text)


@SETTINGS
@given(langs=st.lists(st.dictionaries(words, st.integers(1, 50), min_size=1, max_size=6), min_size=2, max_size=3),
       tie_break=st.sampled_from(ref.TIE_BREAKS))
def test_core_matches_reference_on_word_counts(langs, tie_break):
    r, c = run_both(langs, model="char", end_of_word=None, tie_break=tie_break)
    assert c.merges == r.merges


def test_max_string_plain_training_matches_reference():
    texts = (DATA / "multilingual.txt").read_text(encoding="utf-8").splitlines()[:40] \
        if (DATA / "multilingual.txt").exists() else ["aa bb ab ba " * 5]
    for model in ("byte", "char"):
        r = ref.train(texts, model=model, num_merges=40, tie_break="max-string")
        c = Tokenizer.train(texts, model=model, num_merges=40, tie_break="max-string")
        assert c.merges == r.merges


def test_one_language_is_plain_bpe():
    # with one language every step picks it: the merges of plain training
    texts = ["the cat sat on the mat with the hat", "a rat and a cat"] * 3
    for tb in ("first", "pair-id", "max-string"):
        p = Tokenizer.train_parity([texts], num_merges=15, tie_break=tb)
        t = Tokenizer.train(texts, num_merges=15, tie_break=tb)
        assert p.merges == t.merges


def test_bad_input_is_a_clear_error():
    with pytest.raises(bytepair.TrainingError, match="one corpus per language"):
        Tokenizer.train_parity("just one text")
    with pytest.raises(bytepair.TrainingError, match="dev languages"):
        Tokenizer.train_parity({"en": "a b", "de": "c d"}, dev={"de": "c", "en": "a"})
    with pytest.raises(bytepair.TrainingError, match="ratio"):
        Tokenizer.train_parity({"en": "a b", "de": "c d"}, ratio=[1.0])
    with pytest.raises(bytepair.TrainingError, match="ratio of language 'de'"):
        Tokenizer.train_parity({"en": "a b", "de": "c d"}, ratio={"en": 1, "de": 0})
    with pytest.raises(bytepair.TrainingError, match="empty"):
        Tokenizer.train_parity({"en": "a b", "de": ""})
    with pytest.raises(bytepair.TrainingError, match="variant"):
        Tokenizer.train_parity({"en": "a b"}, variant="sliding")
    with pytest.raises(bytepair.TrainingError, match="window_size"):
        Tokenizer.train_parity({"en": "a b"}, variant="window", window_size=0)
    with pytest.raises(bytepair.TrainingError, match="vocab_size"):
        Tokenizer.train_parity({"en": "a b"}, vocab_size=10)


def test_stats_and_gini():
    tok = Tokenizer.train_parity({"en": ["aabb"] * 10, "de": ["ccdd"] * 10}, model="char", end_of_word=None,
                                 num_merges=6)
    assert tok.parity_stats == {"en": {"train": (40, 10), "merges": 3}, "de": {"train": (40, 10), "merges": 3}}
    costs = parity.token_costs(tok, {"en": ["aabb"], "de": ["ccdd"]})
    assert costs == {"en": 1, "de": 1}
    assert parity.gini(costs.values()) == 0.0


# ------------------------------------------------------------------ against Hugging Face's ParityBpeTrainer


def _languages():
    """multilingual sample lines grouped by script, as separate languages"""
    lines = [l for l in (DATA / "multilingual.txt").read_text(encoding="utf-8").splitlines() if l.strip()]
    groups = {"latin": [], "other": []}
    for line in lines:
        groups["latin" if sum(c.isascii() for c in line) > 0.8 * len(line) else "other"].append(line)
    assert groups["latin"] and groups["other"]
    half = {k: len(v) // 2 for k, v in groups.items()}
    train = {k: v[: half[k]] for k, v in groups.items()}
    dev = {k: v[half[k]:] for k, v in groups.items()}
    return train, dev


def _hf_parity(train, dev=None, ratio=None, byte=True, **options):
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False) if byte else pre_tokenizers.WhitespaceSplit()
    options.setdefault("min_frequency", 1)
    trainer = trainers.ParityBpeTrainer(show_progress=False, **options)
    trainer.train_from_iterator(tok, [iter(v) for v in train.values()],
                                dev_iterators=[iter(v) for v in dev.values()] if dev else None, ratio=ratio)
    return [tuple(m) for m in json.loads(tok.to_str())["model"]["merges"]]


def _printable(merges):
    return [(ref._printable(l), ref._printable(r)) for l, r in merges]


@pytest.mark.parametrize("setting", [
    dict(),
    dict(dev=True),
    dict(ratio=[1.0, 2.5]),
    dict(variant="window", window_size=10, alpha=1.5),
    dict(variant="window", ratio=[1.0, 3.0]),
    dict(global_merges=20),
    dict(dev=True, variant="window", global_merges=5),
    dict(dev=True, min_frequency=3),
])
@pytest.mark.parametrize("byte", [True, False])
def test_same_merges_as_hf(setting, byte):
    train, dev = _languages()
    setting = dict(setting)
    use_dev = setting.pop("dev", False)
    ratio = setting.pop("ratio", None)
    theirs = _hf_parity(train, dev if use_dev else None, ratio, byte=byte, num_merges=300, **setting)
    ours = Tokenizer.train_parity(train, dev=dev if use_dev else None, ratio=ratio, num_merges=300,
                                  model="byte" if byte else "char", pattern="gpt2" if byte else None,
                                  end_of_word=None, **setting)
    assert len(theirs) == 300 or setting.get("min_frequency", 1) > 1
    assert (_printable(ours.merges) if byte else ours.merges) == theirs


def test_parity_lowers_the_gini_on_dev_text():
    # the paper's claim, on our data: parity-aware merges spread token costs more evenly than plain BPE
    train, dev = _languages()
    plain = Tokenizer.train([l for v in train.values() for l in v], num_merges=300, pattern="gpt2",
                            tie_break="max-string")
    fair = Tokenizer.train_parity(train, dev=dev, num_merges=300, pattern="gpt2")
    g_plain = parity.gini(parity.token_costs(plain, dev).values())
    g_fair = parity.gini(parity.token_costs(fair, dev).values())
    assert g_fair < g_plain


# ------------------------------------------------------------------ command line


def test_cli_parity_equals_the_api(tmp_path):
    from bytepair.cli import main

    train, dev = _languages()
    args = []
    for lang in train:
        (tmp_path / f"{lang}.txt").write_text("\n".join(train[lang]) + "\n", encoding="utf-8")
        (tmp_path / f"{lang}.dev").write_text("\n".join(dev[lang]) + "\n", encoding="utf-8")
        args += ["--parity", f"{lang}={tmp_path / (lang + '.txt')}", "--dev", f"{lang}={tmp_path / (lang + '.dev')}"]
    out = tmp_path / "tok.json"
    assert main(["train", *args, "--merges", "100", "--pattern", "gpt2", "--progress", "none", "-o", str(out)]) == 0
    # as bytepair train FILE: each file one document
    api = Tokenizer.train_parity({k: ["\n".join(v) + "\n"] for k, v in train.items()},
                                 dev={k: ["\n".join(v) + "\n"] for k, v in dev.items()}, num_merges=100,
                                 pattern="gpt2")
    assert Tokenizer.load(str(out)).merges == api.merges


def test_cli_parity_bad_arguments(tmp_path, capsys):
    from bytepair.cli import main

    f = tmp_path / "a.txt"
    f.write_text("a b\n", encoding="utf-8")
    assert main(["train", "--parity", "en", "-o", str(tmp_path / "t.json")]) == 1
    assert "LANG=VALUE" in capsys.readouterr().err
    assert main(["train", "--parity", f"en={f}", "--dev", f"de={f}", "-o", str(tmp_path / "t.json")]) == 1
    assert "--dev must give every language" in capsys.readouterr().err
    assert main(["train", str(f), "--parity", f"en={f}", "-o", str(tmp_path / "t.json")]) == 1
    assert not (tmp_path / "t.json").exists()


def test_window_with_exhausted_languages_terminates():
    # HF 0.23.3 loops forever here (its window choice restarts from language 0, masked and exhausted);
    # ours takes the first unmasked language instead, and equals the reference
    args = ([["ab"], ["cd"], ["efghij"]],)
    kw = dict(model="char", end_of_word=None, variant="window", window_size=2, alpha=0.5)
    r, c = run_both(*args, **kw)
    assert c.merges == r.merges == [("i", "j"), ("a", "b"), ("c", "d"), ("h", "ij"), ("g", "hij"), ("f", "ghij"),
                                    ("e", "fghij")]


def test_cli_parity_on_dask_and_jsonl_equals_local(tmp_path):
    # each language's files are counted by the streaming/Dask engine of bytepair train
    from bytepair.cli import main

    train, _ = _languages()
    args = []
    for lang, lines in train.items():
        f = tmp_path / f"{lang}.jsonl"
        f.write_text("".join(json.dumps({"text": l}) + "\n" for l in lines), encoding="utf-8")
        args += ["--parity", f"{lang}={f}"]
    local, dask = tmp_path / "local.json", tmp_path / "dask.json"
    common = ["--field", "text", "--merges", "80", "--progress", "none"]
    assert main(["train", *args, *common, "-o", str(local)]) == 0
    assert main(["train", *args, *common, "--dask", "local:1", "-o", str(dask)]) == 0
    api = Tokenizer.train_parity(train, num_merges=80)  # each JSONL record one document
    assert Tokenizer.load(str(local)).merges == Tokenizer.load(str(dask)).merges == api.merges


def test_compare_reports_the_gini(tmp_path, capsys):
    from bytepair.cli import main

    train, dev = _languages()
    tok = Tokenizer.train_parity(train, dev=dev, num_merges=200, pattern="gpt2")
    path = tmp_path / "tok.json"
    tok.save(str(path))
    files = []
    for lang, lines in dev.items():
        f = tmp_path / f"{lang}.txt"
        f.write_text("\n".join(lines), encoding="utf-8")
        files.append(str(f))
    assert main(["compare", "-t", str(path), *files, "--parity", "--json"]) == 0
    (got,) = json.loads(capsys.readouterr().out)["parity"].values()  # one tokenizer
    expected = {f: tok.count(Path(f).read_text(encoding="utf-8")) for f in files}
    assert got["tokens"] == expected
    assert got["gini"] == pytest.approx(parity.gini(expected.values()))


def test_tie_inside_a_language_is_broken_as_hf():
    # HF's parity trainer breaks equal counts by the greater (left, right) string (max-string), where its
    # plain trainer takes the lower pair ids (pair-id): here two pairs of l1 tie at the fourth merge
    train = {"l0": ["β βeβα β β eαeβ"], "l1": ["e дд дя дд д я яeд"]}
    dev = {"l0": ["β α", "β"], "l1": ["дeд eядя", "eядe ядe я ддeя"]}
    theirs = _hf_parity(train, dev, num_merges=8)
    ours = Tokenizer.train_parity(train, dev=dev, num_merges=8, pattern="gpt2")
    expected = refp.train_parity(train, dev=dev, num_merges=8, pattern="gpt2")
    assert _printable(ours.merges) == _printable(expected.merges) == theirs
    plain_rule = Tokenizer.train_parity(train, dev=dev, num_merges=8, pattern="gpt2", tie_break="pair-id")
    assert _printable(plain_rule.merges) != theirs


# ------------------------------------------------------------------ against HF on random tied corpora


def _hf_window_loops(values, recent, window_size, threshold):
    """whether HF 0.23.3's window choice loops forever here: its scan starts from language 0 and keeps it
    when every unmasked language is exhausted (-inf), so a masked language 0 is tried again and again"""
    mask = [True] * len(values)
    while True:
        best, best_value = 0, float("-inf")
        for i, v in enumerate(values):
            if mask[i] and v > best_value:
                best, best_value = i, v
        if recent.count(best) / window_size <= threshold:
            return False
        if not mask[best]:
            return True
        mask[best] = False
        if not any(mask):
            return False


def _reference_unless_hf_loops(*args, **kwargs):
    """the reference's model, or None where HF's trainer would never return (the reference takes the same
    languages as HF up to that point, so the check on its choices is HF's)"""
    loops = []
    choose = refp.select_window

    def watched(values, recent, window_size, threshold):
        loops.append(_hf_window_loops(values, recent, window_size, threshold))
        return choose(values, recent, window_size, threshold)

    with mock.patch.object(refp, "select_window", watched), warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.TrainingWarning)
        model = refp.train_parity(*args, **kwargs)
    return None if any(loops) else model


# a few characters shared by every language (one and two UTF-8 bytes), few distinct words, so that pair
# counts tie inside a language and dev costs tie between languages
_letters = st.sampled_from("eaβαдя")
_tied_word = st.text(alphabet=_letters, min_size=1, max_size=4)
_tied_corpus = st.lists(_tied_word, min_size=1, max_size=4).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), min_size=1, max_size=10).map(" ".join)
).map(lambda text: [text])


@SETTINGS
@given(
    data=st.data(),
    n=st.integers(2, 5),
    byte=st.booleans(),
    variant=st.sampled_from(["base", "window"]),
    balance=st.sampled_from(["train", "dev", "ratio"]),
    global_merges=st.sampled_from([0, 0, 1, 3]),
    window_size=st.integers(1, 5),
    alpha=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
    min_frequency=st.integers(1, 3),
    num_merges=st.integers(1, 20),
)
def test_same_merges_as_hf_on_tied_corpora(data, n, byte, variant, balance, global_merges, window_size, alpha,
                                           min_frequency, num_merges):
    train = {f"l{i}": data.draw(_tied_corpus) for i in range(n)}
    dev = {f"l{i}": data.draw(_tied_corpus) for i in range(n)} if balance == "dev" else None
    ratio = data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n)) \
        if balance == "ratio" else None
    options = dict(variant=variant, global_merges=global_merges, window_size=window_size, alpha=alpha,
                   min_frequency=min_frequency)
    ours = dict(model="byte" if byte else "char", pattern="gpt2" if byte else None, end_of_word=None)
    expected = _reference_unless_hf_loops(train, dev=dev, ratio=ratio, num_merges=num_merges, **ours, **options)
    if expected is None:
        return
    theirs = _hf_parity(train, dev, ratio, byte=byte, num_merges=num_merges, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.TrainingWarning)
        core = Tokenizer.train_parity(train, dev=dev, ratio=ratio, num_merges=num_merges, **ours, **options)
    printable = _printable if byte else list
    assert printable(expected.merges) == theirs
    assert core.merges == expected.merges
