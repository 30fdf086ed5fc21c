//! A route for the most common byte-level shape that builds no
//! intermediate strings: no normalizer, an empty `Sequence` or Unicode
//! normal forms (Qwen 2's NFC: the route runs on the normalized text), and a
//! pre-tokenizer that is one regex split (`Split(regex, "isolated")`
//! followed by `ByteLevel(add_prefix_space=false, use_regex=false)`, as in
//! Llama 3 and Qwen 2; or several such splits in a row, as DeepSeek V3's
//! three; or `ByteLevel(add_prefix_space=false)` with its own regex, as in
//! GPT-2; later splits may have any behavior, as a GGUF file's cut before a
//! character whose byte is missing). Each regex piece's raw bytes key the per-thread piece cache
//! (`Bpe::tokenize_raw_in`); only a miss maps the bytes to byte-level chars
//! and merges. A single split whose regex is a lexed preset's (Llama 3's,
//! Qwen2's: `CompiledPattern::Lexer`), or DeepSeek V3's three splits
//! (`lexer_deepseek`), hands the lexer's words straight to the model
//! (`encode_lexed`). Used when no offsets are asked for; the ids are those of the
//! general route (the same pieces, the same model).

use crate::model::bpe::Bpe;
use crate::text::normalizer::Normalizer;
use super::pre_tokenizer::PreTokenizer;
use crate::pretok::split_pattern::CompiledPattern;
use super::spec::Behavior;
use crate::error::Result;

#[derive(Debug, Clone)]
pub(crate) struct ByteLevelSplit {
    /// The first split's pattern (isolated); `then` are the later splits of a
    /// `Sequence` (DeepSeek V3 has three), each run on every piece of the
    /// one before it, as Hugging Face's `Sequence` does, with their behavior
    /// (isolated, or merged with the next piece as a GGUF file's cut before a
    /// character whose byte is missing) and `invert`.
    pattern: CompiledPattern,
    then: Vec<(CompiledPattern, Behavior, bool)>,
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

/// Whether the splits are DeepSeek V3's three (`lexer_deepseek`).
fn is_deepseek(patterns: &[(CompiledPattern, Behavior, bool)]) -> bool {
    patterns.len() == 3
        && patterns.iter().zip(crate::pretok::lexer_deepseek::SPLITS).all(|((p, _, _), text)| matches!(p, CompiledPattern::Regex(re) if crate::pretok::patterns::same_regex(text, re.as_str())))
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
                                behavior,
                                invert,
                            } => Some((re.clone(), *behavior, *invert)),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()?;
                    if !matches!(patterns[0], (_, Behavior::Isolated, false)) {
                        return None;
                    }
                    let isolated = patterns.iter().all(|p| matches!(p, (_, Behavior::Isolated, false)));
                    if isolated && is_deepseek(&patterns) {
                        let pattern = CompiledPattern::Lexer(crate::pretok::preset::Preset::DeepSeek);
                        return Some(ByteLevelSplit { pattern, then: Vec::new() });
                    }
                    let (pattern, _, _) = patterns.remove(0);
                    Some(ByteLevelSplit { pattern, then: patterns })
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Calls `f` on every non-empty piece of `text[a..b]` under the splits
    /// `rest` (the whole range when there are none).
    fn pieces(
        rest: &[(CompiledPattern, Behavior, bool)],
        text: &str,
        a: usize,
        b: usize,
        f: &mut impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<()> {
        let Some(((first, behavior, invert), rest)) = rest.split_first() else {
            return f(a, b);
        };
        let matches = first.find_matches(&text[a..b])?;
        if let (Behavior::Isolated, false) = (behavior, invert) {
            // every range, matched or not, is a piece of its own
            for ((s, e), _) in matches {
                if s < e {
                    Self::pieces(rest, text, a + s, a + e, f)?;
                }
            }
            return Ok(());
        }
        for ((s, e), removed) in super::pre_tokenizer::split_ranges(matches, *behavior, *invert) {
            if !removed && s < e {
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
        let body = |mut cache: Option<&mut crate::cache::PieceCache>| -> Result<()> {
            let mut piece = |a: usize, b: usize| model.tokenize_raw_in(cache.as_deref_mut(), &text.as_bytes()[a..b], ids);
            for &((a, b), _) in &matches {
                if a < b {
                    Self::pieces(&self.then, text, a, b, &mut piece)?;
                }
            }
            Ok(())
        };
        crate::cache::with_cache_if(model.caches_pieces(), body)
    }

    /// `encode` of a single split that a preset's lexer runs: each word's
    /// bytes are a piece, handed to the model as the lexer finds it (no list
    /// of matches), in the lexer's own loop (`Preset::for_each_word_bytes`);
    /// a piece that is its own token never reaches the cache (`whole_token_raw`).
    /// A text long enough for every thread is cut where its words allow and its parts encoded in parallel
    /// (`Preset::encode_on_threads`).
    fn encode_lexed(preset: crate::pretok::preset::Preset, text: &str, model: &Bpe, ids: &mut Vec<u32>) -> Result<()> {
        preset.encode_on_threads(text, ids, |part, ids| Self::encode_lexed_here(preset, part, model, ids))
    }

    /// `encode_lexed` on this thread.
    fn encode_lexed_here(preset: crate::pretok::preset::Preset, text: &str, model: &Bpe, ids: &mut Vec<u32>) -> Result<()> {
        let body = |cache: Option<&mut crate::cache::PieceCache>| -> Result<()> {
            // one probe of the front table per word (`cache::batch::Words`); the
            // vocabulary and the merges for the words it does not hold
            let slow = |cache: Option<&mut crate::cache::PieceCache>, w: &[u8], ids: &mut Vec<u32>| {
                if model.whole_token_raw(w, ids) {
                    return Ok(());
                }
                model.tokenize_raw_missed(cache, w, ids)
            };
            let mut words = crate::cache::batch::Words::new(cache, model.raw_owner(), model.front_seed(), text.as_bytes(), ids, slow);
            preset.for_each_word_bytes(text, |w| words.push(w));
            words.finish()
        };
        crate::cache::with_cache_if(model.caches_pieces(), body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipeline whose pre-tokenizer is written as DeepSeek V3's
    /// `tokenizer.json` writes it (the JSON text, escapes included).
    fn pipeline_with_splits(splits: &str) -> crate::pipeline::Pipeline {
        let json = format!(
            r#"{{"normalizer": {{"type": "Sequence", "normalizers": []}},
            "pre_tokenizer": {{"type": "Sequence", "pretokenizers": [{splits},
              {{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}}]}},
            "model": {{"type": "BPE", "vocab": {{"a": 0}}, "merges": []}}}}"#
        );
        crate::pipeline::Pipeline::from_json(&json, &Default::default()).unwrap()
    }

    const DEEPSEEK_SPLITS: &str = r##"
        {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false},
        {"type": "Split", "pattern": {"Regex": "[一-龥぀-ゟ゠-ヿ]+"}, "behavior": "Isolated", "invert": false},
        {"type": "Split", "pattern": {"Regex": "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}"##;

    /// A byte-level pipeline (Llama 3's split, every byte's character a
    /// token) whose extra tokens and merges are `extra` and `merges`, with
    /// or without ignore_merges.
    fn byte_level_pipeline(extra: &[&str], merges: &[&str], ignore_merges: bool) -> crate::pipeline::Pipeline {
        let mut vocab: Vec<String> = crate::text::byte_level::bytes_char().iter().map(|c| c.to_string()).collect();
        vocab.extend(extra.iter().map(|t| t.to_string()));
        let vocab = vocab.iter().enumerate().map(|(i, t)| format!("{}: {i}", serde_json::to_string(t).unwrap())).collect::<Vec<_>>();
        let merges = merges.iter().map(|m| serde_json::to_string(m).unwrap()).collect::<Vec<_>>();
        let split = serde_json::to_string(crate::pretok::patterns::LLAMA3).unwrap();
        let json = format!(
            r#"{{"pre_tokenizer": {{"type": "Sequence", "pretokenizers": [
                {{"type": "Split", "pattern": {{"Regex": {split}}}, "behavior": "Isolated", "invert": false}},
                {{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}}]}},
            "model": {{"type": "BPE", "ignore_merges": {ignore_merges}, "vocab": {{{}}}, "merges": [{}]}}}}"#,
            vocab.join(", "),
            merges.join(", ")
        );
        crate::pipeline::Pipeline::from_json(&json, &Default::default()).unwrap()
    }

