//! The bucket queue of (rank, position) pairs that merges long pieces
//! (byte model, pipeline BPE, SentencePiece) and long words (char model)
//! in about linear time.

use super::NONE;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Largest rank bound for which long pieces use `RankQueue` (its tables
/// take 4 bytes per rank and thread); real vocabularies have dense ids.
pub(super) const MAX_QUEUE_RANKS: usize = 1 << 22;

/// A priority queue of (rank, position) pairs popped in (rank, position)
/// order: a bucket per rank (touched ranks only, through `slot`) and a
/// two-level bitmap of the non-empty buckets. Each bucket is a list of
/// ascending positions (the common pushes come left to right), and a heap
/// of the positions pushed out of that order: a pop costs one comparison,
/// or a heap step (sorting the list again at each pop after such a push was
/// quadratic on long runs of one symbol: 16,000 spaces in a `.model` file).
/// Finding the lowest bucket scans forward from a lower bound of it, so a
/// sequence of pops costs about one step per entry, whatever the ranks; a
/// push below the current minimum (allowed) just lowers the bound.
///
/// It is kept per thread (see `SCRATCH`) so the rank-sized tables are
/// allocated once, not per piece; every call starts with `begin`.
#[derive(Debug, Default)]
pub(super) struct RankQueue {
    /// rank -> index into `buckets` for this call, `NONE` if untouched
    slot: Vec<u32>,
    buckets: Vec<Bucket>,
    /// buckets in use this call; their ranks are in `touched`
    used: usize,
    touched: Vec<u32>,
    /// bit r: bucket of rank r non-empty
    bits0: Vec<u64>,
    /// bit w: word w of bits0 non-zero
    bits1: Vec<u64>,
    /// no non-empty bucket has a lower rank
    min: u32,
}

#[derive(Debug, Default)]
struct Bucket {
    /// ascending; entries before `head` were popped
    pos: Vec<u32>,
    head: usize,
    /// the positions pushed below `pos`'s last one (a min-heap)
    late: BinaryHeap<Reverse<u32>>,
}

impl Bucket {
    fn is_empty(&self) -> bool {
        self.head == self.pos.len() && self.late.is_empty()
    }
}

impl RankQueue {
    /// Empties the queue and makes room for ranks below `ranks`.
    pub(super) fn begin(&mut self, ranks: usize) {
        for &r in &self.touched {
            self.slot[r as usize] = NONE;
            self.bits0[r as usize >> 6] = 0;
            self.bits1[r as usize >> 12] = 0;
        }
        self.touched.clear();
        self.used = 0;
        self.min = 0;
        if self.slot.len() < ranks {
            self.slot.resize(ranks, NONE);
            self.bits0.resize(ranks.div_ceil(64), 0);
            self.bits1.resize(ranks.div_ceil(64 * 64), 0);
        }
    }

    /// Adds (rank, pos); a rank at or above the bound given to `begin`
    /// grows the tables. Any rank, even below the last one popped.
    #[inline]
    pub(super) fn push(&mut self, rank: u32, pos: u32) {
        let r = rank as usize;
        if r >= self.slot.len() {
            self.grow(r + 1);
        }
        let mut b = self.slot[r];
        if b == NONE {
            b = self.used as u32;
            self.slot[r] = b;
            self.touched.push(rank);
            if self.used == self.buckets.len() {
                self.buckets.push(Bucket::default());
            }
            self.used += 1;
            let bucket = &mut self.buckets[b as usize];
            bucket.pos.clear();
            bucket.head = 0;
            bucket.late.clear();
        }
        let bucket = &mut self.buckets[b as usize];
        if bucket.is_empty() {
            // restart it, and mark its rank non-empty
            bucket.pos.clear();
            bucket.head = 0;
            self.bits0[r >> 6] |= 1 << (r & 63);
            self.bits1[r >> 12] |= 1 << ((r >> 6) & 63);
        }
        if bucket.head == bucket.pos.len() || pos >= *bucket.pos.last().unwrap() {
            bucket.pos.push(pos);
        } else {
            bucket.late.push(Reverse(pos));
        }
        if rank < self.min {
            self.min = rank;
        }
    }

    /// Makes room for ranks below `ranks` in the middle of a call (new
    /// ranks are untouched and empty).
    #[cold]
    fn grow(&mut self, ranks: usize) {
        self.slot.resize(ranks, NONE);
        self.bits0.resize(ranks.div_ceil(64), 0);
        self.bits1.resize(ranks.div_ceil(64 * 64), 0);
    }

    /// The lowest non-empty rank at or above `from`.
    #[inline]
    fn next_rank(&self, from: u32) -> Option<u32> {
        let w = from as usize >> 6;
        let m = self.bits0.get(w)? & (!0u64 << (from & 63));
        if m != 0 {
            return Some((w << 6) as u32 + m.trailing_zeros());
        }
        let w = w + 1;
        let mut i = w >> 6;
        let mut m1 = *self.bits1.get(i)? & (!0u64 << (w & 63));
        loop {
            if m1 != 0 {
                let w = (i << 6) + m1.trailing_zeros() as usize;
                return Some(((w << 6) as u32) + self.bits0[w].trailing_zeros());
            }
            i += 1;
            m1 = *self.bits1.get(i)?;
        }
    }

    /// Removes and returns the entry of lowest rank, leftmost among them.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u32, u32)> {
        let r = self.next_rank(self.min)?;
        self.min = r;
        let bucket = &mut self.buckets[self.slot[r as usize] as usize];
        let p = match (bucket.pos.get(bucket.head), bucket.late.peek()) {
            (Some(&p), Some(&Reverse(q))) if q < p => bucket.late.pop().map_or(q, |Reverse(q)| q),
            (Some(&p), _) => {
                bucket.head += 1;
                p
            }
            (None, _) => bucket.late.pop()?.0,
        };
        if bucket.is_empty() {
            let r = r as usize;
            self.bits0[r >> 6] &= !(1 << (r & 63));
            if self.bits0[r >> 6] == 0 {
                self.bits1[r >> 12] &= !(1 << ((r >> 6) & 63));
            }
        }
        Some((r, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    #[test]
    fn rank_queue_pops_in_rank_then_position_order() {
        // against a BTreeSet, with pushes below the current minimum and
        // out-of-order positions between pops; two rank ranges (reuse)
        let mut rng = Rng(12345);
        let mut q = RankQueue::default();
        for round in 0..200 {
            let ranks = if round % 2 == 0 { 70 } else { 9000 };
            q.begin(ranks);
            let mut model = std::collections::BTreeSet::new();
            for _ in 0..rng.below(2000) {
                if rng.below(3) == 0 {
                    assert_eq!(q.pop(), model.pop_first(), "round {round}");
                } else {
                    let (r, p) = (rng.below(ranks) as u32, rng.below(5000) as u32);
                    if model.insert((r, p)) {
                        q.push(r, p);
                    }
                }
            }
            if round % 4 == 0 {
                while let Some(e) = model.pop_first() {
                    assert_eq!(q.pop(), Some(e));
                }
                assert_eq!(q.pop(), None);
            }
        }
    }
}
