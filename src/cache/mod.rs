//! A bounded cache of encoded pieces (pre-tokens): piece bytes -> ids,
//! kept per thread and warm across calls and batches.
//!
//! Most of the work of encoding real text is pieces seen before; a hit
//! costs one probe of a 64-byte slot instead of the piece's merges. The
//! cache never changes ids: an entry is only ever the ids the encoder
//! computed for exactly these bytes under exactly this owner (vocabulary).
//!
//! Shape: a direct-mapped front table of 32-byte slots (pieces of up to 15
//! bytes with up to three ids: nearly every word of real text, whole-word
//! tokens included) probed first, then a 2-way set-associative table of
//! 64-byte slots (one cache line each), both sized from a byte budget
//! (`set_cache_bytes`, default `DEFAULT_CACHE_BYTES` per thread; the front
//! takes half of it). A lexer's words probe the front a chunk at a time,
//! their slots fetched ahead, and go to the vocabulary and the rest of the
//! cache only when it misses (`batch.rs`: one probe per word seen before). Pieces of up to `MAX_PIECE` bytes with up to `MAX_IDS`
//! ids are cached there; longer ones, of up to `MAX_LONG_PIECE` bytes, in the
//! long tier (`long.rs`: a ring of entries, a quarter of the budget). Eviction in the sets is "not recently used":
//! a hit sets the slot's hot bit; an insertion into a full set takes a
//! cold slot, or, when both are hot, cools both and takes one. The front
//! keeps the latest piece of each slot (a hit in the sets moves up to it).
//! Nothing is ever emptied wholesale, except by `clear_all` (cold
//! benchmarks) or a change of the budget.
//!
//! Small API for any encoder: `Key::new(owner, piece)`, then
//! `with_thread_cache(|c| c.get(&key))` / `c.insert(&key, ids)`. `owner`
//! is a number from `new_owner()` naming one vocabulary (clones of a
//! vocabulary may share it).

pub(crate) mod batch;
mod long;
pub(crate) mod seed;
pub(crate) mod words;

use long::{LongTier, K};

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Longest piece cached, in bytes.
pub(crate) const MAX_PIECE: usize = 24;
/// Most ids a cached piece may have.
pub(crate) const MAX_IDS: usize = 7;
/// Default budget per thread: 4 MB (a front table of 65,536 words, 1 MB of
/// long pieces, 8,192 sets). Twice as much read warm English text 5% faster
/// and text seen for the first time 5% slower (its tables crowd the merges'
/// out of the processor's cache).
pub(crate) const DEFAULT_CACHE_BYTES: usize = 4 << 20;
/// Largest budget accepted per thread (1 GB).
pub(crate) const MAX_CACHE_BYTES: usize = 1 << 30;

/// Bytes of one slot.
pub(crate) const SLOT_BYTES: usize = std::mem::size_of::<Slot>();
/// Bytes of one slot of the front table.
const FRONT_BYTES: usize = std::mem::size_of::<FrontSlot>();
/// Longest piece the front table holds, and its most ids.
pub(crate) const FRONT_PIECE: usize = 15;
pub(crate) const FRONT_IDS: usize = 3;
/// Share of the budget the front table takes (rounded down to a power of two slots).
const FRONT_SHARE: usize = 2;
/// Longest piece of the long tier (pieces over `MAX_PIECE` bytes: runs of
/// CJK characters, symbol runs such as table borders).
pub(crate) const MAX_LONG_PIECE: usize = 4096;
/// A slot of the front table: a direct-mapped table probed before the
/// sets, for pieces of up to 15 bytes with up to three ids (the words of
/// real text nearly all, whole-word tokens included), half a cache line.
/// Its key is the piece's `FrontKey`; `hi`'s bits 60-61 hold the number of
/// ids and bit 63 whether it was hit since it was put here (its set slot's
/// hot bit is not kept up to date by front hits; see `keep_displaced`).
/// A lexer's words probe it a chunk at a time (`batch.rs`).
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct FrontSlot {
    lo: u64,
    hi: u64,
    owner: u32,
    ids: [u32; FRONT_IDS],
}

