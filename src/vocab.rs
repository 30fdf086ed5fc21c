//! Initial symbols and ids of both models, and training a model from a
//! word-count table.

use crate::error::{Error, Result};
use crate::encode::{CharMerges, Sym};
use crate::train::{Merge, StopReason, TieBreak, TrainConfig, Trainer, Words, BARRIER};
use crate::words::WordCounts;
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

/// An existing tokenizer to continue training from: its ids and merges
/// are kept; new merges take the ids after its last id.
pub struct Init {
    /// Text of every id (None for special tokens, byte-fallback tokens and
    /// unused ids: they never take part in merges).
    pub tokens: Vec<Option<Vec<u8>>>,
    /// Its merges in order: (left id, right id, result id).
    pub merges: Vec<(u32, u32, u32)>,
}

pub struct TrainRequest {
    pub kind: ModelKind,
    pub char: CharSpec,
    pub tie_break: TieBreak,
    pub min_frequency: u64,
    pub vocab_size: Option<u64>,
    pub num_merges: Option<u64>,
    pub n_special: u64,
    pub max_token_length: Option<u32>,
    pub init: Option<Init>,
}

pub struct TrainOutput {
    /// Text of every id below the first merge id (base symbols, then the
    /// byte-fallback tokens in the char model).
    pub base: Vec<Vec<u8>>,
    /// How many of `base` are real symbols (the rest are fallback tokens).
    pub n_symbols: usize,
    pub merges: Vec<Merge>,
    pub reason: StopReason,
}

