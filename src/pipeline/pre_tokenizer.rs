//! Pre-tokenizers: split normalized text into pieces (Hugging Face's
//! `NormalizedString::split` with its five behaviors), and the byte-level
//! and metaspace rewrites.

use crate::text::normalized::NStr;
use super::spec::{Behavior, PreTokenizerSpec, PrependScheme};
use crate::error::Result;
use crate::pretok::llama_split::LlamaSplit;
use crate::pretok::split_pattern::{compile, CompiledPattern, Pattern};
use crate::pretok::patterns::HF_BYTE_LEVEL_REGEX;
use crate::text::byte_level::byte_level_transform;

/// Backtracking steps a split regex may take for one match before it fails
/// with a `PatternError` (fancy-regex's limit; see docs/decisions.md), within
/// a budget per text (`crate::pretok::regex_guard`).
pub const BACKTRACK_LIMIT: usize = crate::pretok::regex_guard::BACKTRACK_LIMIT;

/// Hugging Face's `NormalizedString::split`: the kept pieces, empty ones dropped.
pub fn split(n: &NStr, pattern: &CompiledPattern, behavior: Behavior, invert: bool, out: &mut Vec<NStr>) -> Result<()> {
    for ((a, b), remove) in split_ranges(pattern.find_matches(&n.s)?, behavior, invert) {
        if !remove && a != b {
            out.push(n.slice(a, b));
        }
    }
    Ok(())
}

/// The ranges a `Split` leaves of a text whose `matches` (each range, and
/// whether the pattern matched it) cover it, each with whether it is removed:
/// Hugging Face's behaviors (`Isolated`, `Removed`, `Contiguous`,
/// `MergedWithPrevious`, `MergedWithNext`), `invert` swapping matched and not.
pub(crate) fn split_ranges(
    mut matches: Vec<((usize, usize), bool)>,
    behavior: Behavior,
    invert: bool,
) -> Vec<((usize, usize), bool)> {
    if invert {
        matches.iter_mut().for_each(|m| m.1 = !m.1);
    }
    match behavior {
        Behavior::Isolated => matches.into_iter().map(|(o, _)| (o, false)).collect(),
        Behavior::Removed => matches,
        Behavior::Contiguous => {
            let mut prev = false;
            let mut acc: Vec<((usize, usize), bool)> = Vec::new();
            for (o, m) in matches {
                if m == prev {
                    if let Some(((_, end), _)) = acc.last_mut() {
                        *end = o.1;
                    } else {
                        acc.push((o, false));
                    }
                } else {
                    acc.push((o, false));
                }
                prev = m;
            }
            acc
        }
        Behavior::MergedWithPrevious => {
            let mut prev = false;
            let mut acc: Vec<((usize, usize), bool)> = Vec::new();
            for (o, m) in matches {
                if m && !prev {
                    if let Some(((_, end), _)) = acc.last_mut() {
                        *end = o.1;
                    } else {
                        acc.push((o, false));
                    }
                } else {
                    acc.push((o, false));
                }
                prev = m;
            }
            acc
        }
        Behavior::MergedWithNext => {
            let mut prev = false;
            let mut acc: Vec<((usize, usize), bool)> = Vec::new();
            for (o, m) in matches.into_iter().rev() {
                if m && !prev {
                    if let Some(((start, _), _)) = acc.last_mut() {
                        *start = o.0;
                    } else {
                        acc.push((o, false));
                    }
                } else {
                    acc.push((o, false));
                }
                prev = m;
            }
            acc.reverse();
            acc
        }
    }
}

fn is_punc(c: char) -> bool {
    use unicode_categories::UnicodeCategories;
    c.is_ascii_punctuation() || c.is_punctuation()
}

#[derive(Debug, Clone)]
pub(crate) enum PreTokenizer {
    ByteLevel { add_prefix_space: bool, regex: Option<CompiledPattern> },
    Split { pattern: CompiledPattern, behavior: Behavior, invert: bool },
    Metaspace { replacement: char, rep: String, prepend_scheme: PrependScheme, split: bool },
    Pred { pattern: CompiledPattern, behavior: Behavior, invert: bool },
    Bert,
    Sequence(Vec<PreTokenizer>),
    Llama(Box<LlamaSplit>),
}

