"""SentencePiece ``.model`` files (the ``ModelProto`` protobuf): reading, and
the BPE model as a pipeline description in Hugging Face's ``tokenizer.json``
schema.

The file is parsed by the ``protobuf`` package (``pip install protobuf``,
in bytepair's ``sentencepiece`` extra) with message classes built here from
``sentencepiece_model.proto``'s field numbers (no generated code, no
``protoc``). Sizes are checked first: a file over :data:`MAX_FILE_BYTES` or
with more than :data:`MAX_PIECES` pieces is refused before anything is
allocated for it, and protobuf itself refuses lengths that run past the end.

:func:`to_pipeline` writes the description bytepair's engine runs
(``Tokenizer.load``): sentencepiece's own normalizer, BPE and decoder as the
``SentencePiece`` / ``SentencePieceBPE`` components of
``src/model/sentencepiece/``, equal to ``sentencepiece`` in ids,
decoding and offsets. :func:`to_hf_json` writes Hugging Face's components
for the same model (normalizer, BPE model whose pair ranks follow the merged
piece's score, byte fallback, decoder), for export; :func:`hf_compatible`
tells why they cannot run a model exactly, when they cannot (the older
``extensions=True`` components named there are not run by any engine).

>>> SP_NORMAL, SP_UNKNOWN, SP_CONTROL, SP_USER_DEFINED, SP_UNUSED, SP_BYTE
(1, 2, 3, 4, 5, 6)
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from bytepair.errors import FormatError
from bytepair.spec import PipelineSpec, checked

# piece types of ModelProto.SentencePiece.Type
SP_NORMAL, SP_UNKNOWN, SP_CONTROL, SP_USER_DEFINED, SP_UNUSED, SP_BYTE = 1, 2, 3, 4, 5, 6
TYPE_NAMES = {1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused", 6: "byte"}
MODEL_TYPES = {1: "Unigram", 2: "BPE", 3: "Word", 4: "Char"}

MAX_FILE_BYTES = 1 << 30  # 1 GiB: the largest published models are under 40 MB
MAX_PIECES = 1 << 24  # ids are 32-bit in the core; 16M pieces is far beyond any model in use

SPACE = "\u2581"  # SentencePiece's escaped space, "▁"

_CLASSES: Optional[Any] = None


def _classes() -> Any:
    """The ``ModelProto`` message class, built once from a descriptor made
    here (the field numbers, types and defaults of sentencepiece_model.proto;
    unknown fields, such as training-only options we do not read, are kept
    by protobuf and ignored)."""
    global _CLASSES
    if _CLASSES is not None:
        return _CLASSES
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:  # pragma: no cover - the test extra installs it
        raise FormatError(
            "reading a SentencePiece .model file needs the protobuf package: pip install protobuf "
            "(or pip install 'bytepair[sentencepiece]')"
        ) from None
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="bytepair_sentencepiece_model.proto", package="bytepair_sp",
                                             syntax="proto2")

    def msg(name: str, fields: List[Tuple[str, int, int, int, Optional[str], Optional[str]]]) -> Any:
        m = fdp.message_type.add(name=name)
        for fname, number, ftype, label, type_name, default in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = type_name
            if default is not None:
                f.default_value = default
        return m

    OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    msg("TrainerSpec", [
        ("model_type", 3, F.TYPE_INT32, OPT, None, "1"),  # an enum in the .proto; read as its number
        ("vocab_size", 4, F.TYPE_INT32, OPT, None, "8000"),
        ("max_sentencepiece_length", 20, F.TYPE_INT32, OPT, None, "16"),
        ("split_by_unicode_script", 21, F.TYPE_BOOL, OPT, None, "true"),
        ("split_by_whitespace", 22, F.TYPE_BOOL, OPT, None, "true"),
        ("split_by_number", 23, F.TYPE_BOOL, OPT, None, "true"),
        ("treat_whitespace_as_suffix", 24, F.TYPE_BOOL, OPT, None, "false"),
        ("split_digits", 25, F.TYPE_BOOL, OPT, None, "false"),
        ("allow_whitespace_only_pieces", 26, F.TYPE_BOOL, OPT, None, "false"),
        ("byte_fallback", 35, F.TYPE_BOOL, OPT, None, "false"),
        ("unk_id", 40, F.TYPE_INT32, OPT, None, "0"),
        ("bos_id", 41, F.TYPE_INT32, OPT, None, "1"),
        ("eos_id", 42, F.TYPE_INT32, OPT, None, "2"),
        ("pad_id", 43, F.TYPE_INT32, OPT, None, "-1"),
        ("unk_surface", 44, F.TYPE_BYTES, OPT, None, None),
        ("unk_piece", 45, F.TYPE_BYTES, OPT, None, None),
    ])
    msg("NormalizerSpec", [
        ("name", 1, F.TYPE_BYTES, OPT, None, None),
        ("precompiled_charsmap", 2, F.TYPE_BYTES, OPT, None, None),
        ("add_dummy_prefix", 3, F.TYPE_BOOL, OPT, None, "true"),
        ("remove_extra_whitespaces", 4, F.TYPE_BOOL, OPT, None, "true"),
        ("escape_whitespaces", 5, F.TYPE_BOOL, OPT, None, "true"),
        ("normalization_rule_tsv", 6, F.TYPE_BYTES, OPT, None, None),
    ])
    piece = msg("Piece", [
        ("piece", 1, F.TYPE_BYTES, OPT, None, None),  # bytes: invalid UTF-8 is reported by us, with the index
        ("score", 2, F.TYPE_FLOAT, OPT, None, None),
        ("type", 3, F.TYPE_INT32, OPT, None, "1"),
    ])
    del piece
    msg("ModelProto", [
        ("pieces", 1, F.TYPE_MESSAGE, REP, ".bytepair_sp.Piece", None),
        ("trainer_spec", 2, F.TYPE_MESSAGE, OPT, ".bytepair_sp.TrainerSpec", None),
        ("normalizer_spec", 3, F.TYPE_MESSAGE, OPT, ".bytepair_sp.NormalizerSpec", None),
        ("denormalizer_spec", 5, F.TYPE_MESSAGE, OPT, ".bytepair_sp.NormalizerSpec", None),
    ])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    _CLASSES = message_factory.GetMessageClass(pool.FindMessageTypeByName("bytepair_sp.ModelProto"))
    return _CLASSES


@dataclass
class SentencePieceModel:
    """What a ``.model`` file says, as plain Python values.

    ``pieces[i]``, ``scores[i]``, ``types[i]`` describe id ``i`` (types are
    the ``SP_*`` numbers). Normalizer fields are those of ``normalizer_spec``;
    ``precompiled_charsmap`` is the compiled normalization rules (empty for
    ``identity``). Trainer fields that only shape training
    (``split_by_whitespace``, ``split_digits``, ``split_by_unicode_script``,
    ``max_piece_length``, ...) are kept for the record: SentencePiece's BPE
    encoder never reads them.
    """

    pieces: List[str]
    scores: List[float]
    types: List[int]
    model_type: int = 2
    byte_fallback: bool = False
    unk_id: int = 0
    unk_surface: str = " \u2047 "
    normalizer_name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    treat_whitespace_as_suffix: bool = False
    split_by_whitespace: bool = True
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_digits: bool = False
    max_piece_length: int = 16
    denormalizer_charsmap: bytes = b""
    # the denormalizer's add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces
    denormalizer_flags: Tuple[bool, bool, bool] = (False, False, False)
    bos_id: int = 1
    eos_id: int = 2
    trainer: Dict[str, Any] = field(default_factory=dict)


def _utf8(raw: bytes, what: str, path: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: not a valid SentencePiece model: {what} is not UTF-8 (byte {e.start})") from None


def parse_model(data: bytes, path: str = "<bytes>") -> SentencePieceModel:
    """Parse a ``.model`` file's bytes (any model type; :func:`read_model`
    refuses all but BPE). Raises :class:`FormatError` naming ``path`` when the
    bytes are not a SentencePiece ModelProto.

    >>> parse_model(b"not a model", "x.model")
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: x.model: not a SentencePiece model (the protobuf does not parse)
    """
    if len(data) > MAX_FILE_BYTES:
        raise FormatError(f"{path}: {len(data)} bytes is too large for a SentencePiece model (at most {MAX_FILE_BYTES})")
    cls = _classes()
    m = cls()
    try:
        m.ParseFromString(data)
    except Exception:  # google.protobuf.message.DecodeError (its text differs between protobuf's backends)
        raise FormatError(f"{path}: not a SentencePiece model (the protobuf does not parse)") from None
    n = len(m.pieces)
    if n == 0:
        raise FormatError(f"{path}: not a SentencePiece model (it has no pieces)")
    if n > MAX_PIECES:
        raise FormatError(f"{path}: {n} pieces is more than bytepair reads (at most {MAX_PIECES})")
    pieces = []
    scores = []
    types = []
    for i, p in enumerate(m.pieces):
        text = _utf8(p.piece, f"piece {i}", path)
        if not text:
            raise FormatError(f"{path}: not a valid SentencePiece model: piece {i} is empty")
        if p.type not in TYPE_NAMES:
            raise FormatError(f"{path}: not a valid SentencePiece model: piece {i} ({text[:40]!r}) has unknown type {p.type}")
        pieces.append(text)
        scores.append(p.score)
        types.append(p.type)
    ts, ns = m.trainer_spec, m.normalizer_spec
    sp = SentencePieceModel(pieces=pieces, scores=scores, types=types)
    sp.model_type = ts.model_type
    sp.byte_fallback = ts.byte_fallback
    sp.unk_surface = _utf8(ts.unk_surface, "unk_surface", path) if ts.HasField("unk_surface") else " \u2047 "
    sp.treat_whitespace_as_suffix = ts.treat_whitespace_as_suffix
    sp.split_by_whitespace = ts.split_by_whitespace
    sp.split_by_unicode_script = ts.split_by_unicode_script
    sp.split_by_number = ts.split_by_number
    sp.split_digits = ts.split_digits
    sp.max_piece_length = ts.max_sentencepiece_length
    sp.bos_id, sp.eos_id = ts.bos_id, ts.eos_id
    sp.trainer = {f.name: v for f, v in ts.ListFields()}
    sp.normalizer_name = _utf8(ns.name, "normalizer name", path)
    sp.precompiled_charsmap = bytes(ns.precompiled_charsmap)
    sp.add_dummy_prefix = ns.add_dummy_prefix
    sp.remove_extra_whitespaces = ns.remove_extra_whitespaces
    sp.escape_whitespaces = ns.escape_whitespaces
    if m.HasField("denormalizer_spec"):
        dn = m.denormalizer_spec
        sp.denormalizer_charsmap = bytes(dn.precompiled_charsmap)
        sp.denormalizer_flags = (dn.add_dummy_prefix, dn.remove_extra_whitespaces, dn.escape_whitespaces)
    unks = [i for i, t in enumerate(types) if t == SP_UNKNOWN]
    if len(unks) != 1:
        raise FormatError(f"{path}: not a valid SentencePiece model: it has {len(unks)} unknown pieces (needs one)")
    sp.unk_id = unks[0]
    return sp


def _check(sp: SentencePieceModel, path: str) -> None:
    """SentencePiece's own load-time checks (model_interface.cc), as one line each."""
    where: Dict[Tuple[bool, str], int] = {}
    for i, (p, t) in enumerate(zip(sp.pieces, sp.types)):
        key = (t in (SP_NORMAL, SP_USER_DEFINED, SP_UNUSED), p)
        if key in where:
            raise FormatError(f"{path}: not a valid SentencePiece model: piece {i} {p!r} is already piece {where[key]}")
        where[key] = i
    visible = {p for (normal, p) in where if normal}
    hidden = [p for (normal, p) in where if not normal and p in visible]
    if hidden:
        raise FormatError(f"{path}: piece {hidden[0]!r} is both a control/byte piece and a normal piece "
                          "(SentencePiece itself fails to encode it)")
    byte_pieces = {p for p, t in zip(sp.pieces, sp.types) if t == SP_BYTE}
    if byte_pieces and not sp.byte_fallback:
        raise FormatError(f"{path}: not a valid SentencePiece model: byte pieces although byte_fallback is false")
    if sp.byte_fallback and byte_pieces != {f"<0x{b:02X}>" for b in range(256)}:
        raise FormatError(f"{path}: not a valid SentencePiece model: byte_fallback needs the 256 pieces <0x00>..<0xFF>")


