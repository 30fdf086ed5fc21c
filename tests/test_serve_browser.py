"""``bytepair serve`` in a real headless browser: Debian's chromium driven by
selenium through Debian's chromedriver (both installed by
scripts/ci-browser.sh; Selenium Manager is never asked to download
anything). The server is the real command (``python -m bytepair serve
--port 0``) in a subprocess on 127.0.0.1; the test types text into the page
and checks that the count and ids shown are those of ``Tokenizer.encode``.
Every wait is bounded."""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import sys
import time

import pytest

from bytepair import Tokenizer

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 20  # seconds, for every wait on the page

TRAIN = "the cat sat on the mat. naïve café, Привет мир! 🙂 the dog sat on the log.\n" * 20
TYPED = "the cat sat on the mat, naïve café — Привет"  # send_keys: BMP characters only
SET = "a 🙂 and 🐍: the snake — 中文 sat"  # set through JavaScript (emoji split into byte tokens)


@pytest.fixture(scope="module")
def toks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    a = Tokenizer.train(TRAIN, vocab_size=300, special_tokens=["<|endoftext|>"])
    b = Tokenizer.train(TRAIN, model="char", num_merges=30, byte_fallback=True)
    paths = {"bytes.json": folder / "bytes.json", "chars.json": folder / "chars.json"}
    a.save(str(paths["bytes.json"]))
    b.save(str(paths["chars.json"]))
    return {"bytes.json": a, "chars.json": b}, paths


@pytest.fixture(scope="module")
def server(toks):
    _, paths = toks
    cmd = [sys.executable, "-m", "bytepair", "serve", "--port", "0", "--host", "127.0.0.1"]
    for p in paths.values():
        cmd += ["-t", str(p)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        line = b""
        deadline = time.monotonic() + WAIT
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(timeout=left):
                raise AssertionError(f"bytepair serve printed no address within {WAIT} s")
            chunk = os.read(proc.stdout.fileno(), 1)
            if not chunk:
                raise AssertionError(f"bytepair serve exited: {proc.stderr.read().decode()}")
            line += chunk
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line.decode())
        assert m, line
        yield m.group(0)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    for path in (CHROMIUM, CHROMEDRIVER):
        assert os.path.exists(path), f"{path} is missing: run scripts/ci-browser.sh (Debian chromium, chromium-driver)"
    old = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: never download (it is not even called: paths given)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--disable-extensions", "--window-size=1200,900",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()
        if old is None:
            os.environ.pop("SE_OFFLINE", None)
        else:
            os.environ["SE_OFFLINE"] = old


def _wait_rendered(driver):
    """Until the tokens on screen are those of the current text, tokenizer
    and checkbox (the page records what it rendered)."""
    from selenium.webdriver.support.ui import WebDriverWait

    script = """
        const r = window.bytepairRendered, $ = (id) => document.getElementById(id);
        return r !== null && r.text === $("text").value && r.tokenizer === $("tokenizer").value
               && r.special === $("special").checked;
    """
    WebDriverWait(driver, WAIT, poll_frequency=0.05).until(lambda d: d.execute_script(script))


def _shown(driver):
    """(count, ids, pieces' text, titles) as displayed."""
    from selenium.webdriver.common.by import By

    count = driver.find_element(By.ID, "count").text
    ids = [s.get_attribute("textContent") for s in driver.find_elements(By.CSS_SELECTOR, "#ids span")]
    tokens = driver.find_element(By.ID, "tokens").get_attribute("textContent")
    titles = [s.get_attribute("title") for s in driver.find_elements(By.CSS_SELECTOR, "#tokens span")]
    return int(count), [int(i) for i in ids], tokens, titles


def _set_text(driver, text):
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.ID, "text")
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", box, text
    )


def test_typing_shows_count_and_ids(server, browser, toks):
    from selenium.webdriver.common.by import By

    tokenizers, _ = toks
    tok = tokenizers["bytes.json"]
    browser.get(server)
    assert browser.title == "bytepair serve"
    _wait_rendered(browser)
    box = browser.find_element(By.ID, "text")
    box.send_keys(TYPED)  # key by key: every keystroke sends a request; the last one wins
    _wait_rendered(browser)
    count, ids, tokens, titles = _shown(browser)
    assert ids == tok.encode(TYPED)
    assert count == len(tok.encode(TYPED))
    assert tokens == TYPED  # the coloured pieces spell the text
    assert titles and all(t.startswith("id") for t in titles)
    counts = browser.find_element(By.ID, "counts").text
    assert f"bytes.json: {count}" in counts
    assert f"chars.json: {tokenizers['chars.json'].count(TYPED)}" in counts


def test_partial_characters_and_switching(server, browser, toks):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    tokenizers, _ = toks
    browser.get(server)
    _wait_rendered(browser)
    _set_text(browser, SET)
    _wait_rendered(browser)
    count, ids, tokens, titles = _shown(browser)
    expected = tokenizers["bytes.json"].encode(SET)
    assert (count, ids) == (len(expected), expected)
    assert tokens == SET  # emoji bytes grouped into whole characters
    assert any(t.startswith("ids ") for t in titles)  # a group of byte tokens: several ids on hover

    Select(browser.find_element(By.ID, "tokenizer")).select_by_visible_text("chars.json")
    _wait_rendered(browser)
    count, ids, _, _ = _shown(browser)
    expected = tokenizers["chars.json"].encode(SET)
    assert (count, ids) == (len(expected), expected)


def test_special_tokens_checkbox(server, browser, toks):
    from selenium.webdriver.common.by import By

    tok = toks[0]["bytes.json"]
    browser.get(server)
    _wait_rendered(browser)
    text = "the cat<|endoftext|>the dog"
    _set_text(browser, text)
    _wait_rendered(browser)
    _, ids, _, _ = _shown(browser)
    assert ids == tok.encode_ordinary(text)  # unticked: plain text, as count does
    browser.find_element(By.ID, "special").click()
    _wait_rendered(browser)
    count, ids, _, _ = _shown(browser)
    assert ids == tok.encode(text, allowed_special="all") and tok.eot_token in ids
    assert count == len(ids)
    special = browser.find_elements(By.CSS_SELECTOR, "#tokens span.special")
    assert [s.get_attribute("textContent") for s in special] == ["<|endoftext|>"]


def test_clicking_a_token_explains_it(server, browser, toks):
    """A clicked token shows how its piece is encoded: the text of
    ``Tokenizer.explain(text, at=the token's first character)``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    tokenizers, _ = toks
    browser.get(server)
    _wait_rendered(browser)
    for name in ("bytes.json", "chars.json"):
        Select(browser.find_element(By.ID, "tokenizer")).select_by_value(name)
        text = f"{TYPED} ({name})"  # a text not shown yet: the wait below sees this render, not an older one
        _set_text(browser, text)
        _wait_rendered(browser)
        spans = [s for s in browser.find_elements(By.CSS_SELECTOR, "#tokens span") if s.text.strip()]
        target = spans[len(spans) // 2]
        offset = int(target.get_attribute("data-offset"))
        expected = str(tokenizers[name].explain(text, at=offset))
        target.click()
        WebDriverWait(browser, WAIT, poll_frequency=0.05).until(
            lambda d: d.find_element(By.ID, "explain").get_attribute("textContent") == expected)
        assert "tokens:" in expected and target.text.strip() in expected.replace("\u2423", " ")
