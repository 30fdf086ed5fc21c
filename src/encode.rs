//! Segmenting one word (pre-tokenized piece) into token ids.
//!
//! Byte model: tiktoken's rule. A piece that is a token is that token;
//! otherwise merge the adjacent pair whose concatenated bytes have the lowest
//! id, leftmost on ties, until no concatenation is a token.
//!
//! Char model: the seeds' rule. Merges apply in training order, each over
//! the whole word left to right without overlap.

use crate::error::{Error, Result};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// BPE-dropout (Provilkov et al.): each candidate merge is skipped with
/// probability `p`. Draws come from splitmix64 seeded once per call, so a
/// seed gives the same segmentation everywhere (the reference uses the
/// same generator and draw order).
#[derive(Debug, Clone)]
pub struct Dropout {
    p: f64,
    state: u64,
}

impl Dropout {
    pub fn new(p: f64, seed: u64) -> Self {
        Dropout { p, state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True when this candidate merge is dropped.
    pub fn drop_merge(&mut self) -> bool {
        ((self.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < self.p
    }
}

/// Token bytes to id, for the byte model. When two ids share the same
/// bytes, the smaller id is the rank.
#[derive(Debug, Clone)]
pub struct ByteRanks {
    ranks: FxHashMap<Vec<u8>, u32>,
    /// Id of every single byte (tiktoken vocabularies do not use id = byte).
    byte_ids: [Option<u32>; 256],
    /// Rank of every two-byte token, indexed by `b0 << 8 | b1` (u32::MAX:
    /// none): the most frequent lookup, done without hashing.
    pair_ranks: Box<[u32]>,
}

/// Pieces up to this many bytes use the simple quadratic scan (fastest for
/// short pieces); longer ones use a heap over a linked list (n log n).
const SHORT_PIECE: usize = 128;

impl ByteRanks {
    pub fn new(tokens: impl IntoIterator<Item = (Vec<u8>, u32)>) -> Self {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        for (bytes, id) in tokens {
            ranks.entry(bytes).and_modify(|r| *r = (*r).min(id)).or_insert(id);
        }
        let mut byte_ids = [None; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = ranks.get(&[b as u8][..]).copied();
        }
        let mut pair_ranks = vec![u32::MAX; 1 << 16].into_boxed_slice();
        for (t, &r) in &ranks {
            if t.len() == 2 {
                pair_ranks[(t[0] as usize) << 8 | t[1] as usize] = r;
            }
        }
        ByteRanks { ranks, byte_ids, pair_ranks }
    }

    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() == 2 {
            let r = self.pair_ranks[(bytes[0] as usize) << 8 | bytes[1] as usize];
            return (r != u32::MAX).then_some(r);
        }
        self.ranks.get(bytes).copied()
    }

    fn byte_id(&self, b: u8) -> Result<u32> {
        self.byte_ids[b as usize].ok_or_else(|| {
            Error::Encode(format!("byte 0x{b:02X} has no token in this vocabulary"))
        })
    }

    /// Appends the ids of one piece to `out`.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        if let Some(id) = self.rank(piece) {
            out.push(id);
            return Ok(());
        }
        let bounds = if piece.len() <= SHORT_PIECE {
            self.merge_short(piece)
        } else {
            self.merge_long(piece)
        };
        for w in bounds.windows(2) {
            let part = &piece[w[0]..w[1]];
            match self.rank(part) {
                Some(id) => out.push(id),
                None => out.push(self.byte_id(part[0])?),
            }
        }
        Ok(())
    }

    /// The piece with BPE-dropout: from single bytes, at each step every
    /// adjacent pair that is a token is dropped with probability p (draws
    /// left to right); the lowest-ranked pair left (leftmost on ties) merges.
    /// No whole-piece shortcut. Appends ids to `out`.
    pub fn encode_piece_dropout(&self, piece: &[u8], rng: &mut Dropout, out: &mut Vec<u32>) -> Result<()> {
        let mut bounds: Vec<usize> = (0..=piece.len()).collect();
        loop {
            let mut best: Option<(u32, usize)> = None;
            for i in 0..bounds.len().saturating_sub(2) {
                if let Some(r) = self.rank(&piece[bounds[i]..bounds[i + 2]]) {
                    if !rng.drop_merge() && best.map_or(true, |(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            bounds.remove(i + 1);
        }
        for w in bounds.windows(2) {
            let part = &piece[w[0]..w[1]];
            match self.rank(part) {
                Some(id) => out.push(id),
                None => out.push(self.byte_id(part[0])?),
            }
        }
        Ok(())
    }

    /// Part boundaries after merging, quadratic scan (tiktoken's loop).
    fn merge_short(&self, piece: &[u8]) -> Vec<usize> {
        let rank_of = |parts: &[(usize, u32)], i: usize| -> u32 {
            if i + 2 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 2].0]).unwrap_or(u32::MAX)
            } else {
                u32::MAX
            }
        };
        let mut parts: Vec<(usize, u32)> = (0..=piece.len()).map(|i| (i, u32::MAX)).collect();
        for i in 0..parts.len().saturating_sub(2) {
            parts[i].1 = rank_of(&parts, i);
        }
        loop {
            let mut best = (u32::MAX, 0);
            for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
                if r < best.0 {
                    best = (r, i);
                }
            }
            if best.0 == u32::MAX {
                break;
            }
            let i = best.1;
            parts.remove(i + 1);
            parts[i].1 = rank_of(&parts, i);
            if i > 0 {
                parts[i - 1].1 = rank_of(&parts, i - 1);
            }
        }
        parts.into_iter().map(|(s, _)| s).collect()
    }

