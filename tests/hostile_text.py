"""Hostile-but-valid text for conformance sweeps against tokenizers' own libraries.

:func:`hostile_texts` draws seeded texts (valid UTF-8, no surrogates) mixing
every kind of character that trips tokenizers: random code points from every
plane (unassigned, private use and noncharacters included), combining-mark
stacks, emoji ZWJ sequences / flags / skin tones, CJK and Hangul jamo, RTL
text with marks, Thai and Devanagari, NFKC-sensitive characters, NUL and
C0/C1 controls, every kind of line break and whitespace run, digits of every
script, apostrophe contractions in all cases, and the tokenizer's own
added/special token strings with spaces around them. Used by
tests/test_conformance_published.py (a few hundred texts per tokenizer) and
scripts/sweep_published.py (tens of thousands).

>>> texts = hostile_texts(1, 5, specials=["<s>"])
>>> len(texts), all(isinstance(t, str) for t in texts)
(5, True)
>>> hostile_texts(1, 5, specials=["<s>"]) == texts
True
"""

from __future__ import annotations

import random
from typing import List, Sequence

# combining marks of several blocks (Latin, Cyrillic, Hebrew, Arabic, Devanagari, symbols, half marks)
MARKS = ["\u0300", "\u0301", "\u0302", "\u0303", "\u0308", "\u030a", "\u0327", "\u0328", "\u0336", "\u034f",
         "\u0483", "\u0591", "\u05b0", "\u05bc", "\u0610", "\u064b", "\u0651", "\u0670", "\u093c", "\u094d",
         "\u0e31", "\u0e48", "\u1ab0", "\u1dc0", "\u20d0", "\u20e3", "\ufe0f", "\ufe20", "\U0001d165", "\U000e0100"]
EMOJI = ["😀", "👍", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇺🇸", "🇯🇵", "🇫🇷🇩🇪", "❤️", "☺", "🧑🏿‍🦰", "1️⃣", "#️⃣",
         "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f", "\U0001f9ff", "🫠", "👁‍🗨", "✌🏻"]
WORDS = [
    # Latin, contractions in every case
    "hello", "World", "don't", "DON'T", "Don'T", "it's", "IT'S", "we're", "WE'RE", "I've", "I'VE", "you'll",
    "YOU'LL", "he'd", "HE'D", "I'm", "I'M", "'s", "'S", "'t", "'re", "'Ve", "'ll", "'LL", "'d", "'M", "'", "''",
    "naïve", "Straße", "İstanbul", "ǅemal", "ﬁnance", "Ǆ", "ΣΊΣΥΦΟΣ", "ǰ", "ŉ",
    # CJK, kana, Hangul syllables and jamo
    "日本語", "中文字", "漢字", "ひらがな", "カタカナ", "ｶﾀｶﾅ", "한국어", "\u1100\u1161\u11a8", "\u1112\u1161\u11ab",
    "\u3131\u314f", "𠀀𠀁", "\U00030000",
    # RTL with marks and controls
    "שָׁלוֹם", "مَرْحَبًا", "\u200fعربي\u200e", "\u202eevil\u202c", "\u2067x\u2069", "ابجد١٢٣",
    # Thai, Devanagari, other Indic, SE Asian
    "ภาษาไทย", "สวัสดีครับ", "हिन्दी", "क्षत्रिय", "नमस्ते", "தமிழ்", "ქართული", "ភាសាខ្មែរ", "ᚠᚢᚦ", "ꙮ", "𓀀𓀁",
    # Cyrillic, Greek
    "привет", "ПРИВЕТ", "αβγ", "ΑΒΓ",
    # code
    "def f(x):", "x+=1;", "{\"a\": [1, 2]}", "</s>", "<|", "|>", "<unk>", "[CLS]", "->", "=>", "::", "@@", "##",
    "\\n", "http://a.b/c?d=e&f", "0x1F", "1e-10", "a_b", "__init__",
]
NFKC = ["ﬁ", "ﬂ", "ﬀ", "ﬃ", "Ａ", "ｚ", "０", "９", "①", "⑳", "⒈", "Ⅻ", "ⅻ", "Ⅳ", "²", "³", "¹", "⁴", "₂", "½", "¼",
        "™", "℃", "㎏", "㍿", "ｱ", "ﾞ", "ﾟ", "…", "‥", "\u3000", "\u00a0", "ǆ", "ﷺ", "ﷻ", "𝐀", "𝟘", "𝔸", "ℌ", "Å",
        "Ω", "K", "ſ", "ẛ", "\u2126", "\u212b", "µ", "ª", "º", "¨", "´", "¸", "\u0344", "\u0f73", "\ufb2c", "ﬀi",
        "é", "e\u0301", "\u1e9b\u0323", "\u0958", "\uac00\u11a8", "\u1100\u1161"]