def read_model(path: str) -> SentencePieceModel:
    """Read a SentencePiece BPE ``.model`` file; a Unigram (or Word/Char)
    model, or a file that is not a ModelProto, is refused in one line.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.model")
    >>> _ = open(path, "wb").write(bytes(range(256)))
    >>> read_model(path)
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: ...bad.model: not a SentencePiece model (the protobuf does not parse)
    """
    path = os.fspath(path)
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise FormatError(f"{path}: cannot read: {e.strerror}") from None
    if size > MAX_FILE_BYTES:
        raise FormatError(f"{path}: {size} bytes is too large for a SentencePiece model (at most {MAX_FILE_BYTES})")
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    sp = parse_model(data, path)
    if sp.model_type != 2:
        kind = MODEL_TYPES.get(sp.model_type, f"type {sp.model_type}")
        raise FormatError(f"{path}: a SentencePiece {kind} model; bytepair reads SentencePiece BPE models only")
    _check(sp, path)
    return sp


# ---------------------------------------------------------------- the pipeline


def sp_merges(sp: SentencePieceModel) -> List[Tuple[str, str]]:
    """The merge pairs of SentencePiece's BPE in Hugging Face's terms, best
    first. SentencePiece merges the adjacent pair whose concatenation is a
    normal/unused piece of highest score (leftmost on ties); a pair's rank
    is therefore the rank of the piece it makes, by score (higher first),
    then by id. Each split of a piece into two pieces that can both occur
    as symbols is a pair; all pairs making one piece are adjacent in the
    list (ordered by the left part's length, shortest first).

    >>> sp = SentencePieceModel(pieces=["<unk>", "a", "b", "ab", "abb"], scores=[0, -3, -4, -1, -2],
    ...                         types=[2, 1, 1, 1, 1])
    >>> sp_merges(sp)
    [('a', 'b'), ('ab', 'b')]
    """
    mergeable = {p for p, t in zip(sp.pieces, sp.types) if t in (SP_NORMAL, SP_UNUSED)}
    made = []
    for i, (p, t, s) in enumerate(zip(sp.pieces, sp.types, sp.scores)):
        if t not in (SP_NORMAL, SP_UNUSED) or len(p) < 2:
            continue
        pairs = [(p[:k], p[k:]) for k in range(1, len(p)) if p[:k] in mergeable and p[k:] in mergeable]
        if pairs:
            made.append((-s, i, pairs))
    made.sort(key=lambda x: (x[0], x[1]))
    return [pair for _, _, pairs in made for pair in pairs]


