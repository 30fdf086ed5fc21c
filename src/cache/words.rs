//! The word map: the merged symbols of a word (a pre-tokenized part of a
//! text) per thread and per model, for what the slot cache does not hold:
//! the pipeline BPE's words when offsets are wanted or its pieces are not
//! raw bytes, and SentencePiece's parts. One map for both models, bounded in
//! bytes by `BUDGET_SHARE` times the piece cache's per-thread budget
//! (`set_cache_bytes`; 0 turns it off), emptied when full, emptied by `clear_all` and by a new budget
//! (checked lazily, as the slot cache is), and its bytes counted in `held_bytes` for `cache_info`.
//! A model's entries go when it is dropped.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Each thread's word map holds at most this many times the piece cache's
/// budget: a word costs more than a slot (its text, its symbols and two
/// allocations), and one megabyte of multilingual text made a 5 MB map that
/// every warm pass reuses (a map of the slot budget alone, emptied when
/// full, halved SentencePiece's speed on it).
pub(crate) const BUDGET_SHARE: usize = 4;

/// The word map's budget per thread, bytes.
pub(crate) fn budget() -> usize {
    super::cache_bytes().saturating_mul(BUDGET_SHARE)
}

/// Words of this many bytes or more are never kept.
pub(crate) const MAX_WORD: usize = 256;

/// Bytes an entry costs besides its text and symbols (the map's slot and
/// the two boxes' allocation headers), counted against the budget.
const ENTRY_OVERHEAD: usize = 64;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Bytes held by every thread's word map.
static HELD: AtomicUsize = AtomicUsize::new(0);

type Symbols = Box<[(u32, u32)]>;

#[derive(Default)]
struct Model {
    held: usize,
    words: FxHashMap<Box<str>, Symbols>,
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
        match maps.models.get(&id).and_then(|m| m.words.get(w)) {
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
    let cost = w.len() + word.len() * std::mem::size_of::<(u32, u32)>() + ENTRY_OVERHEAD;
    let _ = MAPS.try_with(|cell| {
        let Ok(mut maps) = cell.try_borrow_mut() else { return };
        if maps.held + cost > budget {
            maps.clear(); // emptied when full
        }
        if cost > budget {
            return;
        }
        maps.held += cost;
        HELD.fetch_add(cost, Ordering::Relaxed);
        let model = maps.models.entry(id).or_default();
        model.held += cost;
        model.words.insert(w.into(), word.as_slice().into());
    });
    Ok(())
}

/// Drops a model's entries on this thread (when the model is dropped).
pub(crate) fn forget(id: u64) {
    let _ = MAPS.try_with(|cell| {
        if let Ok(mut maps) = cell.try_borrow_mut() {
            if let Some(model) = maps.models.remove(&id) {
                maps.held -= model.held;
                HELD.fetch_sub(model.held, Ordering::Relaxed);
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
            let sum = MAPS.with(|m| m.borrow().models.values().map(|m| m.held).sum::<usize>());
            assert_eq!(MAPS.with(|m| m.borrow().held), sum);
            break;
        }
    }
}
