//! llama.cpp's hand-written splitting routines that no regex list
//! reproduces (`unicode_regex_split_custom_*` in its `src/unicode.cpp`),
//! ported line by line, quirks included, for GGUF files whose
//! `tokenizer.ggml.pre` type runs them:
//!
//! - `afmoe-digits` (`afmoe`, `tiny_aya`, `cohere2moe`): a run of numbers is
//!   cut into its length mod 3, then groups of three; the text before the run
//!   stays glued to its first group (later regexes of the list split it).
//! - `kimi-k2`: Han runs, letter words (Han excluded) with a leading
//!   character and a contraction, numbers by one to three, punctuation runs,
//!   whitespace as Llama 3's.
//! - `superbpe-digits` (`superbpe`'s `(?=(\d{3})+(?!\d))` run by llama.cpp's
//!   std::regex loop, where an empty match cuts the text at its position):
//!   a cut before every ASCII digit from which a multiple of three digits
//!   runs to the end of the digit run.
//!
//! - `jais2` (`jais-2`, whose regex llama.cpp runs with std::regex on its
//!   collapsed text): Llama 3's alternatives, then a whitespace run cut by
//!   the ladder `\s{512}(?!\S)|\s{256}(?!\S)|...|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}`,
//!   which needs backtracking lookaheads beside unbounded runs as a regex.
//!
//! The classes (llama.cpp's letter, number and whitespace flags, its Han
//! ranges, std::regex's `\d`) come from the description, built in Python
//! from llama.cpp's own tables (`bytepair/formats/gguf.py`), so that both
//! agree on every code point. Each routine reads every character a bounded
//! number of times: linear in the piece.

use crate::error::{Error, Result};
use regex_syntax::hir::{Class, HirKind};

const LETTER: u8 = 1;
const NUMBER: u8 = 2;
const SPACE: u8 = 4;
const HAN: u8 = 8;
const DIGIT: u8 = 16;
/// Set for every code point of the piece: llama.cpp's flags are never all
/// zero inside the text (`as_uint()`), and zero past its end.
const IN: u8 = 0x80;

const CLASS_BITS: [(&str, u8); 5] =
    [("letter", LETTER), ("number", NUMBER), ("whitespace", SPACE), ("han", HAN), ("digit", DIGIT)];

/// One of llama.cpp's routines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Routine {
    AfmoeDigits,
    KimiK2,
    SuperbpeDigits,
    Jais2,
    WhitespaceRuns,
}

impl Routine {
    fn named(name: &str) -> Option<Routine> {
        match name {
            "afmoe-digits" => Some(Routine::AfmoeDigits),
            "kimi-k2" => Some(Routine::KimiK2),
            "superbpe-digits" => Some(Routine::SuperbpeDigits),
            "jais2" => Some(Routine::Jais2),
            "whitespace-runs" => Some(Routine::WhitespaceRuns),
            _ => None,
        }
    }

    /// The classes the routine reads.
    fn classes(self) -> &'static [&'static str] {
        match self {
            Routine::AfmoeDigits => &["number"],
            Routine::KimiK2 => &["letter", "number", "whitespace", "han"],
            Routine::SuperbpeDigits => &["digit"],
            Routine::Jais2 => &["letter", "number", "whitespace"],
            Routine::WhitespaceRuns => &["whitespace"],
        }
    }
}

/// A routine and the class bits of every code point it reads.
#[derive(Debug, Clone)]
pub(crate) struct LlamaSplit {
    routine: Routine,
    /// Class bits of every code point of the Basic Multilingual Plane.
    bmp: Vec<u8>,
    /// Above it: (start, end inclusive, bits), sorted and disjoint.
    astral: Vec<(u32, u32, u8)>,
}

fn class_ranges(name: &str, pattern: &str) -> Result<Vec<(u32, u32)>> {
    let bad = |why: String| Error::Format(format!("pre-tokenizer LlamaSplit: class {name:?}: {why}"));
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| bad(format!("not a regex class: {e}")))?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(cls)) => {
            Ok(cls.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect())
        }
        _ => Err(bad("not a character class".to_string())),
    }
}

