//! Long words of (id, byte length) symbols merged by pair ranks, Hugging
//! Face's and SentencePiece's rule (`merge_pairs`): the bucket queue
//! (`queue.rs`) on the thread's scratch, a window at a time for long words
//! (`window.rs`), the heap where ranks are too many for the queue; and short
//! words on the stack (`merge_lowest`: the string routes' and SentencePiece's;
//! the byte model and the byte-level pipeline run `ConcatRanks::merge_short`,
//! the same rule on token numbers).

use super::queue::MAX_QUEUE_RANKS;
use super::scratch::{Scratch, SCRATCH};
use super::window::{merge_in_windows, Part, PartSink, WINDOW};
use super::NONE;

/// Merges a word of (id, byte length) symbols in place, Hugging Face's and
/// SentencePiece's rule: the adjacent pair of lowest rank first, the
/// leftmost of equal ranks, until no pair has a rank; `pair(a, b)` gives
/// (rank, merged id) and is called exactly where `merge_by_heap` (below, the
/// rule's plain form) calls it, in the same order (SentencePiece records
/// its unused pieces there).
///
/// A linked list of symbols and a `RankQueue` of (rank, left position):
/// `rank_at[i]` is the rank of the pair starting at symbol i now (`NONE`:
/// no pair, or i merged away), `made[i]` its merged id, so an entry whose
/// rank differs from `rank_at` is stale. An entry whose rank matches stands
/// for the pair there now (a pair of another rank replaced it and left, or
/// an equal rank, which sorts the same). Every pair now in the word has an
/// entry, so the popped entry is the lowest (rank, position) of them: the
/// heap's choice, at each step. About linear in the word's length for any
/// word (the heap is n log n, with a cache miss per level on long words).
/// Ranks below `rank_bound` (up to `MAX_QUEUE_RANKS`, else the heap).
///
/// With `windows`, a word of `2 * WINDOW` symbols or more is merged a
/// window at a time (`window.rs`: the same result, tables in the cache);
/// `pair` is then called in another order (SentencePiece's recording of
/// unused pieces passes false).
pub(super) fn merge_pairs(word: &mut Vec<(u32, u32)>, rank_bound: usize, windows: bool, mut pair: impl FnMut(u32, u32) -> Option<(u32, u32)>) {
    let n = word.len();
    if n < 2 {
        return;
    }
    if n >= u32::MAX as usize - 1 || rank_bound > MAX_QUEUE_RANKS {
        return merge_by_heap(word, pair);
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            merge_on(word, rank_bound, windows, &mut pair, &mut s);
            s.trim(); // give back what a huge word took (merged whole)
        }
        Err(_) => merge_on(word, rank_bound, windows, &mut pair, &mut Scratch::default()),
    })
}

/// A word's merged symbols (token, length) as a window merge's sink.
impl PartSink for Vec<(u32, u32)> {
    fn take(&mut self, parts: &[Part]) {
        self.extend(parts.iter().map(|p| (p.id, p.len)));
    }
    fn forget(&mut self) {
        self.clear();
    }
}

/// `merge_pairs` on the given scratch tables.
fn merge_on(word: &mut Vec<(u32, u32)>, rank_bound: usize, windows: bool, pair: &mut impl FnMut(u32, u32) -> Option<(u32, u32)>, s: &mut Scratch) {
    let n = word.len();
    if windows && n >= 2 * WINDOW {
        let mut merged: Vec<(u32, u32)> = Vec::new();
        if windows_on(n, &|i| word[i], rank_bound, pair, s, &mut merged) {
            *word = merged;
            return;
        }
    }
    merge_linear(word, rank_bound, pair, s);
    s.keep_live(word);
}