    /// Part boundaries after merging, heap of (rank, start) over a linked
    /// list of parts. Each start has a version, bumped whenever the pair
    /// starting there changes, so a stale heap entry is recognised without
    /// looking its rank up again. n log n for any piece.
    fn merge_long(&self, piece: &[u8]) -> Vec<usize> {
        let n = piece.len();
        if n >= u32::MAX as usize {
            return self.merge_short(piece); // never in practice: 4 GB in one piece
        }
        const END: u32 = u32::MAX;
        // next[s] = start of the part after the part starting at s (END at the end)
        let mut next: Vec<u32> = (1..=n as u32).collect();
        next[n - 1] = END;
        let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
        let mut version: Vec<u32> = vec![0; n];
        let candidate = |s: u32, next: &[u32]| -> Option<u32> {
            let mid = next[s as usize];
            if mid == END {
                return None;
            }
            let end = match next[mid as usize] {
                END => n,
                e => e as usize,
            };
            self.rank(&piece[s as usize..end])
        };
        let mut heap: BinaryHeap<Reverse<(u32, u32, u32)>> = (0..n as u32)
            .filter_map(|s| candidate(s, &next).map(|r| Reverse((r, s, 0))))
            .collect();
        while let Some(Reverse((_, s, v))) = heap.pop() {
            if version[s as usize] != v {
                continue;
            }
            let mid = next[s as usize];
            let end = next[mid as usize];
            version[mid as usize] = version[mid as usize].wrapping_add(1);
            next[s as usize] = end;
            if end != END {
                prev[end as usize] = s;
            }
            version[s as usize] = version[s as usize].wrapping_add(1);
            if let Some(r) = candidate(s, &next) {
                heap.push(Reverse((r, s, version[s as usize])));
            }
            let p = prev[s as usize];
            if p != END {
                version[p as usize] = version[p as usize].wrapping_add(1);
                if let Some(r) = candidate(p, &next) {
                    heap.push(Reverse((r, p, version[p as usize])));
                }
            }
        }
        let mut bounds = Vec::new();
        let mut s = 0u32;
        while s != END {
            bounds.push(s as usize);
            s = next[s as usize];
        }
        bounds.push(n);
        bounds
    }
}

/// Merge rules of the char model: (left, right) -> [(rank, new id)], ranks
/// ascending (a pair can recur when a later merge recreates one of its
/// symbols from other parts).
#[derive(Debug, Clone, Default)]
pub struct CharMerges {
    rules: FxHashMap<(u32, u32), Vec<(u32, u32)>>,
    /// subword-nmt's rule instead of the sequential one: merge the pair of
    /// lowest rank again and again, earlier ranks included.
    lowest_rank: bool,
}

impl CharMerges {
    pub fn new(merges: &[(u32, u32, u32)]) -> Self {
        let mut rules: FxHashMap<(u32, u32), Vec<(u32, u32)>> = FxHashMap::default();
        for (rank, &(l, r, id)) in merges.iter().enumerate() {
            rules.entry((l, r)).or_default().push((rank as u32, id));
        }
        CharMerges { rules, lowest_rank: false }
    }

