//! Where the Hugging Face BPE of a SentencePiece-layout `tokenizer.json`
//! may be cut into words without changing its ids (the pipeline then merges
//! and caches words, as `merge.rs` does for `.model` files).

use super::normalizer::SPACE;
use crate::model::spec::BpeSpec;

/// For a Hugging Face BPE run without a pre-tokenizer (the Llama 2 /
/// Mistral `tokenizer.json` layout, and bytepair's word-start char model):
/// `▁` when the text may be cut before each `▁` that follows another
/// character without changing the ids: no merge makes a token with `▁`
/// after another character, `▁` is a token (so no unknown run reaches
/// across), no character is ever dropped (HF drops a character with no
/// token, no byte token and no unk: its neighbours then merge across it and
/// the offsets after it shift), and no option looks at word ends (prefix,
/// suffix, ignore_merges, dropout).
pub(crate) fn hf_cut_marker(spec: &BpeSpec) -> Option<char> {
    const M: char = '\u{2581}';
    let tokens: std::collections::HashSet<&str> = spec.vocab.iter().map(|(t, _)| t.as_str()).collect();
    let every_byte = || (0..=255u8).all(|b| tokens.contains(format!("<0x{b:02X}>").as_str()));
    let never_drops = spec.unk_token.is_some() || (spec.byte_fallback && every_byte());
    if spec.dropout.is_some_and(|p| p > 0.0)
        || spec.continuing_subword_prefix.is_some()
        || spec.end_of_word_suffix.is_some()
        || spec.ignore_merges
        || !tokens.contains(SPACE)
        || !never_drops
    {
        return None;
    }
    let crosses = |s: &str| s.trim_start_matches(M).contains(M);
    if spec.merges.iter().any(|(a, b)| {
        crosses(a) || crosses(b) || (b.starts_with(M) && !a.trim_start_matches(M).is_empty())
    }) {
        return None;
    }
    Some(M)
}

/// Byte ranges of `s` cut before each `m` that follows another character.
pub(crate) fn cut_before(s: &str, m: char) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev_m = true;
    for (i, c) in s.char_indices() {
        let is_m = c == m;
        if is_m && !prev_m && i > start {
            out.push((start, i));
            start = i;
        }
        prev_m = is_m;
    }
    if start < s.len() {
        out.push((start, s.len()));
    }
    out
}
