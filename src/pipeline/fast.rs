//! A route for the most common byte-level shape that builds no
//! intermediate strings: no normalizer, and a pre-tokenizer that is one
//! regex split (`Split(regex, "isolated")` followed by
//! `ByteLevel(add_prefix_space=false, use_regex=false)`, as in Llama 3,
//! DeepSeek and Qwen 2, or `ByteLevel(add_prefix_space=false)` with its own
//! regex, as in GPT-2). Each regex piece's raw bytes key the per-thread
//! piece cache (`Bpe::tokenize_raw_in`); only a miss maps the bytes to
//! byte-level chars and merges. Used when no offsets are asked for; the
//! ids are those of the general route (the same pieces, the same model).

use super::bpe::Bpe;
use super::normalizer::Normalizer;
use super::pre_tokenizer::{CompiledPattern, PreTokenizer};
use super::spec::Behavior;
use crate::error::Result;

#[derive(Debug, Clone)]
pub(crate) struct ByteLevelSplit {
    pattern: CompiledPattern,
}

impl ByteLevelSplit {
    /// The route, when the pipeline has this shape.
    pub(crate) fn of(normalizer: Option<&Normalizer>, pre: Option<&PreTokenizer>) -> Option<ByteLevelSplit> {
        if normalizer.is_some() {
            return None;
        }
        let pattern = match pre? {
            PreTokenizer::ByteLevel { add_prefix_space: false, regex: Some(re @ CompiledPattern::Regex(_)) } => re,
            PreTokenizer::Sequence(items) => match items.as_slice() {
                [PreTokenizer::Split { pattern: re @ CompiledPattern::Regex(_), behavior: Behavior::Isolated, invert: false }, PreTokenizer::ByteLevel { add_prefix_space: false, regex: None }] => re,
                _ => return None,
            },
            _ => return None,
        };
        Some(ByteLevelSplit { pattern: pattern.clone() })
    }

    /// Appends the ids of one text segment (no added tokens in it).
    pub(crate) fn encode(&self, text: &str, model: &Bpe, ids: &mut Vec<u32>) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        // "isolated": every range, matched or not, is a piece of its own;
        // this thread's piece cache is borrowed once for the whole text
        let matches = self.pattern.find_matches(text)?;
        let mut body = |mut cache: Option<&mut crate::piece_cache::PieceCache>| -> Result<()> {
            for &((a, b), _) in &matches {
                if a < b {
                    model.tokenize_raw_in(cache.as_deref_mut(), &text.as_bytes()[a..b], ids)?;
                }
            }
            Ok(())
        };
        let done = if model.caches_pieces() { crate::piece_cache::with_thread_cache(|c| body(Some(c))) } else { None };
        match done {
            Some(r) => r,
            None => body(None),
        }
    }
}
