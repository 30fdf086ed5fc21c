//! Text to words: Python's `str.split()`, a preset's hand-written lexer
//! (`lexer.rs`, chosen by the exact pattern text), or a regex (fancy-regex,
//! which supports tiktoken's possessive quantifiers, lookahead and `\p{..}`).

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::pretok::preset::Preset;
use crate::pretok::regex_guard::GuardedRegex;
use super::patterns::{CL100K, GPT2, HF_BYTE_LEVEL_REGEX, LLAMA3, O200K, QWEN2, QWEN35, SUPERBPE, TEKKEN};

/// Python's `str.isspace()`: Unicode White_Space plus the four ASCII
/// separators U+001C..U+001F that Python also treats as whitespace.
pub(crate) fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The preset whose lexer runs exactly `pattern`: its text is a preset's,
/// or it is a preset's regex written another way that the regex engine reads
/// as the same expression (`super::patterns::same_regex`: Hugging Face's
/// dialect `(?>\p{N}{1,3})` for tiktoken's `\p{N}{1,3}+`, `\z` for `$`,
/// groups that group nothing). Hugging Face's `ByteLevel` regex is gpt2's
/// written differently (`\s+` after `\s+(?!\S)` for tiktoken's `\s++$` and
/// `\s`, greedy for possessive runs that nothing follows): the same matches
/// on every text, checked by hand and by the tests.
pub(crate) fn preset_of(pattern: &str) -> Option<Preset> {
    let by_text = PRESETS.iter().find(|(text, _)| *text == pattern);
    by_text
        .or_else(|| {
            let tree = super::patterns::syntax_tree(pattern)?;
            PRESETS.iter().find(|(text, _)| super::patterns::same_tree(text, &tree))
        })
        .map(|&(_, preset)| preset)
}

/// The patterns with a lexer, and the lexer of each.
const PRESETS: [(&str, Preset); 9] = [
    (GPT2, Preset::Gpt2),
    (HF_BYTE_LEVEL_REGEX, Preset::Gpt2),
    (CL100K, Preset::Cl100k),
    (LLAMA3, Preset::Llama3),
    (QWEN2, Preset::Qwen2),
    (O200K, Preset::O200k),
    (TEKKEN, Preset::Tekken),
    (QWEN35, Preset::Qwen35),
    (SUPERBPE, Preset::SuperBpe),
];

#[derive(Debug, Clone)]
pub enum Pretokenizer {
    /// `str.split()`: runs of Python whitespace separate words.
    Whitespace,
    /// A preset pattern, matched by its hand-written lexer.
    Lexer(Preset),
    Regex(GuardedRegex),
}

/// How many compiled patterns `Pretokenizer::cached` keeps, and the longest it keeps (bytes).
pub(crate) const CACHED_PATTERNS: usize = 8;
pub(crate) const CACHED_PATTERN_BYTES: usize = 1 << 14;

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

    /// `new(pattern)` (`regex_only`: `with_regex(pattern)`), compiled once for the last
    /// [`CACHED_PATTERNS`] patterns of at most [`CACHED_PATTERN_BYTES`] bytes: the bindings'
    /// `split_words` is called text by text with one pattern, and compiling a regex such as
    /// DeepSeek V3's takes milliseconds. Errors are not kept (every call reports them).
    pub fn cached(pattern: Option<&str>, regex_only: bool) -> Result<Arc<Self>> {
        static CACHE: Mutex<Vec<(bool, Option<String>, Arc<Pretokenizer>)>> = Mutex::new(Vec::new());
        let same = |e: &(bool, Option<String>, Arc<Pretokenizer>)| e.0 == regex_only && e.1.as_deref() == pattern;
        {
            let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = cache.iter().position(same) {
                let entry = cache.remove(i);
                let pre = Arc::clone(&entry.2);
                cache.push(entry); // most recently used last
                return Ok(pre);
            }
        }
        let pre = Arc::new(if regex_only { Self::with_regex(pattern)? } else { Self::new(pattern)? });
        if pattern.map_or(0, str::len) <= CACHED_PATTERN_BYTES {
            let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
            if !cache.iter().any(same) {
                if cache.len() == CACHED_PATTERNS {
                    cache.remove(0);
                }
                cache.push((regex_only, pattern.map(str::to_owned), Arc::clone(&pre)));
            }
        }
        Ok(pre)
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

    #[test]
    fn cached_is_new_compiled_once() {
        let pattern = r"\p{L}+|\s+(?!\S)|\s+|[0-9]{1,2}"; // no preset: a regex
        let text = "Hello  world 12345 \u{e9}t\u{e9}";
        let first = Pretokenizer::cached(Some(pattern), false).unwrap();
        let again = Pretokenizer::cached(Some(pattern), false).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(again.words(text).unwrap(), Pretokenizer::new(Some(pattern)).unwrap().words(text).unwrap());
        // the regex engine and the preset's lexer are kept apart
        let lexer = Pretokenizer::cached(Some(GPT2), false).unwrap();
        let regex = Pretokenizer::cached(Some(GPT2), true).unwrap();
        assert!(matches!(*lexer, Pretokenizer::Lexer(Preset::Gpt2)));
        assert!(matches!(*regex, Pretokenizer::Regex(_)));
        assert!(matches!(*Pretokenizer::cached(None, true).unwrap(), Pretokenizer::Whitespace));
        // errors on every call, never kept
        for _ in 0..2 {
            assert!(matches!(Pretokenizer::cached(Some("("), false), Err(Error::Pattern(_))));
        }
        // the oldest pattern leaves once CACHED_PATTERNS others were used after it
        let others: Vec<String> = (0..CACHED_PATTERNS).map(|i| format!("a{{{i}}}|{pattern}")).collect();
        for p in &others {
            Pretokenizer::cached(Some(p), false).unwrap();
        }
        assert!(!Arc::ptr_eq(&first, &Pretokenizer::cached(Some(pattern), false).unwrap()));
    }
}