def hf_compatible(sp: SentencePieceModel) -> List[str]:
    """Why Hugging Face's own components cannot run ``sp`` exactly (an empty
    list when they can): each reason names the extension component it needs
    (``to_hf_json(sp, extensions=True)`` writes them).

    >>> hf_compatible(SentencePieceModel(pieces=["<unk>"], scores=[0], types=[2]))
    []
    """
    why = []
    if SP_USER_DEFINED in sp.types:
        why.append("user-defined pieces (matched after normalization and never merged: BPE model field `frozen`)")
    if SP_UNUSED in sp.types:
        why.append("unused pieces (merged through, then split back: BPE model field `unused`)")
    if sp.treat_whitespace_as_suffix and sp.add_dummy_prefix:
        why.append("treat_whitespace_as_suffix (the dummy space goes at the end: normalizer `Append`)")
    if sp.denormalizer_charsmap:
        why.append("a denormalizer (Hugging Face has no decoder that applies one)")
    return why


def _normalizer(sp: SentencePieceModel) -> Optional[Dict[str, Any]]:
    steps: List[Dict[str, Any]] = []
    if sp.precompiled_charsmap:
        steps.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(sp.precompiled_charsmap).decode("ascii")})
    if sp.remove_extra_whitespaces:
        # SentencePiece drops leading and trailing spaces and keeps the first space of every run
        # (spaces as the normalization rules output them: only U+0020)
        steps.append({"type": "Replace", "pattern": {"Regex": "\\A +| +\\z"}, "content": ""})
        steps.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    space = SPACE if sp.escape_whitespaces else " "
    if sp.add_dummy_prefix:
        if sp.treat_whitespace_as_suffix:
            steps.append({"type": "Append", "append": space})  # extension (not run by HF)
        else:
            steps.append({"type": "Prepend", "prepend": space})
    if sp.escape_whitespaces:
        steps.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    if not steps:
        return None
    return steps[0] if len(steps) == 1 else {"type": "Sequence", "normalizers": steps}


