//! DeepSeek V3's pre-tokenizer by hand: its `tokenizer.json` splits the
//! text three times in a row ("isolated": every match and every stretch
//! between matches is a piece, and each split runs on every piece of the
//! one before it):
//!
//! 1. `\p{N}{1,3}`: runs of digits, three at a time;
//! 2. `[一-龥぀-ゟ゠-ヿ]+`: runs of CJK ideographs and kana;
//! 3. `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+` |
//!    `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+` | ` ?[\p{P}\p{S}]+[\r\n]*` |
//!    `\s*[\r\n]+` | `\s+(?!\S)` | `\s+` (leftmost alternative wins).
//!
//! The first two cut the text into segments (digit chunks, CJK runs, the
//! rest); the third runs inside each segment, whose end is its text's end
//! (so `(?!\S)` holds there). Alternative by alternative:
//! - `[\p{L}\p{M}]+` after an optional character of the prefix class ends
//!   where the run of letters and marks ends, with or without a mark as
//!   the prefix (a mark is in both classes);
//! - `\s*[\r\n]+` backs off to the last `\r`/`\n` of the whitespace run;
//!   `\s+(?!\S)` leaves the run's last character to the next piece unless
//!   the run ends the segment; `\s+` then takes a single character;
//! - a character no alternative matches at belongs to the stretch before
//!   the next match (one piece).
//!
//! Checked against fancy-regex running the three splits (tests below) and
//! against Hugging Face on DeepSeek V3's published file
//! (`tests/test_pipeline_fast.py`).

use crate::pretok::lexer::{ascii_letters, decode, each_piece, whitespace, ClassTable};
use crate::pretok::lexer_bits;
use std::sync::OnceLock;

/// DeepSeek V3's three split patterns, as its `tokenizer.json` has them.
pub(crate) const SPLITS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];

const LETTER: u8 = 1;
const MARK: u8 = 2;
const NUMBER: u8 = 4;
const PUNCT: u8 = 8;
const SYMBOL: u8 = 16;
const SPACE: u8 = 32;
const CJK: u8 = 64;

fn classes() -> &'static ClassTable {
    static TABLE: OnceLock<ClassTable> = OnceLock::new();
    // the general categories are disjoint, and \s and the CJK ranges lie in the BMP
    TABLE.get_or_init(|| {
        ClassTable::new(&[
            (r"\p{L}", LETTER),
            (r"\p{M}", MARK),
            (r"\p{N}", NUMBER),
            (r"\p{P}", PUNCT),
            (r"\p{S}", SYMBOL),
            (r"\s", SPACE),
            (SPLITS[1].trim_end_matches('+'), CJK),
        ])
    })
}

/// Calls `f` on every piece of `text`, in order (the pieces cover it).
pub(crate) fn for_each_word<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let t = classes();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let (cp, n) = decode(b, i);
        let k = t.of(cp);
        let end = if k & NUMBER != 0 {
            // up to three digits
            let mut end = i + n;
            for _ in 0..2 {
                if end == b.len() {
                    break;
                }
                let (d, m) = decode(b, end);
                if t.of(d) & NUMBER == 0 {
                    break;
                }
                end += m;
            }
            end
        } else if k & CJK != 0 {
            t.run(text, i + n, |k| k & CJK != 0)
        } else {
            // neither class holds a character of the other
            let mut end = i + n;
            loop {
                end = ascii_run_without_digits(b, end);
                if end == b.len() || b[end] < 0x80 {
                    break; // the end, or an ASCII digit
                }
                let (cp, m) = decode(b, end);
                if t.of(cp) & (NUMBER | CJK) != 0 {
                    break;
                }
                end += m;
            }
            end
        };
        split_segment(t, &text[..end], i, &mut f);
        i = end;
    }
}

/// End of the run of ASCII bytes other than digits that starts at `i`
/// (eight bytes at a time): the segment scan's common case, where `\p{N}`
/// and the CJK ranges hold no such byte.
#[inline]
fn ascii_run_without_digits(b: &[u8], mut i: usize) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        // per byte below 0x80 (no carry crosses a byte): bit 7 of x + 0x50 is
        // x >= b'0', of x + 0x46 is x > b'9'
        let low = w & LOW7;
        let digit = (low + 0x5050_5050_5050_5050) & !(low + 0x4646_4646_4646_4646) & HIGH;
        let stop = (w & HIGH) | digit;
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] < 0x80 && !b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// The third split on the segment `s[start..]`: its matches and the
/// stretches between them; ASCII stretches 64 bytes at a time (`lexer_bits.rs`).
fn split_segment<'t>(t: &ClassTable, s: &'t str, start: usize, f: &mut impl FnMut(&'t str)) {
    let segment = &s[start..];
    if segment.len() < 32 || !segment.as_bytes()[..32].is_ascii() {
        // short, or not ASCII where it starts (text of another script): a piece at a time
        return each_piece(segment, |a, b| f(&segment[a..b]), |s, p| piece_end(t, s, p));
    }
    lexer_bits::for_each_range::<3, { lexer_bits::DEEPSEEK }>(segment, |a, b| f(&segment[a..b]), |s, p| {
        piece_end(t, s, p)
    });
}

