#!/usr/bin/env python3
"""Write ``python/bytepair/formats/llama_unicode.py``: llama.cpp's own Unicode tables (its
``src/unicode-data.cpp`` in the llama-cpp-python 0.3.36 sdist, sha256-pinned by get_gguf_vocabs.py), which
its pre-tokenizer uses instead of the regex engine's: the code points of each category (letter, number,
mark, punctuation, symbol) and the whitespace set. bytepair's GGUF pre-tokenizers write their ``\\p{..}``
and ``\\s`` as classes of exactly these code points, so that a Unicode version between the two cannot
change an id. Run it again when the pinned sdist changes: ``python scripts/gen_llama_unicode.py``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "python", "bytepair", "formats", "llama_unicode.py")
FLAGS = {"N": 0x02, "L": 0x04, "M": 0x10, "P": 0x20, "S": 0x40}


def ranges(cps):
    out, start, prev = [], None, None
    for cp in sorted(cps):
        if start is None:
            start = prev = cp
        elif cp == prev + 1:
            prev = cp
        else:
            out.append((start, prev))
            start = prev = cp
    if start is not None:
        out.append((start, prev))
    return out


def main() -> int:
    spec = importlib.util.spec_from_file_location("get_gguf_vocabs", os.path.join(ROOT, "scripts", "get_gguf_vocabs.py"))
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    g.get_gguf_vocabs()  # fetches and checks the archive
    archive = os.path.join(os.environ.get("BYTEPAIR_GGUF") or g.DEFAULT_CACHE, ".archives", g.ARCHIVE)
    with tarfile.open(archive) as t:
        text = t.extractfile("llama_cpp_python-0.3.36/vendor/llama.cpp/src/unicode-data.cpp").read().decode()
    body = text.split("unicode_ranges_flags = {", 1)[1].split("};", 1)[0]
    starts = [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\{0x([0-9A-Fa-f]+), 0x([0-9A-Fa-f]+)\}", body)]
    ws_body = text.split("unicode_set_whitespace = {", 1)[1].split("}", 1)[0]
    whitespace = sorted(int(x, 16) for x in re.findall(r"0x([0-9A-Fa-f]+)", ws_body))
    by_cat = {k: [] for k in FLAGS}
    for (lo, flags), (hi, _) in zip(starts, starts[1:]):
        for k, bit in FLAGS.items():
            if flags & bit:
                by_cat[k].append((lo, hi - 1))
    lines = ['"""llama.cpp\'s Unicode tables (src/unicode-data.cpp of llama-cpp-python 0.3.36), written by',
             'scripts/gen_llama_unicode.py: the code point ranges of each category its pre-tokenizer knows, and',
             'its whitespace set. Generated; do not edit.', '', '>>> (0x41, 0x5A) in CATEGORIES["L"]', 'True', '"""', '',
             "from typing import Dict, List, Tuple", "",
             "CATEGORIES: Dict[str, List[Tuple[int, int]]] = {"]
    for k, rs in by_cat.items():
        merged = ranges(cp for lo, hi in rs for cp in range(lo, hi + 1))
        lines.append(f"    {k!r}: [")
        row = []
        for lo, hi in merged:
            row.append(f"(0x{lo:X}, 0x{hi:X})")
            if len(row) == 6:
                lines.append("        " + ", ".join(row) + ",")
                row = []
        if row:
            lines.append("        " + ", ".join(row) + ",")
        lines.append("    ],")
    lines.append("}")
    lines.append("WHITESPACE: List[int] = [" + ", ".join(f"0x{c:X}" for c in whitespace) + "]")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(OUT, {k: len(v) for k, v in by_cat.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
