//! A route for the most common byte-level shape that builds no
//! intermediate strings: no normalizer, an empty `Sequence` or Unicode
//! normal forms (Qwen 2's NFC: the route runs on the normalized text), and a
//! pre-tokenizer that is one regex split (`Split(regex, "isolated")`
//! followed by `ByteLevel(add_prefix_space=false, use_regex=false)`, as in
//! Llama 3 and Qwen 2; or several such splits in a row, as DeepSeek V3's
//! three; or `ByteLevel(add_prefix_space=false)` with its own regex, as in
//! GPT-2). Each regex piece's raw bytes key the per-thread piece cache
//! (`Bpe::tokenize_raw_in`); only a miss maps the bytes to byte-level chars
//! and merges. A single split whose regex is a lexed preset's (Llama 3's,
//! Qwen2's: `CompiledPattern::Lexer`) hands the lexer's words straight to
//! the model (`encode_lexed`). Used when no offsets are asked for; the ids are those of the
//! general route (the same pieces, the same model).

use super::bpe::Bpe;
use super::normalizer::Normalizer;
use super::pre_tokenizer::{CompiledPattern, PreTokenizer};
use super::spec::Behavior;
use crate::error::Result;

#[derive(Debug, Clone)]
pub(crate) struct ByteLevelSplit {
    /// The first split's pattern; `then` are the later isolated splits of a
    /// `Sequence` (DeepSeek V3 has three), each run on every piece of the
    /// one before it, as Hugging Face's `Sequence` does.
    pattern: CompiledPattern,
    then: Vec<CompiledPattern>,
}

/// Normalizers this route may follow: an empty `Sequence` (DeepSeek V3's)
/// changes nothing, and a Unicode normal form (Qwen 2's NFC) changes the
/// segment's text but not how it is split afterwards. The route works on the
/// normalized text, as the general route's pre-tokenizer does; only offsets
/// need the alignments, and those are asked for on the general route.
fn is_unicode_form(n: &Normalizer) -> bool {
    match n {
        Normalizer::Nfc | Normalizer::Nfd | Normalizer::Nfkc | Normalizer::Nfkd => true,
        Normalizer::Sequence(items) => items.iter().all(is_unicode_form),
        _ => false,
    }
}

impl ByteLevelSplit {
    /// The route, when the pipeline has this shape.
    pub(crate) fn of(normalizer: Option<&Normalizer>, pre: Option<&PreTokenizer>) -> Option<ByteLevelSplit> {
        if normalizer.is_some_and(|n| !is_unicode_form(n)) {
            return None;
        }
        match pre? {
            PreTokenizer::ByteLevel {
                add_prefix_space: false,
                regex: Some(re @ (CompiledPattern::Regex(_) | CompiledPattern::Lexer(_))),
            } => {
                Some(ByteLevelSplit { pattern: re.clone(), then: Vec::new() })
            }
            PreTokenizer::Sequence(items) => match items.as_slice() {
                [splits @ .., PreTokenizer::ByteLevel { add_prefix_space: false, regex: None }] if !splits.is_empty() => {
                    let mut patterns = splits
                        .iter()
                        .map(|p| match p {
                            PreTokenizer::Split {
                                pattern: re @ (CompiledPattern::Regex(_) | CompiledPattern::Lexer(_)),
                                behavior: Behavior::Isolated,
                                invert: false,
                            } => Some(re.clone()),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()?;
                    let pattern = patterns.remove(0);
                    Some(ByteLevelSplit { pattern, then: patterns })
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Calls `f` on every non-empty piece of `text[a..b]` under the splits
    /// `rest` (the whole range when there are none).
    fn pieces(rest: &[CompiledPattern], text: &str, a: usize, b: usize, f: &mut impl FnMut(usize, usize) -> Result<()>) -> Result<()> {
        let Some((first, rest)) = rest.split_first() else {
            return f(a, b);
        };
        // "isolated": every range, matched or not, is a piece of its own
        for ((s, e), _) in first.find_matches(&text[a..b])? {
            if s < e {
                Self::pieces(rest, text, a + s, a + e, f)?;
            }
        }
        Ok(())
    }

    /// Appends the ids of one text segment (no added tokens in it).
    pub(crate) fn encode(&self, text: &str, model: &Bpe, ids: &mut Vec<u32>) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        if let (CompiledPattern::Lexer(preset), []) = (&self.pattern, self.then.as_slice()) {
            return Self::encode_lexed(*preset, text, model, ids);
        }
        // "isolated": every range, matched or not, is a piece of its own;
        // this thread's piece cache is borrowed once for the whole text
        let matches = self.pattern.find_matches(text)?;
        let body = |mut cache: Option<&mut crate::piece_cache::PieceCache>| -> Result<()> {
            let mut piece = |a: usize, b: usize| model.tokenize_raw_in(cache.as_deref_mut(), &text.as_bytes()[a..b], ids);
            for &((a, b), _) in &matches {
                if a < b {
                    Self::pieces(&self.then, text, a, b, &mut piece)?;
                }
            }
            Ok(())
        };
        crate::piece_cache::with_cache_if(model.caches_pieces(), body)
    }

    /// `encode` of a single split that a preset's lexer runs: each word is
    /// a piece, handed to the model as the lexer finds it (no list of
    /// matches), with the one-loop-per-preset inlining of `Preset::for_each_word`.
    fn encode_lexed(preset: crate::lexer::Preset, text: &str, model: &Bpe, ids: &mut Vec<u32>) -> Result<()> {
        let body = |mut cache: Option<&mut crate::piece_cache::PieceCache>| -> Result<()> {
            let mut failed = None;
            preset.for_each_word(text, |w| {
                if failed.is_none() {
                    if let Err(e) = model.tokenize_raw_in(cache.as_deref_mut(), w.as_bytes(), ids) {
                        failed = Some(e);
                    }
                }
            });
            failed.map_or(Ok(()), Err)
        };
        crate::piece_cache::with_cache_if(model.caches_pieces(), body)
    }
}
