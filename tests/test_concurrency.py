"""One tokenizer shared by threads, and fork after parallel use."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from bytepair import Tokenizer

TEXT = "The quick brown fox jumps over the lazy dog. 素早い茶色の狐。 12345\n" * 50


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train([TEXT] * 4, vocab_size=400, special_tokens=["<|endoftext|>"])


def test_many_threads_equal_serial(tok):
    texts = [TEXT[i:] + "<|endoftext|>" for i in range(0, 400, 7)]
    expected = ([tok.encode(t, allowed_special="all") for t in texts], [tok.decode(tok.encode_ordinary(t)) for t in texts])
    errors = []

    def work():
        try:
            for _ in range(3):
                got = [tok.encode(t, allowed_special="all") for t in texts]
                assert got == expected[0]
                assert tok.encode_batch(texts, allowed_special="all") == expected[0]
                assert [tok.decode(tok.encode_ordinary(t)) for t in texts] == expected[1]
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)


def _child(tok, queue):
    ids = tok.encode_ordinary_batch([TEXT, TEXT[::-1]])
    again = Tokenizer.train([TEXT, TEXT[:100]], vocab_size=300)
    queue.put((ids, again.n_vocab))


def test_fork_after_parallel_use_does_not_deadlock(tok):
    expected = tok.encode_ordinary_batch([TEXT, TEXT[::-1]])  # starts the thread pool
    Tokenizer.train([TEXT, TEXT[:100]], vocab_size=300)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(tok, queue))
    proc.start()
    ids, n_vocab = queue.get(timeout=60)
    proc.join(timeout=60)
    assert proc.exitcode == 0
    assert ids == expected and n_vocab == 300
