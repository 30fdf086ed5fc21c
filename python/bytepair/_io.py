"""Reading input files and writing outputs safely.

Outputs are written to a temporary file in the target's folder and renamed
into place, so a crash never leaves a half-written file.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> atomic_write_text(os.path.join(d, "x.txt"), "hi")
>>> open(os.path.join(d, "x.txt")).read()
'hi'
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
from typing import Any, BinaryIO, Iterator, Optional, Union

from bytepair.errors import FormatError, InputError


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# read once at import: os.umask can only be read by setting it, which is not thread-safe
_UMASK = _current_umask()


def check_writable(path: Union[str, os.PathLike], *, folder_output: bool = False, probe: bool = True) -> str:
    """The folder of ``path``; ``InputError`` naming ``path`` unless a file
    can be written there: the folder exists, a file can be created in it (a
    probe file is made and removed) and ``path`` is not a folder (with
    ``folder_output=True``, ``path`` is a folder to create or fill: it must
    not be a file; ``probe=False`` skips the probe, for callers that create
    their own file next). Long jobs call it first, so that a bad output path fails
    before the work, not after.

    >>> check_writable("/no/such/folder/out.json")
    Traceback (most recent call last):
    ...
    bytepair.errors.InputError: cannot write /no/such/folder/out.json: folder /no/such/folder does not exist
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"cannot write {path}: folder {folder} does not exist")
    if folder_output:
        if os.path.exists(path) and not os.path.isdir(path):
            raise InputError(f"cannot write {path}: it is a file, not a folder")
    elif os.path.isdir(path):
        raise InputError(f"cannot write {path}: it is a folder")
    if not probe:
        return folder
    try:
        fd, probe_file = tempfile.mkstemp(prefix=f".bytepair-{_temp_tag()}-", suffix=".tmp", dir=folder)
    except OSError as e:
        raise InputError(f"cannot write {path}: {_reason(e)} in folder {folder}") from None
    os.close(fd)
    os.unlink(probe_file)
    return folder


def _reason(e: OSError) -> str:
    """An OS error's reason, lower case, without the file name it carries
    (a temporary file the user never named)."""
    reason = e.strerror or type(e).__name__
    return reason[:1].lower() + reason[1:]


def _temp_tag() -> str:
    """``PID.HOST`` in the names of temporary files (HOST: a hash of the
    machine's name), so that a later run can tell those of dead processes."""
    import socket
    import zlib

    return f"{os.getpid()}.{zlib.crc32(socket.gethostname().encode()):08x}"


_SWEPT: set = set()


def _sweep_stale_temporaries(folder: str) -> None:
    """Removes (once per folder and process) the temporary files that a
    process of this machine killed while writing left in ``folder``
    (SIGKILL runs no cleanup): those whose PID is no longer running."""
    if folder in _SWEPT:
        return
    _SWEPT.add(folder)
    host = _temp_tag().split(".")[1]
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        m = re.fullmatch(r"\.bytepair-(\d+)\.([0-9a-f]{8})-[^/]*\.tmp", name)
        if not m or m.group(2) != host or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # running (or not ours to signal): leave it
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, ValueError):
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass


@contextlib.contextmanager
def atomic_open(path: Union[str, os.PathLike]) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through: it is a temporary file in the
    same folder, synced and renamed over ``path`` when the block ends
    without error, and removed otherwise, so ``path`` is never half-written.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "out.bin")
    >>> with atomic_open(target) as f:
    ...     _ = f.write(b"data")
    >>> open(target, "rb").read()
    b'data'
    """
    path = os.fspath(path)
    folder = check_writable(path, probe=False)  # mkstemp below is the probe
    _sweep_stale_temporaries(folder)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".bytepair-{_temp_tag()}-", suffix=".tmp", dir=folder)
    except OSError as e:
        raise InputError(f"cannot write {path}: {_reason(e)}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); give it the usual mode instead
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except OSError as e:
        _remove_quietly(tmp)
        if isinstance(e, BrokenPipeError) or e.filename not in (tmp, path):
            raise  # not about the output file (e.g. reading an input inside the block)
        raise InputError(f"cannot write {path}: {_reason(e)}") from None
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def atomic_write_bytes(path: Union[str, os.PathLike], data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename."""
    with atomic_open(path) as f:
        f.write(data)


