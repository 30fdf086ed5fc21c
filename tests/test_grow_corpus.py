"""scripts/grow_corpus.py: the gigabyte corpora of the training benchmark
are distinct text, deterministic, and start with the source."""

import importlib.util
import os
import re
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("grow_corpus", os.path.join(ROOT, "scripts", "grow_corpus.py"))
grow_corpus = importlib.util.module_from_spec(spec)
spec.loader.exec_module(grow_corpus)

WORDS = ("tokenizer merges vocabulary corpus training pieces language encoder decoder counting "
         "Wörterbuch словарь παράδειγμα training_data identifier").split()


def source(tmp_path, n_docs=40):
    """A small corpus with an index in make_corpora.py's layout."""
    docs = []
    for i in range(n_docs):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(30 + i % 9)]
        docs.append(("doc %d: " % i + " ".join(words) + ".\n  def f_%d(x): return x\n" % i).encode())
    data, index, off = b"", ["offset\tlength\tsource\tpath\n"], 0
    for i, d in enumerate(docs):
        chunk = (b"\n" if off else b"") + d
        index.append("%d\t%d\tsrc\tdoc%d\n" % (off + len(chunk) - len(d), len(d), i))
        data += chunk
        off += len(chunk)
    (tmp_path / "s.txt").write_bytes(data)
    (tmp_path / "s.index.tsv").write_text("".join(index), encoding="utf-8")
    return tmp_path / "s.txt", docs


def test_grown_corpus_is_distinct_deterministic_and_starts_with_the_source(tmp_path):
    src, docs = source(tmp_path)
    assert grow_corpus.documents(str(src)) == docs
    size = 6 * src.stat().st_size
    out = list(grow_corpus.grown(docs, size, seed=0))
    assert out[: len(docs)] == docs  # pass 0 is the source itself
    assert sum(len(d) + 1 for d in out) >= size
    counts = Counter(out)
    assert max(counts.values()) == 1, "a document repeats"
    # later passes bring word types the source never had, pass after pass
    seen = set(re.findall(r"\w+", b"\n".join(docs).decode()))
    types_after = []
    for k in range(1, 5):
        part = b"\n".join(out[k * len(docs): (k + 1) * len(docs)]).decode()
        seen |= set(re.findall(r"\w+", part))
        types_after.append(len(seen))
    assert types_after == sorted(set(types_after)), types_after
    assert list(grow_corpus.grown(docs, size, seed=0)) == out
    assert list(grow_corpus.grown(docs, size, seed=1)) != out


def test_typos_keep_the_text_valid_and_change_one_place(tmp_path):
    import random

    rng = random.Random(5)
    for word in WORDS:
        if len(word) < 4:
            continue
        for _ in range(20):
            t = grow_corpus.typo(word, rng)
            assert t[0] == word[0] and abs(len(t) - len(word)) <= 1
            assert t.encode("utf-8").decode("utf-8") == t


def test_cli_writes_the_whole_file_or_nothing(tmp_path):
    src, _ = source(tmp_path)
    out = tmp_path / "big.txt"
    mb = 2.5 * src.stat().st_size / grow_corpus.MB
    assert grow_corpus.main([str(src), str(out), "--mb", str(mb)]) == 0
    assert out.stat().st_size >= mb * grow_corpus.MB
    assert not (tmp_path / "big.txt.tmp").exists()
    assert out.read_bytes().startswith(src.read_bytes())
