//! Training: word counts, the incremental trainer's merge loop, the driver
//! from corpus counts to a trained model, and parity-aware training.

pub mod driver;
pub mod parity;
mod symbol_texts;
pub mod trainer;
pub mod words;
