//! The word map: each part of a text that `merge.rs` merges, cached per
//! thread and per model (keyed by `new_cache_id`) (parts shorter than `CACHE_MAX_LEN` bytes, at most
//! `CACHE_CAPACITY` per model, emptied when full); a model's entries go
//! when it is dropped.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

const CACHE_MAX_LEN: usize = 256;
const CACHE_CAPACITY: usize = 1 << 16;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
type Cache = FxHashMap<u64, FxHashMap<Box<str>, Box<[(u32, u32)]>>>;
thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(FxHashMap::default());
}

pub fn clear_caches() {
    CACHE.with(|c| c.borrow_mut().clear());
}

/// A new model's key in the word map.
pub(super) fn new_cache_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Extends `syms` with the merged symbols of the part `w` of a text, from
/// the model's map, or by `run` (which leaves them in `word`), then kept.
pub(super) fn merged(
    cache_id: u64,
    w: &str,
    syms: &mut Vec<(u32, u32)>,
    word: &mut Vec<(u32, u32)>,
    run: impl FnOnce(&mut Vec<(u32, u32)>),
) {
    if w.len() >= CACHE_MAX_LEN {
        run(word);
        syms.extend_from_slice(word);
        return;
    }
    CACHE.with(|cell| {
        let mut all = cell.borrow_mut();
        let local = all.entry(cache_id).or_default();
        if let Some(hit) = local.get(w) {
            syms.extend_from_slice(hit);
            return;
        }
        run(word);
        syms.extend_from_slice(word);
        if local.len() >= CACHE_CAPACITY {
            local.clear();
        }
        local.insert(w.into(), word.clone().into_boxed_slice());
    });
}

/// Drops a model's entries (when the model is dropped).
pub(super) fn forget(cache_id: u64) {
    let _ = CACHE.try_with(|c| c.borrow_mut().remove(&cache_id));
}