/// `FrontSlot::hi`'s bits that are not the key's.
const FRONT_FLAGS: u64 = 0xF << 60;
const FRONT_HIT: u64 = 1 << 63;

impl FrontSlot {
    /// Whether it holds no piece (a piece's length is never 0).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.hi >> 56 & 0xF == 0
    }

    /// Whether it holds `key`'s piece under `owner` (false when empty: a key's length is never 0).
    #[inline(always)]
    pub(crate) fn holds(&self, key: FrontKey, owner: u32) -> bool {
        self.lo == key.lo && self.hi & !FRONT_FLAGS == key.hi && self.owner == owner
    }

    /// How many of `ids` are the piece's.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        (self.hi >> 60 & 3) as usize
    }

    /// The slot's ids (all three: `len` says how many are the piece's).
    #[inline(always)]
    pub(crate) fn ids(&self) -> &[u32; FRONT_IDS] {
        &self.ids
    }
}

/// A piece of 1 to `FRONT_PIECE` bytes as two words: the bytes, zero-padded,
/// and the length in the top byte (distinct for distinct pieces, never 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrontKey {
    lo: u64,
    hi: u64,
}

impl FrontKey {
    /// The key of no piece: a slot never holds it (its high word has the
    /// bits `FRONT_FLAGS` that a slot's key never compares).
    pub(crate) const NONE: FrontKey = FrontKey { lo: 0, hi: u64::MAX };
}

/// `KEEP_LOW[n]`: the low `n` bytes of a 16-byte load, as two words' masks.
const KEEP_LOW: [(u64, u64); 16] = {
    let mut m = [(0u64, 0u64); 16];
    let mut n = 1;
    while n < 16 {
        m[n] = if n >= 8 { (u64::MAX, if n > 8 { (1u64 << ((n - 8) * 8)) - 1 } else { 0 }) } else { ((1u64 << (n * 8)) - 1, 0) };
        n += 1;
    }
    m
};

impl FrontKey {
    /// The key of a piece of up to `FRONT_PIECE` bytes (not empty).
    #[inline]
    pub(crate) fn of(piece: &[u8]) -> FrontKey {
        let n = piece.len();
        debug_assert!((1..=FRONT_PIECE).contains(&n));
        let w = load(piece);
        FrontKey { lo: w[0], hi: w[1] | (n as u64) << 56 }
    }

    /// The key of `text[start..start + len]` (1 to `FRONT_PIECE` bytes): one
    /// 16-byte load, masked, where the text has 16 bytes from `start` (no
    /// branch on the length, no copy).
    #[inline(always)]
    pub(crate) fn at(text: &[u8], start: usize, len: usize) -> FrontKey {
        debug_assert!((1..=FRONT_PIECE).contains(&len) && start + len <= text.len());
        match text.get(start..start + 16) {
            Some(b) => {
                let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
                let (keep_lo, keep_hi) = KEEP_LOW[len & 15];
                FrontKey { lo: word(0) & keep_lo, hi: word(8) & keep_hi | (len as u64) << 56 }
            }
            None => Self::of(&text[start..start + len]),
        }
    }

    /// Its slot in a front table of `1 << (64 - shift)` slots, for `owner`.
    #[inline(always)]
    pub(crate) fn home(self, owner: u32, shift: u32) -> usize {
        let h = (self.lo ^ self.hi.rotate_left(29) ^ (owner as u64) << 32).wrapping_mul(K);
        (h ^ h >> 31).wrapping_mul(K).checked_shr(shift).unwrap_or(0) as usize
    }
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Slot {
    /// The piece's bytes, zero-padded.
    key: [u64; 3],
    owner: u32,
    /// Length of the piece; 0: empty slot.
    len: u8,
    /// Number of ids.
    n: u8,
    /// Hit since it was last cooled.
    hot: u8,
    _pad: u8,
    ids: [u32; MAX_IDS],
}

/// A piece ready to be looked up: its bytes as three words and its hash.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    words: [u64; 3],
    owner: u32,
    len: u8,
    hash: u64,
}

