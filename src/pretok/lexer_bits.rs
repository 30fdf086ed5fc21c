//! The splits of the cl100k family (cl100k, Llama 3, Qwen2, Qwen 3.5, and
//! DeepSeek V3's third split; `lexer.rs` has the patterns alternative by
//! alternative), of the o200k family (o200k, tekken; `lexer_o200k.rs`) and
//! gpt2's (also Hugging Face's ByteLevel regex) computed 64 bytes at a time on
//! ASCII text.
//!
//! Each 64-byte block is classified into one bit mask per class (letters,
//! digits, whitespace, `\r`/`\n`, spaces, other), and the bit of every
//! position where a word starts is derived from those masks with whole-word
//! operations: no branch per byte or per word, so short words cost no more
//! than long ones. The words are then the spans between consecutive start
//! bits. Bytes the masks cannot read (anything past ASCII, and the
//! apostrophe, whose contractions the rules below leave out) hand the text
//! to the preset's scalar step (`lexer::next_cl100k`, `lexer_o200k`'s,
//! `lexer_deepseek`'s) until past them. On ASCII the first two families (`RULES`) differ in two ways:
//! o200k's letters split where a lowercase letter meets an uppercase one, and
//! its punctuation words end in `[\r\n/]*`, not `[\r\n]*`. gpt2's rules
//! (`gpt2_starts`) are simpler.
//!
//! Where words start, on ASCII text without `'` (the rules follow from the
//! alternatives, read at a position where the previous word ended; the
//! tests check them against the regexes):
//! - **letters** (`[^\r\n\p{L}\p{N}]?\p{L}+`): a run of letters starts a
//!   word, unless the character before it joins it: whitespace other than
//!   `\r`/`\n` always does; punctuation does when it is a run of one not
//!   preceded by a space (a longer run is taken whole by ` ?[^\s\p{L}\p{N}]+`,
//!   and a space before it takes it first). o200k's `HEAD*TAIL+|HEAD+TAIL*`
//!   (on ASCII, uppercase letters then lowercase ones) also starts a word at
//!   each uppercase letter after a lowercase one;
//! - **digits** (`\p{N}{1,3}`): every third digit of a run, from its start;
//! - **punctuation** (` ?[^\s\p{L}\p{N}]+[\r\n]*`): a run starts a word, or
//!   the space before it does; the `\r`/`\n` right after it (o200k: and the
//!   `/`, `\r` and `\n` after those) belong to it, and what follows them
//!   starts a word;
//! - **whitespace** (`\s*[\r\n]+`, `\s+(?!\S)`, `\s+`): a run (less the
//!   `\r`/`\n` a punctuation word took) starts a word; so does the character
//!   after its last `\r`/`\n` and its last character (which the next word
//!   takes, or which is a word of its own before a non-space).
//!
//! Two of these rules look ahead, to the end of a whitespace run: where that
//! run reaches an unreadable byte (or the end of the text, where cl100k's
//! `\s++$` differs from Llama 3's rules) the words from that run on are left
//! to the scalar step.

/// The rules (`RULES`) of the cl100k family, the o200k family and gpt2.
pub(crate) const CL100K: u8 = 0;
pub(crate) const O200K: u8 = 1;
pub(crate) const GPT2: u8 = 2;
/// DeepSeek V3's third split inside one of its segments (`lexer_deepseek.rs`: no digits there): the cl100k
/// family's rules on ASCII, where control characters, which no alternative matches, are unreadable too.
pub(crate) const DEEPSEEK: u8 = 3;

/// The shortest stretch of readable bytes worth classifying; shorter ones
/// are left to the scalar step.
const MIN_STRETCH: usize = 32;

/// One bit per byte of a block (bit `j`, byte `j`) for each class; bytes
/// past the block's readable end are in no class.
#[derive(Clone, Copy, Default)]
struct Classes {
    letter: u64,
    /// `a` to `z` (o200k's TAIL on ASCII; the other letters are its HEAD).
    lower: u64,
    /// `/`, also in `other` (o200k's punctuation words take it after `\r`/`\n`).
    slash: u64,
    digit: u64,
    /// `\t`, `\v`, `\f` and ` `: whitespace that is not `\r`/`\n`.
    space: u64,
    /// `\r` and `\n`.
    newline: u64,
    /// ` ` alone (the optional space of ` ?[^\s\p{L}\p{N}]+`).
    blank: u64,
    /// Everything else (punctuation, control characters).
    other: u64,
}

