//! The description of a Hugging Face normalizer (`tokenizer.json`'s
//! `"normalizer"`), as `pipeline/spec.rs` reads it; `normalizer.rs` builds it.

use crate::pretok::split_pattern::Pattern;

#[derive(Debug, Clone)]
pub enum NormalizerSpec {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    Strip { left: bool, right: bool },
    StripAccents,
    Replace { pattern: Pattern, content: String },
    Prepend(String),
    Precompiled(Vec<u8>),
    ByteLevel,
    Sequence(Vec<NormalizerSpec>),
}
