//! The word map: the merged symbols of a word (a pre-tokenized part of a
//! text) per thread and per model, for what the slot cache does not hold:
//! the pipeline BPE's words when offsets are wanted or its pieces are not
//! raw bytes, and SentencePiece's parts. One map for both models, bounded in
//! bytes by `BUDGET_SHARE` times the piece cache's per-thread budget
//! (`set_cache_bytes`; 0 turns it off), emptied when full, emptied by `clear_all` and by a new budget
//! (checked lazily, as the slot cache is), and its bytes counted in `held_bytes` for `cache_info`.
//! A model's entries go when it is dropped.

use hashbrown::HashTable;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Each thread's word map holds at most this many times the piece cache's
/// budget: a word costs more than a slot (its text, its symbols and its
/// index entry), and one megabyte of multilingual text made a 5 MB map that
/// every warm pass reuses (a map of the slot budget alone, emptied when
/// full, halved SentencePiece's speed on it).
pub(crate) const BUDGET_SHARE: usize = 4;

/// The word map's budget per thread, bytes.
pub(crate) fn budget() -> usize {
    super::cache_bytes().saturating_mul(BUDGET_SHARE)
}

/// Words of this many bytes or more are never kept.
pub(crate) const MAX_WORD: usize = 256;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Bytes held by every thread's word map.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// One model's words: their texts one after another in `text`, their
/// symbols likewise in `symbols`, and an index of where each is. A word
/// costs no allocation of its own (two per word, and freeing them all when
/// the map was emptied, were a fifth of SentencePiece's time on new text).
#[derive(Default)]
struct Model {
    index: HashTable<Entry>,
    text: Vec<u8>,
    symbols: Vec<(u32, u32)>,
}

/// Bytes of a hashbrown table with room for `entries` entries: a power of
/// two of buckets (seven eighths of them usable from 8 on), each an entry
/// and a control byte, and a group of control bytes more.
fn index_bytes(entries: usize) -> usize {
    if entries == 0 {
        return 0;
    }
    let buckets = if entries < 8 { entries + 1 } else { (entries * 8).div_ceil(7) }.next_power_of_two();
    buckets * (std::mem::size_of::<Entry>() + 1) + 16
}

/// Where one word and its symbols are in its model's arrays.
#[derive(Clone, Copy)]
struct Entry {
    hash: u64,
    text_at: u32,
    text_len: u32,
    symbols_at: u32,
    symbols_len: u32,
}

impl Model {
    fn hash(w: &str) -> u64 {
        let mut h = FxHasher::default();
        h.write(w.as_bytes());
        h.finish()
    }

    fn get(&self, w: &str) -> Option<&[(u32, u32)]> {
        let hash = Self::hash(w);
        let e = self.index.find(hash, |e| e.hash == hash && self.text_of(e) == w.as_bytes())?;
        Some(&self.symbols[e.symbols_at as usize..(e.symbols_at + e.symbols_len) as usize])
    }

    fn text_of(&self, e: &Entry) -> &[u8] {
        &self.text[e.text_at as usize..(e.text_at + e.text_len) as usize]
    }

    /// Bytes of the arrays and the index as allocated (their spare room included).
    fn bytes(&self) -> usize {
        self.text.capacity() + self.symbols.capacity() * std::mem::size_of::<(u32, u32)>() + index_bytes(self.index.capacity())
    }

    /// At least `bytes()` once a word of `text` bytes and `symbols` symbols is kept: each array grows as a
    /// `Vec` does (to twice its room, at least 8 bytes or 4 symbols), the index as hashbrown's tables do
    /// (room for 3, 7, 14, 28, ... entries).
    fn bytes_with(&self, text: usize, symbols: usize) -> usize {
        let grown = |len: usize, room: usize, more: usize, least: usize| {
            if len + more <= room { room } else { (2 * room).max(len + more).max(least) }
        };
        let room = self.index.capacity();
        let entries = if self.index.len() < room { room } else { (2 * room + 1).max(3) };
        grown(self.text.len(), self.text.capacity(), text, 8)
            + grown(self.symbols.len(), self.symbols.capacity(), symbols, 4) * std::mem::size_of::<(u32, u32)>()
            + index_bytes(entries)
    }

