//! bytepair's core: exact byte-pair-encoding training and encoding.
//!
//! Layers, lowest first (tests/test_crate_graph.py): `error` and `parallel`,
//! `pretok` (patterns, lexers, the guarded regex: text to words), `text`
//! (aligned strings, normalizers, charsmap), `cache`
//! (the per-thread piece cache), `model` (one word to ids: byte ranks, char
//! merges, pair ranks, SentencePiece), `pipeline` (a `tokenizer.json`
//! pipeline's stages), then `special`, `vocab` and `batch`, `tokenizer`,
//! `stream` (a ready tokenizer), `train` (training), and `py` (the Python
//! bindings, only with the `python` feature).

pub mod batch;
pub mod cache;
pub mod error;
pub mod model;
pub mod parallel;
pub mod pipeline;
pub mod pretok;
pub mod special;
pub mod stream;
pub mod text;
pub mod tokenizer;
pub mod train;
pub mod vocab;

#[cfg(test)]
mod testing;

#[cfg(feature = "python")]
mod py;

pub use error::{Error, Result};