#[inline]
fn load(bytes: &[u8]) -> [u64; 3] {
    let n = bytes.len();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    // the overlapping bytes of two loads land on the same bits
    if n >= 16 {
        [word(0), word(8), if n > 16 { word(n - 8) >> ((24 - n) * 8) } else { 0 }]
    } else if n >= 8 {
        [word(0), if n > 8 { word(n - 8) >> ((16 - n) * 8) } else { 0 }, 0]
    } else if n >= 4 {
        let half = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as u64;
        [half(0) | half(n - 4) << ((n - 4) * 8), 0, 0]
    } else {
        let mut v = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            v |= (b as u64) << (i * 8);
        }
        [v, 0, 0]
    }
}

impl Key {
    /// The key of `piece` for `owner`; None if the piece is empty or longer
    /// than `MAX_PIECE` (not cached).
    #[inline]
    pub fn new(owner: u32, piece: &[u8]) -> Option<Key> {
        let len = piece.len();
        if len == 0 || len > MAX_PIECE {
            return None;
        }
        let words = load(piece);
        Some(Key { words, owner, len: len as u8, hash: Self::hash(words, len, owner) })
    }

    /// The hash of a piece's words (`load`), length and owner.
    #[inline]
    fn hash(words: [u64; 3], len: usize, owner: u32) -> u64 {
        let mut h = (words[0] ^ ((len as u64) << 56) ^ ((owner as u64) << 24)).wrapping_mul(K);
        if len > 8 {
            h = (h.rotate_left(29) ^ words[1]).wrapping_mul(K);
            if len > 16 {
                h = (h.rotate_left(29) ^ words[2]).wrapping_mul(K);
            }
        }
        // a product's low bits depend only on its input's low bits (a short
        // piece's first bytes): mix the high bits down, so that every bit
        // (the front table's index: the low ones) depends on every byte
        let h = (h ^ h >> 32).wrapping_mul(K);
        h ^ h >> 29
    }

    /// The key of the piece a set slot holds.
    fn of_slot(slot: &Slot) -> Key {
        Key { words: slot.key, owner: slot.owner, len: slot.len, hash: Self::hash(slot.key, slot.len as usize, slot.owner) }
    }
}

/// One thread's (or one caller's) cache; see the module docs.
pub struct PieceCache {
    slots: Box<[Slot]>,
    /// Number of sets (pairs of slots).
    sets: usize,
    /// The front table (a power of two slots, or none).
    front: Box<[FrontSlot]>,
    /// 64 minus log2 of the front table's slots (`FrontKey::home`).
    front_shift: u32,
    /// The long tier (`long.rs`).
    long: LongTier,
    /// `GENERATION` when last emptied.
    generation: u64,
    /// The budget it was made for (`CACHE_BYTES` then): compared on every
    /// borrow instead of recomputing the shape.
    budget: usize,
    hits: u64,
    misses: u64,
    /// The owners whose seeds its front table got (`seed.rs`).
    seeded: Vec<u32>,
}

impl PieceCache {
    /// A cache of at most `bytes` bytes of slots (see `shape`; under two
    /// slots' worth: a cache that holds nothing).
    pub(crate) fn with_bytes(bytes: usize) -> Self {
        let (front, sets, long) = Self::shape(bytes);
        let c = PieceCache {
            slots: vec![Slot::default(); sets * 2].into_boxed_slice(),
            sets,
            front: vec![FrontSlot::default(); front].into_boxed_slice(),
            front_shift: 64 - front.max(1).trailing_zeros(),
            long: LongTier::with_bytes(long),
            generation: GENERATION.load(Ordering::Relaxed),
            budget: bytes,
            hits: 0,
            misses: 0,
            seeded: Vec::new(),
        };
        ALLOCATED.fetch_add(c.bytes(), Ordering::Relaxed);
        c
    }

