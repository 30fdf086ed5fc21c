//! The presets with a hand-written lexer, and the loop that runs each one
//! (`lexer_bits.rs` on ASCII text for gpt2, cl100k, llama3, qwen2, o200k, tekken and Qwen 3.5, each with
//! its step where the text is not: `lexer.rs`'s, `lexer_o200k.rs`'s; `superword.rs`; `lexer_deepseek.rs`).

use super::lexer::{each_piece, next_cl100k, next_gpt2};
use super::{lexer_bits, lexer_deepseek, lexer_o200k, superword};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Gpt2,
    Cl100k,
    /// Llama 3's split: cl100k's without `\s++$`.
    Llama3,
    /// Qwen2's (and Qwen 2.5's, Qwen 3's) split: llama3's, one digit at a time.
    Qwen2,
    /// o200k_base's split (also Llama 4's; `lexer_o200k.rs`).
    O200k,
    /// Mistral's tekken split: o200k's without contractions, one digit at a time.
    Tekken,
    /// Qwen 3.5's (and 3.6's) split: Qwen2's with marks joining letters (`lexer_o200k.rs`).
    Qwen35,
    /// SuperBPE's stage-2 split (`superword.rs`).
    SuperBpe,
    /// DeepSeek V3's three splits in a row (`lexer_deepseek.rs`); no single
    /// pattern names it: a pipeline's route picks it for that sequence.
    DeepSeek,
}

impl Preset {
    /// Calls `f` on every word of `text`, in order.
    #[inline(always)]
    pub(crate) fn for_each_word<'t>(self, text: &'t str, mut f: impl FnMut(&'t str)) {
        self.for_each_range(text, |a, b| f(&text[a..b]))
    }

    /// `for_each_word` with each word's bytes (no check that a cut is a
    /// character boundary: the lexers cut only there).
    #[inline(always)]
    pub(crate) fn for_each_word_bytes<'t>(self, text: &'t str, mut f: impl FnMut(&'t [u8])) {
        let bytes = text.as_bytes();
        self.for_each_range(text, |a, b| f(&bytes[a..b]))
    }

    /// Calls `f(start, end)` on every word of `text`, in order.
    #[inline(always)]
    fn for_each_range(self, text: &str, f: impl FnMut(usize, usize)) {
        // one loop per preset, so that the lexer's step and `f` are
        // inlined into it (a call through a function pointer per piece
        // was a tenth of the instructions of encoding English)
        match self {
            Preset::Gpt2 => lexer_bits::for_each_range::<0, { lexer_bits::GPT2 }>(text, f, next_gpt2),
            // ASCII stretches 64 bytes at a time (lexer_bits.rs), the rest by the preset's step
            Preset::Cl100k => lexer_bits::for_each_range::<3, { lexer_bits::CL100K }>(text, f, next_cl100k::<true, 3>),
            Preset::Llama3 => lexer_bits::for_each_range::<3, { lexer_bits::CL100K }>(text, f, next_cl100k::<false, 3>),
            Preset::Qwen2 => lexer_bits::for_each_range::<1, { lexer_bits::CL100K }>(text, f, next_cl100k::<false, 1>),
            Preset::O200k => lexer_bits::for_each_range::<3, { lexer_bits::O200K }>(text, f, lexer_o200k::next_o200k::<true, 3>),
            Preset::Tekken => lexer_bits::for_each_range::<1, { lexer_bits::O200K }>(text, f, lexer_o200k::next_o200k::<false, 1>),
            Preset::Qwen35 => lexer_bits::for_each_range::<1, { lexer_bits::CL100K }>(text, f, lexer_o200k::next_qwen35),
            Preset::SuperBpe => each_piece(text, f, superword::next_piece),
            Preset::DeepSeek => {
                let mut f = f;
                let base = text.as_ptr() as usize;
                lexer_deepseek::for_each_word(text, |w| {
                    let a = w.as_ptr() as usize - base;
                    f(a, a + w.len())
                })
            }
        }
    }
}

/// Texts shorter than this are encoded on one thread: each thread's share of a
/// longer one is at least this long.
const THREAD_SHARE: usize = 64 << 10;

impl Preset {
    /// `text` cut into one part per thread (each of at least `THREAD_SHARE`
    /// bytes), to be split and encoded apart: None when it is shorter, when
    /// only one thread runs, or when this preset's words may not be cut so.
    /// A cut is made right after a `\n` followed by an ASCII letter, where a
    /// word starts and the words before it are the same with or without the
    /// text after it: no word of these patterns holds `\n` and a letter, and a
    /// whitespace run ending in `\n` ends a word there whether the text goes
    /// on (`\s*[\r\n]`) or ends (`\s++$`, `\s+(?!\S)`). gpt2's `\s+(?!\S)`
    /// would take ` \n` whole at the end of a part, but leaves `\n` alone before a
    /// letter; SuperBPE's words span lines.
    fn thread_parts(self, text: &str) -> Option<Vec<&str>> {
        // the length first: asking for the threads is a system call (the fork check's process id),
        // which was a quarter of the time of a batch of 50-byte lines
        if text.len() < 2 * THREAD_SHARE {
            return None;
        }
        let parts = (text.len() / THREAD_SHARE).min(crate::parallel::threads());
        if parts < 2 {
            return None;
        }
        self.cut(text, parts)
    }

