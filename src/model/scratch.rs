//! Per-thread state of encoding: the scratch tables of long-piece merging
//! (both models), and the switch that empties the piece caches.

use super::queue::RankQueue;
use crate::cache;

/// Empties every thread's piece cache (lazily, at its next use), so that
/// a benchmark can time encoding from a cold start. Results never depend
/// on the cache.
pub fn clear_piece_caches() {
    cache::clear_all();
}

/// Per-thread scratch of the long-piece merging (byte model, pipeline BPE,
/// SentencePiece, char model).
#[derive(Debug, Default)]
pub(super) struct Scratch {
    pub(super) queue: RankQueue,
    pub(super) next: Vec<u32>,
    pub(super) prev: Vec<u32>,
    pub(super) rank_at: Vec<u32>,
    /// token of the part starting at each position (byte model), merged id
    /// of the pair there (`merge_pairs`)
    pub(super) ids: Vec<u32>,
}

/// Tables grown past this many entries (by a piece merged whole: longer
/// pieces go a window at a time, unless a junction gives up) are freed
/// after the piece rather than kept for the thread's next one.
pub(super) const SCRATCH_KEEP: usize = 1 << 20;

impl Scratch {
    /// The positions still in the linked list of `n` symbols that a merge
    /// loop left in `next` (from position 0; `n` ends it), in order.
    pub(super) fn live(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            (i != n).then(|| {
                let at = i;
                i = self.next[at] as usize;
                at
            })
        })
    }

    /// Keeps the symbols still in that list, in order (in place: a kept
    /// symbol moves only towards the front).
    pub(super) fn keep_live<T: Copy>(&self, symbols: &mut Vec<T>) {
        let mut out = 0;
        for i in self.live(symbols.len()) {
            symbols[out] = symbols[i];
            out += 1;
        }
        symbols.truncate(out);
    }

    /// Frees the tables if a piece grew them past `SCRATCH_KEEP` entries.
    /// (Not by the piece's length: a long piece merged in windows leaves
    /// them window-sized, and freeing them would only reallocate the
    /// queue's rank-sized tables for the next piece.)
    pub(super) fn trim(&mut self) {
        if self.next.capacity() > SCRATCH_KEEP + 1 {
            *self = Scratch::default();
        }
    }
}

thread_local! {
    pub(super) static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::window::WINDOW;
    use crate::model::ByteRanks;

    fn aa_vocab() -> ByteRanks {
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        all.push((b"aa".to_vec(), 256));
        all.push((b"ab".to_vec(), 257));
        ByteRanks::new(all)
    }

    fn kept_scratch() -> usize {
        SCRATCH.with(|cell| cell.borrow().next.capacity())
    }

    #[test]
    fn huge_pieces_give_their_scratch_back() {
        let v = aa_vocab();
        let mut out = Vec::new();
        // a long piece (over 128 bytes) merges on the thread's scratch, which it keeps
        v.encode_piece(&b"ab".repeat(1000), &mut out).unwrap();
        assert_eq!(out, vec![257; 1000]);
        assert!(kept_scratch() > 2000);
        // one over SCRATCH_KEEP bytes is merged in windows: the tables it leaves are a window's
        out.clear();
        v.encode_piece(&vec![b'a'; SCRATCH_KEEP + 2], &mut out).unwrap();
        assert_eq!(out.len(), SCRATCH_KEEP / 2 + 1);
        assert!(out.iter().all(|&id| id == 256));
        assert!(kept_scratch() <= 3 * WINDOW, "{}", kept_scratch());
        // tables grown past SCRATCH_KEEP (a piece merged whole) are freed afterwards
        SCRATCH.with(|cell| {
            let mut s = cell.borrow_mut();
            s.next.reserve(SCRATCH_KEEP + 2);
            s.trim();
        });
        assert_eq!(kept_scratch(), 0);
    }

    #[test]
    fn busy_scratch_falls_back_to_fresh_tables() {
        // while the thread's scratch is borrowed, merging uses its own tables
        let v = aa_vocab();
        let piece: Vec<u8> = b"aab".iter().copied().cycle().take(900).collect();
        let mut want = Vec::new();
        v.encode_piece_uncached(&piece, &mut want).unwrap();
        let got = SCRATCH.with(|cell| {
            let _busy = cell.borrow_mut();
            let mut got = Vec::new();
            v.encode_piece_uncached(&piece, &mut got).unwrap();
            got
        });
        assert_eq!(got, want);
        assert_eq!(want, [256, b'b' as u32].repeat(300));
    }
}