/// Calls `f(start, end)` on each word of `text`: the words that `step` (the
/// preset's scalar lexer: the end of the word at a byte) gives one by one.
/// `DIGITS` is the longest run of digits in a word (3, or 1; gpt2 has no
/// limit), `RULES` the family.
#[inline(always)]
pub(crate) fn for_each_range<const DIGITS: usize, const RULES: u8>(
    text: &str, mut f: impl FnMut(usize, usize), step: impl Fn(&str, usize) -> usize,
) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        let unreadable = first_unreadable::<RULES>(bytes, i);
        if unreadable - i >= MIN_STRETCH {
            i = stretch::<DIGITS, RULES>(bytes, i, unreadable, &mut f);
        }
        // the scalar step across what the masks leave (the unreadable byte, or the text's last words)
        while i < n && i <= unreadable {
            let end = step(text, i);
            f(i, end);
            i = end;
        }
    }
}

/// The first byte at or after `i` that is not ASCII or is `'` (with
/// `DEEPSEEK` rules, or a control character other than whitespace), or the
/// text's length.
#[inline(always)]
fn first_unreadable<const RULES: u8>(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while i + 8 <= bytes.len() {
        let w = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let quote = w ^ (b'\'' as u64 * ONES);
        // a zero byte of `quote` is a `'`; a borrow only marks bytes above a true one, so the lowest mark is right
        let mut marks = (w | (quote.wrapping_sub(ONES) & !quote)) & HIGH;
        if RULES == DEEPSEEK {
            // per byte of the low seven bits (no carry crosses a byte): below 0x20, 9 to 13, 0x7f
            let low = w & (0x7F * ONES);
            let below_space = !(low + 0x60 * ONES);
            let white = (low + 0x77 * ONES) & !(low + 0x72 * ONES);
            let delete = low + ONES;
            marks |= ((below_space & !white) | delete) & HIGH;
        }
        if marks != 0 {
            return i + (marks.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    let control = |x: u8| RULES == DEEPSEEK && (x == 0x7f || (x < 0x20 && !(0x09..=0x0d).contains(&x)));
    while i < bytes.len() && bytes[i] < 0x80 && bytes[i] != b'\'' && !control(bytes[i]) {
        i += 1;
    }
    i
}

/// Emits the words of `bytes[start..unreadable]` (readable bytes; `start` is
/// where a word starts) up to the last start that nothing past `unreadable`
/// can move, and returns that start: the scalar step goes on from there.
#[inline(always)]
fn stretch<const DIGITS: usize, const RULES: u8>(bytes: &[u8], start: usize, unreadable: usize,
                                f: &mut impl FnMut(usize, usize)) -> usize {
    let mut last = start; // the start of the word not emitted yet
    let mut before = Classes::default(); // a word starts at `start`: nothing before it counts
    let mut block = classify(bytes, start, unreadable);
    let mut eaten = 0u64; // the previous block's `\r`/`\n` taken by punctuation
    let mut digits = 0u64; // the previous block's digit starts
    let mut at = start;
    loop {
        let next_at = at + 64;
        let after = if next_at < unreadable { classify(bytes, next_at, unreadable) } else { Classes::default() };
        let (mut starts, block_eaten, block_digits) = if RULES == GPT2 {
            (gpt2_starts(&before, &block, &after), 0, 0)
        } else {
            block_starts::<DIGITS, RULES>(&before, &block, &after, eaten, digits)
        };
        // the position after a whitespace run's last `\r`/`\n` starts a word: for each `\r`/`\n` followed by
        // whitespace, look on for another in the same run (gpt2 has no such rule)
        let mut stop = 64u32; // the first start that a byte past `unreadable` could move
        let mut after_newline = if RULES == GPT2 { 0 } else { block.space & shift_back(block.newline, before.newline, 1) };
        while after_newline != 0 {
            let j = after_newline.trailing_zeros();
            after_newline &= after_newline - 1;
            match run_holds_newline(bytes, at + j as usize, unreadable) {
                Some(true) => {}
                Some(false) => starts |= 1 << j,
                None => {
                    stop = j;
                    break;
                }
            }
        }
        // a run's last character before `unreadable` might not be its last (gpt2's runs end in `\r`/`\n` too)
        let run_end = if RULES == GPT2 { block.space | block.newline } else { block.space };
        if unreadable - at <= 64 && run_end >> (unreadable - at - 1) & 1 == 1 {
            stop = stop.min((unreadable - at - 1) as u32);
        }
        if stop < 64 {
            starts &= (1u64 << stop) - 1;
        }
        if at == start {
            starts &= !1; // the stretch's own start, where the word not emitted yet begins
        }
        while starts != 0 {
            let word_start = at + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            f(last, word_start);
            last = word_start;
        }
        if stop < 64 || next_at >= unreadable {
            return last;
        }
        (before, block, eaten, digits, at) = (block, after, block_eaten, block_digits, next_at);
    }
}

/// Whether the whitespace run through `bytes[i]` holds another `\r`/`\n` at
/// or after `i`; None when the run reaches `unreadable` without one.
#[inline]
fn run_holds_newline(bytes: &[u8], mut i: usize, unreadable: usize) -> Option<bool> {
    while i < unreadable {
        match bytes[i] {
            b'\n' | b'\r' => return Some(true),
            b' ' | b'\t' | 0x0b | 0x0c => i += 1,
            _ => return Some(false),
        }
    }
    None
}

/// Bit `j` of the result is bit `j - k` of the block (`x`), or of the one
/// before it (`before`).
#[inline(always)]
fn shift_back(x: u64, before: u64, k: u32) -> u64 {
    (x << k) | (before >> (64 - k))
}

/// Bit `j` of the result is bit `j + 1` of the block, or bit 0 of the next.
#[inline(always)]
fn shift_ahead(x: u64, after: u64) -> u64 {
    (x >> 1) | (after << 63)
}

/// The starts of words in `c` (the rules of the module's doc but the one after
/// a run's last `\r`/`\n`), given the blocks around it and the previous
/// block's eaten characters and digit starts; also this block's two. What
/// follows eaten characters starts a word by the rule of its own class: they
/// are neither whitespace before a run nor punctuation before a letter.
#[inline(always)]
fn block_starts<const DIGITS: usize, const RULES: u8>(b: &Classes, c: &Classes, a: &Classes, eaten_before: u64,
                                                        digits_before: u64) -> (u64, u64, u64) {
    let back = |x: fn(&Classes) -> u64| shift_back(x(c), x(b), 1);
    // the characters a punctuation word takes after its run: `[\r\n]*` (o200k: `[\r\n/]*`)
    let tail = |k: &Classes| if RULES == O200K { k.newline | k.slash } else { k.newline };
    let seeds = c.newline & back(|k| k.other) | (tail(c) & eaten_before >> 63);
    let eaten = fill_ahead(seeds, tail(c));
    let eaten_1 = shift_back(eaten, eaten_before, 1);
    // punctuation that a word took is not the start of a run, nor a letter's prefix
    let other = c.other & !eaten;
    let other_before = shift_back(other, b.other & !eaten_before, 1);
    let blank_before = back(|k| k.blank);
    let space_before = back(|k| k.space);
    let other_or_blank_1 = other_before | blank_before;
    let other_or_blank_2 = shift_back(other | c.blank, (b.other & !eaten_before) | b.blank, 2);
    // letters: a run starts a word unless whitespace, or punctuation alone (not after a space), comes before it
    let joins = space_before | (other_before & !other_or_blank_2);
    let mut letters = c.letter & !back(|k| k.letter) & !joins;
    if RULES == O200K {
        letters |= c.letter & !c.lower & back(|k| k.lower);
    }
    let joining = (c.space | (other & !other_or_blank_1)) & shift_ahead(c.letter, a.letter);
    // digits: every DIGITS-th of a run (gpt2's 0, no limit, never comes here: `gpt2_starts`)
    let digits = if DIGITS <= 1 {
        c.digit
    } else {
        let mut full = c.digit; // a digit with DIGITS - 1 digits before it
        for k in 1..DIGITS as u32 {
            full &= shift_back(c.digit, b.digit, k);
        }
        let shift = DIGITS as u32;
        let mut step = (c.digit & !shift_back(c.digit, b.digit, 1)) | (digits_before >> (64 - shift) & full);
        let mut all = step;
        while step != 0 {
            step = (step << shift) & full;
            all |= step;
        }
        all
    };
    // punctuation: a run, or the space before it
    let punctuation = (other & !other_before & !blank_before) | (c.blank & shift_ahead(c.other, a.other));
    // whitespace: a run, less what a punctuation word took
    let white = c.space | c.newline;
    let white_before = shift_back(white, b.space | b.newline, 1);
    let runs = white & !eaten & (!white_before | eaten_1);
    let last_of_run = c.space & !shift_ahead(white, a.space | a.newline);
    (letters | joining | digits | punctuation | runs | last_of_run, eaten, digits)
}

/// The starts of words in `c` by gpt2's rules (` ?\p{L}++`, ` ?\p{N}++`,
/// ` ?[^\s\p{L}\p{N}]++`, `\s+(?!\S)`, `\s`, where `\r`/`\n` are whitespace like
/// any other): a run of letters, of digits or of other characters starts a
/// word unless a space comes before it (the space joins it); a whitespace run
/// starts one, and so does its last character before anything else (a word
/// of its own, or the space that joins the next).
#[inline(always)]
fn gpt2_starts(b: &Classes, c: &Classes, a: &Classes) -> u64 {
    let run_start = |x: fn(&Classes) -> u64| x(c) & !shift_back(x(c), x(b), 1);
    let words = run_start(|k| k.letter) | run_start(|k| k.digit) | run_start(|k| k.other);
    let white = c.space | c.newline;
    let last_of_run = white & !shift_ahead(white, a.space | a.newline);
    (words & !shift_back(c.blank, b.blank, 1)) | run_start(|k| k.space | k.newline) | last_of_run
}

/// The bits of `within` reached from a bit of `seeds` through bits of
/// `within` only, going ahead (seeds are in `within`).
#[inline(always)]
fn fill_ahead(seeds: u64, within: u64) -> u64 {
    let (mut reached, mut through) = (seeds & within, within);
    for k in [1, 2, 4, 8, 16, 32] {
        reached |= (reached << k) & through;
        through &= through << k;
    }
    reached
}

/// The classes of `bytes[at..unreadable]`'s first 64 bytes (all readable).
#[inline(always)]
fn classify(bytes: &[u8], at: usize, unreadable: usize) -> Classes {
    let len = (unreadable - at).min(64);
    if len == 64 {
        return classify_64(bytes[at..at + 64].try_into().expect("64 bytes"));
    }
    let mut block = [0u8; 64];
    block[..len].copy_from_slice(&bytes[at..at + len]);
    let mut c = classify_64(&block);
    c.other &= (1u64 << len) - 1; // the zero bytes of the padding are in no class
    c
}

/// The classes of 64 readable bytes, 16 at a time (SSE2, part of every x86-64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_64(block: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes::default();
    let mut white = 0u64;
    for k in 0..4 {
        // SAFETY: SSE2 is in the x86-64 baseline; the unaligned load reads bytes 16k..16k+16 of the array
        let (letter, lower, slash, digit, newline, blank, white_16) = unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            let within = |lo: i8, hi: i8, x: __m128i| {
                _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(lo - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8(hi + 1)))
            };
            let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
            // readable bytes are below 0x80, so the signed comparisons are the unsigned ones
            let letter = within(b'a' as i8, b'z' as i8, _mm_or_si128(v, _mm_set1_epi8(0x20)));
            let digit = within(b'0' as i8, b'9' as i8, v);
            let lower = within(b'a' as i8, b'z' as i8, v);
            let newline = _mm_or_si128(eq(b'\n'), eq(b'\r'));
            let blank = eq(b' ');
            let white = _mm_or_si128(within(0x09, 0x0d, v), blank);
            let mask = |x: __m128i| _mm_movemask_epi8(x) as u16 as u64;
            (mask(letter), mask(lower), mask(eq(b'/')), mask(digit), mask(newline), mask(blank), mask(white))
        };
        let shift = 16 * k as u32;
        c.letter |= letter << shift;
        c.lower |= lower << shift;
        c.slash |= slash << shift;
        c.digit |= digit << shift;
        c.newline |= newline << shift;
        c.blank |= blank << shift;
        white |= white_16 << shift;
    }
    c.space = white & !c.newline;
    c.other = !(c.letter | c.digit | white);
    c
}