/// The windowed merge of `merge_pairs` on the word whose symbol i is
/// `initial(i)` (i < n), its symbols made a window at a time (never all at
/// once: a 2 MB piece's take 16 MB) and the merged ones handed to `sink`.
/// False when the word is shorter than two windows or its ranks too many
/// for the queue (the sink given nothing), or a junction needs more repair
/// than `window.rs` allows (the sink told to forget what it took): the
/// caller then merges the word whole.
pub(super) fn merge_pairs_windowed(
    n: usize,
    initial: impl Fn(usize) -> (u32, u32),
    rank_bound: usize,
    mut pair: impl FnMut(u32, u32) -> Option<(u32, u32)>,
    sink: &mut impl PartSink,
) -> bool {
    if n < 2 * WINDOW || n >= u32::MAX as usize - 1 || rank_bound > MAX_QUEUE_RANKS {
        return false;
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => windows_on(n, &initial, rank_bound, &mut pair, &mut s, sink),
        Err(_) => windows_on(n, &initial, rank_bound, &mut pair, &mut Scratch::default(), sink),
    })
}

/// `merge_in_windows` of the word whose symbol i is `initial(i)`, each window merged by `merge_linear`.
fn windows_on(
    n: usize,
    initial: &impl Fn(usize) -> (u32, u32),
    rank_bound: usize,
    pair: &mut impl FnMut(u32, u32) -> Option<(u32, u32)>,
    s: &mut Scratch,
    sink: &mut impl PartSink,
) -> bool {
    let mut syms: Vec<(u32, u32)> = Vec::with_capacity(2 * WINDOW);
    let merge = &mut |a, b, out: &mut Vec<Part>| {
        syms.clear();
        syms.extend((a..b).map(initial));
        merge_linear(&mut syms, rank_bound, pair, s);
        out.extend(s.live(syms.len()).map(|i| Part { start: (a + i) as u32, id: syms[i].0, len: syms[i].1 }));
    };
    merge_in_windows(n, merge, sink)
}

/// The merging of `merge_pairs` on `word`, whole; the symbols left are
/// word[0], word[next[0]], ... until `word.len()` (in `s.next`).
fn merge_linear(word: &mut [(u32, u32)], rank_bound: usize, pair: &mut impl FnMut(u32, u32) -> Option<(u32, u32)>, s: &mut Scratch) {
    let n = word.len() as u32;
    let Scratch { queue, next, prev, rank_at, ids: made } = s;
    queue.begin(rank_bound);
    // symbol i is followed by symbol next[i]; next[i] == n for the last one
    next.clear();
    next.extend(1..=n);
    prev.clear();
    prev.extend((0..n).map(|i| i.wrapping_sub(1)));
    rank_at.clear();
    rank_at.resize(n as usize, NONE);
    made.clear();
    made.resize(n as usize, NONE);
    for i in 0..n.saturating_sub(1) {
        if let Some((rank, id)) = pair(word[i as usize].0, word[i as usize + 1].0) {
            rank_at[i as usize] = rank;
            made[i as usize] = id;
            queue.push(rank, i);
        }
    }
    while let Some((rank, i)) = queue.pop() {
        let iu = i as usize;
        if rank_at[iu] != rank {
            continue; // stale
        }
        let j = next[iu];
        let k = next[j as usize];
        word[iu] = (made[iu], word[iu].1 + word[j as usize].1);
        rank_at[j as usize] = NONE;
        next[iu] = k;
        rank_at[iu] = NONE;
        if k != n {
            prev[k as usize] = i;
        }
        // the left pair first, then the right one: the heap's order of calls
        let p = prev[iu];
        if p != u32::MAX {
            let pu = p as usize;
            rank_at[pu] = NONE;
            if let Some((rank, id)) = pair(word[pu].0, word[iu].0) {
                rank_at[pu] = rank;
                made[pu] = id;
                queue.push(rank, p);
            }
        }
        if k != n {
            if let Some((rank, id)) = pair(word[iu].0, word[k as usize].0) {
                rank_at[iu] = rank;
                made[iu] = id;
                queue.push(rank, i);
            }
        }
    }
}

