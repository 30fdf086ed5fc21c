//! The hand-written pre-tokenizer of o200k's pattern (`o200k_base`'s
//! `pat_str`, also Llama 4's) and of Mistral's tekken pattern (o200k's
//! without the contractions, one digit at a time), giving exactly the
//! regex's words (checked against fancy-regex by the tests of `lexer.rs`
//! and `tests/test_lexer.py`).
//!
//! The regex, alternative by alternative (leftmost alternative wins), with
//! HEAD = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, TAIL = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`,
//! P = `[^\r\n\p{L}\p{N}]` and K = `(?i:'s|'t|'re|'ve|'m|'ll|'d)`:
//! `P?HEAD*TAIL+K?` | `P?HEAD+TAIL*K?` | `\p{N}{1,3}` |
//! ` ?[^\s\p{L}\p{N}]+[\r\n/]*` | `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`
//!
//! Unlike cl100k's, the letter alternatives are not possessive, and the
//! regex engine backtracks through them:
//! - `P?` first takes a character (a mark is both a P and in HEAD and TAIL),
//!   and gives it back when the letters after it fail;
//! - `HEAD*TAIL+`: HEAD* takes the whole run of HEAD characters; if a
//!   lowercase letter (TAIL but not HEAD) follows, TAIL+ takes the run from
//!   there; if not, HEAD* gives characters back until TAIL+ can start on
//!   one, which is the run's last `\p{Lm}\p{Lo}\p{M}` character, and TAIL+
//!   takes just it (only uppercase letters follow it in the run); with no
//!   such character the alternative fails and `HEAD+TAIL*` takes the run;
//! - the whitespace alternatives are llama3's (`lexer::whitespace`).
//!
//! Qwen 3.5's pattern (`next_qwen35`) is Qwen2's with marks joining
//! letters: `(?i:'s|'t|'re|'ve|'m|'ll|'d)` | `[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+` |
//! `\p{N}` | ` ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*` | `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`.
//! It needs this module's mark class; a mark taken as the prefix and given
//! back starts the same run of letters and marks, so no backtracking shows.

use super::lexer::{contraction, decode, whitespace, ClassTable};
use std::sync::OnceLock;

const UPPER: u8 = 1; // \p{Lu} \p{Lt}
const LOWER: u8 = 2; // \p{Ll}
const OTHER: u8 = 4; // \p{Lm} \p{Lo}
const MARK: u8 = 8; // \p{M}
const NUMBER: u8 = 16;
const SPACE: u8 = 32;
const LETTER: u8 = UPPER | LOWER | OTHER;
const HEAD: u8 = UPPER | OTHER | MARK;
const TAIL: u8 = LOWER | OTHER | MARK;
/// In both HEAD and TAIL.
const BOTH: u8 = OTHER | MARK;

fn classes() -> &'static ClassTable {
    static CLASSES: OnceLock<ClassTable> = OnceLock::new();
    // disjoint classes, from the tables the regex engine uses
    CLASSES.get_or_init(|| {
        ClassTable::new(&[
            (r"[\p{Lu}\p{Lt}]", UPPER),
            (r"\p{Ll}", LOWER),
            (r"[\p{Lm}\p{Lo}]", OTHER),
            (r"\p{M}", MARK),
            (r"\p{N}", NUMBER),
            (r"\s", SPACE),
        ])
    })
}

/// The class bits and byte length of the character at byte `i` (< `b.len()`).
#[inline(always)]
fn class_at(t: &ClassTable, b: &[u8], i: usize) -> (u8, usize) {
    let (cp, n) = decode(b, i);
    (t.of(cp), n)
}

/// Bit 7 of each byte of `w` set where that byte is an ASCII lowercase
/// letter, the others clear (`lexer::ascii_letters` without the case fold).
#[inline]
fn ascii_lowercase(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let low = w & 0x7F * ONES;
    let ge_a = low + (0x80 - 0x61) * ONES;
    let gt_z = low + (0x80 - 0x7B) * ONES;
    ge_a & !gt_z & !w & HIGH
}

/// End of the run of TAIL characters from byte `j`: ASCII lowercase
/// letters eight bytes at a time, then the class table.
#[inline(always)]
fn run_tail(t: &ClassTable, s: &str, mut j: usize) -> usize {
    let b = s.as_bytes();
    while j + 8 <= b.len() {
        let m = ascii_lowercase(u64::from_le_bytes(b[j..j + 8].try_into().expect("8 bytes")));
        if m == 0x8080_8080_8080_8080 {
            j += 8;
            continue;
        }
        j += ((!m & 0x8080_8080_8080_8080).trailing_zeros() / 8) as usize;
        if b[j] < 0x80 {
            return j; // the only ASCII characters in TAIL are the lowercase letters
        }
        break;
    }
    t.run(s, j, |k| k & TAIL != 0)
}

/// The end after K (`(?i:'s|'t|'re|'ve|'m|'ll|'d)?`) at byte `e`; `e` itself
/// without `CONTRACTIONS` (tekken's letter alternatives have no K).
#[inline]
fn after_contraction<const CONTRACTIONS: bool>(s: &str, e: usize) -> usize {
    if CONTRACTIONS && s.as_bytes().get(e) == Some(&b'\'') {
        if let Some(k) = contraction(s, e + 1, true) {
            return e + 1 + k;
        }
    }
    e
}

