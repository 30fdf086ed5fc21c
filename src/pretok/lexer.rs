//! Hand-written pre-tokenizers for the `gpt2`, `cl100k`, `llama3` and
//! `qwen2` presets (`lexer_o200k.rs` has o200k's, on this module's helpers).
//!
//! They give exactly the words of the presets' regexes (checked against
//! fancy-regex by the tests below and by `tests/test_lexer.py` on real and
//! generated text) several times faster. The Unicode classes come from
//! regex-syntax, the same tables the regex engine uses, so both agree on
//! every code point.
//!
//! The regexes, alternative by alternative (leftmost alternative wins):
//!
//! cl100k: `'(?i:[sdmt]|ll|ve|re)` | `[^\r\n\p{L}\p{N}]?+\p{L}++` |
//! `\p{N}{1,3}+` | ` ?[^\s\p{L}\p{N}]++[\r\n]*+` | `\s++$` | `\s*[\r\n]` |
//! `\s+(?!\S)` | `\s`
//!
//! llama3 (Meta's `pat_str`, the Split of Llama 3's `tokenizer.json`):
//! `(?i:'s|'t|'re|'ve|'m|'ll|'d)` | `[^\r\n\p{L}\p{N}]?\p{L}+` | `\p{N}{1,3}` |
//! ` ?[^\s\p{L}\p{N}]+[\r\n]*` | `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`
//!
//! qwen2: llama3's with `\p{N}` (one digit) for `\p{N}{1,3}`.
//!
//! gpt2: `'(?:[sdmt]|ll|ve|re)` | ` ?\p{L}++` | ` ?\p{N}++` |
//! ` ?[^\s\p{L}\p{N}]++` | `\s++$` | `\s+(?!\S)` | `\s`
//!
//! llama3 matches what cl100k matches except for `\s++$`, so one step
//! (`next_cl100k`) runs both, with that rule on or off and the longest
//! digit run as parameters. Alternative by alternative:
//! - the contractions: `'` has no case variants and the seven letters
//!   after it differ, so `(?i:'s|..|'d)` is `'(?i:[sdmt]|ll|ve|re)`;
//! - nothing follows `\p{L}+`, `\p{N}{1,3}`, `[\r\n]*` inside their
//!   alternatives, so greedy and possessive repeats end at the same place;
//!   `[^\r\n\p{L}\p{N}]?` before `\p{L}` gives nothing back either (the
//!   character it takes is not a letter, so `\p{L}+` fails without it);
//! - `\s*[\r\n]+` backs off to the last `\r`/`\n` of the whitespace run,
//!   and `[\r\n]+` then takes just that one (no other follows it in the
//!   run): `\s*[\r\n]`;
//! - `\s+` is only tried where `\s+(?!\S)` failed, which is on a single
//!   whitespace character followed by a non-space: `\s`;
//! - without `\s++$`, a run at the end of the text that holds a newline
//!   is cut after its last newline (the rest, if any, is the next word,
//!   by `\s+(?!\S)`); cl100k takes the whole run.

use regex_syntax::hir::{Class, HirKind};
use std::sync::OnceLock;

const LETTER: u8 = 1;
const NUMBER: u8 = 2;
const SPACE: u8 = 4;

/// Class bits of every code point: a bit per Unicode class given.
pub(crate) struct ClassTable {
    /// Class bits of every code point of the Basic Multilingual Plane.
    bmp: Vec<u8>,
    /// Ranges above the BMP: (start, end inclusive, bits), sorted, disjoint.
    astral: Vec<(u32, u32, u8)>,
}

