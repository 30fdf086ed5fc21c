//! The presets with a hand-written lexer, and the loop that runs each one
//! (`lexer_bits.rs` on ASCII text for gpt2, cl100k, llama3, qwen2, o200k, tekken and Qwen 3.5, each with
//! its step where the text is not: `lexer.rs`'s, `lexer_o200k.rs`'s; `superword.rs`; `lexer_deepseek.rs`).

use super::lexer::{next_cl100k, next_gpt2};
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

/// Calls `f(start, end)` on each piece of `text`, `next(text, i)` giving
/// the end of the piece that starts at `i`.
#[inline(always)]
fn each_piece(text: &str, mut f: impl FnMut(usize, usize), next: impl Fn(&str, usize) -> usize) {
    let mut i = 0;
    while i < text.len() {
        let end = next(text, i);
        f(i, end);
        i = end;
    }
}