    /// Switches to subword-nmt's `apply-bpe` rule: at each step the adjacent
    /// pair of lowest rank (its first rank) is merged at all its
    /// non-overlapping occurrences, left to right. It differs from the
    /// sequential rule only when a merge makes a symbol an earlier merge uses.
    pub fn with_lowest_rank(mut self, on: bool) -> Self {
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
    pub fn apply(&self, symbols: &mut Vec<Sym>, dropout: Option<&mut Dropout>) {
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
                    if best.map_or(true, |b| rank < b.0) {
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

/// Words longer than this (in symbols) are merged with a heap.
const LONG_WORD: usize = 32;

impl CharMerges {
    /// `apply` with a heap of (rank, position) over a linked list, n log n.
    /// The occurrences of the lowest rank are taken from the heap together
    /// and merged left to right before any pair they form is queued: that
    /// is one step of both rules (under the sequential rule, a pair formed
    /// by a merge of rank r is only eligible for ranks after r). Each
    /// position's version is bumped when the pair starting there changes,
    /// which makes stale heap entries easy to skip.
    fn apply_long(&self, symbols: &mut Vec<Sym>, mut dropout: Option<&mut Dropout>) {
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
pub struct Sym {
    pub id: u32,
    pub len: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(tokens: &[&[u8]]) -> ByteRanks {
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (k, t) in tokens.iter().enumerate() {
            all.push((t.to_vec(), 256 + k as u32));
        }
        ByteRanks::new(all)
    }

    #[test]
    fn short_and_long_merging_agree() {
        let v = vocab(&[b"aa", b"ab", b"aaa", b"ba", b"bab", b"aab"]);
        for n in 1..400 {
            let piece: Vec<u8> = (0..n).map(|i| if (i * 7 + i / 3) % 3 == 0 { b'b' } else { b'a' }).collect();
            assert_eq!(v.merge_short(&piece), v.merge_long(&piece), "length {n}");
        }
    }

    #[test]
    fn leftmost_on_ties() {
        let v = vocab(&[b"aa"]);
        let mut out = Vec::new();
        v.encode_piece(b"aaa", &mut out).unwrap();
        assert_eq!(out, [256, b'a' as u32]);
    }

    #[test]
    fn long_and_short_char_merging_agree() {
        // symbols 0..3; merges over them, including a pair that recurs at a later rank
        let rules = [(0, 1, 4), (1, 0, 5), (4, 4, 6), (2, 3, 7), (6, 0, 8), (0, 1, 9), (5, 5, 10), (8, 7, 11)];
        let m = CharMerges::new(&rules);
        let mut state = 0x2545F4914F6CDD1Du64;
        for n in 1..200 {
            for _ in 0..20 {
                let word: Vec<Sym> = (0..n)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        Sym { id: (state % 4) as u32, len: 1 }
                    })
                    .collect();
                for p in [None, Some(0.3)] {
                    let (mut a, mut b) = (word.clone(), word.clone());
                    let (mut da, mut db) = (p.map(|p| Dropout::new(p, n as u64)), p.map(|p| Dropout::new(p, n as u64)));
                    m.apply_short(&mut a, da.as_mut());
                    m.apply_long(&mut b, db.as_mut());
                    assert_eq!(a, b, "word {word:?}, dropout {p:?}");
                }
            }
        }
    }

    #[test]
    fn long_and_short_lowest_rank_merging_agree() {
        // (4,0) uses symbol 4 before merge 5 makes it again from (0,5)
        let rules = [(0, 1, 4), (1, 2, 5), (4, 0, 6), (4, 2, 7), (6, 5, 8), (0, 5, 7), (7, 7, 9), (2, 2, 10)];
        let m = CharMerges::new(&rules).with_lowest_rank(true);
        let mut state = 0x9E3779B97F4A7C15u64;
        for n in 1..200 {
            for _ in 0..20 {
                let word: Vec<Sym> = (0..n)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        Sym { id: (state % 3) as u32, len: 1 }
                    })
                    .collect();
                let (mut a, mut b) = (word.clone(), word.clone());
                m.apply_short(&mut a, None);
                m.apply_long(&mut b, None);
                assert_eq!(a, b, "word {word:?}");
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
