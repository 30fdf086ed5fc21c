//! One error type for the core; the bindings map each kind to a Python
//! exception class from `bytepair.errors`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A pre-tokenizer regex that does not compile or fails while matching.
    Pattern(String),
    /// Training cannot run with these inputs or options.
    Training(String),
    /// Text that cannot be encoded (unknown character without fallback).
    Encode(String),
    /// Special-token text that was not allowed; holds the token.
    DisallowedSpecial(String),
    /// An id that is not in the vocabulary.
    UnknownToken(String),
    /// A malformed vocabulary or model description.
    Format(String),
    /// A well-formed description with a component the engine does not run
    /// (a normalizer, pre-tokenizer, model or decoder type), so that callers
    /// can tell it from a malformed file without reading the message.
    Unsupported(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Pattern(m)
            | Error::Training(m)
            | Error::Encode(m)
            | Error::UnknownToken(m)
            | Error::Format(m)
            | Error::Unsupported(m) => f.write_str(m),
            Error::DisallowedSpecial(token) => write!(
                f,
                "Encountered text corresponding to disallowed special token {token:?}.\n\
                 If you want this text to be encoded as a special token, pass it to `allowed_special`, \
                 e.g. `allowed_special={{{token:?}, ...}}`.\n\
                 If you want this text to be encoded as normal text, disable the check for this token \
                 by passing `disallowed_special=(enc.special_tokens_set - {{{token:?}}})`.\n\
                 To disable this check for all special tokens, pass `disallowed_special=()`."
            ),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
