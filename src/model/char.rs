//! The char model: merges applied in training order (the seeds' rule) or
//! subword-nmt's lowest-rank rule, by a scan for short words and a bucket
//! queue or heap for long ones, with dropout.

use super::scratch::{Scratch, SCRATCH};
use super::dropout::Dropout;
use super::queue::{RankQueue, MAX_QUEUE_RANKS};
use super::window::{merge_in_windows, Part, PartSink, WINDOW};
use super::NONE;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Merge rules of the char model: (left, right) -> [(rank, new id)], ranks
/// ascending (a pair can recur when a later merge recreates one of its
/// symbols from other parts).
#[derive(Debug, Clone, Default)]
pub(crate) struct CharMerges {
    rules: FxHashMap<(u32, u32), Vec<(u32, u32)>>,
    /// subword-nmt's rule instead of the sequential one: merge the pair of
    /// lowest rank again and again, earlier ranks included.
    lowest_rank: bool,
    /// Number of merges: ranks are below it.
    rank_bound: usize,
}

impl CharMerges {
    /// From the merges (left id, right id, new id) in training order.
    pub(crate) fn new(merges: &[(u32, u32, u32)]) -> Self {
        let mut rules: FxHashMap<(u32, u32), Vec<(u32, u32)>> = FxHashMap::default();
        for (rank, &(l, r, id)) in merges.iter().enumerate() {
            rules.entry((l, r)).or_default().push((rank as u32, id));
        }
        CharMerges { rules, lowest_rank: false, rank_bound: merges.len() }
    }

    /// Switches to subword-nmt's `apply-bpe` rule: at each step the adjacent
    /// pair of lowest rank (its first rank) is merged at all its
    /// non-overlapping occurrences, left to right. It differs from the
    /// sequential rule only when a merge makes a symbol an earlier merge uses.
    pub(crate) fn with_lowest_rank(mut self, on: bool) -> Self {
        self.lowest_rank = on;
        self
    }

    /// The lowest rank a pair formed by a merge of rank `rank` may take.
    fn floor_after(&self, rank: u32) -> u32 {
        if self.lowest_rank {
            0
        } else {
            rank + 1
        }
    }

    /// The first rule for this pair at or after `min_rank`.
    fn rule(&self, pair: (u32, u32), min_rank: u32) -> Option<(u32, u32)> {
        self.rules.get(&pair)?.iter().copied().find(|&(rank, _)| rank >= min_rank)
    }

    /// Applies the merges to `symbols` in place, with sequential semantics:
    /// after merge `r` has been applied, merges of rank <= `r` never apply
    /// again, even if a new occurrence of their pair appears. Each symbol
    /// carries the length of the text it came from (summed on merging).
    /// With `dropout`, each occurrence is skipped with its probability.
    pub(crate) fn apply(&self, symbols: &mut Vec<Sym>, dropout: Option<&mut Dropout>) {
        match dropout {
            Some(rng) if self.lowest_rank => self.apply_lowest_rank_dropout(symbols, rng),
            dropout if symbols.len() > LONG_WORD => self.apply_long(symbols, dropout),
            dropout => self.apply_short(symbols, dropout),
        }
    }

    /// `apply` by scanning the word once per merge that applies: fastest
    /// for short words, O(length x merges) for long ones.
    fn apply_short(&self, symbols: &mut Vec<Sym>, mut dropout: Option<&mut Dropout>) {
        let mut min_rank = 0u32;
        let mut scratch: Vec<Sym> = Vec::with_capacity(symbols.len());
        loop {
            let mut best: Option<(u32, (u32, u32), u32)> = None;
            for w in symbols.windows(2) {
                if let Some((rank, id)) = self.rule((w[0].id, w[1].id), min_rank) {
                    if best.is_none_or(|b| rank < b.0) {
                        best = Some((rank, (w[0].id, w[1].id), id));
                    }
                }
            }
            let Some((rank, (a, b), id)) = best else { break };
            scratch.clear();
            let mut i = 0;
            while i < symbols.len() {
                if i + 1 < symbols.len()
                    && symbols[i].id == a
                    && symbols[i + 1].id == b
                    && !dropout.as_deref_mut().is_some_and(Dropout::drop_merge)
                {
                    scratch.push(Sym { id, len: symbols[i].len + symbols[i + 1].len });
                    i += 2;
                } else {
                    scratch.push(symbols[i]);
                    i += 1;
                }
            }
            std::mem::swap(symbols, &mut scratch);
            min_rank = self.floor_after(rank);
        }
    }

