//! bytepair's core: exact byte-pair-encoding training and encoding.
//!
//! Layout: `pretokenize` (text to words; `lexer` has hand-written
//! matchers for the gpt2 and cl100k presets, `lexer_deepseek` DeepSeek V3's splits), `special` (special tokens),
//! `words` (word counting), `stream` (where a stream block can be cut, the
//! streaming encoder), `train` (the incremental trainer's merge loop),
//! `training` (corpus counts to a trained model), `vocab` (initial symbols
//! and ids of both models), `encode` (segmenting one word), `tokenizer` (a
//! ready tokenizer), `py` (the Python bindings, only with the `python`
//! feature).

pub mod batch;
pub mod encode;
pub mod error;
pub(crate) mod lexer;
pub(crate) mod lexer_deepseek;
pub mod parallel;
pub mod parity;
pub mod pipeline;
pub mod piece_cache;
pub mod pretokenize;
pub(crate) mod regex_guard;
pub mod special;
pub mod stream;
pub mod superword;
pub mod tokenizer;
pub mod train;
mod symbol_texts;
pub mod training;
pub mod vocab;
pub mod words;

#[cfg(test)]
mod testing;

#[cfg(feature = "python")]
mod py;
#[cfg(feature = "python")]
mod pylist;

pub use error::{Error, Result};