/// `HEAD*TAIL+K?` at byte `j`: its end, or None where it fails.
#[inline]
fn head_star_tail_plus<const K: bool>(t: &ClassTable, s: &str, j: usize) -> Option<usize> {
    let b = s.as_bytes();
    // ASCII lowercase letters are the commonest start: HEAD* is empty there
    if b.get(j).is_some_and(u8::is_ascii_lowercase) {
        return Some(after_contraction::<K>(s, run_tail(t, s, j + 1)));
    }
    let mut e = j;
    let mut after_last_both = None;
    while e < b.len() {
        let (k, n) = class_at(t, b, e);
        if k & HEAD == 0 {
            break;
        }
        e += n;
        if k & BOTH != 0 {
            after_last_both = Some(e);
        }
    }
    if e < b.len() && class_at(t, b, e).0 & LOWER != 0 {
        return Some(after_contraction::<K>(s, run_tail(t, s, e)));
    }
    after_last_both.map(|end| after_contraction::<K>(s, end))
}

/// `HEAD+TAIL*K?` at byte `j`: its end, or None where it fails.
#[inline]
fn head_plus_tail_star<const K: bool>(t: &ClassTable, s: &str, j: usize) -> Option<usize> {
    let e = t.run(s, j, |k| k & HEAD != 0);
    (e > j).then(|| after_contraction::<K>(s, run_tail(t, s, e)))
}

/// End of the o200k word that starts at byte `i` (< `s.len()`); with `K`
/// off and `DIGITS` 1, of the tekken word.
#[inline]
pub(crate) fn next_o200k<const K: bool, const DIGITS: usize>(s: &str, i: usize) -> usize {
    let t = classes();
    let b = s.as_bytes();
    let x = b[i];
    if x.is_ascii_lowercase() {
        return after_contraction::<K>(s, run_tail(t, s, i + 1));
    }
    let (k0, n0) = class_at(t, b, i);
    let prefix = k0 & (LETTER | NUMBER) == 0 && x != b'\r' && x != b'\n';
    // the two letter alternatives, each with a prefix character first, then without
    if prefix {
        if let Some(e) = head_star_tail_plus::<K>(t, s, i + n0) {
            return e;
        }
    }
    if let Some(e) = head_star_tail_plus::<K>(t, s, i) {
        return e;
    }
    if prefix {
        if let Some(e) = head_plus_tail_star::<K>(t, s, i + n0) {
            return e;
        }
    }
    if let Some(e) = head_plus_tail_star::<K>(t, s, i) {
        return e;
    }
    if k0 & NUMBER != 0 {
        // \p{N}{1,DIGITS}
        let mut end = i + n0;
        for _ in 1..DIGITS {
            if end == b.len() {
                break;
            }
            let (k, n) = class_at(t, b, end);
            if k & NUMBER == 0 {
                break;
            }
            end += n;
        }
        return end;
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    let other = |k: u8| k & (SPACE | LETTER | NUMBER) == 0;
    let start = if x == b' ' { i + 1 } else { i };
    if start < b.len() && other(class_at(t, b, start).0) {
        let mut end = t.run(s, start, other);
        while end < b.len() && matches!(b[end], b'\r' | b'\n' | b'/') {
            end += 1;
        }
        return end;
    }
    let c = char::from_u32(decode(b, i).0).expect("valid UTF-8");
    // every character left is whitespace (the others start one of the alternatives above)
    whitespace(s, i, c, true, false)
}

/// End of the Qwen 3.5 word that starts at byte `i` (< `s.len()`).
#[inline]
pub(crate) fn next_qwen35(s: &str, i: usize) -> usize {
    let t = classes();
    let b = s.as_bytes();
    let x = b[i];
    let letters = |k: u8| k & (LETTER | MARK) != 0;
    if x.is_ascii_alphabetic() {
        return t.run(s, i + 1, letters);
    }
    if x == b'\'' {
        if let Some(k) = contraction(s, i + 1, true) {
            return i + 1 + k;
        }
    }
    let (k0, n0) = class_at(t, b, i);
    if letters(k0) {
        return t.run(s, i + n0, letters);
    }
    if k0 & NUMBER != 0 {
        return i + n0;
    }
    // `[^\r\n\p{L}\p{N}]?` before letters and marks
    if x != b'\r' && x != b'\n' && i + n0 < b.len() && letters(class_at(t, b, i + n0).0) {
        return t.run(s, i + n0, letters);
    }
    // ` ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*`
    let other = |k: u8| k & (SPACE | LETTER | MARK | NUMBER) == 0;
    let start = if x == b' ' { i + 1 } else { i };
    if start < b.len() && other(class_at(t, b, start).0) {
        let mut end = t.run(s, start, other);
        while end < b.len() && matches!(b[end], b'\r' | b'\n') {
            end += 1;
        }
        return end;
    }
    let c = char::from_u32(decode(b, i).0).expect("valid UTF-8");
    whitespace(s, i, c, true, false)
}