    /// (front slots, sets, long-tier bytes) of a cache of at most `bytes`
    /// bytes: the front table takes a power of two slots, at most
    /// 1/`FRONT_SHARE` of the budget (none under 64 KB); the long tier 1/4
    /// (none under 64 KB: long pieces are few, but half the bytes of
    /// multilingual text); the sets the rest.
    fn shape(bytes: usize) -> (usize, usize, usize) {
        let bytes = bytes.min(MAX_CACHE_BYTES);
        let front = if bytes < 64 << 10 { 0 } else { (bytes / FRONT_SHARE / FRONT_BYTES).next_power_of_two() };
        let front = if front * FRONT_BYTES > bytes / FRONT_SHARE { front / 2 } else { front };
        let long = if bytes < 64 << 10 { 0 } else { LongTier::with_bytes(bytes / 4).bytes() };
        (front, (bytes - front * FRONT_BYTES - long) / (2 * SLOT_BYTES), long)
    }

    /// Bytes its tables take (the long tier's ring and index included).
    pub fn bytes(&self) -> usize {
        self.slots.len() * SLOT_BYTES + self.front.len() * FRONT_BYTES + self.long.bytes()
    }

    /// Appends the ids cached for a piece of more than `MAX_PIECE` bytes
    /// (and at most `MAX_LONG_PIECE`) under `owner` to `out`; true if it did.
    pub(crate) fn get_long_into(&mut self, owner: u32, piece: &[u8], out: &mut Vec<u32>) -> bool {
        let hit = self.long.get_into(owner, piece, out);
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        hit
    }