def _decoder(sp: SentencePieceModel) -> Dict[str, Any]:
    steps: List[Dict[str, Any]] = []
    if sp.escape_whitespaces:
        steps.append({"type": "Replace", "pattern": {"String": SPACE}, "content": " "})
    if sp.byte_fallback:
        steps.append({"type": "ByteFallback"})
    steps.append({"type": "Fuse"})
    if sp.add_dummy_prefix or sp.remove_extra_whitespaces:
        steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {"type": "Sequence", "decoders": steps}


def _sp_decoder(sp: SentencePieceModel) -> Dict[str, Any]:
    """The extension decoder that is SentencePiece's own ``Decode``."""
    return {
        "type": "SentencePiece",
        "unk_token": sp.pieces[sp.unk_id],
        "unk_surface": sp.unk_surface,
        "control_tokens": [p for p, t in zip(sp.pieces, sp.types) if t == SP_CONTROL],
        "byte_fallback": sp.byte_fallback,
        "escape_whitespaces": sp.escape_whitespaces,
        "strip_leading_space": sp.add_dummy_prefix or sp.remove_extra_whitespaces,
        "strip_all_leading_spaces": sp.remove_extra_whitespaces,
    }


def to_hf_json(sp: SentencePieceModel, extensions: bool = False) -> Dict[str, Any]:
    """The pipeline description (Hugging Face's ``tokenizer.json`` schema) of
    a SentencePiece BPE model: ids are the piece indices; control and
    unknown pieces are special added tokens (SentencePiece never makes them
    from text: load with ``encode_special_tokens`` so that their text is not
    matched either); no pre-tokenizer (SentencePiece's BPE runs over the
    whole normalized text); the BPE model ranks pairs by the merged piece's
    score (:func:`sp_merges`), with ``byte_fallback`` and ``fuse_unk``
    (SentencePiece fuses runs of unknown characters into one ``<unk>``).

    With ``extensions=False`` the description uses Hugging Face components
    only and a model that needs more (:func:`hf_compatible`) is refused;
    ``extensions=True`` writes the extension components of
    extension components instead (``frozen`` user-defined pieces, ``Append``,
    the ``SentencePiece`` decoder, which also decodes ``<unk>`` and control
    pieces as SentencePiece does).

    >>> sp = SentencePieceModel(pieces=["<unk>", "\u2581", "a", "\u2581a"], scores=[0, -2, -3, -1],
    ...                         types=[2, 1, 1, 1], remove_extra_whitespaces=False)
    >>> d = to_hf_json(sp)
    >>> d["model"]["merges"], d["normalizer"]["normalizers"][0]
    ([['▁', 'a']], {'type': 'Prepend', 'prepend': '▁'})
    """
    why = hf_compatible(sp)
    if why and (not extensions or sp.denormalizer_charsmap):
        raise FormatError("Hugging Face components cannot run this SentencePiece model exactly: " + "; ".join(why))
    vocab = {p: i for i, p in enumerate(sp.pieces)}
    if len(vocab) != len(sp.pieces):
        raise FormatError("a piece text is used twice (a control or byte piece spelled as a normal one)")
    added = []
    for i, (p, t) in enumerate(zip(sp.pieces, sp.types)):
        if t in (SP_CONTROL, SP_UNKNOWN):
            added.append({"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True})
    model: Dict[str, Any] = {
        "type": "BPE",
        "dropout": None,
        "unk_token": sp.pieces[sp.unk_id],
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": True,
        "byte_fallback": sp.byte_fallback,
        "ignore_merges": False,
        "vocab": vocab,
        "merges": [list(m) for m in sp_merges(sp)],
    }
    if extensions:
        model["frozen"] = [p for p, t in zip(sp.pieces, sp.types) if t == SP_USER_DEFINED]
        model["unused"] = [p for p, t in zip(sp.pieces, sp.types) if t == SP_UNUSED]
        model["scores"] = list(sp.scores)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": _normalizer(sp),
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": _sp_decoder(sp) if extensions else _decoder(sp),
        "model": model,
    }


def _sp_utf8(data: bytes) -> str:
    """UTF-8 as SentencePiece decodes byte pieces: a character at a time, each
    byte that does not start a valid character is one U+FFFD.

    >>> _sp_utf8(b"a\\xe2\\x82b"), _sp_utf8(b"\\xe0a")
    ('a\ufffd\ufffdb', '\ufffda')
    """
    out = []
    i = 0
    while i < len(data):
        b = data[i]
        n = 1 if b < 0x80 else 2 if 0xC2 <= b < 0xE0 else 3 if 0xE0 <= b < 0xF0 else 4 if 0xF0 <= b < 0xF5 else 0
        try:
            if not n or i + n > len(data):
                raise UnicodeDecodeError("utf-8", data, i, i + 1, "truncated")
            out.append(data[i:i + n].decode("utf-8"))
        except UnicodeDecodeError:
            n = 1  # one U+FFFD per byte that starts no valid character
            out.append("\ufffd")
        i += n
    return "".join(out)


def sp_decode(sp: SentencePieceModel, ids: List[int]) -> str:
    """SentencePiece's ``decode`` (``SentencePieceProcessor::Decode``), the
    semantics of the ``SentencePiece`` decoder extension: control pieces
    decode to nothing, ``<unk>`` to ``unk_surface``; ``▁`` is a space; runs of
    byte pieces are UTF-8 (each invalid byte U+FFFD); until the text is not
    empty, one leading ``▁`` of a piece is dropped when ``add_dummy_prefix``
    or ``remove_extra_whitespaces`` (every leading piece's, with the latter).

    >>> sp = SentencePieceModel(pieces=["<unk>", "<s>", "\u2581a", "b"], scores=[0, 0, -1, -2], types=[2, 3, 1, 1])
    >>> sp_decode(sp, [1, 2, 0, 3, 2])
    'a ⁇ b a'
    """
    out: List[str] = []
    pending = bytearray()
    is_bos_ws = True
    bos_ws_seen = False

    def flush() -> None:
        if pending:
            out.append(_sp_utf8(bytes(pending)))
            pending.clear()

    strip = sp.add_dummy_prefix or sp.remove_extra_whitespaces
    for i in ids:
        if not 0 <= i < len(sp.pieces):
            raise FormatError(f"token id {i} is not in the vocabulary")
        piece, t = sp.pieces[i], sp.types[i]
        if t == SP_BYTE:
            pending.append(int(piece[3:5], 16))
            continue
        flush()
        if bos_ws_seen or any(out):
            is_bos_ws = False
        if t == SP_CONTROL:
            text, bos_ws_seen = "", False
        elif t == SP_UNKNOWN:
            text, bos_ws_seen = sp.unk_surface, False
        else:
            has = False
            if is_bos_ws and strip and piece.startswith(SPACE):
                piece, has = piece[1:], True
                if sp.remove_extra_whitespaces:
                    has = False
            text, bos_ws_seen = (piece.replace(SPACE, " ") if sp.escape_whitespaces else piece), has
        out.append(text)
    flush()
    return "".join(out)


def looks_like_model(head: bytes) -> bool:
    """Whether a file's first bytes look like a SentencePiece ModelProto:
    field 1 (pieces) as a length-delimited message whose own first field is
    the piece text (tag 0x0A, a varint length, then 0x0A again).

    >>> looks_like_model(bytes([0x0A, 0x0B, 0x0A, 0x05]) + b"<unk>")
    True
    >>> looks_like_model(b'{"a": 1}')
    False
    """
    if len(head) < 4 or head[0] != 0x0A:
        return False
    i = 1
    while i < len(head) and i < 6 and head[i] & 0x80:
        i += 1
    return i + 1 < len(head) and head[i + 1] == 0x0A


def to_pipeline(sp: SentencePieceModel) -> Dict[str, Any]:
    """The description bytepair's engine runs for ``sp``: sentencepiece's own
    normalizer, BPE and decoder (``SentencePiece`` / ``SentencePieceBPE``
    components, see ``src/model/sentencepiece/``); control and unknown
    pieces listed as special added tokens (never matched in text, as in
    sentencepiece); ``add_special_tokens=True`` puts the BOS piece first
    (sentencepiece's ``add_bos=True``).

    >>> sp = SentencePieceModel(pieces=["<unk>", "<s>", "\u2581a"], scores=[0, 0, -1], types=[2, 3, 1])
    >>> d = to_pipeline(sp)
    >>> d["model"]["pieces"][2], d["normalizer"]["type"], [t["content"] for t in d["added_tokens"]]
    (['▁a', -1.0, 1], 'SentencePiece', ['<unk>', '<s>'])
    """
    added = [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}
             for i, (p, t) in enumerate(zip(sp.pieces, sp.types)) if t in (SP_CONTROL, SP_UNKNOWN)]
    post = None
    if 0 <= sp.bos_id < len(sp.pieces) and sp.types[sp.bos_id] == SP_CONTROL:
        bos = sp.pieces[sp.bos_id]
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {bos: {"id": bos, "ids": [sp.bos_id], "tokens": [bos]}}}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {
            "type": "SentencePiece",
            "precompiled_charsmap": base64.b64encode(sp.precompiled_charsmap).decode("ascii"),
            "add_dummy_prefix": sp.add_dummy_prefix,
            "remove_extra_whitespaces": sp.remove_extra_whitespaces,
            "escape_whitespaces": sp.escape_whitespaces,
            "treat_whitespace_as_suffix": sp.treat_whitespace_as_suffix,
        },
        "pre_tokenizer": None,
        "post_processor": post,
        "decoder": _denormalizing_decoder(sp),
        "model": {
            "type": "SentencePieceBPE",
            "pieces": [[p, float(s), t] for p, s, t in zip(sp.pieces, sp.scores, sp.types)],
            "byte_fallback": sp.byte_fallback,
            "unk_surface": sp.unk_surface,
        },
    }