/// The initial symbols of a char-model word.
pub fn char_symbols(word: &str, spec: &CharSpec) -> Vec<String> {
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
pub fn char_base<'a>(words: impl IntoIterator<Item = &'a str>, spec: &CharSpec) -> Vec<String> {
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
pub struct SymbolIds {
    plain: FxHashMap<char, u32>,
    /// Last character + fused marker.
    fused: FxHashMap<char, u32>,
    /// The separate marker's id.
    marker: Option<u32>,
}

impl SymbolIds {
    /// From the base symbols in id order (`char_base`'s output).
    pub fn new(base: &[String], spec: &CharSpec) -> Self {
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
    pub fn alias(&mut self, text: &[u8], id: u32, spec: &CharSpec) {
        let Some(marker) = spec.end_of_word.as_deref().filter(|_| spec.fused) else { return };
        let Some(rest) = std::str::from_utf8(text).ok().and_then(|t| t.strip_suffix(marker)) else { return };
        let mut chars = rest.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            self.fused.entry(c).or_insert(id);
        }
    }

    /// The initial symbols of `word`: calls `f(symbol)` for each, in order.
    pub fn each(&self, word: &str, spec: &CharSpec, mut f: impl FnMut(InitialSymbol)) {
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
pub struct InitialSymbol {
    /// None when the symbol is not in the vocabulary.
    pub id: Option<u32>,
    /// Its character (None for the separate end-of-word marker).
    pub ch: Option<char>,
    /// The character carries the fused end-of-word marker.
    pub fused: bool,
    /// Index of the character in the word.
    pub index: usize,
    /// Bytes of text it stands for (0 for the marker).
    pub len: usize,
}

impl InitialSymbol {
    /// The symbol's text (for pieces outside the vocabulary).
    pub fn text(&self, spec: &CharSpec) -> String {
        let marker = spec.end_of_word.as_deref().unwrap_or("");
        match self.ch {
            Some(c) if self.fused => format!("{c}{marker}"),
            Some(c) => c.to_string(),
            None => marker.to_owned(),
        }
    }
}

/// Trains on `counts`; `on_merge(k, merge, max_merges)` follows progress
/// and stops training by returning false.
pub fn train(
    counts: &WordCounts,
    req: &TrainRequest,
    on_merge: impl FnMut(usize, &Merge, usize) -> bool,
) -> Result<TrainOutput> {
    if let Some(init) = &req.init {
        check_not_empty(counts)?;
        return continue_training(counts, req, init, on_merge);
    }
    let start = prepare(counts, req)?;
    finish(start, req, on_merge)
}

/// `train`, freeing the word table once the trainer has its words (the
/// table is a fifth to a quarter of training's peak memory).
pub fn train_consuming(
    counts: WordCounts,
    req: &TrainRequest,
    on_merge: impl FnMut(usize, &Merge, usize) -> bool,
) -> Result<TrainOutput> {
    if req.init.is_some() {
        return train(&counts, req, on_merge);
    }
    let start = prepare(&counts, req)?;
    drop(counts);
    finish(start, req, on_merge)
}

fn check_not_empty(counts: &WordCounts) -> Result<()> {
    if counts.is_empty() {
        return Err(Error::Training("the corpus is empty: it has no words to train on".into()));
    }
    Ok(())
}

/// What training starts from: the base vocabulary, how many of its
/// entries are symbols, and the words as symbol ids.
struct Start {
    base: Vec<Vec<u8>>,
    n_symbols: usize,
    words: Words,
}

fn prepare(counts: &WordCounts, req: &TrainRequest) -> Result<Start> {
    check_not_empty(counts)?;
    let (base, n_symbols, ids) = base_vocabulary(&[counts], req);
    let words = initial_words(counts, req, ids.as_ref());
    Ok(Start { base, n_symbols, words })
}

/// The base vocabulary of the words of all `tables` (bytes 0-255, or the
/// char model's symbols then its byte-fallback tokens), how many of its
/// entries are symbols, and (char model) the symbols' ids.
pub(crate) fn base_vocabulary(tables: &[&WordCounts], req: &TrainRequest) -> (Vec<Vec<u8>>, usize, Option<SymbolIds>) {
    match req.kind {
        ModelKind::Byte => ((0..=255u8).map(|b| vec![b]).collect(), 256, None),
        ModelKind::Char => {
            let base = char_base(tables.iter().flat_map(|t| t.iter().map(|(w, _)| w)), &req.char);
            let ids = SymbolIds::new(&base, &req.char);
            let n = base.len();
            let mut base: Vec<Vec<u8>> = base.into_iter().map(String::into_bytes).collect();
            if req.char.byte_fallback {
                base.extend((0..=255u8).map(|b| format!("<0x{b:02X}>").into_bytes()));
            }
            (base, n, Some(ids))
        }
    }
}

/// The words of `counts` as initial symbol ids (`ids`: the char model's,
/// from `base_vocabulary` over tables that include `counts`).
pub(crate) fn initial_words(counts: &WordCounts, req: &TrainRequest, ids: Option<&SymbolIds>) -> Words {
    match (req.kind, ids) {
        (ModelKind::Char, Some(ids)) => {
            let mut words = Words::default();
            for (w, c) in counts.iter() {
                words.push(c, |symbols| {
                    ids.each(w, &req.char, |s| symbols.push(s.id.expect("every symbol is in the base")))
                });
            }
            words
        }
        _ => {
            let (n, bytes, _) = counts.sizes();
            let mut words = Words::with_capacity(n, bytes);
            for (w, c) in counts.iter() {
                words.push(c, |s| s.extend(w.bytes().map(u32::from)));
            }
            words
        }
    }
}

fn finish(start: Start, req: &TrainRequest, on_merge: impl FnMut(usize, &Merge, usize) -> bool) -> Result<TrainOutput> {
    let Start { base, n_symbols, words } = start;
    let (fixed, what, symbol_text) = fixed_vocabulary(&base, n_symbols, req);
    let (merges, reason) = run_trainer(words, symbol_text, req, fixed, &what, on_merge)?;
    Ok(TrainOutput { base, n_symbols, merges, reason })
}

/// The size of the vocabulary without merges, its description for errors,
/// and the trainer's symbol texts.
pub(crate) fn fixed_vocabulary(base: &[Vec<u8>], n_symbols: usize, req: &TrainRequest) -> (u64, String, Vec<Vec<u8>>) {
    let fixed = base.len() as u64 + req.n_special;
    let what = format!(
        "the vocabulary without merges ({fixed}: {} base symbols{} + {} special tokens)",
        base.len(),
        if req.kind == ModelKind::Char && req.char.byte_fallback { " incl. 256 byte-fallback tokens" } else { "" },
        req.n_special
    );
    // byte-fallback tokens never take part in merges and must not become the
    // canonical id of a merged text that happens to spell "<0xNN>"
    let mut symbol_text = base.to_vec();
    for t in symbol_text.iter_mut().skip(n_symbols) {
        t.clear();
    }
    (fixed, what, symbol_text)
}

/// How many merges `req` asks for when the vocabulary already holds
/// `fixed` ids (`what` describes them in errors).
pub(crate) fn merge_limit(req: &TrainRequest, fixed: u64, what: &str) -> Result<usize> {
    let mut max_merges = req.num_merges.unwrap_or(u64::MAX);
    if let Some(v) = req.vocab_size {
        if v < fixed {
            return Err(Error::Training(format!("vocab_size {v} is smaller than {what}")));
        }
        max_merges = max_merges.min(v - fixed);
    }
    // ids are 32-bit, and the trainer keeps u32::MAX - 1 and u32::MAX for itself (DEAD, BARRIER)
    Ok(max_merges.min((u32::MAX as u64).saturating_sub(fixed + 1)) as usize)
}

/// Runs the trainer on `words` whose symbols are ids of `symbol_text`; the
/// vocabulary already holds `fixed` ids (`what` describes them in errors).
fn run_trainer(
    words: Words,
    symbol_text: Vec<Vec<u8>>,
    req: &TrainRequest,
    fixed: u64,
    what: &str,
    mut on_merge: impl FnMut(usize, &Merge, usize) -> bool,
) -> Result<(Vec<Merge>, StopReason)> {
    let max_merges = merge_limit(req, fixed, what)?;
    let trainer = Trainer::with_order(words, symbol_text, req.tie_break, req.kind == ModelKind::Char, text_order(req))?;
    let config = TrainConfig {
        tie_break: req.tie_break,
        min_frequency: req.min_frequency,
        max_merges,
        max_token_length: req.max_token_length,
    };
    let total = config.max_merges;
    Ok(trainer.run(&config, |k, m| on_merge(k, m, total)))
}

/// The byte order of the max-string rule: in the byte model, GPT-2's
/// printable form (the strings HF compares); else byte value order.
pub(crate) fn text_order(req: &TrainRequest) -> Option<[u8; 256]> {
    (req.kind == ModelKind::Byte).then(gpt2_order)
}

/// Rank of each byte value when bytes are compared as GPT-2's
/// byte-to-unicode characters: printable bytes (`!`-`~`, `¡`-`¬`, `®`-`ÿ`)
/// are themselves, the others come after them as U+0100 + k, in byte order.
pub fn gpt2_order() -> [u8; 256] {
    let printable = |b: u8| (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let mut order = [0u8; 256];
    let mut rank = 0u16;
    for b in (0..=255u8).filter(|&b| printable(b)).chain((0..=255u8).filter(|&b| !printable(b))) {
        order[b as usize] = rank as u8;
        rank += 1;
    }
    order
}

/// Continued training: the words start as `init` would segment them in
/// training (its merges applied in order); characters outside its
/// vocabulary are barriers that never merge.
fn continue_training(
    counts: &WordCounts,
    req: &TrainRequest,
    init: &Init,
    on_merge: impl FnMut(usize, &Merge, usize) -> bool,
) -> Result<TrainOutput> {
    let n = init.tokens.len();
    let mut text_ids: FxHashMap<&[u8], u32> = FxHashMap::default();
    for (id, t) in init.tokens.iter().enumerate() {
        if let Some(t) = t {
            text_ids.entry(t.as_slice()).or_insert(id as u32);
        }
    }
    let canonical = |t: Option<&Vec<u8>>| t.and_then(|t| text_ids.get(t.as_slice()).copied());
    let mut rules = Vec::with_capacity(init.merges.len());
    for &(l, r, id) in &init.merges {
        let result = canonical(init.tokens.get(id as usize).and_then(Option::as_ref))
            .ok_or_else(|| Error::Training(format!("merge result id {id} has no token in the initial tokenizer")))?;
        rules.push((l, r, result));
    }
    let merges = CharMerges::new(&rules);
    let mut symbols: Vec<Sym> = Vec::new();
    let mut words = Words::with_capacity(counts.len(), 0);
    for (w, c) in counts.iter() {
        symbols.clear();
        match req.kind {
            ModelKind::Byte => {
                for b in w.bytes() {
                    let id = text_ids.get(&[b][..]).copied().unwrap_or(BARRIER);
                    symbols.push(Sym { id, len: 1 });
                }
            }
            ModelKind::Char => {
                for s in char_symbols(w, &req.char) {
                    let id = text_ids.get(s.as_bytes()).copied().unwrap_or(BARRIER);
                    symbols.push(Sym { id, len: 1 });
                }
            }
        }
        merges.apply(&mut symbols, None);
        words.push(c, |s| s.extend(symbols.iter().map(|s| s.id)));
    }
    let what = format!("the initial tokenizer's vocabulary ({n} ids)");
    let symbol_text: Vec<Vec<u8>> = init.tokens.iter().map(|t| t.clone().unwrap_or_default()).collect();
    let (merges, reason) = run_trainer(words, symbol_text, req, n as u64, &what, on_merge)?;
    Ok(TrainOutput { base: Vec::new(), n_symbols: 0, merges, reason })
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
