//! Long pieces merged a window at a time, with the same result as merging
//! them whole: the tables of each window's merging stay in the cache, so
//! the time stays linear in the piece's length where the whole piece's
//! tables (tens of megabytes for a 2 MB piece) would miss the cache on
//! every step of the rank-ordered merging.
//!
//! Why it is exact (the rule: the adjacent pair of lowest rank merges
//! first, leftmost among equal ranks; a pair's rank depends only on its two
//! symbols). Call parts x, y a *valid pair* when merging the initial symbols
//! of x followed by those of y, alone, gives exactly x, y.
//!
//! Lemma. If P is the merge of text A alone, Q the merge of text B alone,
//! and (last of P, first of Q) is a valid pair, then P followed by Q is the
//! merge of A followed by B.
//!
//! Proof. Call the boundaries between adjacent parts of P + Q the cuts, and
//! suppose some merge of A + B crosses a cut; take the first such merge, at
//! the cut between parts u and v. Until then, every part's span evolves as
//! it does alone (a merge changes only the pairs that touch it), and the
//! order in which the spans of u and v take their steps is the order of
//! their (rank, position) keys, whatever the other spans do. Merging u's
//! and v's symbols alone therefore passes through the same two states of
//! the two spans, and there the pair across the cut is again the lowest
//! (rank, position) (the pairs to its left rank strictly higher, those to
//! its right at least as high), so it merges: (u, v) is not a valid pair.
//! But every adjacent (u, v) is one: inside P (a merge alone of P's text
//! never crosses P's cuts, nor does one of u's and v's symbols, the same
//! steps restricted), inside Q likewise, and at the junction by hypothesis.
//! So no merge crosses a cut, each span ends as it ends alone (as its part),
//! and the result is P + Q. The converse of the restriction argument gives
//! the other fact used below: a run of adjacent parts of a merge is the
//! merge of its own text.
//!
//! So `merge_in_windows` merges each window alone, and where the last part
//! so far and the window's first part are not a valid pair, re-merges the
//! k parts on each side of the junction together and checks the two new
//! junctions the same way (k = 1, 2, 4, ... up to `MAX_REPAIR`; beyond,
//! the caller merges the piece whole).

/// One part after merging: the index of its first initial symbol (a byte of
/// a piece, a symbol of a word), its token, and its length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Part {
    pub(super) start: u32,
    pub(super) id: u32,
    pub(super) len: u32,
}

/// Where a long piece's merged parts go, in order.
pub(super) trait PartSink {
    /// Appends parts that are final.
    fn take(&mut self, parts: &[Part]);
    /// Drops every part taken so far (a windowed merge gave up: the piece is
    /// merged whole next, into the same sink).
    fn forget(&mut self);
}

impl PartSink for Vec<Part> {
    fn take(&mut self, parts: &[Part]) {
        self.extend_from_slice(parts);
    }
    fn forget(&mut self) {
        self.clear();
    }
}

/// A sink that appends the parts' ids to a list of ids, and forgets by
/// cutting the list back to where it began.
pub(super) struct AppendIds<'a> {
    out: &'a mut Vec<u32>,
    start: usize,
}

impl<'a> AppendIds<'a> {
    pub(super) fn new(out: &'a mut Vec<u32>) -> Self {
        let start = out.len();
        AppendIds { out, start }
    }
}

impl PartSink for AppendIds<'_> {
    fn take(&mut self, parts: &[Part]) {
        self.out.extend(parts.iter().map(|p| p.id));
    }
    fn forget(&mut self) {
        self.out.truncate(self.start);
    }
}

/// Initial symbols per window (the tables of one window, about 16 to 24
/// bytes a symbol plus the queue's entries, stay in a core's L2 cache).
pub(super) const WINDOW: usize = 1 << 14;

/// Most parts re-merged on each side of a junction before giving up.
const MAX_REPAIR: usize = 256;

/// The parts of initial symbols `0..n` merged, window by window, handed
/// to `sink` in order as they become final (a few windows' worth at a
/// time, so a long piece never holds all its parts at once: that list,
/// 12 bytes a part, outgrew the caches and was copied as it grew);
/// `merge(a, b, out)` appends the parts of symbols `a..b` merged alone (by
/// the rule only: no whole-piece lookup), with `start` counted from 0 for
/// the whole piece. False when a junction needs more than `MAX_REPAIR`
/// parts re-merged: the sink is told to forget what it took, and the
/// caller merges the piece whole.
pub(super) fn merge_in_windows(
    n: usize,
    merge: &mut impl FnMut(usize, usize, &mut Vec<Part>),
    sink: &mut impl PartSink,
) -> bool {
    // the parts not yet given to the sink: a junction's repair re-merges at most
    // the last MAX_REPAIR of them, and one more is its left neighbour
    const KEPT: usize = MAX_REPAIR + 1;
    let mut out: Vec<Part> = Vec::new();
    let mut cur: Vec<Part> = Vec::new();
    let mut joined: Vec<Part> = Vec::new();
    let mut check: Vec<Part> = Vec::new();
    let mut a = 0;
    while a < n {
        // no short last window: one of less than half a window joins the one before
        let b = if n - a < WINDOW + WINDOW / 2 { n } else { a + WINDOW };
        cur.clear();
        merge(a, b, &mut cur);
        if out.is_empty() {
            std::mem::swap(&mut out, &mut cur);
        } else if valid_pair(*out.last().unwrap(), cur[0], end_of(&cur, 0, b), &mut check, merge) {
            out.extend_from_slice(&cur);
        } else {
            // re-merge out[l..] + cur[..r] together until both new junctions are valid pairs
            let mut k = 1;
            loop {
                if k > MAX_REPAIR {
                    sink.forget();
                    return false;
                }
                // l == 0 only while out[0] is the piece's first part: once parts were emitted,
                // out holds at least KEPT > k of them
                let l = out.len().saturating_sub(k);
                let r = k.min(cur.len());
                let (from, to) = (out[l].start as usize, end_of(&cur, r - 1, b));
                joined.clear();
                merge(from, to, &mut joined);
                let left = l == 0 || valid_pair(out[l - 1], joined[0], end_of(&joined, 0, to), &mut check, merge);
                let right = left && (r == cur.len() || valid_pair(*joined.last().unwrap(), cur[r], end_of(&cur, r, b), &mut check, merge));
                if left && right {
                    out.truncate(l);
                    out.extend_from_slice(&joined);
                    out.extend_from_slice(&cur[r..]);
                    break;
                }
                k *= 2;
            }
        }
        if out.len() > 2 * KEPT {
            let done = out.len() - KEPT;
            sink.take(&out[..done]);
            out.drain(..done);
        }
        a = b;
    }
    sink.take(&out);
    true
}

