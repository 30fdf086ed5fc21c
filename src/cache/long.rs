//! The piece cache's tier for long pieces (more than `MAX_PIECE` bytes, at
//! most `MAX_LONG_PIECE`): runs of CJK or Thai characters, symbol runs such
//! as table borders. They are few but long: on multilingual text about 6% of
//! the pieces and half of the bytes, and each costs a long merge when missed.
//!
//! Shape: a ring of bytes that entries are appended to (the piece, then its
//! ids), and an index of 4-way sets of 32-byte slots pointing into it. An
//! entry lives until the ring's writes come round over it (first in, first
//! out), or until its index slot is given to a newer piece of its set (the
//! oldest of the four). Memory is the ring and the index, fixed when made.

/// The multiplier of the cache's hashes (2^64 / the golden ratio); the slot
/// cache (`mod.rs`) uses it too.
pub(super) const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Slots in a set of the index.
const WAYS: usize = 4;

/// A slot of the index: where an entry is in the ring.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct LongSlot {
    hash: u64,
    /// Position of the entry in the ring, counted from the ring's first
    /// write (so that an entry written over is told by its position).
    at: u64,
    owner: u32,
    /// Length of the piece; 0: empty slot.
    len: u16,
    /// Number of ids.
    n: u16,
}

/// Bytes of one index slot.
pub(super) const LONG_SLOT_BYTES: usize = std::mem::size_of::<LongSlot>();

/// The hash of a long piece (8 bytes at a time).
fn long_hash(owner: u32, piece: &[u8]) -> u64 {
    let mut h = (piece.len() as u64) ^ (owner as u64) << 32;
    let mut chunks = piece.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(23) ^ u64::from_le_bytes(c.try_into().expect("8 bytes"))).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(8) ^ b as u64).wrapping_mul(K);
    }
    h ^ h >> 29
}

pub(super) struct LongTier {
    index: Box<[LongSlot]>,
    ring: Box<[u8]>,
    /// Bytes written to the ring since it was made (or emptied): the next
    /// entry goes at `written % ring.len()`.
    written: u64,
}

impl LongTier {
    /// A tier of at most `bytes` bytes: a quarter for the index (a power of
    /// two sets; about two slots per entry the ring holds, the entries of
    /// multilingual text averaging 200 bytes), the rest for the ring; none
    /// under 4 KB.
    pub(super) fn with_bytes(bytes: usize) -> LongTier {
        let sets = bytes / 4 / (WAYS * LONG_SLOT_BYTES);
        if sets == 0 || bytes < 4 << 10 {
            return LongTier { index: Box::new([]), ring: Box::new([]), written: 0 };
        }
        let sets = 1usize << (usize::BITS - 1 - sets.leading_zeros());
        let ring = bytes - sets * WAYS * LONG_SLOT_BYTES;
        LongTier { index: vec![LongSlot::default(); sets * WAYS].into_boxed_slice(), ring: vec![0; ring].into_boxed_slice(), written: 0 }
    }

    /// Bytes it holds (fixed).
    pub(super) fn bytes(&self) -> usize {
        self.index.len() * LONG_SLOT_BYTES + self.ring.len()
    }

    pub(super) fn clear(&mut self) {
        self.index.fill(LongSlot::default());
        self.written = 0;
    }

    /// The first slot of the set of `hash`.
    fn set_of(&self, hash: u64) -> usize {
        ((((hash >> 32) * (self.index.len() / WAYS) as u64) >> 32) as usize) * WAYS
    }

    /// Whether the entry at ring position `at` of `size` bytes has not been
    /// written over.
    fn intact(&self, at: u64, size: usize) -> bool {
        at + self.ring.len() as u64 >= self.written && at + size as u64 <= self.written
    }