/// The classes of 64 readable bytes, one at a time (targets without SSE2).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_64_bytes(block: &[u8; 64]) -> Classes {
    let mut c = Classes::default();
    for (j, &x) in block.iter().enumerate() {
        let bit = 1u64 << j;
        match x {
            b'a'..=b'z' => {
                c.letter |= bit;
                c.lower |= bit;
            }
            b'A'..=b'Z' => c.letter |= bit,
            b'/' => {
                c.other |= bit;
                c.slash |= bit;
            }
            b'0'..=b'9' => c.digit |= bit,
            b'\n' | b'\r' => c.newline |= bit,
            b' ' => {
                c.space |= bit;
                c.blank |= bit;
            }
            0x09 | 0x0b | 0x0c => c.space |= bit,
            _ => c.other |= bit,
        }
    }
    c
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify_64(block: &[u8; 64]) -> Classes {
    classify_64_bytes(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::lexer::{next_cl100k, next_gpt2};
    use crate::pretok::lexer_o200k::{next_o200k, next_qwen35};
    use crate::testing::Rng;
    use fancy_regex::Regex;

    // the patterns the presets are chosen by, as the regex engine runs them
    use crate::pretok::patterns::{CL100K as CL100K_RE, GPT2 as GPT2_RE, HF_BYTE_LEVEL_REGEX as HF_BYTE_LEVEL, LLAMA3,
                                  O200K as O200K_RE, QWEN2, QWEN35, TEKKEN};

    /// The words of each preset this module runs, by this module.
    fn all_words(text: &str) -> [Vec<&str>; 8] {
        fn words<'t, const DIGITS: usize, const RULES: u8>(text: &'t str, step: fn(&str, usize) -> usize) -> Vec<&'t str> {
            let mut out = Vec::new();
            for_each_range::<DIGITS, RULES>(text, |a, b| out.push(&text[a..b]), step);
            out
        }
        let gpt2 = words::<0, { super::GPT2 }>(text, next_gpt2);
        [
            words::<3, CL100K>(text, next_cl100k::<true, 3>),
            words::<3, CL100K>(text, next_cl100k::<false, 3>),
            words::<1, CL100K>(text, next_cl100k::<false, 1>),
            words::<3, { super::O200K }>(text, next_o200k::<true, 3>),
            words::<1, { super::O200K }>(text, next_o200k::<false, 1>),
            words::<1, CL100K>(text, next_qwen35),
            gpt2.clone(),
            gpt2,
        ]
    }

    fn regexes() -> [Regex; 8] {
        [CL100K_RE, LLAMA3, QWEN2, O200K_RE, TEKKEN, QWEN35, GPT2_RE, HF_BYTE_LEVEL].map(|p| Regex::new(p).unwrap())
    }

    fn assert_all_equal(regexes: &[Regex; 8], text: &str) {
        let names = ["cl100k", "llama3", "qwen2", "o200k", "tekken", "qwen3.5", "gpt2", "HF ByteLevel"];
        for ((words, re), name) in all_words(text).iter().zip(regexes).zip(names) {
            let expected: Vec<&str> = re.find_iter(text).map(|m| m.unwrap().as_str()).collect();
            assert_eq!(words, &expected, "{name} on {text:?}");
        }
    }

    /// Texts of up to `max_len` characters, mostly readable ones (so that
    /// stretches of them cross block edges), with every class next to every
    /// other and the unreadable ones (`'`, letters, marks, digits and
    /// whitespace past ASCII) now and then.
    fn texts(n: usize, max_len: u64, seed: u64) -> Vec<String> {
        let readable: Vec<char> = "aZqQ xY \t\n\r\u{b}\u{c}  .,!-_(/0123456789\u{0}\u{1f}\u{7f}sSmM".chars().collect();
        let unreadable: Vec<char> = "'é\u{a0}\u{85}\u{2028}中٣\u{301}ǅʰ".chars().collect();
        let mut rng = Rng(seed);
        (0..n)
            .map(|_| {
                let len = rng.next() % max_len;
                let rare = 1 + rng.next() % 200; // one unreadable character in `rare`, on average
                (0..len)
                    .map(|_| {
                        if rng.next() % rare == 0 {
                            unreadable[(rng.next() % unreadable.len() as u64) as usize]
                        } else {
                            readable[(rng.next() % readable.len() as u64) as usize]
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn words_equal_the_regexes_on_generated_text() {
        let regexes = regexes();
        let n = std::env::var("LEXER_FUZZ").ok().and_then(|v| v.parse().ok()).unwrap_or(4_000);
        for text in texts(n, 300, 0x51F3_9A1B_77D2_0C4E) {
            assert_all_equal(&regexes, &text);
        }
    }

    #[test]
    fn words_equal_the_regexes_across_block_edges() {
        // every kind of run, long enough to cross a block's edge, at every offset from a stretch's start,
        // followed by the text's end, an unreadable byte, or more text
        let regexes = regexes();
        let runs = ["    ", " \n  \n ", "\n\n\n", ".\n\n\r x", "!!!!", "12345678", "abcdefgh", " \t \t", "\r\n  ", ". a",
                    "aBcD", "./\n/\n/x", ".\n/.a", "ABCdef", ".\n \n", "!\r\t\t\n\t"];
        let ends = ["", "x", "\u{a0}\n", "'s", "é", " ", "\n", ".", "1", "/"];
        for pad in 0..70 {
            let lead: String = "ab cd".chars().cycle().take(pad).collect();
            for run in runs {
                for end in ends {
                    let body = run.repeat(20);
                    assert_all_equal(&regexes, &format!("{lead}{body}{end}"));
                    assert_all_equal(&regexes, &format!("{lead}{body}{end}{lead}"));
                }
            }
        }
    }

    #[test]
    fn the_masks_are_the_bytes_classes() {
        // every byte below 0x80 at every position, with the byte-at-a-time classifier as the reference
        for pos in 0..64 {
            for x in 0..0x80u8 {
                let mut block = [b'a'; 64];
                block[pos] = x;
                let (simd, bytes) = (classify_64(&block), classify_64_bytes(&block));
                let fields = |c: &Classes| [c.letter, c.lower, c.slash, c.digit, c.space, c.newline, c.blank, c.other];
                assert_eq!(fields(&simd), fields(&bytes), "{x:#x} at {pos}");
            }
        }
    }

    #[test]
    fn fill_ahead_reaches_the_rest_of_each_run_from_any_seed() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let (within, seeds) = (rng.next() | rng.next(), rng.next() & rng.next() & rng.next());
            let seeds = seeds & within;
            let mut expected = 0u64;
            for j in 0..64 {
                let from_before = j > 0 && expected >> (j - 1) & 1 == 1;
                if within >> j & 1 == 1 && (seeds >> j & 1 == 1 || from_before) {
                    expected |= 1 << j;
                }
            }
            assert_eq!(fill_ahead(seeds, within), expected, "{within:#x} {seeds:#x}");
        }
    }

    #[test]
    fn deepseeks_unreadable_bytes_are_its_control_characters_too() {
        // every ASCII byte at every offset of a 20-byte run, against the byte test
        for x in 0..0x80u8 {
            for at in 0..20 {
                let mut bytes = vec![b'a'; 20];
                bytes[at] = x;
                let unreadable = x == b'\'' || x == 0x7f || (x < 0x20 && !(0x09..=0x0d).contains(&x));
                assert_eq!(first_unreadable::<DEEPSEEK>(&bytes, 0), if unreadable { at } else { 20 }, "{x:#x} at {at}");
            }
        }
    }

    #[test]
    fn the_first_unreadable_byte_is_found_at_every_offset() {
        for len in 0..40 {
            for at in 0..=len {
                for bad in [b'\'', 0x80, 0xc3, 0xff] {
                    let mut bytes = vec![b'x'; len];
                    if at < len {
                        bytes[at] = bad;
                    }
                    assert_eq!(first_unreadable::<CL100K>(&bytes, 0), at, "{bad:#x} at {at} of {len}");
                    // quotes' neighbours (0x26, 0x28) and a zero byte before one are not marks
                    let mut near = vec![0x26u8, 0x28, 0x00, 0x01];
                    near.extend_from_slice(&bytes);
                    assert_eq!(first_unreadable::<CL100K>(&near, 0), 4 + at);
                }
            }
        }
    }
}