    /// (hits, misses) since it was made.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// Forgets every entry (keeps the memory).
    pub fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.front.fill(FrontSlot::default());
        self.long.clear();
        self.seeded.clear();
    }

    #[inline]
    fn set_of(&self, key: &Key) -> (usize, usize) {
        // the top 32 bits of the hash scaled to the number of sets; a set is
        // two slots side by side
        let s = ((((key.hash >> 32) * self.sets as u64) >> 32) as usize) << 1;
        (s, s + 1)
    }

    /// The front key of `key`'s piece, if it may be held there.
    #[inline]
    fn front_key(key: &Key) -> Option<FrontKey> {
        // `load` pads with zeros as `FrontKey::of` does
        (key.len as usize <= FRONT_PIECE).then(|| FrontKey { lo: key.words[0], hi: key.words[1] | (key.len as u64) << 56 })
    }

    /// The front slot of `key`, if its piece may be held there.
    #[inline]
    fn front_of(&self, key: &Key) -> Option<usize> {
        Self::front_key(key).filter(|_| !self.front.is_empty()).map(|k| k.home(key.owner, self.front_shift))
    }

    #[inline]
    fn front_matches(slot: &FrontSlot, key: &Key) -> bool {
        Self::front_key(key).is_some_and(|k| slot.holds(k, key.owner))
    }

    #[inline]
    fn put_front(&mut self, f: usize, key: &Key, ids: &[u32]) {
        if let Some(k) = Self::front_key(key) {
            Self::write_front(&mut self.front[f], k, key.owner, ids);
        }
    }

    #[inline]
    fn write_front(slot: &mut FrontSlot, key: FrontKey, owner: u32, ids: &[u32]) {
        debug_assert!((1..=FRONT_IDS).contains(&ids.len()));
        slot.lo = key.lo;
        slot.hi = key.hi | (ids.len() as u64) << 60;
        slot.owner = owner;
        slot.ids = [0; FRONT_IDS];
        slot.ids[..ids.len()].copy_from_slice(ids);
    }

    /// The front table and its `FrontKey::home` shift: a lexer's words are
    /// probed there a chunk at a time (`batch.rs`). Empty when the cache holds nothing.
    #[inline]
    pub(crate) fn front_table(&self) -> (&[FrontSlot], u32) {
        if self.slots.is_empty() {
            return (&[], 64);
        }
        (&self.front, self.front_shift)
    }

    /// Puts `key`'s piece under `owner` in the front table with its `ids`
    /// (1 to `FRONT_IDS` of them; no-op otherwise or without a front table).
    #[inline]
    pub(crate) fn put_front_key(&mut self, key: FrontKey, owner: u32, ids: &[u32]) {
        if self.front.is_empty() || self.slots.is_empty() || !(1..=FRONT_IDS).contains(&ids.len()) {
            return;
        }
        let f = key.home(owner, self.front_shift);
        self.keep_displaced(f);
        Self::write_front(&mut self.front[f], key, owner, ids);
    }

    /// Counts hits and misses served outside `get` (`batch.rs`).
    #[inline]
    pub(crate) fn count(&mut self, hits: u64, misses: u64) {
        self.hits += hits;
        self.misses += misses;
    }

    #[inline]
    fn matches(slot: &Slot, key: &Key) -> bool {
        slot.len == key.len && slot.owner == key.owner && slot.key == key.words
    }

    /// Appends the ids of `piece` (not empty) under `owner` to `out`: the
    /// cached ones, else those `compute` appends, which are then kept
    /// (pieces of up to `MAX_PIECE` bytes in the sets, longer ones of up to
    /// `MAX_LONG_PIECE` in the long tier; longer still are not kept).
    #[inline]
    pub(crate) fn through(
        &mut self,
        owner: u32,
        piece: &[u8],
        out: &mut Vec<u32>,
        compute: impl FnOnce(&mut Vec<u32>) -> crate::error::Result<()>,
    ) -> crate::error::Result<()> {
        let start = out.len();
        match Key::new(owner, piece) {
            Some(key) => {
                if let Some(ids) = self.get(&key) {
                    out.extend_from_slice(ids);
                    return Ok(());
                }
                compute(out)?;
                self.insert(&key, &out[start..]);
            }
            None if piece.len() > MAX_LONG_PIECE => compute(out)?,
            None => {
                if self.get_long_into(owner, piece, out) {
                    return Ok(());
                }
                compute(out)?;
                self.long.insert(owner, piece, &out[start..]);
            }
        }
        Ok(())
    }

    /// The ids cached for `key`, if any (and marks the entry recently used).
    #[inline]
    pub fn get(&mut self, key: &Key) -> Option<&[u32]> {
        if self.slots.is_empty() {
            return None;
        }
        let f = self.front_of(key);
        if let Some(f) = f {
            if Self::front_matches(&self.front[f], key) {
                self.hits += 1;
                self.front[f].hi |= FRONT_HIT;
                let slot = &self.front[f];
                return Some(&slot.ids[..slot.len()]);
            }
        }
        let (s, t) = self.set_of(key);
        let at = if Self::matches(&self.slots[s], key) {
            s
        } else if Self::matches(&self.slots[t], key) {
            t
        } else {
            self.misses += 1;
            return None;
        };
        self.hits += 1;
        self.slots[at].hot = 1;
        let n = self.slots[at].n as usize;
        if let Some(f) = f.filter(|_| n <= FRONT_IDS) {
            // a hit in the sets moves up to the front
            let ids = self.slots[at].ids;
            self.put_front(f, key, &ids[..n]);
        }
        let slot = &self.slots[at];
        Some(&slot.ids[..n])
    }

    /// Marks recently used the set slot of the piece that front slot `f`
    /// holds, which a new piece is about to displace: its hits were served by
    /// the front and never reached its set.
    fn keep_displaced(&mut self, f: usize) {
        let old = self.front[f];
        if old.hi & FRONT_HIT == 0 {
            return;
        }
        // the front key's high word less its length is `load`'s second word
        let len = (old.hi >> 56 & 0xF) as u8;
        let words = [old.lo, old.hi & ((1 << 56) - 1), 0];
        let key = Key { words, owner: old.owner, len, hash: Key::hash(words, len as usize, old.owner) };
        let (s, t) = self.set_of(&key);
        for at in [s, t] {
            if Self::matches(&self.slots[at], &key) {
                self.slots[at].hot = 1;
            }
        }
    }

    /// Whether a set slot's piece was used since it was last cooled: its hot
    /// bit, or a hit in the front table, whose hits never reach the set.
    fn recently_used(&self, at: usize) -> bool {
        let slot = &self.slots[at];
        if slot.hot != 0 {
            return true;
        }
        let key = Key::of_slot(slot);
        self.front_of(&key).is_some_and(|f| self.front[f].hi & FRONT_HIT != 0 && Self::front_matches(&self.front[f], &key))
    }

    /// Remembers that `key`'s piece encodes to `ids` (ignored when there are
    /// more than `MAX_IDS`).
    #[inline]
    pub(crate) fn insert(&mut self, key: &Key, ids: &[u32]) {
        if self.slots.is_empty() || ids.len() > MAX_IDS {
            return;
        }
        if let Some(f) = self.front_of(key).filter(|_| ids.len() <= FRONT_IDS) {
            self.keep_displaced(f);
            self.put_front(f, key, ids);
        }
        let (s, t) = self.set_of(key);
        let (a, b) = (&self.slots[s], &self.slots[t]);
        let at = if a.len == 0 || Self::matches(a, key) {
            s
        } else if b.len == 0 || Self::matches(b, key) {
            t
        } else if !self.recently_used(s) {
            s
        } else if !self.recently_used(t) {
            t
        } else {
            // both recently used: cool both (second chance), replace one
            self.slots[s].hot = 0;
            self.slots[t].hot = 0;
            if key.hash & 1 == 0 { s } else { t }
        };
        let slot = &mut self.slots[at];
        slot.key = key.words;
        slot.owner = key.owner;
        slot.len = key.len;
        slot.n = ids.len() as u8;
        slot.hot = 0;
        slot.ids[..ids.len()].copy_from_slice(ids);
    }
}

