//! A split pattern (Hugging Face's `Pattern`: a literal string or a regex),
//! as a description and compiled: a literal, a guarded regex, or the lexer
//! of a preset whose exact regex it is; `find_matches` cuts text at its
//! matches (used by the pre-tokenizers, and by the Replace normalizer and
//! decoder).

use crate::error::{Error, Result};
use super::patterns::RegexMap;
use super::preset::Preset;
use super::regex_guard::GuardedRegex;

#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    String(String),
    Regex(String),
}

#[derive(Debug, Clone)]
pub enum CompiledPattern {
    Literal(String),
    Regex(GuardedRegex),
    /// A regex that is a preset's (`preset_of`: its text or its syntax tree) whose lexer matches
    /// everything (`lexer_for`): its matches, from the lexer.
    Lexer(Preset),
    Char(char),
    Pred(fn(char) -> bool),
}

pub(crate) fn compile(p: &str, what: &str) -> Result<GuardedRegex> {
    if p.len() > super::pretokenize::MAX_PATTERN_BYTES {
        return Err(Error::Pattern(format!("{what}: the regex is {} bytes long", p.len())));
    }
    GuardedRegex::new(p, what)
}

impl CompiledPattern {
    pub fn new(p: &Pattern, regexes: &RegexMap, what: &str) -> Result<CompiledPattern> {
        Ok(match p {
            Pattern::String(s) => CompiledPattern::Literal(s.clone()),
            Pattern::Regex(r) => {
                let translated = regexes.get(r).map(String::as_str).unwrap_or(r);
                match lexer_for(translated) {
                    Some(preset) => CompiledPattern::Lexer(preset),
                    None => CompiledPattern::Regex(compile(translated, what)?),
                }
            }
        })
    }

    /// Hugging Face's `Pattern::find_matches`: ranges covering `s`, each
    /// flagged as a match or not.
    pub(crate) fn find_matches(&self, s: &str) -> Result<Vec<((usize, usize), bool)>> {
        if s.is_empty() {
            return Ok(vec![((0, 0), false)]);
        }
        let mut out = Vec::new();
        match self {
            CompiledPattern::Literal(lit) => {
                if lit.is_empty() {
                    return Ok(vec![((0, s.chars().count()), false)]);
                }
                let mut prev = 0;
                for (start, m) in s.match_indices(lit.as_str()) {
                    if prev != start {
                        out.push(((prev, start), false));
                    }
                    out.push(((start, start + m.len()), true));
                    prev = start + m.len();
                }
                if prev != s.len() {
                    out.push(((prev, s.len()), false));
                }
            }
            CompiledPattern::Regex(re) => {
                let mut prev = 0;
                re.for_each_match(s, |start, end| {
                    if prev != start {
                        out.push(((prev, start), false));
                    }
                    out.push(((start, end), true));
                    prev = end;
                })?;
                if prev != s.len() {
                    out.push(((prev, s.len()), false));
                }
            }
            CompiledPattern::Lexer(preset) => {
                // the lexer's words are the regex's matches, and they cover the text
                let mut start = 0;
                preset.for_each_word(s, |w| {
                    out.push(((start, start + w.len()), true));
                    start += w.len();
                });
            }
            CompiledPattern::Char(d) => return Ok(char_matches(s, |c| c == *d)),
            CompiledPattern::Pred(f) => return Ok(char_matches(s, f)),
        }
        Ok(out)
    }
}

/// The preset whose lexer gives exactly the matches of the regex `p` (the
/// translated text that fancy-regex would run), where every character is
/// in a match, so that the lexer's words are the matches and there is no
/// text between them: the cl100k-like and gpt2 presets (not SuperBPE's,
/// whose lexer's words include the stretches between matches).
fn lexer_for(p: &str) -> Option<Preset> {
    super::pretokenize::preset_of(p).filter(|&preset| preset != Preset::SuperBpe)
}

fn char_matches(s: &str, f: impl Fn(char) -> bool) -> Vec<((usize, usize), bool)> {
    let mut out = Vec::new();
    let mut last_offset = 0;
    let mut last_seen = 0;
    for (b, c) in s.char_indices() {
        last_seen = b + c.len_utf8();
        if f(c) {
            if last_offset < b {
                out.push(((last_offset, b), false));
            }
            out.push(((b, b + c.len_utf8()), true));
            last_offset = b + c.len_utf8();
        }
    }
    if last_seen > last_offset {
        out.push(((last_offset, last_seen), false));
    }
    out
}