def atomic_write_text(path: Union[str, os.PathLike], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def read_bytes(path: Union[str, os.PathLike]) -> bytes:
    """The bytes of a file, or ``InputError`` saying why it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise InputError(f"{os.fspath(path)}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{os.fspath(path)}: is a folder, not a file") from None
    except OSError as e:
        raise InputError(f"{os.fspath(path)}: cannot read: {e.strerror or e}") from None


MAX_MODEL_FILE_BYTES = 1 << 30  # 1 GiB: the largest published tokenizer files are under 50 MB


def read_model_bytes(path: Union[str, os.PathLike], limit: int = MAX_MODEL_FILE_BYTES) -> bytes:
    """The bytes of a tokenizer file, refused (``FormatError``) before
    anything is read when the file is larger than ``limit``: loading needs
    several times the file's size in memory.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "big.json")
    >>> with open(path, "wb") as f:
    ...     _ = f.truncate(2048)
    >>> read_model_bytes(path, limit=1024)
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: ...big.json: 2048 bytes is too large for a tokenizer file (at most 1024)
    """

    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0  # read_bytes says why it cannot be read
    if size > limit:
        raise FormatError(f"{os.fspath(path)}: {size} bytes is too large for a tokenizer file (at most {limit})")
    return read_bytes(path)


def decode_utf8(data: bytes, name: str, errors: str = "strict") -> str:
    """``data`` as UTF-8; invalid bytes raise ``InputError`` naming ``name``
    and the byte offset (or are replaced with ``errors="replace"``).

    >>> decode_utf8(b"ok\\xff", "f.txt")
    Traceback (most recent call last):
    ...
    bytepair.errors.InputError: f.txt: invalid UTF-8 at byte offset 2 (line 1, byte 0xFF) (use errors='replace' to replace invalid bytes)
    """
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(
            f"{name}: invalid UTF-8 at byte offset {e.start} (line {line}, byte 0x{data[e.start]:02X}) "
            "(use errors='replace' to replace invalid bytes)"
        ) from None


def read_text(path: Union[str, os.PathLike], errors: str = "strict") -> str:
    """A UTF-8 text file (see :func:`decode_utf8` for invalid bytes)."""
    return decode_utf8(read_bytes(path), os.fspath(path), errors)


# a \uXXXX escape of a high surrogate not followed by a low one, or of a low one not after a high one
# (every branch starts with the literal \u, so a search skips quickly over text without one)
_LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|[c-fC-F][0-9a-fA-F]{2}(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}))"
)


def _is_text(s: str) -> bool:
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def json_lone_surrogate(text: str, value: Any) -> Optional[str]:
    r"""The field (``model.vocab``, ``merges[3]``) of ``value``, parsed from
    the JSON ``text``, whose string (or key) holds a lone surrogate: JSON can
    escape one (``"\ud800"``) but it is not text, and the core cannot take
    it. None when there is none (found without a walk for most files).

    >>> json_lone_surrogate('{"a": ["x", "\\ud800"]}', {"a": ["x", "\ud800"]})
    'a[1]'
    >>> json_lone_surrogate('["\\ud83d\\ude42"]', ["\U0001f642"]) is None
    True
    """
    if not _LONE_SURROGATE_ESCAPE.search(text):
        return None
    stack = [("", value)]
    while stack:  # no recursion: the document may be nested as deeply as json allows
        where, v = stack.pop()
        if isinstance(v, str) and not _is_text(v):
            return where or "the top level"
        if isinstance(v, dict):
            for k, x in v.items():
                if not _is_text(k):
                    return f"a key in {where or 'the top level'}"
                stack.append((f"{where}.{k}" if where else k, x))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))
    return None


def parse_json(text: str, path: str, what: str = "") -> Any:
    """The JSON value of ``text`` (a model file's content); ``FormatError``
    naming ``path`` (then ``what``, e.g. which format it should be) and the
    place when it is not valid JSON, nests too deeply, has a number of
    over 4,300 digits or holds a lone surrogate.

    >>> parse_json('{"a": [1, 2]}', "f.json")
    {'a': [1, 2]}
    >>> parse_json('{"a": ', "f.json")
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: f.json: line 1, column 7: invalid JSON: Expecting value
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"{path}: {what}line {e.lineno}, column {e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise FormatError(f"{path}: {what}invalid JSON: nested too deeply") from None
    except ValueError:  # Python reads integers of at most 4300 digits
        raise FormatError(f"{path}: {what}invalid JSON: a number has too many digits") from None
    check_json_text(text, value, path)
    return value


def check_json_text(text: str, value: Any, path: str) -> None:
    """``FormatError`` naming ``path`` and the field when the JSON ``value``
    (parsed from ``text``) holds a lone surrogate (see :func:`json_lone_surrogate`)."""
    where = json_lone_surrogate(text, value)
    if where is not None:
        raise FormatError(
            f"{path}: {where} holds a lone surrogate (a \\ud800-\\udfff escape that is not half of a pair), "
            "which is not text"
        )


# ---------------------------------------------------------------- JSON values read on first use

_READ_LOCK = threading.Lock()  # one thread reads a value; the others wait and find it read


def _read_first(base: type, names: Any) -> Any:
    """A class decorator: each method of ``names`` reads the value before ``base``'s method runs."""
    def wrap(cls: type) -> type:
        for name in names:
            method = getattr(base, name)

            def call(self: Any, *args: Any, _method: Any = method, **kwargs: Any) -> Any:
                for arg in args:  # the other side of ==, +, update(): read too, its items seen directly
                    if isinstance(arg, _Unread):
                        arg._read()
                return _method(self._read(), *args, **kwargs)

            call.__name__ = name
            call.__qualname__ = f"{cls.__name__}.{name}"
            call.__doc__ = method.__doc__
            setattr(cls, name, call)
        return cls
    return wrap


class _Unread:
    """What :class:`UnreadDict` and :class:`UnreadList` share: the JSON text of the value (a span of
    a document: in code points of a ``str``, or in bytes of UTF-8 ``bytes``), read on first use into the container itself; its parent (a dict)
    then holds the plain ``dict`` or ``list`` read, so later lookups run at C speed."""

    __slots__ = ()
    _plain: type = object

    def _set_source(self, text: Union[str, bytes], span: Any, parent: dict, key: str, facts: Any) -> None:
        object.__setattr__(self, "_source", (text, span, parent, key))
        object.__setattr__(self, "facts", facts)

    def _read(self) -> Any:
        if self._source is not None:
            with _READ_LOCK:
                if self._source is not None:
                    text, (start, end), parent, key = self._source
                    value = json.loads(text[start:end])  # the loader checked this JSON already (strictly)
                    self._plain.clear(self)  # (a dict's placeholder, see UnreadDict)
                    self._plain.__iadd__(self, value) if self._plain is list else self._plain.update(self, value)
                    object.__setattr__(self, "_source", None)
                    if parent.get(key) is self:
                        parent[key] = value
        return self

    @property
    def unread(self) -> bool:
        """Whether the value is not read yet."""
        return self._source is not None

    @property
    def source(self) -> Optional[Union[str, bytes]]:
        """The document the value is read from while it is unread (a ``str``, or UTF-8 bytes with
        the span in bytes), else None."""
        source = self._source
        return None if source is None else source[0]

    def read(self) -> Any:
        """The value as a plain ``dict`` or ``list`` (a shallow copy), read now if it was not."""
        return self._plain(self._read())

    def __reduce_ex__(self, protocol: Any) -> Any:  # pickled and copied as the plain value
        return self._plain, (self._plain(self._read()),)


_DICT_METHODS = ("__getitem__", "__contains__", "__iter__", "__len__", "__eq__", "__ne__", "__repr__", "__reversed__",
                 "__or__", "__ror__", "__ior__", "__setitem__", "__delitem__", "__sizeof__", "get", "keys", "values",
                 "items", "copy", "setdefault", "pop", "popitem", "update", "clear")
_LIST_METHODS = ("__getitem__", "__setitem__", "__delitem__", "__contains__", "__iter__", "__reversed__", "__len__",
                 "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__repr__", "__add__", "__iadd__",
                 "__mul__", "__rmul__", "__imul__", "__sizeof__", "append", "extend", "insert", "pop", "remove",
                 "index", "count", "reverse", "sort", "clear", "copy")


@_read_first(dict, _DICT_METHODS)
class UnreadDict(_Unread, dict):
    """A JSON object of a document, read when first used (any method reads it): a big
    vocabulary that loading does not need is never made into Python objects. ``facts``: what the
    loader learned of it without reading it into Python objects.

    Until it is read it holds one placeholder item: C code that reads a dict's size without
    calling its methods (``json.dumps``'s fast path for an empty dict) then does not take it for
    empty, and calls ``items()``, which reads it.

    >>> text = '{"vocab": {"a": 0, "b": 1}}'
    >>> parent = {}
    >>> parent["vocab"] = v = UnreadDict(text, (10, 26), parent, "vocab", facts={"n": 2})
    >>> json.dumps(parent), v.facts, type(parent["vocab"]).__name__
    ('{"vocab": {"a": 0, "b": 1}}', {'n': 2}, 'dict')
    """

    __slots__ = ("_source", "facts")
    _plain = dict

    def __init__(self, text: Union[str, bytes], span: Any, parent: dict, key: str, facts: Any = None) -> None:
        super().__init__()
        dict.__setitem__(self, "\0unread", None)
        self._set_source(text, span, parent, key, facts)


@_read_first(list, _LIST_METHODS)
class UnreadList(_Unread, list):
    """A JSON array of a document, read when first used (see :class:`UnreadDict`; C code that
    reads a list's items directly sees it empty until then: ``PySequence_Fast``, which ``json``
    and ``str.join`` use, iterates it; ``plain + unread`` does not, ``unread + plain`` does).

    >>> text = '{"merges": ["a b", ["a", "b"]]}'
    >>> parent = {}
    >>> parent["merges"] = m = UnreadList(text, (11, 30), parent, "merges")
    >>> json.dumps(m), m.read()
    ('["a b", ["a", "b"]]', ['a b', ['a', 'b']])
    """

    __slots__ = ("_source", "facts")
    _plain = list

    def __init__(self, text: Union[str, bytes], span: Any, parent: dict, key: str, facts: Any = None) -> None:
        super().__init__()
        self._set_source(text, span, parent, key, facts)