    /// subword-nmt's rule with BPE-dropout, as `apply-bpe --dropout` does
    /// it: at each step every pair that has a rule is dropped or kept (left
    /// to right); the kept pair of lowest rank is merged where it was kept;
    /// when every pair is dropped, the word is done.
    fn apply_lowest_rank_dropout(&self, symbols: &mut Vec<Sym>, rng: &mut Dropout) {
        let mut kept: Vec<(u32, usize, u32)> = Vec::new();
        let mut scratch: Vec<Sym> = Vec::with_capacity(symbols.len());
        loop {
            kept.clear();
            for (i, w) in symbols.windows(2).enumerate() {
                if let Some((rank, id)) = self.rule((w[0].id, w[1].id), 0) {
                    if !rng.drop_merge() {
                        kept.push((rank, i, id));
                    }
                }
            }
            let Some(&(best, _, id)) = kept.iter().min_by_key(|k| k.0) else { break };
            scratch.clear();
            let mut i = 0;
            for &(_, j, _) in kept.iter().filter(|k| k.0 == best) {
                if j < i {
                    continue; // overlaps the occurrence just merged
                }
                scratch.extend_from_slice(&symbols[i..j]);
                scratch.push(Sym { id, len: symbols[j].len + symbols[j + 1].len });
                i = j + 2;
            }
            scratch.extend_from_slice(&symbols[i..]);
            std::mem::swap(symbols, &mut scratch);
        }
    }
}

/// Words longer than this (in symbols) are merged with a bucket queue.
const LONG_WORD: usize = 32;