/// `merge_pairs` by a heap of (rank, left, right, merged length, merged
/// id) over a linked list, n log n: SentencePiece's agenda and Hugging
/// Face's queue (an entry is stale when either symbol is gone or their
/// lengths changed). The path of ranks too many for `RankQueue`, and the
/// tests' oracle of `merge_pairs`.
pub(super) fn merge_by_heap(word: &mut Vec<(u32, u32)>, mut pair: impl FnMut(u32, u32) -> Option<(u32, u32)>) {
    use std::cmp::Reverse;
    let n = word.len();
    let mut prev: Vec<isize> = (0..n as isize).map(|i| i - 1).collect();
    let mut next: Vec<isize> = (0..n as isize).map(|i| if i + 1 < n as isize { i + 1 } else { -1 }).collect();
    let mut heap: std::collections::BinaryHeap<Reverse<(u32, usize, usize, u32, u32)>> =
        std::collections::BinaryHeap::with_capacity(n);
    let mut push = |heap: &mut std::collections::BinaryHeap<_>, word: &[(u32, u32)], l: usize, r: usize| {
        if let Some((rank, id)) = pair(word[l].0, word[r].0) {
            heap.push(Reverse((rank, l, r, word[l].1 + word[r].1, id)));
        }
    };
    for i in 1..n {
        push(&mut heap, word, i - 1, i);
    }
    while let Some(Reverse((_, l, r, size, id))) = heap.pop() {
        if word[l].1 == 0 || word[r].1 == 0 || word[l].1 + word[r].1 != size {
            continue;
        }
        word[l] = (id, size);
        word[r].1 = 0;
        let nn = next[r];
        next[l] = nn;
        if nn >= 0 {
            prev[nn as usize] = l as isize;
        }
        if prev[l] >= 0 {
            push(&mut heap, word, prev[l] as usize, l);
        }
        if nn >= 0 {
            push(&mut heap, word, l, nn as usize);
        }
    }
    word.retain(|s| s.1 != 0);
}

/// Merges a short word of (id, length) symbols in place: the lowest-ranked
/// adjacent pair first, the leftmost on ties, until none is left; `pair(a, b)`
/// gives (rank, merged id). For the short words the callers send (`merge_lowest`).
pub(crate) fn merge_lowest_rank(word: &mut Vec<(u32, u32)>, pair: impl Fn(u32, u32) -> Option<(u32, u32)>) {
    const STACK: usize = 64;
    let mut on_stack = [(NONE, 0u32); STACK];
    let mut on_heap = Vec::new();
    let pairs: &mut [(u32, u32)] = if word.len() <= STACK {
        &mut on_stack[..word.len()]
    } else {
        on_heap.resize(word.len(), (NONE, 0));
        &mut on_heap
    };
    let len = merge_lowest(word, pairs, |a, b| pair(a.0, b.0), |a, b, _, id| (id, a.1 + b.1));
    word.truncate(len);
}

/// Merges `syms` in place, the adjacent pair of lowest rank first and the
/// leftmost of equal ranks, until no pair has one: `pair(a, b)` gives a
/// pair's (rank, what its merge needs), `merge(a, b, rank, that)` the
/// merged symbol. `pairs` (as long as `syms`) is room for the pairs found;
/// each pair is looked up once, and again only when a merge changes one of
/// its two symbols (looking every pair up on every round was most of
/// SentencePiece's time on new words). Quadratic in its scans: for short
/// words (the string route's and SentencePiece's; `ConcatRanks::merge_short`'s
/// token numbers). Returns the number of symbols left, at the front of `syms`.
#[inline(always)]
pub(crate) fn merge_lowest<S: Copy, F: Copy>(
    syms: &mut [S],
    pairs: &mut [(u32, F)],
    pair: impl Fn(S, S) -> Option<(u32, F)>,
    merge: impl Fn(S, S, u32, F) -> S,
) -> usize {
    if syms.len() <= LINKED {
        merge_lowest_linked::<LINKED, S, F>(syms, pairs, pair, merge)
    } else {
        merge_lowest_shifting(syms, pairs, pair, merge)
    }
}

/// Longest word `merge_lowest` merges linked in place.
const LINKED: usize = 64;