impl ClassTable {
    /// The table of `classes` (a class pattern regex-syntax parses, and
    /// its bit); classes that overlap above the BMP are not supported.
    pub(crate) fn new(classes: &[(&str, u8)]) -> ClassTable {
        let mut bmp = vec![0u8; 0x10000];
        let mut astral: Vec<(u32, u32, u8)> = Vec::new();
        for &(pattern, bit) in classes {
            for (start, end) in class_ranges(pattern) {
                for cp in start..=end.min(0xFFFF) {
                    bmp[cp as usize] |= bit;
                }
                if end > 0xFFFF {
                    astral.push((start.max(0x10000), end, bit));
                }
            }
        }
        astral.sort_unstable();
        debug_assert!(astral.windows(2).all(|w| w[0].1 < w[1].0), "classes overlap above the BMP");
        ClassTable { bmp, astral }
    }

    /// End of the run of characters of `s` from byte `i` whose class bits
    /// pass `want`: ASCII bytes by one table lookup each, without decoding.
    #[inline]
    pub(crate) fn run(&self, s: &str, mut i: usize, want: impl Fn(u8) -> bool) -> usize {
        let b = s.as_bytes();
        while i < b.len() {
            let x = b[i];
            if x < 0x80 {
                if !want(self.bmp[x as usize]) {
                    break;
                }
                i += 1;
            } else {
                let (cp, n) = decode(b, i);
                if !want(self.of(cp)) {
                    break;
                }
                i += n;
            }
        }
        i
    }

    /// The class bits of `cp`.
    #[inline]
    pub(crate) fn of(&self, cp: u32) -> u8 {
        if cp < 0x10000 {
            return self.bmp[cp as usize];
        }
        match self.astral.binary_search_by(|&(s, e, _)| {
            if e < cp {
                std::cmp::Ordering::Less
            } else if s > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        }) {
            Ok(i) => self.astral[i].2,
            Err(_) => 0,
        }
    }
}

struct Tables {
    classes: ClassTable,
    /// Characters equal to each of "sdmtlver" under case-insensitive
    /// matching (e.g. 's' also matches 'S' and 'ſ').
    folds: Vec<(char, Vec<char>)>,
}

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::Parser::new().parse(pattern).expect("valid class pattern");
    match hir.kind() {
        HirKind::Class(Class::Unicode(cls)) => {
            cls.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect()
        }
        other => panic!("{pattern} is not a Unicode class: {other:?}"),
    }
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        // the three classes are disjoint, so the astral ranges never overlap
        let classes = ClassTable::new(&[(r"\p{L}", LETTER), (r"\p{N}", NUMBER), (r"\s", SPACE)]);
        let folds = "sdmtlver"
            .chars()
            .map(|c| {
                let ranges = class_ranges(&format!("(?i:{c})"));
                let chars = ranges.iter().flat_map(|&(a, b)| (a..=b).filter_map(char::from_u32)).collect();
                (c, chars)
            })
            .collect();
        Tables { classes, folds }
    })
}

#[inline]
fn class(c: char) -> u8 {
    class_of(tables(), c as u32)
}

#[inline]
fn class_of(t: &Tables, cp: u32) -> u8 {
    t.classes.of(cp)
}

#[inline]
pub(crate) fn is_letter(c: char) -> bool {
    class(c) & LETTER != 0
}
#[inline]
pub(crate) fn is_number(c: char) -> bool {
    class(c) & NUMBER != 0
}
#[inline]
pub(crate) fn is_space(c: char) -> bool {
    class(c) & SPACE != 0
}
fn folds_to(c: char, letter: char) -> bool {
    if c == letter {
        return true;
    }
    if c.is_ascii() {
        return c.to_ascii_lowercase() == letter;
    }
    tables().folds.iter().find(|(l, _)| *l == letter).is_some_and(|(_, set)| set.contains(&c))
}

/// The character at byte `i` of `s`, if any.
#[inline]
fn at(s: &str, i: usize) -> Option<char> {
    s[i..].chars().next()
}