    /// Keeps `w`'s symbols; false (nothing kept) when the arrays would pass what 32-bit offsets reach.
    fn insert(&mut self, w: &str, symbols: &[(u32, u32)]) -> bool {
        let (text_at, symbols_at) = (self.text.len(), self.symbols.len());
        if text_at + w.len() > u32::MAX as usize || symbols_at + symbols.len() > u32::MAX as usize {
            return false;
        }
        self.text.extend_from_slice(w.as_bytes());
        self.symbols.extend_from_slice(symbols);
        let hash = Self::hash(w);
        let e = Entry {
            hash,
            text_at: text_at as u32,
            text_len: w.len() as u32,
            symbols_at: symbols_at as u32,
            symbols_len: symbols.len() as u32,
        };
        self.index.insert_unique(hash, e, |e| e.hash);
        true
    }
}

#[derive(Default)]
struct Maps {
    /// `crate::cache`'s generation and budget when last emptied
    generation: u64,
    budget: usize,
    held: usize,
    models: FxHashMap<u64, Model>,
}

impl Maps {
    fn clear(&mut self) {
        HELD.fetch_sub(self.held, Ordering::Relaxed);
        self.held = 0;
        self.models.clear();
    }
}

impl Drop for Maps {
    fn drop(&mut self) {
        HELD.fetch_sub(self.held, Ordering::Relaxed);
    }
}

thread_local! {
    static MAPS: RefCell<Maps> = RefCell::new(Maps::default());
}

/// A new model's key in the word map.
pub(crate) fn new_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Bytes held by all threads' word maps (for the bindings' `cache_info`).
#[cfg(feature = "python")]
pub(crate) fn held_bytes() -> usize {
    HELD.load(Ordering::Relaxed)
}

/// Empties this thread's word map.
#[cfg(test)]
fn clear_this_thread() {
    let _ = MAPS.try_with(|m| m.borrow_mut().clear());
}

/// Hands `emit` the symbols of word `w` of model `id`: the map's, or those
/// `run` leaves in `word` (then kept, when the budget allows).
pub(crate) fn merged<E>(
    id: u64,
    w: &str,
    word: &mut Vec<(u32, u32)>,
    run: impl FnOnce(&mut Vec<(u32, u32)>) -> Result<(), E>,
    emit: impl FnOnce(&[(u32, u32)]),
) -> Result<(), E> {
    let budget = budget();
    if w.len() >= MAX_WORD {
        run(word)?;
        emit(word);
        return Ok(());
    }
    let mut emit = Some(emit);
    let found = MAPS.try_with(|cell| {
        let Ok(mut maps) = cell.try_borrow_mut() else { return false };
        let generation = super::generation();
        if (maps.generation, maps.budget) != (generation, budget) {
            maps.clear(); // emptied by clear_all, and on a new budget
            maps.generation = generation;
            maps.budget = budget;
        }
        if budget == 0 {
            return false;
        }
        match maps.models.get(&id).and_then(|m| m.get(w)) {
            Some(hit) => {
                emit.take().expect("emitted once")(hit);
                true
            }
            None => false,
        }
    });
    if found == Ok(true) {
        return Ok(());
    }
    run(word)?;
    emit.take().expect("emitted once")(word);
    if budget == 0 {
        return Ok(());
    }
    let _ = MAPS.try_with(|cell| {
        let Ok(mut maps) = cell.try_borrow_mut() else { return };
        // the bytes allocated, spare room included, stay within the budget: emptied when a word would pass it
        let empty = Model::default();
        let model = maps.models.get(&id).unwrap_or(&empty);
        if maps.held - model.bytes() + model.bytes_with(w.len(), word.len()) > budget {
            maps.clear();
            if empty.bytes_with(w.len(), word.len()) > budget {
                return;
            }
        }
        let model = maps.models.entry(id).or_default();
        let before = model.bytes();
        model.insert(w, word);
        let grown = model.bytes() - before; // room only grows
        maps.held += grown;
        HELD.fetch_add(grown, Ordering::Relaxed);
    });
    Ok(())
}