impl Drop for PieceCache {
    fn drop(&mut self) {
        ALLOCATED.fetch_sub(self.bytes(), Ordering::Relaxed);
    }
}

/// Budget of each thread's cache, in bytes.
static CACHE_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_CACHE_BYTES);
/// Bumped by `clear_all`: thread caches empty themselves at their next use.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Bytes held by all caches of all threads.
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static NEXT_OWNER: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static THREAD_CACHE: RefCell<Option<PieceCache>> = const { RefCell::new(None) };
}

/// A fresh owner number for a vocabulary (wraps after 2^32 vocabularies;
/// `clear_all` is called then, so old entries cannot be mistaken).
pub(crate) fn new_owner() -> u32 {
    let owner = NEXT_OWNER.fetch_add(1, Ordering::Relaxed);
    if owner == 0 {
        clear_all();
    }
    owner
}

/// Sets the budget of each thread's cache (bytes; 0 turns caching off).
/// Caches are re-made at their thread's next use. At most `MAX_CACHE_BYTES`.
pub fn set_cache_bytes(bytes: usize) {
    CACHE_BYTES.store(bytes.min(MAX_CACHE_BYTES), Ordering::Relaxed);
}

/// The budget of each thread's cache, in bytes.
pub fn cache_bytes() -> usize {
    CACHE_BYTES.load(Ordering::Relaxed)
}

/// Bumped by `clear_all`: a thread's caches made before are emptied at their next use.
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// Bytes held by the caches of all threads now.
pub fn allocated_bytes() -> usize {
    ALLOCATED.load(Ordering::Relaxed)
}

/// Empties every thread's cache (lazily, at its next use), so that a
/// benchmark can time encoding from a cold start.
pub(crate) fn clear_all() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Appends the cached ids of `key` to `ids`: `Some(true)` on a hit,
/// `Some(false)` on a miss, None when this thread has no cache.
pub(crate) fn extend_from_cache(key: &Key, ids: &mut Vec<u32>) -> Option<bool> {
    with_thread_cache(|c| match c.get(key) {
        Some(got) => {
            ids.extend_from_slice(got);
            true
        }
        None => false,
    })
}

/// Runs `body` with this thread's piece cache when `wanted` and the cache
/// can be had (the budget is not 0, the cache is not already borrowed),
/// else with none: the one place a caller's encoding loop picks its cache.
#[inline]
pub(crate) fn with_cache_if<R>(wanted: bool, mut body: impl FnMut(Option<&mut PieceCache>) -> R) -> R {
    let done = if wanted { with_thread_cache(|c| body(Some(c))) } else { None };
    match done {
        Some(r) => r,
        None => body(None),
    }
}

