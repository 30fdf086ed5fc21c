//! SentencePiece's normalizer (`normalizer.cc`): the precompiled charsmap by
//! longest match, user-defined symbols matched first on the raw text, dummy
//! prefix or suffix, extra-whitespace removal, `▁` escaping, and the
//! `norm_to_orig` offsets; also run as the denormalizer over decoded text.

use crate::model::spec::SpNormSpec;
use crate::error::{Error, Result};
use crate::text::charsmap::CharsMap;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Anchored, Input, MatchKind, StartKind};

/// sentencepiece's whitespace marker (`kSpaceSymbol`).
pub(super) const SPACE: &str = "\u{2581}";

/// Longest match of a darts-clone trie over raw bytes (`commonPrefixSearch`
/// with an explicit length, as SentencePiece calls it).
pub(super) fn user_matcher(symbols: &[&str]) -> Result<Option<Matcher>> {
    if symbols.is_empty() {
        return Ok(None);
    }
    let ac = AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .start_kind(StartKind::Anchored)
        .build(symbols)
        .map_err(|e| Error::Format(format!("model.pieces: user-defined symbols: {e}")))?;
    let mut first = [false; 256];
    for s in symbols {
        if let Some(&b) = s.as_bytes().first() {
            first[b as usize] = true;
        }
    }
    Ok(Some(Matcher { ac, first }))
}

/// The user-defined symbols (sentencepiece's `PrefixMatcher`): the longest
/// one starting at a position; the first-byte table skips most positions.
#[derive(Debug)]
pub(crate) struct Matcher {
    ac: AhoCorasick,
    first: [bool; 256],
}

impl Matcher {
    #[inline]
    pub(super) fn len_at(&self, s: &str, at: usize) -> Option<usize> {
        if !self.first[s.as_bytes()[at] as usize] {
            return None;
        }
        self.ac
            .find(Input::new(s).range(at..).anchored(Anchored::Yes))
            .map(|x| x.len())
    }
}

#[derive(Debug)]
pub(super) struct SpNormalizer {
    pub(super) map: Option<CharsMap>,
    pub(super) spec: SpNormSpec,
}

impl SpNormalizer {
    /// One step of `Normalizer::NormalizePrefix`: the replacement of the
    /// text at `at` and how many bytes it consumes.
    #[inline]
    pub(super) fn prefix<'a>(&'a self, s: &'a str, at: usize, matcher: Option<&Matcher>) -> (&'a str, usize) {
        if let Some(m) = matcher {
            if let Some(n) = m.len_at(s, at) {
                return (&s[at..at + n], n);
            }
        }
        if let Some(map) = &self.map {
            if let Some((n, rep)) = map.longest_prefix(&s.as_bytes()[at..]) {
                return (rep, n);
            }
        }
        let n = s[at..].chars().next().map_or(1, char::len_utf8);
        (&s[at..at + n], n)
    }

    /// `Normalizer::Normalize`: the normalized text and, when `track`, the
    /// original byte offset of each of its bytes (plus one for its end).
    pub(super) fn normalize(
        &self,
        input: &str,
        matcher: Option<&Matcher>,
        track: bool,
        n2o: &mut Vec<usize>,
    ) -> String {
        n2o.clear();
        let spec = &self.spec;
        let mut at = 0usize;
        let len = input.len();
        if spec.remove_extra_whitespaces {
            while at < len {
                let (p, n) = self.prefix(input, at, matcher);
                if p != " " {
                    break;
                }
                at += n;
            }
        }
        if at >= len {
            return String::new();
        }
        let mut out = String::with_capacity((len - at) * 3 / 2 + 8);
        if track {
            n2o.reserve((len - at) * 3 / 2 + 8);
        }
        let esc = spec.escape_whitespaces;
        let add_ws = |out: &mut String, n2o: &mut Vec<usize>, consumed: usize| {
            if esc {
                out.push_str(SPACE);
                if track {
                    n2o.extend_from_slice(&[consumed; 3]);
                }
            } else {
                out.push(' ');
                if track {
                    n2o.push(consumed);
                }
            }
        };
        if !spec.treat_whitespace_as_suffix && spec.add_dummy_prefix {
            add_ws(&mut out, n2o, at);
        }
        let mut is_prev_space = spec.remove_extra_whitespaces;
        let no_map = self.map.is_none();
        let bytes = input.as_bytes();
        // spaces are plain too when extra ones are kept: each is its own replacement, escaped or not
        let keep_spaces = !spec.remove_extra_whitespaces;
        let plain = |b: u8| b < 0x80 && (b != b' ' || keep_spaces) && matcher.is_none_or(|m| !m.first[b as usize]);
        while at < len {
            // the common case without rules: a run of plain ASCII bytes, each its own replacement (the
            // loop below, byte by byte, gives the same text and offsets)
            let b = bytes[at];
            if no_map && plain(b) {
                let end = at + bytes[at..].iter().position(|&x| !plain(x)).unwrap_or(len - at);
                let mut from = at;
                for space in memchr::memchr_iter(b' ', &bytes[at..end]).map(|i| at + i) {
                    out.push_str(&input[from..space]);
                    if track {
                        n2o.extend(from..space);
                    }
                    add_ws(&mut out, n2o, space);
                    from = space + 1;
                }
                out.push_str(&input[from..end]);
                if track {
                    n2o.extend(from..end);
                }
                is_prev_space = false;
                at = end;
                continue;
            }
            let (mut sp, n) = if b < 0x80 && no_map && matcher.is_none_or(|m| !m.first[b as usize])
            {
                (&input[at..at + 1], 1)
            } else {
                self.prefix(input, at, matcher)
            };
            if is_prev_space {
                while let Some(rest) = sp.strip_prefix(' ') {
                    sp = rest;
                }
            }
            if !sp.is_empty() {
                if esc && sp.contains(' ') {
                    for (i, part) in sp.split(' ').enumerate() {
                        if i > 0 {
                            out.push_str(SPACE);
                            if track {
                                n2o.extend_from_slice(&[at; 3]);
                            }
                        }
                        out.push_str(part);
                        if track {
                            n2o.extend(std::iter::repeat_n(at, part.len()));
                        }
                    }
                } else {
                    out.push_str(sp);
                    if track {
                        n2o.extend(std::iter::repeat_n(at, sp.len()));
                    }
                }
                is_prev_space = sp.ends_with(' ');
            }
            at += n;
            if !spec.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        let mut consumed = at;
        if spec.remove_extra_whitespaces {
            let space = if esc { SPACE } else { " " };
            while out.ends_with(space) {
                let l = out.len() - space.len();
                if track {
                    consumed = n2o[l];
                    n2o.truncate(l);
                }
                out.truncate(l);
            }
        }
        if spec.treat_whitespace_as_suffix && spec.add_dummy_prefix {
            add_ws(&mut out, n2o, consumed);
        }
        if track {
            n2o.push(consumed);
        }
        out
    }
}