    /// `encode(text, ids)`, or for a text long enough for every thread, `encode`
    /// on each of its `thread_parts` in parallel, their ids appended in order.
    pub(crate) fn encode_on_threads(
        self, text: &str, ids: &mut Vec<u32>, encode: impl Fn(&str, &mut Vec<u32>) -> crate::error::Result<()> + Sync,
    ) -> crate::error::Result<()> {
        let Some(parts) = self.thread_parts(text) else { return encode(text, ids) };
        let done = crate::parallel::map(&parts, |part| {
            let mut part_ids = Vec::new();
            encode(part, &mut part_ids).map(|()| part_ids)
        });
        for part_ids in done {
            ids.extend_from_slice(&part_ids?);
        }
        Ok(())
    }

    /// `text` cut into at most `parts` parts of about equal length (see `thread_parts`), or None.
    fn cut(self, text: &str, parts: usize) -> Option<Vec<&str>> {
        let cuttable = matches!(self, Preset::Cl100k | Preset::Llama3 | Preset::Qwen2 | Preset::O200k
                                      | Preset::Tekken | Preset::Qwen35 | Preset::DeepSeek);
        if !cuttable || parts < 2 {
            return None;
        }
        let bytes = text.as_bytes();
        let share = text.len() / parts;
        let mut out = Vec::with_capacity(parts);
        let mut start = 0;
        for k in 1..parts {
            let mut at = (k * share).max(start);
            let cut = loop {
                match memchr::memchr(b'\n', &bytes[at..]) {
                    Some(i) if bytes.get(at + i + 1).is_some_and(u8::is_ascii_alphabetic) => break Some(at + i + 1),
                    Some(i) => at += i + 1,
                    None => break None,
                }
            };
            let Some(cut) = cut else { break };
            out.push(&text[start..cut]);
            start = cut;
        }
        out.push(&text[start..]);
        (out.len() > 1).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    fn words(p: Preset, text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        p.for_each_word(text, |w| out.push(w));
        out
    }

    #[test]
    fn the_parts_words_are_the_whole_texts() {
        // lines ending in every kind of whitespace run, punctuation and `\r\n` before a letter, cut into 2 to 9
        // parts: the words of the parts, one after another, are the words of the whole text
        let ends = ["\n", " \n", "  \n", "\t\n", "\r\n", ".\n", "!!\n\n", " \n \n", "\u{a0}\n", "'\n", "1\n", "\n\n\n"];
        let starts = ["A", "word", "Zz", "x1", "aB", "q'"];
        let inner = ["the", " cat", "  ", ", ", "12345", " 日本", "é", "'s", "/", "\t"];
        let mut rng = Rng(0xC07_5EED);
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..rng.below(60) {
                text.push_str(starts[rng.below(starts.len())]);
                for _ in 0..rng.below(8) {
                    text.push_str(inner[rng.below(inner.len())]);
                }
                text.push_str(ends[rng.below(ends.len())]);
            }
            for p in [Preset::Cl100k, Preset::Llama3, Preset::Qwen2, Preset::O200k, Preset::Tekken, Preset::Qwen35,
                      Preset::DeepSeek] {
                for parts in 2..10 {
                    let Some(cut) = p.cut(&text, parts) else { continue };
                    assert_eq!(cut.concat(), text);
                    assert!(cut.len() <= parts && cut[1..].iter().all(|part| part.as_bytes()[0].is_ascii_alphabetic()));
                    let joined: Vec<&str> = cut.iter().flat_map(|part| words(p, part)).collect();
                    assert_eq!(joined, words(p, &text), "{p:?} in {parts} parts of {text:?}");
                }
            }
        }
    }

    #[test]
    fn gpt2s_and_superbpes_words_are_not_cut() {
        // gpt2: ` \n` is one word at a text's end (`\s++$`) but two before a letter; SuperBPE's words span lines
        let text = "a \nBc \nDe ".repeat(10);
        assert_eq!(words(Preset::Gpt2, "a \n"), ["a", " \n"]);
        assert_eq!(words(Preset::Gpt2, "a \nB"), ["a", " ", "\n", "B"]);
        assert!(Preset::Gpt2.cut(&text, 2).is_none() && Preset::SuperBpe.cut(&text, 2).is_none());
        assert!(Preset::Llama3.cut(&text, 2).is_some());
    }
}