impl CharMerges {
    /// `apply` for long words: a linked list of symbols and a bucket queue
    /// of (rank, position) (`RankQueue`), popped in (rank, position) order,
    /// which applies each merge to the whole word left to right before the
    /// next one, as the sequential rule does; a pair formed by a merge of
    /// rank r is only eligible for ranks after r. `rank_at[i]` is the rank
    /// of the entry queued for position i (`NONE`: none), so a stale entry
    /// is one whose rank differs. About linear in the word's length.
    fn apply_long(&self, symbols: &mut Vec<Sym>, dropout: Option<&mut Dropout>) {
        // subword-nmt's rule merges a rank's occurrences as one step, which the heap does
        if self.lowest_rank || symbols.len() >= u32::MAX as usize - 1 || self.rank_bound > MAX_QUEUE_RANKS {
            return self.apply_heap(symbols, dropout);
        }
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut s) => {
                self.apply_on(symbols, dropout, &mut s);
                s.trim(); // give back what a huge word took (merged whole)
            }
            Err(_) => self.apply_on(symbols, dropout, &mut Scratch::default()),
        })
    }

    /// `apply_long` on the given scratch tables. Without dropout, a word of
    /// `2 * WINDOW` symbols or more is merged a window at a time
    /// (`window.rs`, whose proof holds for this rule too: merges go in rank
    /// order, each over the word left to right, so a span's state at each
    /// rank is its own as long as no merge crosses its ends).
    fn apply_on(&self, syms: &mut Vec<Sym>, dropout: Option<&mut Dropout>, s: &mut Scratch) {
        let n = syms.len();
        if dropout.is_none() && n >= 2 * WINDOW {
            let mut part: Vec<Sym> = Vec::with_capacity(2 * WINDOW);
            let mut merged: Vec<Sym> = Vec::new();
            let merge = &mut |a, b, out: &mut Vec<Part>| {
                part.clear();
                part.extend_from_slice(&syms[a..b]);
                self.apply_linear(&mut part, None, s);
                out.extend(s.live(part.len()).map(|i| Part { start: (a + i) as u32, id: part[i].id, len: part[i].len }));
            };
            if merge_in_windows(n, merge, &mut merged) {
                *syms = merged;
                return;
            }
        }
        self.apply_linear(syms, dropout, s);
        s.keep_live(syms);
    }

    /// The merging of `apply_long` on `syms` whole; the symbols left are
    /// syms[0], syms[next[0]], ... until `syms.len()` (in `s.next`).
    fn apply_linear(&self, syms: &mut [Sym], mut dropout: Option<&mut Dropout>, s: &mut Scratch) {
        let n = syms.len() as u32;
        let Scratch { queue, next, prev, rank_at, .. } = s;
        queue.begin(self.rank_bound);
        // symbol i is followed by symbol next[i]; next[i] == n for the last one
        next.clear();
        next.extend(1..=n);
        prev.clear();
        prev.extend((0..n).map(|i| i.wrapping_sub(1)));
        rank_at.clear();
        rank_at.resize(n as usize, NONE);
        // queues the first rule at or after min_rank for the pair starting at i
        let push = |queue: &mut RankQueue, rank_at: &mut [u32], syms: &[Sym], next: &[u32], i: u32, min_rank: u32| {
            let j = next[i as usize];
            rank_at[i as usize] = NONE;
            if j != n {
                if let Some((rank, _)) = self.rule((syms[i as usize].id, syms[j as usize].id), min_rank) {
                    rank_at[i as usize] = rank;
                    queue.push(rank, i);
                }
            }
        };
        for i in 0..n {
            push(queue, rank_at, syms, next, i, 0);
        }
        while let Some((rank, i)) = queue.pop() {
            if rank_at[i as usize] != rank {
                continue; // stale
            }
            let j = next[i as usize];
            let id = match self.rule((syms[i as usize].id, syms[j as usize].id), rank) {
                Some((r, id)) if r == rank => id,
                _ => continue, // cannot happen: rank_at says this rule applies here
            };
            if dropout.as_deref_mut().is_some_and(Dropout::drop_merge) {
                // skipped: the pair may still apply at a later rank of the same pair
                push(queue, rank_at, syms, next, i, rank + 1);
                continue;
            }
            syms[i as usize] = Sym { id, len: syms[i as usize].len + syms[j as usize].len };
            rank_at[j as usize] = NONE;
            let k = next[j as usize];
            next[i as usize] = k;
            if k != n {
                prev[k as usize] = i;
            }
            push(queue, rank_at, syms, next, i, rank + 1);
            let p = prev[i as usize];
            if p != u32::MAX {
                push(queue, rank_at, syms, next, p, rank + 1);
            }
        }
    }

    /// `apply` with a heap of (rank, position) over a linked list, n log n
    /// (the long-word path for subword-nmt's rule and when there are too
    /// many merges for `RankQueue`'s rank-indexed tables, and the tests'
    /// second oracle). The occurrences of the lowest rank are taken from
    /// the heap together and merged left to right before any pair they
    /// form is queued: that is one step of both rules (under the sequential
    /// rule, a pair formed by a merge of rank r is only eligible for ranks
    /// after r). Each position's version is bumped when the pair starting
    /// there changes, which makes stale heap entries easy to skip.
    fn apply_heap(&self, symbols: &mut Vec<Sym>, mut dropout: Option<&mut Dropout>) {
        const END: usize = usize::MAX;
        let n = symbols.len();
        let mut next: Vec<usize> = (1..=n).collect();
        next[n - 1] = END;
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut version: Vec<u32> = vec![0; n];
        let mut alive: Vec<bool> = vec![true; n];
        let mut syms = symbols.clone();
        let mut heap: BinaryHeap<Reverse<(u32, usize, u32)>> = BinaryHeap::new();
        let push = |heap: &mut BinaryHeap<Reverse<(u32, usize, u32)>>, syms: &[Sym], next: &[usize], version: &[u32], i: usize, min_rank: u32| {
            let j = next[i];
            if j != END {
                if let Some((rank, _)) = self.rule((syms[i].id, syms[j].id), min_rank) {
                    heap.push(Reverse((rank, i, version[i])));
                }
            }
        };
        for i in 0..n {
            push(&mut heap, &syms, &next, &version, i, 0);
        }
        let mut step: Vec<(usize, u32)> = Vec::new();
        let mut touched: Vec<usize> = Vec::new();
        while let Some(&Reverse((rank, _, _))) = heap.peek() {
            step.clear();
            while let Some(&Reverse((r, i, v))) = heap.peek() {
                if r != rank {
                    break;
                }
                heap.pop();
                step.push((i, v));
            }
            touched.clear();
            for &(i, v) in &step {
                if version[i] != v {
                    continue; // stale, or overlapping an occurrence merged in this step
                }
                let j = next[i];
                let Some((r, id)) = self.rule((syms[i].id, syms[j].id), rank) else { continue };
                debug_assert_eq!(r, rank);
                version[i] = version[i].wrapping_add(1);
                if dropout.as_deref_mut().is_some_and(Dropout::drop_merge) {
                    // skipped: the pair may still apply at a later rank of the same pair
                    push(&mut heap, &syms, &next, &version, i, rank + 1);
                    continue;
                }
                syms[i] = Sym { id, len: syms[i].len + syms[j].len };
                version[j] = version[j].wrapping_add(1);
                alive[j] = false;
                let k = next[j];
                next[i] = k;
                if k != END {
                    prev[k] = i;
                }
                touched.push(i);
                let p = prev[i];
                if p != END {
                    version[p] = version[p].wrapping_add(1);
                    touched.push(p);
                }
            }
            let floor = self.floor_after(rank);
            for &i in &touched {
                if alive[i] {
                    version[i] = version[i].wrapping_add(1);
                    push(&mut heap, &syms, &next, &version, i, floor);
                }
            }
        }
        symbols.clear();
        let mut i = 0;
        while i != END {
            symbols.push(syms[i]);
            i = next[i];
        }
    }
}