impl PreTokenizer {
    pub(crate) fn new(spec: &PreTokenizerSpec, regexes: &crate::pretok::patterns::RegexMap) -> Result<PreTokenizer> {
        Ok(match spec {
            PreTokenizerSpec::ByteLevel { add_prefix_space, use_regex } => PreTokenizer::ByteLevel {
                add_prefix_space: *add_prefix_space,
                // HF's own regex has the gpt2 lexer's matches (`preset_of`)
                regex: if *use_regex {
                    let pattern = Pattern::Regex(HF_BYTE_LEVEL_REGEX.to_owned());
                    Some(CompiledPattern::new(&pattern, regexes, "pre-tokenizer ByteLevel")?)
                } else {
                    None
                },
            },
            PreTokenizerSpec::Split { pattern, behavior, invert } => PreTokenizer::Split {
                pattern: CompiledPattern::new(pattern, regexes, "pre-tokenizer Split")?,
                behavior: *behavior,
                invert: *invert,
            },
            PreTokenizerSpec::Metaspace { replacement, prepend_scheme, split } => PreTokenizer::Metaspace {
                replacement: *replacement,
                rep: replacement.to_string(),
                prepend_scheme: *prepend_scheme,
                split: *split,
            },
            PreTokenizerSpec::Digits { individual } => PreTokenizer::Pred {
                pattern: CompiledPattern::Pred(char::is_numeric),
                behavior: if *individual { Behavior::Isolated } else { Behavior::Contiguous },
                invert: false,
            },
            PreTokenizerSpec::Punctuation { behavior } => {
                PreTokenizer::Pred { pattern: CompiledPattern::Pred(is_punc), behavior: *behavior, invert: false }
            }
            PreTokenizerSpec::Whitespace => PreTokenizer::Split {
                pattern: CompiledPattern::Regex(compile(
                    regexes.get(r"\w+|[^\w\s]+").map(String::as_str).unwrap_or(r"\w+|[^\w\s]+"),
                    "pre-tokenizer Whitespace",
                )?),
                behavior: Behavior::Removed,
                invert: true,
            },
            PreTokenizerSpec::WhitespaceSplit => PreTokenizer::Pred {
                pattern: CompiledPattern::Pred(char::is_whitespace),
                behavior: Behavior::Removed,
                invert: false,
            },
            PreTokenizerSpec::CharDelimiterSplit(d) => {
                PreTokenizer::Pred { pattern: CompiledPattern::Char(*d), behavior: Behavior::Removed, invert: false }
            }
            PreTokenizerSpec::BertPreTokenizer => PreTokenizer::Bert,
            PreTokenizerSpec::LlamaSplit { routine, classes } => {
                PreTokenizer::Llama(Box::new(LlamaSplit::new(routine, classes)?))
            }
            PreTokenizerSpec::Sequence(items) => {
                PreTokenizer::Sequence(items.iter().map(|s| PreTokenizer::new(s, regexes)).collect::<Result<_>>()?)
            }
        })
    }

    /// Whether the pipeline ends in byte-level chars (the model then sees bytes).
    pub(crate) fn is_byte_level(&self) -> bool {
        match self {
            PreTokenizer::ByteLevel { .. } => true,
            PreTokenizer::Sequence(items) => items.iter().any(|p| p.is_byte_level()),
            _ => false,
        }
    }

    /// Whether a stage asks where a piece starts in the original text
    /// (Metaspace "first"): alignments are then tracked even without offsets.
    pub(crate) fn needs_alignments(&self) -> bool {
        match self {
            PreTokenizer::Metaspace { prepend_scheme, .. } => *prepend_scheme == PrependScheme::First,
            PreTokenizer::Sequence(items) => items.iter().any(|p| p.needs_alignments()),
            _ => false,
        }
    }

