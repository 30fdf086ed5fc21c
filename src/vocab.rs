//! Initial symbols and ids of both models: the model kinds, the char
//! model's symbols (end-of-word marker, base alphabet) and their ids.

use crate::error::{Error, Result};
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Byte,
    Char,
}

impl ModelKind {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "byte" => Ok(ModelKind::Byte),
            "char" => Ok(ModelKind::Char),
            other => Err(Error::Training(format!("unknown model {other:?}: use \"byte\" or \"char\""))),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct CharSpec {
    pub end_of_word: Option<String>,
    pub fused: bool,
    pub byte_fallback: bool,
}

/// The initial symbols of a char-model word.
pub(crate) fn char_symbols(word: &str, spec: &CharSpec) -> Vec<String> {
    let mut out: Vec<String> = word.chars().map(String::from).collect();
    if let Some(m) = &spec.end_of_word {
        if spec.fused {
            if let Some(last) = out.last_mut() {
                last.push_str(m);
            }
        } else {
            out.push(m.clone());
        }
    }
    out
}

/// Base symbols of the char model in id order (see docs/decisions.md):
/// the sorted alphabet and then the separate marker (unless the marker is
/// one of the alphabet's characters), or, with a fused marker, the sorted
/// distinct initial symbols.
pub(crate) fn char_base<'a>(words: impl IntoIterator<Item = &'a str>, spec: &CharSpec) -> Vec<String> {
    let fused_marker = spec.end_of_word.as_deref().filter(|_| spec.fused);
    let mut plain: FxHashSet<char> = FxHashSet::default();
    let mut finals: FxHashSet<char> = FxHashSet::default();
    for w in words {
        let mut chars = w.chars();
        let last = if fused_marker.is_some() { chars.next_back() } else { None };
        plain.extend(chars);
        finals.extend(last);
    }
    let mut base: Vec<String> = plain.iter().map(|c| c.to_string()).collect();
    if let Some(m) = fused_marker {
        base.extend(finals.iter().map(|c| format!("{c}{m}")));
    }
    base.sort_unstable();
    base.dedup();
    if let (Some(m), false) = (&spec.end_of_word, spec.fused) {
        if !base.iter().any(|s| s == m) {
            base.push(m.clone());
        }
    }
    base
}

/// Ids of the char model's initial symbols, looked up per character
/// without building strings.
#[derive(Debug, Clone, Default)]
pub(crate) struct SymbolIds {
    plain: FxHashMap<char, u32>,
    /// Last character + fused marker.
    fused: FxHashMap<char, u32>,
    /// The separate marker's id.
    marker: Option<u32>,
}

impl SymbolIds {
    /// From the base symbols in id order (`char_base`'s output).
    pub(crate) fn new(base: &[String], spec: &CharSpec) -> Self {
        let mut ids = SymbolIds::default();
        let marker = spec.end_of_word.as_deref();
        for (id, s) in base.iter().enumerate() {
            let id = id as u32;
            let mut chars = s.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                ids.plain.entry(c).or_insert(id);
            } else if let Some(rest) = marker.filter(|_| spec.fused).and_then(|m| s.strip_suffix(m)) {
                let mut chars = rest.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    ids.fused.entry(c).or_insert(id);
                }
            }
            if Some(s.as_str()) == marker && !spec.fused && ids.marker.is_none() {
                ids.marker = Some(id);
            }
        }
        ids
    }

    /// A token that is not a base symbol but whose text is one character
    /// with the fused marker (a merge made it, the marker being text too,
    /// as `x` + `_` with marker `_`) stands for that initial symbol as well,
    /// as the reference looks every piece up by its text.
    pub(crate) fn alias(&mut self, text: &[u8], id: u32, spec: &CharSpec) {
        let Some(marker) = spec.end_of_word.as_deref().filter(|_| spec.fused) else { return };
        let Some(rest) = std::str::from_utf8(text).ok().and_then(|t| t.strip_suffix(marker)) else { return };
        let mut chars = rest.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            self.fused.entry(c).or_insert(id);
        }
    }

    /// The initial symbols of `word`: calls `f(symbol)` for each, in order.
    pub(crate) fn each(&self, word: &str, spec: &CharSpec, mut f: impl FnMut(InitialSymbol)) {
        let fused = spec.fused && spec.end_of_word.is_some();
        let n = word.chars().count();
        for (i, c) in word.chars().enumerate() {
            let last = fused && i + 1 == n;
            let table = if last { &self.fused } else { &self.plain };
            f(InitialSymbol { id: table.get(&c).copied(), ch: Some(c), fused: last, index: i, len: c.len_utf8() });
        }
        if spec.end_of_word.is_some() && !spec.fused {
            f(InitialSymbol { id: self.marker, ch: None, fused: false, index: n, len: 0 });
        }
    }
}

/// One initial symbol of a char-model word.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InitialSymbol {
    /// None when the symbol is not in the vocabulary.
    pub(crate) id: Option<u32>,
    /// Its character (None for the separate end-of-word marker).
    pub(crate) ch: Option<char>,
    /// The character carries the fused end-of-word marker.
    pub(crate) fused: bool,
    /// Index of the character in the word.
    pub(crate) index: usize,
    /// Bytes of text it stands for (0 for the marker).
    pub(crate) len: usize,
}

impl InitialSymbol {
    /// The symbol's text (for pieces outside the vocabulary).
    pub(crate) fn text(&self, spec: &CharSpec) -> String {
        let marker = spec.end_of_word.as_deref().unwrap_or("");
        match self.ch {
            Some(c) if self.fused => format!("{c}{marker}"),
            Some(c) => c.to_string(),
            None => marker.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separate_marker_follows_alphabet() {
        let spec = CharSpec { end_of_word: Some("</w>".into()), ..Default::default() };
        let b = char_base(["ba", "a"], &spec);
        assert_eq!(b, ["a", "b", "</w>"]);
    }

    #[test]
    fn marker_that_is_a_character_is_one_symbol() {
        let spec = CharSpec { end_of_word: Some("_".into()), ..Default::default() };
        let b = char_base(["b_a"], &spec);
        assert_eq!(b, ["_", "a", "b"]); // sorted among the characters, no second entry
    }
}
