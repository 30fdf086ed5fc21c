//! Text before pre-tokenization: strings that keep their alignments to the
//! original text, the normalizers, SentencePiece's precompiled charsmap, and
//! GPT-2's byte-level alphabet.

pub mod byte_level;
pub mod charsmap;
pub mod normalized;
pub mod normalizer;
pub mod spec;
