//! Normalizers: each rewrites the text of an `NStr`, keeping alignments.

use super::charsmap::CharsMap;
use super::normalized::NStr;
use super::byte_level::byte_level_transform;
use super::spec::NormalizerSpec;
use crate::pretok::split_pattern::CompiledPattern;
use crate::error::Result;
use unicode_normalization_alignments::char::is_combining_mark;
use unicode_normalization_alignments::UnicodeNormalization;
use unicode_normalization_alignments::{is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized};

#[derive(Debug, Clone)]
pub enum Normalizer {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    Strip { left: bool, right: bool },
    StripAccents,
    Replace { pattern: CompiledPattern, content: String },
    Prepend(String),
    Precompiled(CharsMap),
    ByteLevel,
    Sequence(Vec<Normalizer>),
}

impl Normalizer {
    pub fn new(spec: &NormalizerSpec, regexes: &crate::pretok::patterns::RegexMap) -> Result<Normalizer> {
        Ok(match spec {
            NormalizerSpec::Nfc => Normalizer::Nfc,
            NormalizerSpec::Nfd => Normalizer::Nfd,
            NormalizerSpec::Nfkc => Normalizer::Nfkc,
            NormalizerSpec::Nfkd => Normalizer::Nfkd,
            NormalizerSpec::Lowercase => Normalizer::Lowercase,
            NormalizerSpec::Strip { left, right } => Normalizer::Strip { left: *left, right: *right },
            NormalizerSpec::StripAccents => Normalizer::StripAccents,
            NormalizerSpec::Replace { pattern, content } => Normalizer::Replace {
                pattern: CompiledPattern::new(pattern, regexes, "normalizer Replace")?,
                content: content.clone(),
            },
            NormalizerSpec::Prepend(p) => Normalizer::Prepend(p.clone()),
            NormalizerSpec::Precompiled(raw) => Normalizer::Precompiled(CharsMap::new(raw)?),
            NormalizerSpec::ByteLevel => Normalizer::ByteLevel,
            NormalizerSpec::Sequence(items) => {
                Normalizer::Sequence(items.iter().map(|s| Normalizer::new(s, regexes)).collect::<Result<_>>()?)
            }
        })
    }

    /// Whether normalizing `text` (or any part of it) certainly leaves it as it is: a Unicode normal form on text
    /// that its quick check passes (a part then passes too: the check goes character by character and over
    /// adjacent pairs), or a sequence of such forms (an empty one, DeepSeek V3's, always). False when unsure.
    pub(crate) fn leaves_unchanged(&self, text: &str) -> bool {
        let yes = |answer: IsNormalized| answer == IsNormalized::Yes;
        match self {
            Normalizer::Nfc => text.is_ascii() || yes(is_nfc_quick(text.chars())),
            Normalizer::Nfd => text.is_ascii() || yes(is_nfd_quick(text.chars())),
            Normalizer::Nfkc => text.is_ascii() || yes(is_nfkc_quick(text.chars())),
            Normalizer::Nfkd => text.is_ascii() || yes(is_nfkd_quick(text.chars())),
            Normalizer::Sequence(items) => items.iter().all(|n| n.leaves_unchanged(text)),
            _ => false,
        }
    }

    pub(crate) fn normalize(&self, n: &mut NStr) -> Result<()> {
        match self {
            Normalizer::Nfc => unicode_form(n, |c| is_nfc_quick(c), |s| s.nfc().collect()),
            Normalizer::Nfd => unicode_form(n, |c| is_nfd_quick(c), |s| s.nfd().collect()),
            Normalizer::Nfkc => unicode_form(n, |c| is_nfkc_quick(c), |s| s.nfkc().collect()),
            Normalizer::Nfkd => unicode_form(n, |c| is_nfkd_quick(c), |s| s.nfkd().collect()),
            Normalizer::Lowercase => {
                if n.s.chars().any(|c| {
                    let mut l = c.to_lowercase();
                    !(l.next() == Some(c) && l.next().is_none())
                }) {
                    n.flat_map_chars(|c| c.to_lowercase());
                }
            }
            Normalizer::Strip { left, right } => strip(n, *left, *right),
            Normalizer::StripAccents => {
                if n.s.chars().any(is_combining_mark) {
                    n.filter(|c| !is_combining_mark(c));
                }
            }
            Normalizer::Replace { pattern, content } => {
                let ranges: Vec<(usize, usize)> =
                    pattern.find_matches(&n.s)?.into_iter().filter(|(_, m)| *m).map(|(r, _)| r).collect();
                n.replace_ranges(&ranges, content);
            }
            Normalizer::Prepend(p) => {
                if !n.is_empty() {
                    n.prepend(p);
                }
            }
            Normalizer::Precompiled(map) => map.normalize(n),
            Normalizer::ByteLevel => byte_level_transform(n),
            Normalizer::Sequence(items) => {
                for x in items {
                    x.normalize(n)?;
                }
            }
        }
        Ok(())
    }
}

/// `n` in a Unicode normal form by `f`; text the form's quick check
/// (the same crate's tables) says is already in it is left as it is (most
/// text is NFC already: this skips rebuilding it and its alignments).
fn unicode_form(
    n: &mut NStr,
    quick: impl Fn(std::str::Chars<'_>) -> IsNormalized,
    f: impl Fn(&str) -> Vec<(char, isize)>,
) {
    if n.s.is_ascii() || quick(n.s.chars()) == IsNormalized::Yes {
        return;
    }
    let dest = f(&n.s);
    n.transform(dest, 0);
}

fn strip(n: &mut NStr, left: bool, right: bool) {
    let leading = if left { n.s.chars().take_while(|c| c.is_whitespace()).count() } else { 0 };
    let trailing = if right { n.s.chars().rev().take_while(|c| c.is_whitespace()).count() } else { 0 };
    if leading == 0 && trailing == 0 {
        return;
    }
    let count = n.s.chars().count();
    let len = n.s.len();
    let tr: Vec<(char, isize)> = n
        .s
        .chars()
        .enumerate()
        .filter_map(|(i, c)| {
            if i < leading || i >= count.saturating_sub(trailing) {
                None
            } else if i == len.wrapping_sub(trailing).wrapping_sub(1) {
                Some((c, -(trailing as isize)))
            } else {
                Some((c, 0))
            }
        })
        .collect();
    n.transform(tr, leading);
}