/// End of the third split's piece at byte `p` of the segment `s`: its match,
/// or the stretch before the next match.
#[inline]
fn piece_end(t: &ClassTable, s: &str, p: usize) -> usize {
    if let Some(end) = match_at(t, s, p) {
        return end;
    }
    let mut q = p + decode(s.as_bytes(), p).1;
    while q < s.len() && match_at(t, s, q).is_none() {
        q += decode(s.as_bytes(), q).1;
    }
    q
}

/// End of the run of letters and marks (`[\p{L}\p{M}]*`) that starts at
/// `i`: ASCII letters eight bytes at a time (a mark is never ASCII), then
/// character by character from the first other byte.
#[inline(always)]
fn letters_and_marks(t: &ClassTable, s: &str, mut i: usize) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let b = s.as_bytes();
    while i + 8 <= b.len() {
        let m = ascii_letters(u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes")));
        if m == HIGH {
            i += 8;
            continue;
        }
        i += ((!m & HIGH).trailing_zeros() / 8) as usize;
        if b[i] < 0x80 {
            return i; // an ASCII byte that is not a letter
        }
        break;
    }
    t.run(s, i, |k| k & (LETTER | MARK) != 0)
}

/// End of the third split's match at byte `p` of `s` (which ends the
/// segment), if one starts there.
#[inline]
fn match_at(t: &ClassTable, s: &str, p: usize) -> Option<usize> {
    let b = s.as_bytes();
    let (cp, n) = decode(b, p);
    // `[ASCII punctuation][A-Za-z]+`
    if b[p].is_ascii_punctuation() && b.get(p + 1).is_some_and(u8::is_ascii_alphabetic) {
        let mut end = p + 2;
        while end < b.len() && b[end].is_ascii_alphabetic() {
            end += 1;
        }
        return Some(end);
    }
    let k = t.of(cp);
    // `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`
    if k & (LETTER | MARK) != 0 {
        return Some(letters_and_marks(t, s, p + n));
    }
    if k & (PUNCT | SYMBOL) == 0 && cp != '\r' as u32 && cp != '\n' as u32 && p + n < b.len() {
        let (d, m) = decode(b, p + n);
        if t.of(d) & (LETTER | MARK) != 0 {
            return Some(letters_and_marks(t, s, p + n + m));
        }
    }
    // ` ?[\p{P}\p{S}]+[\r\n]*`
    let from = if b[p] == b' ' { p + 1 } else { p };
    if from < b.len() && t.of(decode(b, from).0) & (PUNCT | SYMBOL) != 0 {
        let mut end = t.run(s, from, |k| k & (PUNCT | SYMBOL) != 0);
        while end < b.len() && (b[end] == b'\r' || b[end] == b'\n') {
            end += 1;
        }
        return Some(end);
    }
    // `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`
    if k & SPACE != 0 {
        let c = char::from_u32(cp).expect("valid UTF-8");
        return Some(whitespace(s, p, c, true, false));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::ascii_run_without_digits;

    #[test]
    fn the_ascii_run_stops_at_every_digit_and_every_non_ascii_byte() {
        // every stop byte at every offset of a 20-byte run, against the byte loop
        for stop in (b'0'..=b'9').chain([0x80u8, 0xC3, 0xFF]) {
            for at in 0..20 {
                let mut b: Vec<u8> = (0..20u8).map(|k| [b'a', b' ', b'/', b':', b'\n', b'Z', 0x7F, b'@'][k as usize % 8]).collect();
                b[at] = stop;
                for start in 0..=at {
                    assert_eq!(ascii_run_without_digits(&b, start), at, "stop {stop:#x} at {at} from {start}");
                }
            }
        }
        let plain = b"no digits here, none at all!";
        assert_eq!(ascii_run_without_digits(plain, 3), plain.len());
    }

    use super::*;
    use fancy_regex::Regex;

    /// The pieces of the three splits run one after another by fancy-regex.
    fn regex_words(text: &str) -> Vec<String> {
        // the three splits, compiled once for every test (the generated cases call this thousands of times)
        static COMPILED: std::sync::OnceLock<Vec<Regex>> = std::sync::OnceLock::new();
        let compiled = COMPILED.get_or_init(|| SPLITS.iter().map(|p| Regex::new(p).unwrap()).collect());
        let mut pieces = vec![text.to_string()];
        for re in compiled {
            let mut next = Vec::new();
            for piece in &pieces {
                let mut prev = 0;
                for m in re.find_iter(piece) {
                    let m = m.unwrap();
                    if prev < m.start() {
                        next.push(piece[prev..m.start()].to_string());
                    }
                    next.push(m.as_str().to_string());
                    prev = m.end();
                }
                if prev < piece.len() {
                    next.push(piece[prev..].to_string());
                }
            }
            pieces = next;
        }
        pieces
    }

    fn lexer_words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, |w| out.push(w.to_string()));
        out
    }

    #[test]
    fn edge_cases_split_as_the_three_regexes_do() {
        for text in [
            "",
            "Hello world! 12345 1234567",
            "'s 's .com (.com don't I'll",
            "  leading and trailing  ",
            "a\n\n b\r\n  \t c \n",
            "日本語のテキスト・カタカナー ゛゜漢字123かな",
            "e\u{301} cafe\u{301} \u{301}\u{301}a \u{200d}\u{200d}x",
            "x²³ ½ ①② Ⅻ 12a34b",
            "\u{3040}\u{3097}あ \u{30a0}ア",
            "emoji 🤗🏳️\u{200d}🌈 $$ 100%!!\n\n",
            "\u{a0}\u{3000}a\u{2028}b\u{85}c",
            "\t.\t\n.\n.",
        ] {
            assert_eq!(lexer_words(text), regex_words(text), "{text:?}");
        }
    }

    #[test]
    fn random_texts_split_as_the_three_regexes_do() {
        // characters from every class the splits tell apart
        let alphabet: Vec<char> = "aZé\u{301}\u{3099}1٣²½Ⅻ.,'(-!$+^`~日本ア・ー゛ぁ\u{3040} \t\n\r\u{a0}\u{3000}\u{85}\u{200d}\u{0}🤗𝐀"
            .chars()
            .collect();
        let mut rng = crate::testing::Rng(0x5EED_DEE9_5EE4);
        for _ in 0..3000 {
            let n = rng.below(24);
            let text: String = (0..n).map(|_| alphabet[rng.below(alphabet.len())]).collect();
            assert_eq!(lexer_words(&text), regex_words(&text), "{text:?}");
        }
    }

    #[test]
    fn long_runs_of_every_class_split_as_the_three_regexes_do() {
        // runs of one class each, long enough that the segments' ASCII stretches cross the 64-byte
        // blocks of `lexer_bits.rs`: digits cut segments, control characters are gaps, CJK runs are pieces
        let classes = ["abzAZ", " ", "\t\u{b}\u{c}", "\r\n", ".,!-_(~/$^`", "0123456789", "\u{0}\u{1f}\u{7f}", "日本ア",
                       "é\u{301}\u{a0}'🤗"];
        let mut rng = crate::testing::Rng(0x5EED_B175_0F64);
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..rng.below(30) {
                let class: Vec<char> = classes[rng.below(classes.len())].chars().collect();
                let len = if rng.below(4) == 0 { 1 } else { 1 + rng.below(70) };
                text.extend((0..len).map(|_| class[rng.below(class.len())]));
            }
            assert_eq!(lexer_words(&text), regex_words(&text), "{text:?}");
        }
    }

    #[test]
    fn long_ascii_letter_runs_split_as_the_three_regexes_do() {
        // runs of ASCII letters longer than a word of eight bytes, broken at
        // every offset by marks, other letters, digits, punctuation and space
        let letters: Vec<char> = "abcdefghijklmnopqrstuvwxyzABCXYZ".chars().collect();
        let others: Vec<char> = "é\u{301}\u{3099}ß1.,'( \n日🤗𝐀\u{0}".chars().collect();
        let mut rng = crate::testing::Rng(0x5EED_DEE9_1E77);
        for _ in 0..3000 {
            let n = rng.below(64);
            let text: String = (0..n)
                .map(|_| if rng.below(8) == 0 { others[rng.below(others.len())] } else { letters[rng.below(letters.len())] })
                .collect();
            assert_eq!(lexer_words(&text), regex_words(&text), "{text:?}");
        }
    }
}