/// The index just after part `j` of `parts`, whose last part ends at `last_end`.
#[inline]
fn end_of(parts: &[Part], j: usize, last_end: usize) -> usize {
    match parts.get(j + 1) {
        Some(p) => p.start as usize,
        None => last_end,
    }
}

/// Whether x and y (adjacent, y ending at `end`) are a valid pair: their
/// initial symbols merged alone give exactly x, y.
fn valid_pair(x: Part, y: Part, end: usize, check: &mut Vec<Part>, merge: &mut impl FnMut(usize, usize, &mut Vec<Part>)) -> bool {
    check.clear();
    merge(x.start as usize, end, check);
    check.len() == 2 && check[0] == x && check[1] == y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use rustc_hash::FxHashMap;

    /// The rule on symbols a..b of `word` by the heap (`merge_by_heap`, checked against the quadratic scan in
    /// pairs.rs), as parts.
    fn heap(word: &[u32], a: usize, b: usize, pairs: &FxHashMap<(u32, u32), (u32, u32)>, out: &mut Vec<Part>) {
        let mut syms: Vec<(u32, u32)> = word[a..b].iter().map(|&id| (id, 1)).collect();
        crate::model::pairs::merge_by_heap(&mut syms, |x, y| pairs.get(&(x, y)).copied());
        let mut start = a as u32;
        for (id, len) in syms {
            out.push(Part { start, id, len });
            start += len;
        }
    }

    #[test]
    fn append_ids_forgets_only_what_it_took() {
        let mut ids = vec![5, 6];
        let mut sink = AppendIds::new(&mut ids);
        sink.take(&[Part { start: 0, id: 9, len: 1 }, Part { start: 1, id: 8, len: 2 }]);
        sink.take(&[Part { start: 3, id: 7, len: 1 }]);
        assert_eq!(sink.out, &[5, 6, 9, 8, 7]);
        sink.forget();
        sink.take(&[Part { start: 0, id: 4, len: 4 }]);
        assert_eq!(ids, [5, 6, 4]);
    }

    #[test]
    fn windows_give_the_whole_merge() {
        // small tables where merges cascade across junctions (runs of one
        // symbol, short repeated units, equal ranks); each piece merged
        // whole, and in windows by the same merging
        let mut rng = Rng(0x5EED_0F_CAFE);
        let (mut repaired, mut gave_up) = (0, 0);
        for round in 0..60 {
            let symbols = 2 + rng.below(4);
            let mut pairs = FxHashMap::default();
            for _ in 0..1 + rng.below(40) {
                let (a, b) = (rng.below(symbols + 8) as u32, rng.below(symbols + 8) as u32);
                pairs.insert((a, b), (rng.below(30) as u32, rng.below(symbols + 8) as u32));
            }
            let n = WINDOW * 2 + rng.below(3 * WINDOW);
            let word: Vec<u32> = match round % 3 {
                0 => vec![rng.below(symbols) as u32; n],
                1 => {
                    let unit: Vec<u32> = (0..1 + rng.below(4)).map(|_| rng.below(symbols) as u32).collect();
                    unit.iter().copied().cycle().take(n).collect()
                }
                _ => (0..n).map(|_| rng.below(symbols) as u32).collect(),
            };
            let mut whole = Vec::new();
            heap(&word, 0, n, &pairs, &mut whole);
            let (mut windows, mut small) = (0, 0);
            let mut got: Vec<Part> = Vec::new();
            let done = merge_in_windows(
                n,
                &mut |a, b, out: &mut Vec<Part>| {
                    if b - a >= WINDOW {
                        windows += 1;
                    } else {
                        small += 1;
                    }
                    heap(&word, a, b, &pairs, out)
                },
                &mut got,
            );
            if done {
                assert_eq!(got, whole, "round {round}");
            } else {
                assert!(got.is_empty(), "round {round}: the sink kept parts of a merge that gave up");
                gave_up += 1;
            }
            // one check per junction when it holds; more when it was repaired
            repaired += small - (windows - 1);
        }
        // junctions were repaired, not only joined, and rarely given up
        assert!(repaired > 20, "{repaired}");
        assert!(gave_up < 10, "{gave_up}");
    }
}
