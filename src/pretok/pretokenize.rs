//! Text to words: Python's `str.split()`, a preset's hand-written lexer
//! (`lexer.rs`, chosen by the exact pattern text), or a regex (fancy-regex,
//! which supports tiktoken's possessive quantifiers, lookahead and `\p{..}`).

use crate::error::{Error, Result};
use crate::pretok::preset::Preset;
use crate::pretok::regex_guard::GuardedRegex;
use super::patterns::{CL100K, GPT2, LLAMA3, QWEN2, SUPERBPE};

/// Python's `str.isspace()`: Unicode White_Space plus the four ASCII
/// separators U+001C..U+001F that Python also treats as whitespace.
pub(crate) fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The preset whose lexer runs exactly `pattern` (the exact text only).
pub(crate) fn preset_of(pattern: &str) -> Option<Preset> {
    match pattern {
        GPT2 => Some(Preset::Gpt2),
        CL100K => Some(Preset::Cl100k),
        LLAMA3 => Some(Preset::Llama3),
        QWEN2 => Some(Preset::Qwen2),
        SUPERBPE => Some(Preset::SuperBpe),
        _ => None,
    }
}

#[derive(Debug, Clone)]
pub enum Pretokenizer {
    /// `str.split()`: runs of Python whitespace separate words.
    Whitespace,
    /// A preset pattern, matched by its hand-written lexer.
    Lexer(Preset),
    Regex(GuardedRegex),
}

/// Longest regex pattern accepted (bytes).
pub(crate) const MAX_PATTERN_BYTES: usize = 1 << 18;

impl Pretokenizer {
    /// `None` is the whitespace split; a preset's exact pattern uses its
    /// lexer; anything else is compiled as a regex.
    pub fn new(pattern: Option<&str>) -> Result<Self> {
        match pattern.and_then(preset_of) {
            Some(preset) => Ok(Pretokenizer::Lexer(preset)),
            None => Self::with_regex(pattern),
        }
    }

    /// Like `new`, but always with the regex engine (to check the lexers).
    pub fn with_regex(pattern: Option<&str>) -> Result<Self> {
        match pattern {
            None => Ok(Pretokenizer::Whitespace),
            // the compiler needs hundreds of bytes per character of pattern
            Some(p) if p.len() > MAX_PATTERN_BYTES => Err(Error::Pattern(format!(
                "the regex pattern is {} bytes long; at most {MAX_PATTERN_BYTES} are allowed",
                p.len()
            ))),
            Some(p) => GuardedRegex::new(p, "pattern").map(Pretokenizer::Regex),
        }
    }

    /// Calls `f` on every non-empty word of `text`, in text order.
    pub(crate) fn for_each_word<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<()> {
        match self {
            Pretokenizer::Whitespace => {
                text.split(is_python_whitespace).filter(|w| !w.is_empty()).for_each(f);
                Ok(())
            }
            Pretokenizer::Lexer(preset) => {
                preset.for_each_word(text, f);
                Ok(())
            }
            Pretokenizer::Regex(re) => re.for_each_match(text, |s, e| {
                if s < e {
                    f(&text[s..e]);
                }
            }),
        }
    }

    /// The words of `text` as a vector (convenience for tests and tools).
    pub fn words<'t>(&self, text: &'t str) -> Result<Vec<&'t str>> {
        let mut out = Vec::new();
        self.for_each_word(text, |w| out.push(w))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_split_matches_python() {
        let p = Pretokenizer::new(None).unwrap();
        assert_eq!(p.words("  low\tlower\x1cnew\u{3000}x ").unwrap(), ["low", "lower", "new", "x"]);
    }

    #[test]
    fn possessive_pattern_compiles() {
        let p = Pretokenizer::with_regex(Some(CL100K)).unwrap();
        assert_eq!(p.words("Hello world 12345!!").unwrap(), ["Hello", " world", " ", "123", "45", "!!"]);
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(Pretokenizer::new(Some("(")), Err(Error::Pattern(_))));
    }
}