DIGITS = ["0123456789", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "०१२३४५६७८९", "০১২৩৪৫৬৭৮৯", "๐๑๒๓๔๕๖๗๘๙", "０１２３",
          "𝟎𝟏𝟐", "①②③", "Ⅰ Ⅱ Ⅲ", "¹²³", "₀₁₂", "〇一二三", "꘠꘡꘢", "߀߁߂", "𑁦𑁧", "𞥐𞥑", "1,234.56", "3.14159",
          "1234567890123456789", "00000", "½¾", "፩፪፫"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\n\n", "\u00a0", "\u2028", "\u2029", "\u0085", "\u000b",
          "\u000c", "\u3000", "\u2009", "\u200a", "\u202f", "\u205f", "\u1680", "\u180e", "\u200b", "\ufeff",
          " \n ", " \t\n", "\r\r\n", "\n\r", " \u00a0 ", "\u2003\u2002"]
CONTROLS = ["\x00", "\x01", "\x07", "\x08", "\x1b", "\x1f", "\x7f", "\x80", "\x85", "\x9f", "\u00ad", "\u200d",
            "\u200c", "\u2060", "\ufffd", "\ufffe", "\uffff", "\U0001fffe", "\U0010ffff", "\ue000", "\U000f0000",
            "\U00100000", "\u0378", "\u08ff", "\U000e0001", "\U000e007f", "\u2581", "▁▁", "\u0120", "Ġ"]


def random_code_point(rng: random.Random) -> str:
    """A code point from any plane (assigned or not), never a surrogate."""
    plane = rng.choice([0, 0, 0, 0, 1, 1, 2, 3, 14, 15, 16])
    while True:
        cp = plane * 0x10000 + rng.randrange(0x10000)
        if not 0xD800 <= cp < 0xE000:
            return chr(cp)


def _piece(rng: random.Random, specials: Sequence[str]) -> str:
    k = rng.random()
    if k < 0.25:
        return rng.choice(WORDS)
    if k < 0.35:
        return rng.choice(SPACES) * rng.choice([1, 1, 1, 2, 5, 17])
    if k < 0.42:
        return "".join(rng.choice(SPACES) for _ in range(rng.randint(2, 12)))
    if k < 0.50:
        return rng.choice(NFKC)
    if k < 0.56:
        return rng.choice(DIGITS)
    if k < 0.62:
        return rng.choice(EMOJI)
    if k < 0.68:
        base = rng.choice("aeoAZ\u0905\u0e01\u05d0x ")
        return base + "".join(rng.choice(MARKS) for _ in range(rng.randint(1, 12)))
    if k < 0.75:
        return "".join(random_code_point(rng) for _ in range(rng.randint(1, 4)))
    if k < 0.80:
        return rng.choice(CONTROLS)
    if k < 0.92 and specials:
        s = rng.choice(specials)
        left = rng.choice(["", "", " ", "  ", "\n", "x", " \u00a0"])
        right = rng.choice(["", "", " ", "  ", "\n", "x", "\t "])
        if rng.random() < 0.2 and len(s) > 1:  # a broken special
            cut = rng.randrange(1, len(s))
            s = s[:cut] + rng.choice(["", " ", "x"]) + s[cut:]
        return left + s + right
    return rng.choice(WORDS).upper()


def hostile_text(rng: random.Random, specials: Sequence[str] = ()) -> str:
    """One text of 0 to ~40 pieces (about 1 in 40 is empty)."""
    if rng.random() < 0.025:
        return ""
    n = rng.choice([1, 1, 2, 3, 5, 8, 13, 21, 40])
    seps = ["", "", " ", " ", "\n", "  "]
    return "".join(_piece(rng, specials) + rng.choice(seps) for _ in range(n))


def hostile_texts(seed: int, n: int, specials: Sequence[str] = ()) -> List[str]:
    """``n`` texts from ``random.Random(seed)``; ``specials`` are token strings to mix in."""
    rng = random.Random(seed)
    return [hostile_text(rng, list(specials)) for _ in range(n)]