impl LlamaSplit {
    /// The routine `routine` with the classes `classes` (name, a class
    /// regex-syntax parses): exactly those the routine reads.
    pub(crate) fn new(routine: &str, classes: &[(String, String)]) -> Result<LlamaSplit> {
        let r = Routine::named(routine).ok_or_else(|| {
            Error::Unsupported(format!(
                "pre-tokenizer LlamaSplit: the routine {routine:?} is not one of llama.cpp's that bytepair runs \
                 (afmoe-digits, kimi-k2, superbpe-digits, jais2, whitespace-runs)"
            ))
        })?;
        let want = r.classes();
        for (name, _) in classes {
            if !want.contains(&name.as_str()) {
                return Err(Error::Format(format!(
                    "pre-tokenizer LlamaSplit: the routine {routine:?} reads no class {name:?} (it reads {want:?})"
                )));
            }
        }
        let mut bmp = vec![0u8; 0x10000];
        let mut astral: Vec<(u32, u32, u8)> = Vec::new();
        for name in want {
            let pattern = classes.iter().find(|(n, _)| n == name).map(|(_, p)| p).ok_or_else(|| {
                Error::Format(format!("pre-tokenizer LlamaSplit: the routine {routine:?} needs the class {name:?}"))
            })?;
            let bit = CLASS_BITS.iter().find(|(n, _)| n == name).map(|&(_, b)| b).unwrap_or(0);
            for (start, end) in class_ranges(name, pattern)? {
                for cp in start..=end.min(0xFFFF) {
                    bmp[cp as usize] |= bit;
                }
                if end > 0xFFFF {
                    astral.push((start.max(0x10000), end, bit));
                }
            }
        }
        Ok(LlamaSplit { routine: r, bmp, astral: disjoint(astral) })
    }

    #[inline]
    fn bits(&self, cp: u32) -> u8 {
        if cp < 0x10000 {
            return self.bmp[cp as usize];
        }
        let i = self.astral.partition_point(|&(_, e, _)| e < cp);
        match self.astral.get(i) {
            Some(&(s, _, b)) if s <= cp => b,
            _ => 0,
        }
    }

    /// The pieces of `s` as byte ranges, in order, none empty, covering `s`;
    /// an error where llama.cpp itself has no pieces (it aborts).
    pub(crate) fn split(&self, s: &str, out: &mut Vec<(usize, usize)>) -> Result<()> {
        // code points, their flags and byte offsets (starts[n] = s.len())
        let mut cpts: Vec<u32> = Vec::with_capacity(s.len());
        let mut flags: Vec<u8> = Vec::with_capacity(s.len());
        let mut starts: Vec<usize> = Vec::with_capacity(s.len() + 1);
        for (i, c) in s.char_indices() {
            cpts.push(c as u32);
            flags.push(self.bits(c as u32) | IN);
            starts.push(i);
        }
        starts.push(s.len());
        let mut cuts = Cuts { starts: &starts, prev: 0, out };
        match self.routine {
            Routine::AfmoeDigits => afmoe(&flags, &mut cuts),
            Routine::KimiK2 => kimi_k2(&cpts, &flags, &mut cuts),
            Routine::SuperbpeDigits => superbpe(&flags, &mut cuts),
            Routine::Jais2 => jais2(&cpts, &flags, &mut cuts),
            Routine::WhitespaceRuns => return whitespace_runs(&cpts, &flags, &mut cuts),
        }
        Ok(())
    }
}

/// Overlapping (start, end, bit) ranges as disjoint ones with their bits or-ed.
fn disjoint(mut ranges: Vec<(u32, u32, u8)>) -> Vec<(u32, u32, u8)> {
    let mut points: Vec<u32> = ranges.iter().flat_map(|&(s, e, _)| [s, e + 1]).collect();
    points.sort_unstable();
    points.dedup();
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32, u8)> = Vec::new();
    // each elementary interval [points[k], points[k+1]) gets the bits of the ranges covering it
    let mut active: Vec<(u32, u8)> = Vec::new(); // (end inclusive, bit) of open ranges
    let mut next = 0;
    for w in points.windows(2) {
        let (lo, hi) = (w[0], w[1] - 1);
        while next < ranges.len() && ranges[next].0 <= lo {
            active.push((ranges[next].1, ranges[next].2));
            next += 1;
        }
        active.retain(|&(e, _)| e >= lo);
        let bits = active.iter().fold(0u8, |a, &(_, b)| a | b);
        if bits != 0 {
            match out.last_mut() {
                Some(last) if last.1 + 1 == lo && last.2 == bits => last.1 = hi,
                _ => out.push((lo, hi, bits)),
            }
        }
    }
    out
}