/// The code point starting at byte `i` of `b` (valid UTF-8, `i` on a
/// character boundary) and its length in bytes.
#[inline(always)]
pub(crate) fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let x = b[i] as u32;
    if x < 0x80 {
        (x, 1)
    } else if x < 0xE0 {
        ((x & 0x1F) << 6 | (b[i + 1] as u32 & 0x3F), 2)
    } else if x < 0xF0 {
        ((x & 0x0F) << 12 | (b[i + 1] as u32 & 0x3F) << 6 | (b[i + 2] as u32 & 0x3F), 3)
    } else {
        ((x & 0x07) << 18 | (b[i + 1] as u32 & 0x3F) << 12 | (b[i + 2] as u32 & 0x3F) << 6 | (b[i + 3] as u32 & 0x3F), 4)
    }
}

/// `run` for a test of the class bits (`class`): ASCII bytes are
/// classified by one table lookup each, without decoding characters.
#[inline]
fn run_class(s: &str, i: usize, want: impl Fn(u8) -> bool) -> usize {
    tables().classes.run(s, i, want)
}

/// Bit 7 of each byte of `w` set where that byte is an ASCII letter
/// (`x | 0x20` in `a..=z`, which is exactly `A..=Z` or `a..=z`), the
/// others clear. No carry crosses bytes: each sum stays below 0x100.
#[inline]
pub(crate) fn ascii_letters(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let low = (w | 0x20 * ONES) & 0x7F * ONES;
    let ge_a = low + (0x80 - 0x61) * ONES;
    let gt_z = low + (0x80 - 0x7B) * ONES;
    ge_a & !gt_z & !w & HIGH
}

/// End of the run of letters (`\p{L}`) starting at `i`: ASCII letters
/// eight bytes at a time, then any other letters one by one.
#[inline(always)]
fn run_letters(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let m = ascii_letters(w);
        if m == 0x8080_8080_8080_8080 {
            i += 8;
            continue;
        }
        i += ((!m & 0x8080_8080_8080_8080).trailing_zeros() / 8) as usize;
        if b[i] < 0x80 {
            return i; // an ASCII byte that is not a letter
        }
        break;
    }
    run_class(s, i, letter_bits)
}

#[inline]
fn letter_bits(k: u8) -> bool {
    k & LETTER != 0
}
#[inline]
fn space_bits(k: u8) -> bool {
    k & SPACE != 0
}
#[inline]
fn other_bits(k: u8) -> bool {
    k == 0
}

/// Length of a contraction after an apostrophe at `i - 1`: `s|d|m|t|ll|ve|re`.
pub(crate) fn contraction(s: &str, i: usize, ignore_case: bool) -> Option<usize> {
    let same = |c: char, l: char| if ignore_case { folds_to(c, l) } else { c == l };
    let c1 = at(s, i)?;
    if ['s', 'd', 'm', 't'].iter().any(|&l| same(c1, l)) {
        return Some(c1.len_utf8());
    }
    let c2 = at(s, i + c1.len_utf8())?;
    for (a, b) in [('l', 'l'), ('v', 'e'), ('r', 'e')] {
        if same(c1, a) && same(c2, b) {
            return Some(c1.len_utf8() + c2.len_utf8());
        }
    }
    None
}

/// The whitespace alternatives shared by the presets, at a whitespace
/// character `c` at `i`: (if `end_rule`) `\s++$`, (if `newline_rule`)
/// `\s*[\r\n]`, `\s+(?!\S)`, `\s`.
#[inline]
pub(crate) fn whitespace(s: &str, i: usize, c: char, newline_rule: bool, end_rule: bool) -> usize {
    let end = run_class(s, i, space_bits);
    if end_rule && end == s.len() {
        return end;
    }
    if newline_rule {
        if let Some(k) = s[i..end].rfind(['\r', '\n']) {
            return i + k + 1;
        }
    }
    if end == s.len() {
        // `\s+(?!\S)` takes the rest
        return end;
    }
    let last = s[..end].chars().next_back().map_or(1, char::len_utf8);
    if end - last > i {
        return end - last;
    }
    i + c.len_utf8()
}

/// The end of the word at byte `i` when it is the commonest kind, ASCII
/// letters or a space and ASCII letters (then every preset of this module
/// takes the whole run of letters after them), else None.
#[inline(always)]
fn ascii_letter_word(s: &str, i: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let x = bytes[i];
    if x.is_ascii_alphabetic() {
        return Some(run_letters(s, i + 1));
    }
    if x == b' ' && bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
        return Some(run_letters(s, i + 2));
    }
    None
}

