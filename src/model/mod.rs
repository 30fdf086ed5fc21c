//! Segmenting one word (pre-tokenized piece) into token ids.
//!
//! Byte model: tiktoken's rule. A piece that is a token is that token;
//! otherwise merge the adjacent pair whose concatenated bytes have the lowest
//! id, leftmost on ties, until no concatenation is a token.
//!
//! Char model: the seeds' rule. Merges apply in training order, each over
//! the whole word left to right without overlap.

mod atoms;
mod byte;
pub mod bpe;
mod scratch;
mod char;
mod dropout;
mod pairs;
mod queue;
mod window;
pub mod sentencepiece;
pub mod spec;
// the readers behind the bindings' file loaders: used by `py/` only (and their own tests)
#[cfg(any(feature = "python", test))]
pub(crate) mod vocab_files;

pub(crate) use byte::{derive_merges, ByteRanks, ConcatRanks, TokenTable};
pub use scratch::clear_piece_caches;
pub(crate) use char::{CharMerges, Sym};
pub use dropout::Dropout;

/// "None" in the tables of ids, ranks and positions.
const NONE: u32 = u32::MAX;