/// llama.cpp's `_add_token`: a piece from the last cut to `end` (code
/// point positions), when not empty.
struct Cuts<'a> {
    starts: &'a [usize],
    prev: usize,
    out: &'a mut Vec<(usize, usize)>,
}

impl Cuts<'_> {
    #[inline]
    fn add(&mut self, end: usize) {
        if end > self.prev {
            self.out.push((self.starts[self.prev], self.starts[end]));
        }
        self.prev = end;
    }
}

/// The `whitespace` pre type's `\S+` as llama.cpp's std::wregex loop runs it:
/// runs of non-whitespace and the runs of whitespace between them. Its BPE
/// session then aborts (`GGML_ASSERT` in `find_bpe_rank`) on any piece in
/// which a space stands next to another character: such a text is an error.
fn whitespace_runs(cpts: &[u32], flags: &[u8], cuts: &mut Cuts) -> Result<()> {
    let n = flags.len();
    let mut pos = 0;
    while pos < n {
        let space = flags[pos] & SPACE != 0;
        let start = pos;
        while pos < n && (flags[pos] & SPACE != 0) == space {
            pos += 1;
        }
        if space && pos - start > 1 && cpts[start..pos].contains(&0x20) {
            return Err(Error::Encode(format!(
                "llama.cpp has no ids for this text with the GGUF pre-tokenizer type 'whitespace': its BPE session \
                 aborts (GGML_ASSERT in find_bpe_rank) on a run of whitespace holding a space next to another \
                 character (at byte {} of the text between special tokens)",
                cuts.starts[start]
            )));
        }
        cuts.add(pos);
    }
    Ok(())
}

/// `unicode_regex_split_custom_afmoe`.
fn afmoe(flags: &[u8], cuts: &mut Cuts) {
    let n = flags.len();
    let mut pos = 0;
    while pos < n {
        if flags[pos] & NUMBER != 0 {
            let digit_start = pos;
            while pos < n && flags[pos] & NUMBER != 0 {
                pos += 1;
            }
            let count = pos - digit_start;
            let mut current = digit_start;
            if count % 3 > 0 {
                current += count % 3;
                cuts.add(current);
            }
            while current < digit_start + count {
                current += 3;
                cuts.add(current);
            }
            continue;
        }
        pos += 1;
    }
    if cuts.prev < n {
        cuts.add(n);
    }
}

/// The empty matches of `(?=(\d{3})+(?!\d))` cut the piece: before every
/// digit from which the rest of its digit run is three digits or a multiple.
fn superbpe(flags: &[u8], cuts: &mut Cuts) {
    let n = flags.len();
    let mut pos = 0;
    while pos < n {
        if flags[pos] & DIGIT == 0 {
            pos += 1;
            continue;
        }
        let start = pos;
        while pos < n && flags[pos] & DIGIT != 0 {
            pos += 1;
        }
        let mut at = start + (pos - start) % 3;
        while at + 3 <= pos {
            cuts.add(at);
            at += 3;
        }
    }
    cuts.add(n);
}