/// Runs `f` on this thread's cache, made (or re-made after `clear_all` or
/// a change of budget) as needed. None when caching is off or the cache is
/// already in use on this thread (a re-entrant call).
#[inline]
pub(crate) fn with_thread_cache<R>(f: impl FnOnce(&mut PieceCache) -> R) -> Option<R> {
    THREAD_CACHE
        .try_with(|cell| {
            let mut guard = cell.try_borrow_mut().ok()?;
            let budget = CACHE_BYTES.load(Ordering::Relaxed);
            let generation = GENERATION.load(Ordering::Relaxed);
            let cache = match guard.as_mut() {
                Some(c) if c.generation == generation && c.budget == budget => c,
                _ => {
                    *guard = None; // free the old one first
                    if PieceCache::size_for(budget) == 0 {
                        return None;
                    }
                    guard.insert(PieceCache::with_bytes(budget))
                }
            };
            if cache.slots.is_empty() {
                return None;
            }
            Some(f(cache))
        })
        .ok()
        .flatten()
}

impl PieceCache {
    /// Bytes `with_bytes(bytes)` would take.
    pub fn size_for(bytes: usize) -> usize {
        let (front, sets, long) = Self::shape(bytes);
        if sets == 0 {
            0
        } else {
            front * FRONT_BYTES + sets * 2 * SLOT_BYTES + long
        }
    }
}