/// Calls `f(start, end)` on each piece of `text`, `next(text, i)` giving
/// the end of the piece that starts at `i`.
#[inline(always)]
pub(crate) fn each_piece(text: &str, mut f: impl FnMut(usize, usize), next: impl Fn(&str, usize) -> usize) {
    let mut i = 0;
    while i < text.len() {
        let end = next(text, i);
        f(i, end);
        i = end;
    }
}

/// End of the cl100k word that starts at byte `i` (< `s.len()`); with
/// `END_RULE` off and `DIGITS` the longest run of digits, of llama3's
/// (`DIGITS` 3) or qwen2's (`DIGITS` 1) word.
#[inline(always)]
pub(crate) fn next_cl100k<const END_RULE: bool, const DIGITS: usize>(s: &str, i: usize) -> usize {
    if let Some(end) = ascii_letter_word(s, i) {
        return end; // `[^\r\n\p{L}\p{N}]?+\p{L}++`
    }
    let bytes = s.as_bytes();
    let t = tables();
    let (cp, n) = decode(bytes, i);
    let cls = class_of(t, cp);
    if cls & LETTER != 0 {
        return run_letters(s, i + n);
    }
    // a valid str: cp is a char
    let c = char::from_u32(cp).expect("valid UTF-8");
    if c == '\'' {
        if let Some(k) = contraction(s, i + 1, true) {
            return i + 1 + k;
        }
    }
    if cls & NUMBER == 0 && c != '\r' && c != '\n' {
        // `[^\r\n\p{L}\p{N}]?+\p{L}++`: possessive, so no retry without c
        if i + n < bytes.len() {
            let (d, m) = decode(bytes, i + n);
            if class_of(t, d) & LETTER != 0 {
                return run_letters(s, i + n + m);
            }
        }
    }
    if cls & NUMBER != 0 {
        let mut end = i;
        for c in s[i..].chars().take(DIGITS) {
            if !is_number(c) {
                break;
            }
            end += c.len_utf8();
        }
        return end;
    }
    let start = if c == ' ' { i + 1 } else { i };
    if start < bytes.len() && class_of(t, decode(bytes, start).0) == 0 {
        let mut end = run_class(s, start, other_bits);
        while end < bytes.len() && (bytes[end] == b'\r' || bytes[end] == b'\n') {
            end += 1;
        }
        return end;
    }
    if cls & SPACE != 0 {
        return whitespace(s, i, c, true, END_RULE);
    }
    i + n
}