    #[test]
    fn a_piece_that_is_a_token_is_that_token_only_when_the_merges_make_it() {
        // "abc" is a token in both vocabularies; the merges make it in the
        // second only (the first merges "a b" first and has no "ab c"). The
        // string-free route (the vocabulary first, each token checked once)
        // must give the general route's ids (merges on the mapped
        // characters, with offsets), and HF's ignore_merges takes the token
        // as it is
        let text = "abc abc xabc abc";
        let general = |p: &crate::pipeline::Pipeline| p.encode(text, false, false, true).unwrap().ids;
        let fast = |p: &crate::pipeline::Pipeline| p.encode(text, false, false, false).unwrap().ids;
        let unreachable = byte_level_pipeline(&["ab", "bc", "abc", "Ġabc"], &["a b", "b c"], false);
        let reachable = byte_level_pipeline(&["ab", "bc", "abc", "Ġa", "Ġabc"], &["b c", "a bc", "Ġ a", "Ġa bc"], false);
        let ignoring = byte_level_pipeline(&["ab", "bc", "abc", "Ġabc"], &["a b", "b c"], true);
        for p in [&unreachable, &reachable, &ignoring] {
            assert!(p.fast.is_some());
            for _ in 0..3 {
                // the first call checks each token, the next ones remember
                assert_eq!(fast(p), general(p));
            }
        }
        let abc = 258;
        assert!(!fast(&unreachable).contains(&abc));
        assert_eq!(fast(&reachable)[0], abc);
        assert_eq!(fast(&ignoring)[0], abc);
    }

    #[test]
    fn deepseeks_splits_take_the_lexer_and_others_the_regexes() {
        let p = pipeline_with_splits(DEEPSEEK_SPLITS);
        let route = p.fast.as_ref().expect("the string-free route");
        assert!(matches!(route.pattern, CompiledPattern::Lexer(crate::pretok::preset::Preset::DeepSeek)));
        assert!(route.then.is_empty());
        // the same splits in another order run as regexes
        let mut parts: Vec<&str> = DEEPSEEK_SPLITS.trim().split("},\n").collect();
        parts.swap(0, 1);
        let p = pipeline_with_splits(&parts.join("},\n"));
        let route = p.fast.as_ref().expect("the string-free route");
        assert!(matches!(route.pattern, CompiledPattern::Regex(_)));
        assert_eq!(route.then.len(), 2);
    }
}
