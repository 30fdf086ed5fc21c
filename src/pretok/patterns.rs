//! The published split patterns that the core knows by their exact text
//! (presets with hand-written lexers, and Hugging Face's ByteLevel regex), and
//! the translations of a file's patterns for fancy-regex.

use rustc_hash::FxHashMap;

/// Oniguruma pattern (as written in the file) -> the same pattern for
/// fancy-regex (the Python side translates; patterns absent are used as they are).
pub type RegexMap = FxHashMap<String, String>;

/// tiktoken's patterns that have a hand-written lexer (see `lexer.rs`).
pub(crate) const GPT2: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
pub(crate) const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// Llama 3's split (`bytepair.patterns.LLAMA3`, the Split regex of its
/// `tokenizer.json` as published) and Qwen2's (`QWEN2`, also Qwen 2.5's and
/// Qwen 3's), with the lexer of `lexer.rs`.
pub(crate) const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
pub(crate) const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// o200k_base's split (`bytepair.patterns.O200K`, also Llama 4's), with the lexer of `lexer_o200k.rs`.
pub(crate) const O200K: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Mistral's tekken split (`bytepair.patterns.TEKKEN`, a tekken.json's `config.pattern`), on o200k's lexer.
pub(crate) const TEKKEN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen 3.5's split (`bytepair.patterns.QWEN35`, also Qwen 3.6's), on `lexer_o200k::next_qwen35`.
pub(crate) const QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// SuperBPE's stage-2 split (`bytepair.patterns.SUPERBPE`), with the lexer of `superword.rs`.
pub(crate) const SUPERBPE: &str = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)|(?:(?!\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S))[\s\S])+";

/// Hugging Face's `ByteLevel(use_regex=true)` pattern.
pub(crate) const HF_BYTE_LEVEL_REGEX: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