/// (hits, misses) of this thread's cache.
pub fn thread_stats() -> (u64, u64) {
    THREAD_CACHE.with(|c| c.borrow().as_ref().map_or((0, 0), PieceCache::stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use std::collections::HashMap;

    #[test]
    fn slots_are_one_cache_line() {
        assert_eq!(SLOT_BYTES, 64);
    }

    #[test]
    fn keys_are_distinct_for_distinct_pieces() {
        // every length, with zero bytes (padding must not alias)
        let mut seen = HashMap::new();
        for n in 1..=MAX_PIECE {
            for fill in [0u8, 1, 255] {
                let piece = vec![fill; n];
                let k = Key::new(7, &piece).unwrap();
                assert!(seen.insert((k.words, k.len), piece.clone()).is_none(), "{piece:?}");
            }
        }
        assert!(Key::new(1, &[]).is_none());
        assert!(Key::new(1, &[0; MAX_PIECE + 1]).is_none());
    }

    #[test]
    fn every_byte_of_a_short_piece_moves_its_slots() {
        // pieces that share their first bytes (" the", " then", " there" ...)
        // must spread over the front table and both set slots: an index
        // made from the hash's low bits alone (a product's low bits see only
        // the input's low bits) put them all in one slot
        let c = PieceCache::with_bytes(DEFAULT_CACHE_BYTES);
        for prefix in ["", " the", "abcdefg", "0123456789abcde"] {
            let keys: Vec<Key> = (0..1000u32)
                .map(|i| Key::new(1, format!("{prefix}{}", char::from_u32(0x4E00 + i).unwrap()).as_bytes()).unwrap())
                .collect();
            let distinct = |f: &dyn Fn(&Key) -> usize| keys.iter().map(f).collect::<std::collections::HashSet<_>>().len();
            if keys[0].len as usize <= FRONT_PIECE {
                assert!(distinct(&|k| c.front_of(k).unwrap()) > 900, "front, prefix {prefix:?}");
            }
            assert!(distinct(&|k| c.set_of(k).0) > 900, "first slot, prefix {prefix:?}");
            assert!(distinct(&|k| c.set_of(k).1) > 900, "second slot, prefix {prefix:?}");
            assert!(keys.iter().all(|k| c.set_of(k).0 != c.set_of(k).1));
        }
    }

    #[test]
    fn hits_return_exactly_what_was_inserted_under_eviction() {
        // a tiny cache (many evictions) against a map of every insertion:
        // a hit is always the latest ids of that piece and owner
        let mut rng = Rng(0x5EED_1234_5678_9ABC);
        for bytes in [128usize, 1024, 64 * 1024] {
            let mut c = PieceCache::with_bytes(bytes);
            let mut model: HashMap<(u32, Vec<u8>), Vec<u32>> = HashMap::new();
            let mut hits = 0;
            for _ in 0..50_000 {
                let n = 1 + rng.below(MAX_PIECE);
                let piece: Vec<u8> = (0..n).map(|_| [0u8, b'a', b'b', 0xff][rng.below(4)]).collect();
                let owner = 1 + rng.below(3) as u32;
                let key = Key::new(owner, &piece).unwrap();
                let want = model.get(&(owner, piece.clone()));
                match c.get(&key) {
                    Some(got) => {
                        hits += 1;
                        assert_eq!(Some(&got.to_vec()), want, "{owner} {piece:?}");
                    }
                    None => {
                        let ids: Vec<u32> = (0..rng.below(MAX_IDS + 2)).map(|_| rng.below(1000) as u32).collect();
                        c.insert(&key, &ids);
                        if ids.len() <= MAX_IDS {
                            assert_eq!(c.get(&key), Some(&ids[..]));
                        } else {
                            assert!(c.get(&key).is_none()); // too many ids: not kept
                        }
                        model.insert((owner, piece), ids);
                    }
                }
            }
            assert!(hits > 0);
        }
    }

    #[test]
    fn long_pieces_go_through_the_long_tier_within_the_budget() {
        // `through` keeps a long piece's ids (its tier: `long.rs`'s tests)
        // and counts the hit; the cache's memory is what `size_for` says
        let mut c = PieceCache::with_bytes(64 << 10);
        assert!(c.long.bytes() > 0);
        let piece = vec![b'x'; MAX_PIECE + 10];
        let mut out = Vec::new();
        c.through(3, &piece, &mut out, |o| {
            o.extend([5, 6, 7]);
            Ok(())
        })
        .unwrap();
        out.clear();
        c.through(3, &piece, &mut out, |_| panic!("computed again")).unwrap();
        assert_eq!(out, [5, 6, 7]);
        assert_eq!(c.stats(), (1, 1));
        assert_eq!(PieceCache::size_for(64 << 10), c.bytes());
        assert!(c.bytes() <= 64 << 10);
    }

    #[test]
    fn hot_entries_survive_a_stream_of_one_off_pieces() {
        let mut c = PieceCache::with_bytes(64 * 1024);
        let hot: Vec<Key> = (0..64u32).map(|i| Key::new(1, format!("hot{i}").as_bytes()).unwrap()).collect();
        for k in &hot {
            c.insert(k, &[1, 2]);
        }
        for round in 0..200u32 {
            for k in &hot {
                let _ = c.get(k);
            }
            for j in 0..100u32 {
                let k = Key::new(1, format!("cold{round}.{j}").as_bytes()).unwrap();
                if c.get(&k).is_none() {
                    c.insert(&k, &[3]);
                }
            }
        }
        // not-recently-used eviction in two-slot sets: a one-off piece takes
        // the cold slot of its set, so a hot piece is lost only when the other
        // slot of its set holds a hot piece too; every other one is kept
        let sets: Vec<usize> = hot.iter().map(|k| c.set_of(k).0).collect();
        let alone: Vec<&Key> = hot.iter().zip(&sets).filter(|(_, s)| sets.iter().filter(|t| t == s).count() == 1).map(|(k, _)| k).collect();
        assert!(alone.len() >= 32, "{} of 64 hot pieces alone in their set", alone.len());
        for k in alone {
            assert!(c.get(k).is_some(), "a hot piece alone in its set was evicted");
        }
    }

    #[test]
    fn budget_sets_the_size_and_zero_turns_it_off() {
        assert_eq!(PieceCache::with_bytes(0).bytes(), 0);
        assert_eq!(PieceCache::with_bytes(100).bytes(), 0);
        assert_eq!(PieceCache::with_bytes(4 << 20).bytes(), 4 << 20);
        let odd = PieceCache::with_bytes((4 << 20) + 100).bytes();
        assert!(odd <= (4 << 20) + 100 && odd > (4 << 20) - 2 * SLOT_BYTES, "{odd}");
        let mut off = PieceCache::with_bytes(0);
        let k = Key::new(1, b"abc").unwrap();
        off.insert(&k, &[1]);
        assert!(off.get(&k).is_none());
    }
}