def _denormalizing_decoder(sp: SentencePieceModel) -> Dict[str, Any]:
    """The ``SentencePiece`` decoder extension; with a denormalizer (sentencepiece applies it, when its
    charsmap is not empty, to the whole decoded text as a normalizer with its own flags), that too.

    >>> _denormalizing_decoder(SentencePieceModel(pieces=["<unk>"], scores=[0], types=[2]))
    {'type': 'SentencePiece'}
    """
    d: Dict[str, Any] = {"type": "SentencePiece"}
    if sp.denormalizer_charsmap:
        add, remove, escape = sp.denormalizer_flags
        d["denormalizer"] = {"precompiled_charsmap": base64.b64encode(sp.denormalizer_charsmap).decode("ascii"),
                             "add_dummy_prefix": bool(add), "remove_extra_whitespaces": bool(remove),
                             "escape_whitespaces": bool(escape),
                             "treat_whitespace_as_suffix": sp.treat_whitespace_as_suffix}
    return d


def from_pipeline(desc: Dict[str, Any]) -> SentencePieceModel:
    """The model back from :func:`to_pipeline`'s description.

    >>> sp = SentencePieceModel(pieces=["<unk>", "a"], scores=[0.0, -1.0], types=[2, 1], add_dummy_prefix=False)
    >>> back = from_pipeline(to_pipeline(sp))
    >>> back.pieces, back.types, back.add_dummy_prefix
    (['<unk>', 'a'], [2, 1], False)
    """
    m, n = desc["model"], desc.get("normalizer") or {}
    pieces = [p for p, _, _ in m["pieces"]]
    types = [int(t) for _, _, t in m["pieces"]]
    post = desc.get("post_processor") or {}
    bos = [v["ids"][0] for v in (post.get("special_tokens") or {}).values()]
    dn = (desc.get("decoder") or {}).get("denormalizer") or {}
    return SentencePieceModel(
        denormalizer_charsmap=base64.b64decode(dn.get("precompiled_charsmap") or ""),
        denormalizer_flags=(dn.get("add_dummy_prefix", False), dn.get("remove_extra_whitespaces", False),
                            dn.get("escape_whitespaces", False)),
        pieces=pieces, scores=[float(s) for _, s, _ in m["pieces"]], types=types,
        byte_fallback=bool(m.get("byte_fallback")), unk_id=types.index(SP_UNKNOWN) if SP_UNKNOWN in types else 0,
        unk_surface=m.get("unk_surface", " \u2047 "),
        precompiled_charsmap=base64.b64decode(n.get("precompiled_charsmap") or ""),
        add_dummy_prefix=n.get("add_dummy_prefix", True), remove_extra_whitespaces=n.get("remove_extra_whitespaces", True),
        escape_whitespaces=n.get("escape_whitespaces", True),
        treat_whitespace_as_suffix=n.get("treat_whitespace_as_suffix", False),
        bos_id=bos[0] if bos else -1)