    pub(crate) fn pre_tokenize(&self, pieces: Vec<NStr>) -> Result<Vec<NStr>> {
        match self {
            PreTokenizer::Sequence(items) => {
                let mut p = pieces;
                for x in items {
                    p = x.pre_tokenize(p)?;
                }
                Ok(p)
            }
            PreTokenizer::ByteLevel { add_prefix_space, regex } => {
                let mut out = Vec::with_capacity(pieces.len());
                for mut n in pieces {
                    if *add_prefix_space && !n.s.starts_with(' ') {
                        n.prepend(" ");
                    }
                    match regex {
                        Some(re) => split(&n, re, Behavior::Isolated, false, &mut out)?,
                        None => {
                            if !n.is_empty() {
                                out.push(n)
                            }
                        }
                    }
                }
                for n in out.iter_mut() {
                    byte_level_transform(n);
                }
                Ok(out)
            }
            PreTokenizer::Split { pattern, behavior, invert } | PreTokenizer::Pred { pattern, behavior, invert } => {
                let mut out = Vec::with_capacity(pieces.len());
                for n in &pieces {
                    split(n, pattern, *behavior, *invert, &mut out)?;
                }
                Ok(out)
            }
            PreTokenizer::Llama(routine) => {
                let mut out = Vec::with_capacity(pieces.len());
                let mut cuts = Vec::new();
                for n in &pieces {
                    cuts.clear();
                    routine.split(&n.s, &mut cuts)?;
                    out.extend(cuts.iter().map(|&(a, b)| n.slice(a, b)));
                }
                Ok(out)
            }
            PreTokenizer::Bert => {
                let mut mid = Vec::with_capacity(pieces.len());
                for n in &pieces {
                    split(n, &CompiledPattern::Pred(char::is_whitespace), Behavior::Removed, false, &mut mid)?;
                }
                let mut out = Vec::with_capacity(mid.len());
                for n in &mid {
                    split(n, &CompiledPattern::Pred(is_punc), Behavior::Isolated, false, &mut out)?;
                }
                Ok(out)
            }
            PreTokenizer::Metaspace { replacement, rep, prepend_scheme, split: do_split } => {
                let mut out = Vec::with_capacity(pieces.len());
                for mut n in pieces {
                    let spaces: Vec<(usize, usize)> = n.s.match_indices(' ').map(|(i, _)| (i, i + 1)).collect();
                    n.replace_ranges(&spaces, rep);
                    let prepend = match prepend_scheme {
                        PrependScheme::Always => !n.s.starts_with(*replacement),
                        PrependScheme::First => !n.s.starts_with(*replacement) && n.original_start() == 0,
                        PrependScheme::Never => false,
                    };
                    if prepend {
                        n.prepend(rep);
                    }
                    if *do_split {
                        split(&n, &CompiledPattern::Char(*replacement), Behavior::MergedWithNext, false, &mut out)?;
                    } else if !n.is_empty() {
                        out.push(n);
                    }
                }
                Ok(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::patterns::{CL100K, GPT2, HF_BYTE_LEVEL_REGEX, LLAMA3, QWEN2, SUPERBPE};
    use crate::pretok::preset::Preset;

    #[test]
    fn preset_patterns_use_the_lexer_with_the_regexes_matches() {
        let texts = ["", "Hello world's 12345!!\n\n  x \n\t ", " \u{a0}Ж1٣ 'LL?\r\n", "a \n "];
        for p in [GPT2, HF_BYTE_LEVEL_REGEX, CL100K, LLAMA3, QWEN2] {
            let lexed = CompiledPattern::new(&Pattern::Regex(p.to_string()), &Default::default(), "test").unwrap();
            assert!(matches!(lexed, CompiledPattern::Lexer(_)), "{p}");
            let regex = CompiledPattern::Regex(compile(p, "test").unwrap());
            for t in texts {
                assert_eq!(lexed.find_matches(t).unwrap(), regex.find_matches(t).unwrap(), "{p} on {t:?}");
                for behavior in [
                    Behavior::Isolated,
                    Behavior::Removed,
                    Behavior::MergedWithNext,
                    Behavior::MergedWithPrevious,
                    Behavior::Contiguous,
                ] {
                    for invert in [false, true] {
                        let n = NStr::new(t, 0, true);
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        split(&n, &lexed, behavior, invert, &mut a).unwrap();
                        split(&n, &regex, behavior, invert, &mut b).unwrap();
                        let s = |v: &Vec<NStr>| v.iter().map(|x| (x.s.clone(), x.original(0, x.s.len()))).collect::<Vec<_>>();
                        assert_eq!(s(&a), s(&b));
                    }
                }
            }
        }
        // the text that runs is the translated one
        let mut map = crate::pretok::patterns::RegexMap::default();
        map.insert("written differently".to_string(), LLAMA3.to_string());
        let p = CompiledPattern::new(&Pattern::Regex("written differently".into()), &map, "test").unwrap();
        assert!(matches!(p, CompiledPattern::Lexer(Preset::Llama3)));
        // SuperBPE's lexer gives the stretches between matches too: its regex runs
        let p = CompiledPattern::new(&Pattern::Regex(SUPERBPE.into()), &Default::default(), "test").unwrap();
        assert!(matches!(p, CompiledPattern::Regex(_)));
        // one character more is another pattern
        let p = CompiledPattern::new(&Pattern::Regex(format!("{LLAMA3}|x")), &Default::default(), "test").unwrap();
        assert!(matches!(p, CompiledPattern::Regex(_)));
    }
}