/// `unicode_regex_split_custom_kimi_k2`, line by line.
fn kimi_k2(cpts: &[u32], flags: &[u8], cuts: &mut Cuts) {
    const OUT_OF_RANGE: u32 = 0xFFFF_FFFF;
    let end = cpts.len();
    let cpt_at = |p: usize| if p < end { cpts[p] } else { OUT_OF_RANGE };
    let flags_at = |p: usize| if p < end { flags[p] } else { 0 };
    let is_han = |p: usize| flags_at(p) & HAN != 0;
    let letter_not_han = |p: usize| flags_at(p) & LETTER != 0 && !is_han(p);
    let is_rn = |c: u32| c == '\r' as u32 || c == '\n' as u32;
    // only ASCII code points lower to the letters a contraction reads (llama.cpp's unicode_tolower)
    let lower = |c: u32| if (0x41..=0x5A).contains(&c) { c + 0x20 } else { c };
    let mut pos = 0;
    while pos < end {
        let cpt = cpt_at(pos);
        let f = flags_at(pos);
        // [\p{Han}]+
        if is_han(pos) {
            while is_han(pos) {
                pos += 1;
            }
            cuts.add(pos);
            continue;
        }
        // letter words without Han, an optional leading character and contraction
        let leading = !(is_rn(cpt) || f & (LETTER | NUMBER) != 0);
        if letter_not_han(pos) || (leading && letter_not_han(pos + 1)) {
            let mut has_leading_char = false;
            if leading {
                has_leading_char = true;
                pos += 1;
            }
            let mut has_letters = false;
            while letter_not_han(pos) {
                has_letters = true;
                pos += 1;
            }
            if has_letters || (!has_leading_char && letter_not_han(pos)) {
                if !has_letters {
                    pos += 1;
                }
                while letter_not_han(pos) {
                    pos += 1;
                }
                if cpt_at(pos) == '\'' as u32 && pos + 1 < end {
                    let next = lower(cpt_at(pos + 1));
                    if [b's', b't', b'm', b'd'].iter().any(|&x| next == x as u32) {
                        pos += 2;
                    } else if pos + 2 < end {
                        let next_next = lower(cpt_at(pos + 2));
                        if (next == 'r' as u32 && next_next == 'e' as u32)
                            || (next == 'v' as u32 && next_next == 'e' as u32)
                            || (next == 'l' as u32 && next_next == 'l' as u32)
                        {
                            pos += 3;
                        }
                    }
                }
                cuts.add(pos);
                continue;
            } else if has_leading_char {
                pos -= 1;
            }
        }
        // \p{N}{1,3}
        if f & NUMBER != 0 {
            let mut ini = pos;
            while flags_at(pos) & NUMBER != 0 {
                pos += 1;
                if pos - ini >= 3 {
                    cuts.add(pos);
                    ini = pos;
                }
            }
            cuts.add(pos);
            continue;
        }
        //  ?[^\s\p{L}\p{N}]+[\r\n]*
        let mut f2 = if cpt == ' ' as u32 { flags_at(pos + 1) } else { f };
        let punct = |x: u8| x & (SPACE | LETTER | NUMBER) == 0 && x != 0;
        if punct(f2) {
            if cpt == ' ' as u32 {
                pos += 1;
            }
            while punct(f2) {
                pos += 1;
                f2 = flags_at(pos);
            }
            while is_rn(cpt_at(pos)) {
                pos += 1;
            }
            cuts.add(pos);
            continue;
        }
        let mut num_whitespaces = 0;
        let mut last_end_r_or_n = 0;
        while flags_at(pos + num_whitespaces) & SPACE != 0 {
            if is_rn(cpt_at(pos + num_whitespaces)) {
                last_end_r_or_n = pos + num_whitespaces + 1;
            }
            num_whitespaces += 1;
        }
        // \s*[\r\n]+
        if last_end_r_or_n > 0 {
            pos = last_end_r_or_n;
            cuts.add(pos);
            continue;
        }
        // \s+(?!\S)
        if num_whitespaces > 1 && cpt_at(pos + num_whitespaces) != OUT_OF_RANGE {
            pos += num_whitespaces - 1;
            cuts.add(pos);
            continue;
        }
        // \s+
        if num_whitespaces > 0 {
            pos += num_whitespaces;
            cuts.add(pos);
            continue;
        }
        pos += 1;
        cuts.add(pos);
    }
}