    /// Appends the ids kept for `piece` under `owner` to `out`, if any; true
    /// when it did.
    pub(super) fn get_into(&self, owner: u32, piece: &[u8], out: &mut Vec<u32>) -> bool {
        if self.index.is_empty() {
            return false;
        }
        let hash = long_hash(owner, piece);
        let first = self.set_of(hash);
        for slot in &self.index[first..first + WAYS] {
            if slot.len as usize != piece.len() || slot.hash != hash || slot.owner != owner {
                continue;
            }
            let size = piece.len() + 4 * slot.n as usize;
            if !self.intact(slot.at, size) {
                continue;
            }
            let start = (slot.at % self.ring.len() as u64) as usize;
            let entry = &self.ring[start..start + size];
            if &entry[..piece.len()] != piece {
                continue;
            }
            out.extend(entry[piece.len()..].chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))));
            return true;
        }
        false
    }

    /// Keeps `ids` for `piece` under `owner` (not kept when the entry would
    /// take more than a quarter of the ring).
    pub(super) fn insert(&mut self, owner: u32, piece: &[u8], ids: &[u32]) {
        let size = piece.len() + 4 * ids.len();
        if self.index.is_empty() || size > self.ring.len() / 4 || piece.len() > u16::MAX as usize || ids.len() > u16::MAX as usize {
            return;
        }
        let cap = self.ring.len() as u64;
        if self.written % cap + size as u64 > cap {
            // an entry never wraps: the ring's tail is left unused this round
            self.written = self.written.next_multiple_of(cap);
        }
        let at = self.written;
        let start = (at % cap) as usize;
        self.ring[start..start + piece.len()].copy_from_slice(piece);
        for (dst, id) in self.ring[start + piece.len()..start + size].chunks_exact_mut(4).zip(ids) {
            dst.copy_from_slice(&id.to_le_bytes());
        }
        self.written += size as u64;
        let hash = long_hash(owner, piece);
        let first = self.set_of(hash);
        // the slot of the same piece, else an empty or written-over one, else the oldest
        let set = &self.index[first..first + WAYS];
        let same = set.iter().position(|s| s.len as usize == piece.len() && s.hash == hash && s.owner == owner);
        let free = || set.iter().position(|s| s.len == 0 || !self.intact(s.at, s.len as usize + 4 * s.n as usize));
        let oldest = || (0..WAYS).min_by_key(|&i| set[i].at).expect("a set has slots");
        let way = same.or_else(free).unwrap_or_else(oldest);
        self.index[first + way] = LongSlot { hash, at, owner, len: piece.len() as u16, n: ids.len() as u16 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use std::collections::HashMap;

    #[test]
    fn index_slots_are_half_a_cache_line() {
        assert_eq!(LONG_SLOT_BYTES, 32);
    }

    #[test]
    fn returns_exactly_what_was_inserted_as_the_ring_comes_round() {
        // long pieces that differ in one byte, across owners, in a ring that
        // holds few of them: a hit is always the latest ids of exactly that
        // piece and owner, however often the ring has been written over
        let mut rng = Rng(0x10E6_7153_CAFE_F00D);
        let mut t = LongTier::with_bytes(16 << 10);
        let bytes = t.bytes();
        assert!(bytes <= 16 << 10 && !t.index.is_empty());
        let mut model: HashMap<(u32, Vec<u8>), Vec<u32>> = HashMap::new();
        let (mut hits, mut out) = (0, Vec::new());
        for _ in 0..20_000 {
            let n = 25 + 40 * rng.below(4);
            let mut piece = vec![b'x'; n];
            piece[rng.below(3) * 7] = [0u8, b'a', 0xff][rng.below(3)];
            let owner = 1 + rng.below(2) as u32;
            out.clear();
            out.push(7); // what the caller had before
            if t.get_into(owner, &piece, &mut out) {
                hits += 1;
                assert_eq!(out[0], 7);
                assert_eq!(Some(&out[1..].to_vec()), model.get(&(owner, piece.clone())));
            } else {
                assert_eq!(out, [7]);
                let ids: Vec<u32> = (0..rng.below(40)).map(|_| rng.below(1 << 20) as u32 * 4099).collect();
                t.insert(owner, &piece, &ids);
                model.insert((owner, piece), ids);
            }
        }
        assert!(hits > 1000, "{hits}");
        assert!(t.written > 4 * t.ring.len() as u64, "the ring came round");
        assert_eq!(t.bytes(), bytes);
    }

    #[test]
    fn holds_a_working_set_that_fits() {
        // 500 distinct pieces of 60 bytes and 20 ids (70 KB) in a 256 KB tier:
        // after one pass, all but the few that overflow a set hit
        let mut t = LongTier::with_bytes(256 << 10);
        let piece = |i: u32| format!("{i:>60}").into_bytes();
        let ids = |i: u32| (0..20).map(|k| i * 100 + k).collect::<Vec<u32>>();
        let mut out = Vec::new();
        for i in 0..500 {
            t.insert(1, &piece(i), &ids(i));
        }
        let mut hits = 0;
        for i in 0..500 {
            out.clear();
            if t.get_into(1, &piece(i), &mut out) {
                hits += 1;
                assert_eq!(out, ids(i));
            }
            assert!(!t.get_into(2, &piece(i), &mut out));
        }
        assert!(hits >= 495, "{hits}");
    }

    #[test]
    fn no_tier_under_its_floor() {
        let mut t = LongTier::with_bytes(1 << 10);
        assert_eq!(t.bytes(), 0);
        t.insert(1, &[b'a'; 40], &[1, 2]);
        assert!(!t.get_into(1, &[b'a'; 40], &mut Vec::new()));
    }
}
