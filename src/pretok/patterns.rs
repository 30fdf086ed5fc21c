//! The published split patterns that the core knows (by their text, or by their syntax tree: `same_regex`)
//! (presets with hand-written lexers, and Hugging Face's ByteLevel regex), and
//! the translations of a file's patterns for fancy-regex.

use fancy_regex::Expr;
use rustc_hash::FxHashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

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

/// Longest pattern `same_regex` parses (the presets are far shorter).
const MOST_PARSED: usize = 4096;

/// Whether `pattern` is `known` (one of this module's patterns) written the
/// same or another way that the regex engine reads as the same expression:
/// equal syntax trees (fancy-regex's parser, which compiles from that tree),
/// so that a lexer written for `known` runs `pattern` too. Hugging Face's
/// dialect (`(?>X{1,3})` for a possessive `X{1,3}+`, `\z` for `$`) and
/// groups around the whole pattern read the same; a multi-line `$` (a
/// tokenizer.json's Oniguruma meaning), another class or another count do not.
pub(crate) fn same_regex(known: &'static str, pattern: &str) -> bool {
    known == pattern || syntax_tree(pattern).is_some_and(|tree| same_tree(known, &tree))
}

/// The syntax tree of `pattern` (None if it does not parse, or is longer than any known pattern is).
pub(crate) fn syntax_tree(pattern: &str) -> Option<Expr> {
    if pattern.len() > MOST_PARSED {
        return None;
    }
    Expr::parse_tree(pattern).ok().map(|t| t.expr)
}

/// Whether `tree` (`syntax_tree`) is `known`'s (a pattern of the core's own, its tree parsed once, on first use).
pub(crate) fn same_tree(known: &'static str, tree: &Expr) -> bool {
    static TREES: LazyLock<Mutex<FxHashMap<&'static str, Option<Expr>>>> = LazyLock::new(Default::default);
    let mut trees = TREES.lock().unwrap_or_else(PoisonError::into_inner);
    trees.entry(known).or_insert_with(|| syntax_tree(known)).as_ref() == Some(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_spelling_of_the_same_expression_is_the_same_regex() {
        // Hugging Face's dialect of cl100k (bytepair's own export writes it so), and groups around it
        let hf_cl100k = CL100K.replace(r"\p{N}{1,3}+", r"(?>\p{N}{1,3})").replace(r"\s++$", r"\s++\z");
        assert_ne!(hf_cl100k, CL100K);
        for same in [hf_cl100k.clone(), format!("(?:{CL100K})"), format!("(?:{hf_cl100k})")] {
            assert!(same_regex(CL100K, &same), "{same}");
        }
        assert!(same_regex(LLAMA3, &format!("(?:{LLAMA3})")));
        // a multi-line `$` (a tokenizer.json's Oniguruma meaning), another count or class, another order
        for other in [
            CL100K.replace(r"\s++$", r"\s++(?m:$)"),
            CL100K.replace("{1,3}", "{1,4}"),
            CL100K.replace(r"\p{L}++", r"\p{Lu}++"),
            CL100K.replace(r"\s*[\r\n]|\s+(?!\S)", r"\s+(?!\S)|\s*[\r\n]"),
            LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}{1,3}+"),
            "(".to_string() + CL100K,
        ] {
            assert!(!same_regex(CL100K, &other) && !same_regex(LLAMA3, &other), "{other}");
        }
        // every known pattern parses (else only its exact text would be recognised)
        for p in [GPT2, CL100K, LLAMA3, QWEN2, O200K, TEKKEN, QWEN35, SUPERBPE, HF_BYTE_LEVEL_REGEX] {
            assert!(syntax_tree(p).is_some_and(|tree| same_tree(p, &tree)), "{p}");
        }
        for p in super::super::lexer_deepseek::SPLITS {
            assert!(syntax_tree(p).is_some_and(|tree| same_tree(p, &tree)), "{p}");
        }
    }
}