/// jais-2's regex, alternative by alternative, as std::regex runs it (leftmost alternative first; each
/// position matches one of them, so the matches tile the piece):
/// `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])` | `[^\r\n\p{L}\p{N}]?\p{L}+` | `\p{N}{1,3}` |
/// ` ?[^\s\p{L}\p{N}]+[\r\n]*` | `\s*[\r\n]+` | `\s{512}(?!\S)` | ... | `\s{4}(?!\S)` | `\s{1,2}(?!\S)` | `\s{1}`.
/// `\s*[\r\n]+` backs off to the last `\r`/`\n` of the whitespace run. `\s{k}(?!\S)` matches where the run
/// has more than `k` characters left, or exactly `k` up to the end of the piece.
fn jais2(cpts: &[u32], flags: &[u8], cuts: &mut Cuts) {
    let end = cpts.len();
    let flags_at = |p: usize| if p < end { flags[p] } else { 0 };
    let cpt_at = |p: usize| if p < end { cpts[p] } else { u32::MAX };
    let is_rn = |c: u32| c == '\r' as u32 || c == '\n' as u32;
    let letter = |p: usize| flags_at(p) & LETTER != 0;
    let number = |p: usize| flags_at(p) & NUMBER != 0;
    let space = |p: usize| flags_at(p) & SPACE != 0;
    // [^\s\p{L}\p{N}] inside the piece
    let other = |p: usize| p < end && flags[p] & (SPACE | LETTER | NUMBER) == 0;
    let ascii_lower = |c: u32| if (0x41..=0x5A).contains(&c) { c + 0x20 } else { c };
    // the end of the whitespace run last read and its last \r or \n: the ladder takes a run a rung at a time,
    // and reading the rest of the run again at each rung would be quadratic in a long run
    let mut run: Option<(usize, Option<usize>)> = None;
    let mut pos = 0;
    while pos < end {
        let cpt = cpts[pos];
        // the contractions
        if cpt == '\'' as u32 {
            let a = ascii_lower(cpt_at(pos + 1));
            let b = ascii_lower(cpt_at(pos + 2));
            let len = if [b's', b't', b'm', b'd'].iter().any(|&x| a == x as u32) {
                2
            } else if (a == 'r' as u32 || a == 'v' as u32) && b == 'e' as u32 || a == 'l' as u32 && b == 'l' as u32 {
                3
            } else {
                0
            };
            if len > 0 {
                pos += len;
                cuts.add(pos);
                continue;
            }
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+
        let leading = !is_rn(cpt) && !letter(pos) && !number(pos);
        if letter(pos) || (leading && letter(pos + 1)) {
            pos += 1;
            while letter(pos) {
                pos += 1;
            }
            cuts.add(pos);
            continue;
        }
        // \p{N}{1,3}
        if number(pos) {
            let start = pos;
            while number(pos) && pos - start < 3 {
                pos += 1;
            }
            cuts.add(pos);
            continue;
        }
        //  ?[^\s\p{L}\p{N}]+[\r\n]*
        if other(pos) || (cpt == ' ' as u32 && other(pos + 1)) {
            pos += 1;
            while other(pos) {
                pos += 1;
            }
            while is_rn(cpt_at(pos)) {
                pos += 1;
            }
            cuts.add(pos);
            continue;
        }
        // a whitespace run [pos, q) (the rest of the one read before, when pos is inside it)
        let (q, last_rn) = match run {
            Some((q, last_rn)) if pos < q => (q, last_rn.filter(|&r| r >= pos)),
            _ => {
                let mut q = pos;
                let mut last_rn = None;
                while space(q) {
                    if is_rn(cpts[q]) {
                        last_rn = Some(q);
                    }
                    q += 1;
                }
                (q, last_rn)
            }
        };
        run = Some((q, last_rn));
        // \s*[\r\n]+
        if let Some(r) = last_rn {
            pos = r + 1;
            cuts.add(pos);
            continue;
        }
        // the ladder; `\s{1}` where nothing else matches
        let left = q - pos;
        let k = [512, 256, 128, 64, 32, 16, 8, 4, 2, 1]
            .into_iter()
            .find(|&k| k < left || (k == left && q == end))
            .unwrap_or(1);
        pos += k;
        cuts.add(pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(r: &str, classes: &[(&str, &str)], s: &str) -> Vec<String> {
        let classes: Vec<(String, String)> = classes.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        let split = LlamaSplit::new(r, &classes).unwrap();
        let mut out = Vec::new();
        split.split(s, &mut out).unwrap();
        assert_eq!(out.iter().map(|&(a, b)| &s[a..b]).collect::<String>(), s);
        out.iter().map(|&(a, b)| s[a..b].to_string()).collect()
    }

    #[test]
    fn whitespace_runs_split_and_refuse_what_llama_cpp_aborts_on() {
        let c = [("whitespace", r"[\t\n\r \x{3000}]")];
        assert_eq!(pieces("whitespace-runs", &c, "ab c\n\ndé\u{3000}\tf "), ["ab", " ", "c", "\n\n", "dé", "\u{3000}\t", "f", " "]);
        let split = LlamaSplit::new("whitespace-runs", &[("whitespace".into(), r"[\t\n ]".into())]).unwrap();
        for bad in ["a  b", "a \nb", "\t b"] {
            assert!(matches!(split.split(bad, &mut Vec::new()), Err(Error::Encode(_))), "{bad:?}");
        }
    }

    #[test]
    fn afmoe_groups_digits_from_the_right_and_glues_the_text_before() {
        let c = [("number", r"[0-9\x{E50}-\x{E59}]")];
        assert_eq!(pieces("afmoe-digits", &c, "ab1234567cd"), ["ab1", "234", "567", "cd"]);
        assert_eq!(pieces("afmoe-digits", &c, "x123"), ["x123"]);
        assert_eq!(pieces("afmoe-digits", &c, "ก๑๒๓๔ 12"), ["ก๑", "๒๓๔", " 12"]);
        assert_eq!(pieces("afmoe-digits", &c, ""), Vec::<String>::new());
    }

    #[test]
    fn superbpe_cuts_before_each_group_of_three() {
        let c = [("digit", "[0-9]")];
        assert_eq!(pieces("superbpe-digits", &c, "1234567"), ["1", "234", "567"]);
        assert_eq!(pieces("superbpe-digits", &c, "123456"), ["123", "456"]);
        assert_eq!(pieces("superbpe-digits", &c, "12٣4567"), ["12٣4", "567"]);
        assert_eq!(pieces("superbpe-digits", &c, "12"), ["12"]);
    }

    #[test]
    fn kimi_k2_runs_han_letters_numbers_and_whitespace() {
        let c = [
            ("letter", r"[A-Za-z\x{4E00}-\x{9FFF}]"),
            ("number", "[0-9]"),
            ("whitespace", r"[\t\n\r ]"),
            ("han", r"[\x{4E00}-\x{9FFF}]"),
        ];
        assert_eq!(pieces("kimi-k2", &c, "Hello 世界abc 12345 don't!!\n\n  x"),
                   ["Hello", " ", "世界", "abc", " ", "123", "45", " don't", "!!\n\n", " ", " x"]);
    }

    #[test]
    fn jais2_cuts_whitespace_runs_by_its_ladder() {
        let c = [("letter", "[A-Za-z]"), ("number", "[0-9]"), ("whitespace", r"[\t\n\r ]")];
        let s = format!("a{}b{}", " ".repeat(7), " ".repeat(5));
        assert_eq!(pieces("jais2", &c, &s), ["a", "    ", "  ", " b", "    ", " "]);
        assert_eq!(pieces("jais2", &c, "x 'Re  \n \n  !!\n12345"), ["x", " '", "Re", "  \n \n", " ", " !!\n", "123", "45"]);
        assert_eq!(pieces("jais2", &c, "  "), ["  "]);
        assert_eq!(pieces("jais2", &c, "'s'LL'x"), ["'s", "'LL", "'x"]);
        // a long run, rung by rung (read once, not again at each rung)
        let long = format!("{}x", " ".repeat(1100));
        let sizes: Vec<usize> = pieces("jais2", &c, &long).iter().map(String::len).collect();
        assert_eq!(sizes, [512, 512, 64, 8, 2, 1, 2]);
        let long = format!("{} \n{}", " ".repeat(600), " ".repeat(5));
        let sizes: Vec<usize> = pieces("jais2", &c, &long).iter().map(String::len).collect();
        assert_eq!(sizes, [602, 4, 1]);
    }

    #[test]
    fn bad_descriptions_are_errors() {
        let none: [(String, String); 0] = [];
        assert!(LlamaSplit::new("nope", &none).is_err());
        assert!(LlamaSplit::new("afmoe-digits", &none).is_err());
        let bad = [("number".to_string(), "[".to_string())];
        assert!(LlamaSplit::new("afmoe-digits", &bad).is_err());
        let not_class = [("number".to_string(), "ab".to_string())];
        assert!(LlamaSplit::new("afmoe-digits", &not_class).is_err());
        let extra = [("number".to_string(), "[0-9]".to_string()), ("han".to_string(), "[0-9]".to_string())];
        assert!(LlamaSplit::new("afmoe-digits", &extra).is_err());
    }

    #[test]
    fn overlapping_astral_classes_or_their_bits() {
        let r = disjoint(vec![(0x20000, 0x2A6DF, HAN), (0x20000, 0x2FFFF, LETTER)]);
        assert_eq!(r, vec![(0x20000, 0x2A6DF, HAN | LETTER), (0x2A6E0, 0x2FFFF, LETTER)]);
    }
}