/// `merge_lowest` of at most `N` symbols (`N < 256`): they stay where they are, linked in order (a merged
/// pair's right symbol is unlinked, its pair's rank set to `NONE`), and are packed to the front once at
/// the end, where the shifting scan moved the symbols and pairs after each merge (a `memmove` call each).
#[inline(always)]
pub(crate) fn merge_lowest_linked<const N: usize, S: Copy, F: Copy>(
    syms: &mut [S],
    pairs: &mut [(u32, F)],
    pair: impl Fn(S, S) -> Option<(u32, F)>,
    merge: impl Fn(S, S, u32, F) -> S,
) -> usize {
    const { assert!(N < 256) };
    let n = syms.len();
    assert!(n <= N && pairs.len() >= n);
    if n < 2 {
        return n;
    }
    let look = |pairs: &mut [(u32, F)], k: usize, a: S, b: S| match pair(a, b) {
        Some(found) => pairs[k] = found,
        None => pairs[k].0 = NONE,
    };
    let (mut next, mut prev) = ([0u8; N], [0u8; N]);
    for k in 0..n {
        next[k] = (k + 1) as u8;
        prev[k] = (k as u8).wrapping_sub(1); // 255 before the first: no symbol
    }
    // pairs[k]: the pair of live symbols k and next[k]
    for k in 0..n - 1 {
        look(pairs, k, syms[k], syms[k + 1]);
    }
    loop {
        // the lowest rank, the leftmost of equal ones (symbols keep their order by index)
        let (mut best, mut at) = (NONE, 0);
        for (k, &(rank, _)) in pairs[..n - 1].iter().enumerate() {
            if rank < best {
                best = rank;
                at = k;
            }
        }
        if best == NONE {
            break;
        }
        let right = next[at] as usize;
        let after = next[right] as usize;
        syms[at] = merge(syms[at], syms[right], best, pairs[at].1);
        pairs[right].0 = NONE;
        next[at] = after as u8;
        if after < n {
            prev[after] = at as u8;
            look(pairs, at, syms[at], syms[after]);
        } else {
            pairs[at].0 = NONE;
        }
        let before = prev[at] as usize;
        if before < n {
            look(pairs, before, syms[before], syms[at]);
        }
    }
    let (mut len, mut k) = (0, 0);
    while k < n {
        syms[len] = syms[k];
        len += 1;
        k = next[k] as usize;
    }
    len
}