/// A char-model symbol during segmentation: its id and the number of bytes
/// of the input text it stands for (the end-of-word marker stands for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sym {
    pub(crate) id: u32,
    pub(crate) len: u32,
}

/// A word's merged symbols as a window merge's sink.
impl PartSink for Vec<Sym> {
    fn take(&mut self, parts: &[Part]) {
        self.extend(parts.iter().map(|p| Sym { id: p.id, len: p.len }));
    }
    fn forget(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    #[test]
    fn long_and_short_char_merging_agree() {
        // symbols 0..3; merges over them, including a pair that recurs at a later rank
        let rules = [(0, 1, 4), (1, 0, 5), (4, 4, 6), (2, 3, 7), (6, 0, 8), (0, 1, 9), (5, 5, 10), (8, 7, 11)];
        let m = CharMerges::new(&rules);
        let mut rng = Rng(0x2545F4914F6CDD1D);
        for n in 1..200 {
            for _ in 0..20 {
                let word: Vec<Sym> = (0..n).map(|_| Sym { id: rng.below(4) as u32, len: 1 }).collect();
                for p in [None, Some(0.3)] {
                    let (mut a, mut b) = (word.clone(), word.clone());
                    let (mut da, mut db) = (p.map(|p| Dropout::new(p, n as u64)), p.map(|p| Dropout::new(p, n as u64)));
                    let (mut c, mut dc) = (word.clone(), p.map(|p| Dropout::new(p, n as u64)));
                    m.apply_short(&mut a, da.as_mut());
                    m.apply_long(&mut b, db.as_mut());
                    m.apply_heap(&mut c, dc.as_mut());
                    assert_eq!(a, b, "word {word:?}, dropout {p:?}");
                    assert_eq!(a, c, "word {word:?}, dropout {p:?}");
                }
            }
        }
    }

    #[test]
    fn long_words_merge_in_windows_as_whole() {
        // words of 2 to 4 windows (runs, repeated units, random symbols, an
        // end-of-word symbol of no bytes) under random rules, recurring pairs
        // among them: the windows (apply_long) == the heap
        let mut rng = Rng(0xC4A2_0F_11FE);
        for round in 0..30 {
            let (base, rules) = random_rules(&mut rng);
            let m = CharMerges::new(&rules);
            let n = 2 * WINDOW + rng.below(2 * WINDOW);
            let sym = |id: u32| Sym { id, len: id % 2 + 1 };
            let mut word: Vec<Sym> = match round % 3 {
                0 => vec![sym(rng.below(base as usize) as u32); n],
                1 => {
                    let unit: Vec<u32> = (0..1 + rng.below(4)).map(|_| rng.below(base as usize) as u32).collect();
                    unit.iter().cycle().take(n).map(|&id| sym(id)).collect()
                }
                _ => (0..n).map(|_| sym(rng.below(base as usize) as u32)).collect(),
            };
            word.last_mut().unwrap().len = 0;
            let (mut fast, mut slow) = (word.clone(), word.clone());
            m.apply_long(&mut fast, None);
            m.apply_heap(&mut slow, None);
            assert_eq!(fast, slow, "round {round}, rules {rules:?}");
        }
    }

    /// 2-4 base symbols and 1-40 random rules: pairs of known symbols, new ids
    /// mostly, sometimes an existing id or a pair that already has a rule.
    fn random_rules(rng: &mut Rng) -> (u32, Vec<(u32, u32, u32)>) {
        let base = 2 + rng.below(3) as u32;
        let mut known: Vec<u32> = (0..base).collect();
        let mut rules = Vec::new();
        for _ in 0..1 + rng.below(40) {
            let (l, r) = (known[rng.below(known.len())], known[rng.below(known.len())]);
            let id = if rng.below(8) == 0 { known[rng.below(known.len())] } else { base + rules.len() as u32 };
            rules.push((l, r, id));
            known.push(id);
        }
        (base, rules)
    }

    fn run_lowest(m: &CharMerges, word: &[Sym], f: impl Fn(&CharMerges, &mut Vec<Sym>)) -> Vec<Sym> {
        let mut w = word.to_vec();
        f(m, &mut w);
        w
    }

    #[test]
    fn linear_char_merging_matches_the_scan_on_random_rules() {
        // random rules over 2-4 base symbols: pairs of known symbols, new ids
        // mostly, sometimes an existing id or a pair that already has a rule
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        for round in 0..300 {
            let (base, rules) = random_rules(&mut rng);
            let m = CharMerges::new(&rules);
            // subword-nmt's rule: long words (batched heap) against the scan
            let lowest = CharMerges::new(&rules).with_lowest_rank(true);
            for _ in 0..5 {
                let n = 1 + rng.below(400);
                let word: Vec<Sym> = match rng.below(3) {
                    0 => vec![Sym { id: rng.below(base as usize) as u32, len: 1 }; n],
                    _ => (0..n).map(|_| Sym { id: rng.below(base as usize) as u32, len: 1 }).collect(),
                };
                for p in [None, Some(0.25)] {
                    let seed = rng.next();
                    let run = |f: &dyn Fn(&mut Vec<Sym>, Option<&mut Dropout>)| {
                        let mut w = word.clone();
                        f(&mut w, p.map(|p| Dropout::new(p, seed)).as_mut());
                        w
                    };
                    let want = run(&|w, d| m.apply_short(w, d));
                    assert_eq!(run(&|w, d| m.apply_long(w, d)), want, "round {round}, rules {rules:?}, dropout {p:?}");
                    assert_eq!(run(&|w, d| m.apply_heap(w, d)), want, "round {round}");
                }
                let want = run_lowest(&lowest, &word, |m, w| m.apply_short(w, None));
                assert_eq!(run_lowest(&lowest, &word, |m, w| m.apply_long(w, None)), want, "round {round}, lowest rank");
            }
        }
    }

    #[test]
    fn lowest_rank_goes_back_to_earlier_merges() {
        // subword-nmt codes "c c", "c cc", "ccc b</w>", "cc c": a=c b=b</w>
        let (c, b, cc, ccc, cccb) = (0, 1, 2, 3, 4);
        let rules = [(c, c, cc), (c, cc, ccc), (ccc, b, cccb), (cc, c, ccc)];
        let word = || [c, c, c, b].iter().map(|&id| Sym { id, len: 1 }).collect::<Vec<_>>();
        let (mut sequential, mut lowest) = (word(), word());
        CharMerges::new(&rules).apply(&mut sequential, None);
        CharMerges::new(&rules).with_lowest_rank(true).apply(&mut lowest, None);
        assert_eq!(sequential.iter().map(|s| s.id).collect::<Vec<_>>(), [ccc, b]);
        assert_eq!(lowest.iter().map(|s| s.id).collect::<Vec<_>>(), [cccb]);
    }

    #[test]
    fn char_merges_are_sequential() {
        // symbols: a=0 b=1 c=2; merges: (a,b)->3 rank0, (3,c)->4 rank1
        let m = CharMerges::new(&[(0, 1, 3), (3, 2, 4)]);
        let mut w: Vec<Sym> = [0, 1, 2, 0, 1].iter().map(|&id| Sym { id, len: 1 }).collect();
        m.apply(&mut w, None);
        assert_eq!(w, [Sym { id: 4, len: 3 }, Sym { id: 3, len: 2 }]);
    }
}
