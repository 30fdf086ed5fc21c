//! Text to words: the published patterns, the hand-written lexers of the
//! presets (chosen by a pattern's text or syntax tree), and the guarded regex that runs
//! every other pattern.

pub(crate) mod lexer;
pub(crate) mod lexer_bits;
pub(crate) mod lexer_deepseek;
pub(crate) mod lexer_o200k;
pub(crate) mod llama_split;
pub(crate) mod patterns;
pub(crate) mod preset;
pub mod pretokenize;
pub(crate) mod regex_guard;
pub(crate) mod split_pattern;
pub mod superword;