def hf_description(desc: Dict[str, Any]) -> Dict[str, Any]:
    """Hugging Face's components for the model of :func:`to_pipeline`'s
    description (with its BOS post-processor), or :class:`FormatError`
    naming what they cannot run (:func:`hf_compatible`)."""
    out = to_hf_json(from_pipeline(desc))
    out["post_processor"] = desc.get("post_processor")
    return out


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Any] = None) -> Any:
    """``Tokenizer.load`` of a ``.model`` file: a pipeline tokenizer that
    encodes, decodes and gives offsets as ``sentencepiece`` does. A Unigram
    model or a broken file is refused with its own message.
    ``to_hf_json()`` of the result writes Hugging Face components when they
    can run the model exactly (:func:`hf_compatible`), else refuses.
    """
    path = os.fspath(path)
    sp = read_model(path)
    if pattern is not None:
        raise FormatError(f"{path}: a SentencePiece model has no pre-tokenizer pattern; pattern= does not apply")
    if special_tokens:
        raise FormatError(f"{path}: a SentencePiece model's special tokens are its control pieces; "
                          "special_tokens= does not apply")
    try:
        desc = to_pipeline(sp)
    except FormatError as e:
        raise FormatError(f"{path}: {e}") from None
    return checked(PipelineSpec(desc, path))


def save(tok: Any, path: str) -> None:
    """Writing ``.model`` files is not supported (export as ``hf`` instead)."""
    raise FormatError("bytepair does not write SentencePiece .model files; save with format='hf'")
