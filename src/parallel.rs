//! Parallel map over a slice with rayon, falling back to a plain loop in a
//! process forked after rayon's threads started: the child has none of
//! them, and waiting on the pool would hang forever (the classic
//! fork-after-threads deadlock).

use rayon::prelude::*;
use std::sync::OnceLock;

/// The process that started rayon's global pool.
static POOL_PID: OnceLock<u32> = OnceLock::new();

fn pool_usable() -> bool {
    *POOL_PID.get_or_init(std::process::id) == std::process::id()
}

/// `items.iter().map(f).collect()`, in parallel when it is safe.
pub fn map<'a, T: Sync, R: Send>(items: &'a [T], f: impl Fn(&'a T) -> R + Sync + Send) -> Vec<R> {
    if items.len() > 1 && pool_usable() {
        items.par_iter().map(f).collect()
    } else {
        items.iter().map(f).collect()
    }
}

/// `f(start, share)` of each share of `items` (`chunk` items each; `start`: the index of its first item), in
/// parallel when it is safe, the results in the items' order.
pub fn map_chunks<'a, T: Sync, R: Send>(
    items: &'a [T],
    chunk: usize,
    f: impl Fn(usize, &'a [T]) -> R + Sync + Send,
) -> Vec<R> {
    let shares: Vec<(usize, &'a [T])> = items.chunks(chunk).enumerate().map(|(k, c)| (k * chunk, c)).collect();
    map(&shares, |&(start, share)| f(start, share))
}

/// Number of threads work is spread over (1 after a fork).
pub fn threads() -> usize {
    if pool_usable() {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// `items.iter_mut().map(f).collect()`, in parallel when it is safe (each
/// item is handed to one task only, so items may hold disjoint `&mut`
/// parts of one buffer).
pub fn map_mut<T: Send, R: Send>(items: &mut [T], f: impl Fn(&mut T) -> R + Sync + Send) -> Vec<R> {
    if items.len() > 1 && pool_usable() {
        items.par_iter_mut().map(f).collect()
    } else {
        items.iter_mut().map(f).collect()
    }
}

/// Sorts `v` (parallel merge sort when it is large and safe; the result is
/// the same either way).
pub fn sort_unstable<T: Ord + Send>(v: &mut [T]) {
    if v.len() >= 1 << 15 && pool_usable() && rayon::current_num_threads() > 1 {
        v.par_sort_unstable();
    } else {
        v.sort_unstable();
    }
}