/// Drops a model's entries on this thread (when the model is dropped).
pub(crate) fn forget(id: u64) {
    let _ = MAPS.try_with(|cell| {
        if let Ok(mut maps) = cell.try_borrow_mut() {
            if let Some(model) = maps.models.remove(&id) {
                maps.held -= model.bytes();
                HELD.fetch_sub(model.bytes(), Ordering::Relaxed);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    fn lookup(id: u64, w: &str, runs: &mut usize) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut word = Vec::new();
        merged::<Infallible>(
            id,
            w,
            &mut word,
            |word| {
                *runs += 1;
                word.clear();
                word.extend(w.bytes().map(|b| (b as u32, 1)));
                Ok(())
            },
            |s| out.extend_from_slice(s),
        )
        .unwrap();
        out
    }

    #[test]
    fn a_model_never_allocates_more_than_its_estimate_and_finds_every_word() {
        // the budget check relies on `bytes_with` bounding what an insertion allocates
        let mut model = Model::default();
        let mut kept = Vec::new();
        for k in 0..5000u32 {
            let w = format!("w{}", k.wrapping_mul(2_654_435_761) % 100_003);
            if model.get(&w).is_some() {
                continue;
            }
            let symbols: Vec<(u32, u32)> = (0..k % 7 + 1).map(|i| (k + i, i)).collect();
            let bound = model.bytes_with(w.len(), symbols.len());
            assert!(model.insert(&w, &symbols));
            assert!(model.bytes() <= bound, "{} > {bound} after {k} words", model.bytes());
            kept.push((w, symbols));
        }
        for (w, symbols) in &kept {
            assert_eq!(model.get(w), Some(symbols.as_slice()), "{w}");
        }
        assert!(model.get("absent").is_none());
    }

    #[test]
    fn words_are_kept_per_model_within_the_budget_and_cleared() {
        // the budget is the process's default (no Rust test changes it); another test's `clear_all` may
        // empty the maps meanwhile (tests run on threads side by side): such a round is run again
        for round in 0.. {
            let generation = super::super::generation();
            let (a, b) = (new_id(), new_id());
            let mut runs = Vec::new();
            let mut count = 0;
            let want: Vec<(u32, u32)> = "word".bytes().map(|x| (x as u32, 1)).collect();
            let first = lookup(a, "word", &mut count);
            let second = lookup(a, "word", &mut count);
            runs.push(count); // 1: the second lookup is a hit
            lookup(b, "word", &mut count);
            runs.push(count); // 2: another model's entry is its own
            let long = "x".repeat(MAX_WORD);
            lookup(a, &long, &mut count);
            lookup(a, &long, &mut count);
            runs.push(count); // 4: long words are never kept
            let held = MAPS.with(|m| m.borrow().held);
            forget(a);
            lookup(a, "word", &mut count);
            runs.push(count); // 5: a forgotten model's entries are gone
            clear_this_thread();
            lookup(b, "word", &mut count);
            runs.push(count); // 6: a cleared map holds nothing
            if super::super::generation() != generation {
                assert!(round < 20, "the maps were cleared by other tests in every round");
                continue;
            }
            assert_eq!((first, second), (want.clone(), want));
            assert_eq!(runs, [1, 2, 4, 5, 6]);
            assert!(held > 0 && held <= budget());
            let sum = MAPS.with(|m| m.borrow().models.values().map(Model::bytes).sum::<usize>());
            assert_eq!(MAPS.with(|m| m.borrow().held), sum);
            break;
        }
    }
}
