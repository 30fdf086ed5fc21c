"""bytepair: exact, fast byte-pair-encoding tokenizers with a Rust core.

>>> import bytepair
>>> tok = bytepair.Tokenizer.train("the cat sat on the mat", vocab_size=265)
>>> tok.decode(tok.encode("the mat"))
'the mat'
"""

from bytepair.errors import (
    BytepairError,
    DisallowedSpecialError,
    EncodeError,
    FormatError,
    InputError,
    PatternError,
    ResourceError,
    TrainingError,
    TokenIdTypeError,
    TrainingWarning,
    UnknownTokenError,
    UnsupportedComponentError,
)
from bytepair.encodings import encoding_for_model, get_encoding
from bytepair.errors import UnknownEncodingError
from bytepair.arrays import cache_info, clear_cache, set_cache_size
from bytepair.patterns import PRESETS
from bytepair.tokenizer import Tokenizer
from bytepair.pipeline import PipelineTokenizer  # the former subclass's name: Tokenizer itself

__version__ = "0.1.0"

__all__ = [
    "Tokenizer",
    "PipelineTokenizer",
    "PRESETS",
    "set_cache_size",
    "cache_info",
    "clear_cache",
    "BytepairError",
    "DisallowedSpecialError",
    "EncodeError",
    "FormatError",
    "InputError",
    "PatternError",
    "ResourceError",
    "TrainingError",
    "TrainingWarning",
    "UnknownTokenError",
    "TokenIdTypeError",
    "UnsupportedComponentError",
    "UnknownEncodingError",
    "get_encoding",
    "encoding_for_model",
]