/// `merge_lowest` moving the symbols after each merge: words longer than `LINKED`, and the tests' oracle.
pub(crate) fn merge_lowest_shifting<S: Copy, F: Copy>(
    syms: &mut [S],
    pairs: &mut [(u32, F)],
    pair: impl Fn(S, S) -> Option<(u32, F)>,
    merge: impl Fn(S, S, u32, F) -> S,
) -> usize {
    let n = syms.len();
    if n < 2 {
        return n;
    }
    for k in 0..n - 1 {
        if let Some(found) = pair(syms[k], syms[k + 1]) {
            pairs[k] = found;
        } else {
            pairs[k].0 = NONE;
        }
    }
    let mut len = n; // symbols left; pairs[..len - 1] are theirs
    loop {
        let mut best = (NONE, 0);
        for (k, &(rank, _)) in pairs[..len - 1].iter().enumerate() {
            if rank < best.0 {
                best = (rank, k);
            }
        }
        let (rank, at) = best;
        if rank == NONE {
            return len;
        }
        syms[at] = merge(syms[at], syms[at + 1], rank, pairs[at].1);
        syms.copy_within(at + 2..len, at + 1);
        pairs.copy_within(at + 1..len - 1, at);
        len -= 1;
        for k in [at.wrapping_sub(1), at] {
            if k < len - 1 {
                match pair(syms[k], syms[k + 1]) {
                    Some(found) => pairs[k] = found,
                    None => pairs[k].0 = NONE,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// A random pair table over `symbols` symbols: (left, right) -> (rank,
    /// merged symbol), ranks from `ranks` values (so equal ranks for
    /// different pairs, as SentencePiece's equal scores give).
    fn random_pairs(rng: &mut Rng, symbols: usize, count: usize, ranks: usize) -> rustc_hash::FxHashMap<(u32, u32), (u32, u32)> {
        let mut pairs = rustc_hash::FxHashMap::default();
        for _ in 0..count {
            let (a, b) = (rng.below(symbols) as u32, rng.below(symbols) as u32);
            pairs.insert((a, b), (rng.below(ranks) as u32, rng.below(symbols) as u32));
        }
        pairs
    }

    #[test]
    fn merge_pairs_is_the_heap_and_the_scan() {
        // random tables and words (long runs of one or two symbols among
        // them); the bucket queue, the heap and the quadratic scan
        // (`merge_lowest_rank`) give the same symbols, and the queue looks
        // pairs up exactly as the heap does (SentencePiece records unused
        // pieces there)
        let mut rng = Rng(0xC0FF_EE12_3456_789B);
        for round in 0..300 {
            let symbols = 2 + rng.below(12);
            let (count, ranks) = (1 + rng.below(symbols * symbols), 1 + rng.below(40));
            let pairs = random_pairs(&mut rng, symbols, count, ranks);
            for _ in 0..8 {
                let n = 1 + rng.below([60, 400, 3000][round % 3]);
                let word: Vec<(u32, u32)> = match rng.below(3) {
                    0 => vec![(rng.below(symbols) as u32, 1); n],
                    1 => {
                        let unit: Vec<u32> = (0..1 + rng.below(3)).map(|_| rng.below(symbols) as u32).collect();
                        unit.iter().cycle().take(n).map(|&s| (s, 1 + (s % 3))).collect()
                    }
                    _ => (0..n).map(|_| (rng.below(symbols) as u32, 1 + rng.below(4) as u32)).collect(),
                };
                let (mut fast, mut slow, mut scan) = (word.clone(), word.clone(), word.clone());
                let (mut fast_calls, mut slow_calls) = (Vec::new(), Vec::new());
                merge_pairs(&mut fast, symbols, false, |a, b| {
                    fast_calls.push((a, b));
                    pairs.get(&(a, b)).copied()
                });
                merge_by_heap(&mut slow, |a, b| {
                    slow_calls.push((a, b));
                    pairs.get(&(a, b)).copied()
                });
                merge_lowest_rank(&mut scan, |a, b| pairs.get(&(a, b)).copied());
                assert_eq!(fast, slow, "round {round}, word {word:?}");
                assert_eq!(fast, scan, "round {round}");
                assert_eq!(fast_calls, slow_calls, "round {round}");
            }
        }
    }

    #[test]
    fn long_words_merge_in_windows_as_whole() {
        // words of 2 to 5 windows: merge_pairs (windows on) == the heap
        use crate::model::window::AppendIds;
        let mut rng = Rng(0x0DDB_A11_5EED);
        let mut gave_up = 0;
        for round in 0..40 {
            let symbols = 2 + rng.below(6);
            let (count, ranks) = (1 + rng.below(symbols * symbols), 1 + rng.below(40));
            let pairs = random_pairs(&mut rng, symbols + 6, count, ranks);
            let n = 2 * WINDOW + rng.below(3 * WINDOW);
            let word: Vec<(u32, u32)> = match round % 3 {
                0 => vec![(rng.below(symbols) as u32, 1); n],
                1 => {
                    let unit: Vec<u32> = (0..1 + rng.below(4)).map(|_| rng.below(symbols) as u32).collect();
                    unit.iter().cycle().take(n).map(|&s| (s, 1 + (s % 3))).collect()
                }
                _ => (0..n).map(|_| (rng.below(symbols) as u32, 1 + rng.below(4) as u32)).collect(),
            };
            let (mut fast, mut slow) = (word.clone(), word.clone());
            merge_pairs(&mut fast, symbols, true, |a, b| pairs.get(&(a, b)).copied());
            merge_by_heap(&mut slow, |a, b| pairs.get(&(a, b)).copied());
            assert_eq!(fast, slow, "round {round}");
            // the same word made a window at a time, its ids appended after what the sink held
            let mut ids = vec![7];
            let mut sink = AppendIds::new(&mut ids);
            if merge_pairs_windowed(n, |i| word[i], symbols, |a, b| pairs.get(&(a, b)).copied(), &mut sink) {
                assert_eq!(ids[1..], slow.iter().map(|s| s.0).collect::<Vec<_>>()[..], "round {round}");
            } else {
                assert_eq!(ids, [7], "round {round}: a merge that gave up left ids behind");
                gave_up += 1;
            }
        }
        assert!(gave_up < 20, "{gave_up}");
    }
}
