"""Type stubs of the Rust extension (``src/py.rs``). Private: use
``bytepair.Tokenizer``."""

from typing import Callable, List, Optional, Sequence, Tuple

class WordCounts:
    def __init__(self, pattern: Optional[str] = None, special_tokens: Sequence[str] = ...) -> None: ...
    def add_documents(self, documents: Sequence[str]) -> None: ...
    def add_word(self, word: str, count: int) -> None: ...
    def merge(self, other: "WordCounts") -> None: ...
    def items(self) -> List[Tuple[str, int]]: ...
    def __len__(self) -> int: ...

def train(
    counts: WordCounts,
    model: str,
    *,
    end_of_word: Optional[str],
    end_of_word_fused: bool,
    byte_fallback: bool,
    tie_break: str,
    min_frequency: int,
    vocab_size: Optional[int],
    num_merges: Optional[int],
    n_special: int,
    max_token_length: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Tuple[List[bytes], int, List[Tuple[int, int, int]], str]: ...
def split_words(text: str, pattern: Optional[str]) -> List[str]: ...
def split_words_regex(text: str, pattern: Optional[str]) -> List[str]: ...

class CoreTokenizer:
    @staticmethod
    def byte(
        tokens: Sequence[Optional[bytes]], pattern: Optional[str], special_tokens: Sequence[Tuple[str, int]]
    ) -> "CoreTokenizer": ...
    @staticmethod
    def char(
        base: Sequence[str],
        merges: Sequence[Tuple[int, int]],
        *,
        end_of_word: Optional[str],
        end_of_word_fused: bool,
        byte_fallback_start: Optional[int],
        unk_id: Optional[int],
        pattern: Optional[str],
        special_tokens: Sequence[Tuple[str, int]],
    ) -> "CoreTokenizer": ...
    @property
    def n_vocab(self) -> int: ...
    def token_bytes(self, id: int) -> Optional[bytes]: ...
    def encode_ordinary(self, text: str) -> List[int]: ...
    def encode(self, text: str, allowed: Optional[Sequence[str]], disallowed: Optional[Sequence[str]]) -> List[int]: ...
    def encode_full(
        self,
        text: str,
        allowed: Optional[Sequence[str]],
        disallowed: Optional[Sequence[str]],
        dropout: Optional[Tuple[float, int]] = None,
        offsets: bool = False,
    ) -> Tuple[List[int], Optional[List[Tuple[int, int]]]]: ...
    def encode_ordinary_batch(self, texts: Sequence[str]) -> List[List[int]]: ...
    def encode_batch(
        self, texts: Sequence[str], allowed: Optional[Sequence[str]], disallowed: Optional[Sequence[str]]
    ) -> List[List[int]]: ...
    def tokenize(self, text: str) -> List[bytes]: ...
    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...