/// End of the gpt2 (r50k) word that starts at byte `i` (< `s.len()`).
#[inline]
pub(crate) fn next_gpt2(s: &str, i: usize) -> usize {
    if let Some(end) = ascii_letter_word(s, i) {
        return end; // ` ?\p{L}++`
    }
    let c = at(s, i).expect("i is inside the text");
    if c == '\'' {
        if let Some(k) = contraction(s, i + 1, false) {
            return i + 1 + k;
        }
    }
    let start = if c == ' ' { i + 1 } else { i };
    if let Some(d) = at(s, start) {
        let cls = class(d);
        if cls & LETTER != 0 {
            return run_letters(s, start);
        }
        if cls & NUMBER != 0 {
            return run_class(s, start, |k| k & NUMBER != 0);
        }
        if cls == 0 {
            return run_class(s, start, other_bits);
        }
    }
    if is_space(c) {
        return whitespace(s, i, c, false, true);
    }
    i + c.len_utf8()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::preset::Preset;
    use fancy_regex::Regex;

    // the patterns the presets are chosen by
    use crate::pretok::patterns::{
        CL100K, GPT2, HF_BYTE_LEVEL_REGEX as HF_BYTE_LEVEL, LLAMA3, O200K, QWEN2, QWEN35, TEKKEN,
    };

    /// Every preset whose lexer gives a regex's matches, with its regex.
    fn presets() -> Vec<(Preset, Regex)> {
        [(Preset::Cl100k, CL100K), (Preset::Gpt2, GPT2), (Preset::Gpt2, HF_BYTE_LEVEL), (Preset::Llama3, LLAMA3),
         (Preset::Qwen2, QWEN2), (Preset::O200k, O200K),
         (Preset::Tekken, TEKKEN), (Preset::Qwen35, QWEN35)]
            .into_iter()
            .map(|(p, re)| (p, Regex::new(re).unwrap()))
            .collect()
    }

    fn regex_words<'t>(re: &Regex, text: &'t str) -> Vec<&'t str> {
        re.find_iter(text).map(|m| m.unwrap().as_str()).collect()
    }

    fn lexer_words(p: Preset, text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        p.for_each_word(text, |w| out.push(w));
        out
    }

    fn assert_all_equal(presets: &[(Preset, Regex)], text: &str) {
        for (p, re) in presets {
            assert_eq!(lexer_words(*p, text), regex_words(re, text), "{p:?} on {text:?}");
        }
    }

    /// A small deterministic generator (xorshift) over characters chosen to
    /// hit every branch: letters of several scripts, marks, digits of
    /// several systems, apostrophes and their case-folded letters, every
    /// kind of whitespace, punctuation, emoji.
    fn random_texts(n: usize, seed: u64) -> Vec<String> {
        let alphabet: Vec<char> = "aZsSſdDmMtTlLvVeErRkÀΩǅʰー'’ \u{a0}\u{3000}\t\r\n\u{b}\u{c}\u{85}\u{2028}\u{1c}\u{1f}.,!?-/\\()[]{}\"_*#@1234567890٣٤০१२௩ⅫⅣ²½éñßøπωЖжשלוםمرحبا你好世界こんにちはカタカナ한국어\u{301}\u{5bf}\u{93f}🙂🚀👍🏽𝔘𝟘\u{1F1FA}\u{1F1F8}"
            .chars()
            .collect();
        let mut rng = crate::testing::Rng(seed);
        let mut next = || rng.next();
        (0..n)
            .map(|_| {
                let len = (next() % 40) as usize;
                (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect()
            })
            .collect()
    }

    #[test]
    fn lexers_equal_the_regexes_on_long_ascii_runs_broken_anywhere() {
        // the lexers take ASCII letters eight bytes at a time: a run broken
        // at every offset by every kind of character, with and without case
        let presets = presets();
        for run in ["abcdefghijklmnopqrstuvwxyzabcdefghij", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"] {
            for at in 0..=run.len() {
                for breaker in ["A", "z", " ", "'s", "'", "é", "É", "1", "\u{301}", "ǅ", "ʰ", ".", "\n", "日"] {
                    let text = format!("{}{breaker}{}", &run[..at], &run[at..]);
                    assert_all_equal(&presets, &text);
                }
            }
        }
    }

    #[test]
    fn lexers_equal_the_regexes_on_generated_text() {
        let presets = presets();
        let n = std::env::var("LEXER_FUZZ").ok().and_then(|v| v.parse().ok()).unwrap_or(30_000);
        for text in random_texts(n, 0x2545F4914F6CDD1D) {
            assert_all_equal(&presets, &text);
        }
    }

    #[test]
    fn lexers_equal_the_regexes_on_text_ending_in_whitespace() {
        // cl100k's `\s++$` against llama3's and qwen2's cut after the last
        // newline of a final whitespace run: texts followed by every string
        // of up to three spaces, tabs, newlines, carriage returns and other
        // whitespace (after a word, digits, punctuation, whitespace or nothing)
        let presets = presets();
        let spaces = [" ", "\n", "\r", "\t", "\u{a0}", "\u{2028}", "\u{85}"];
        let mut tails = vec![String::new()];
        let mut last = tails.clone();
        for _ in 0..3 {
            last = last.iter().flat_map(|t| spaces.iter().map(move |s| format!("{t}{s}"))).collect();
            tails.extend(last.iter().cloned());
        }
        assert_eq!(tails.len(), 1 + 7 + 49 + 343);
        let leads = ["", "a", "x1234567", "!?", "'S", " 12", "\n", "a \n b", "Ж\r\n", "\t\n "];
        for text in random_texts(100, 0x9E3779B97F4A7C15).iter().map(String::as_str).chain(leads) {
            for tail in &tails {
                assert_all_equal(&presets, &format!("{text}{tail}"));
            }
        }
    }

    #[test]
    fn llama3_and_qwen2_split_where_cl100k_does_not() {
        // the end-of-text rule: cl100k takes a final run whole
        let text = "a \n\t ";
        assert_eq!(lexer_words(Preset::Cl100k, text), ["a", " \n\t "]);
        assert_eq!(lexer_words(Preset::Llama3, text), ["a", " \n", "\t "]);
        assert_eq!(lexer_words(Preset::Qwen2, text), ["a", " \n", "\t "]);
        // digits: three at a time, or one
        assert_eq!(lexer_words(Preset::Llama3, "12345"), ["123", "45"]);
        assert_eq!(lexer_words(Preset::Qwen2, "12345"), ["1", "2", "3", "4", "5"]);
    }

    #[test]
    fn lexers_equal_the_regexes_on_prose_and_code() {
        let text = "It's the cat's toy; we'll see. They'RE here, I'M sure!  \n\n  def f(x):\r\n\treturn x**2  # 12345 ok\n   end   ";
        let presets = presets();
        assert_all_equal(&presets, text);
        assert_all_equal(&presets, &format!("{text}\n  \r\n \t"));
    }

    #[test]
    fn long_words_equal_the_regexes() {
        // ASCII letter runs of every length around the 8-byte steps, ended
        // by every kind of character (a non-ASCII letter continues the word)
        let presets = presets();
        for n in 0..26 {
            let word: String = "abcdefghijklmnopqrstuvwxyZ".chars().take(n).collect();
            for end in ["", " ", "é", "éx", "中", "1", "'s", "\n", "!", "_", "\u{301}", "🙂", "Ж"] {
                for lead in ["", " ", "'", "é", "\n", "x"] {
                    assert_all_equal(&presets, &format!("{lead}{word}{end}{word}"));
                }
            }
        }
    }

    #[test]
    fn the_patterns_in_use_are_the_python_presets() {
        // pretokenize.rs picks a lexer by the exact text: the same text as
        // bytepair.patterns' (which tests/test_presets_published.py checks
        // against the published files) and as the copies above
        let patterns = include_str!("../../python/bytepair/patterns.py");
        for (name, used, here) in [
            ("GPT2", crate::pretok::patterns::GPT2, GPT2),
            ("CL100K", crate::pretok::patterns::CL100K, CL100K),
            ("LLAMA3", crate::pretok::patterns::LLAMA3, LLAMA3),
            ("QWEN2", crate::pretok::patterns::QWEN2, QWEN2),
        ] {
            assert_eq!(used, here, "{name}");
            assert!(patterns.contains(&format!("\n{name} = r\"\"\"{used}\"\"\"\n")), "{name} is not patterns.py's");
        }
    }

    #[test]
    fn ascii_letter_mask_is_exact() {
        // every byte value at every position of a word
        for pos in 0..8 {
            for x in 0..=255u8 {
                let mut bytes = *b"aaaaaaaa";
                bytes[pos] = x;
                let m = ascii_letters(u64::from_le_bytes(bytes));
                for (k, &y) in bytes.iter().enumerate() {
                    assert_eq!(m >> (8 * k + 7) & 1 == 1, y.is_ascii_alphabetic(), "{x:#x} at {pos}");
                }
            }
        }
    }

    #[test]
    fn long_s_folds_to_s() {
        assert!(folds_to('ſ', 's') && folds_to('S', 's') && !folds_to('x', 's'));
    }
}
