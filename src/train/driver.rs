//! Training a model from a word-count table: the request, the base
//! vocabulary and initial words, the merge limit, continued training, and
//! the run of the merge loop (`crate::train`).

use crate::model::{CharMerges, Sym};
use crate::error::{Error, Result};
use crate::train::trainer::{Merge, StopReason, TieBreak, TrainConfig, Trainer, Words, BARRIER};
use crate::vocab::{char_base, char_symbols, CharSpec, ModelKind, SymbolIds};
use crate::train::words::WordCounts;
use rustc_hash::FxHashMap;

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
pub(crate) fn gpt2_order() -> [u8; 256] {
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
