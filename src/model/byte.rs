//! The byte model: tiktoken's rule on one piece, with the token lookup
//! (`ByteRanks`), the table of token concatenations (`ConcatRanks`) and the
//! merge strategies (stack loop for short pieces, quadratic scan, bucket
//! queue and heap for long ones, dropout).

use super::scratch::{Scratch, SCRATCH};
use super::dropout::Dropout;
use super::queue::MAX_QUEUE_RANKS;
use super::window::{merge_in_windows, Part, PartSink, WINDOW};
use super::atoms::Atoms;
use super::NONE;
use crate::error::{Error, Result};
use crate::cache;
use crate::cache::seed::FrontSeed;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::cmp::Reverse;
use std::collections::BinaryHeap;


/// Token bytes to id, for the byte model. When two ids share the same
/// bytes, the smaller id is the rank.
#[derive(Debug, Clone)]
pub(crate) struct ByteRanks {
    /// Token bytes to rank (the whole-piece lookup).
    table: TokenTable,
    /// Id of every single byte (tiktoken vocabularies do not use id = byte).
    byte_ids: [Option<u32>; 256],
    /// (left rank, right rank) -> rank of the two tokens' concatenation:
    /// merging needs no bytes hashed. `None` when some byte has no token
    /// (parts are then not always tokens, so they are merged by bytes).
    pairs: Option<ConcatRanks>,
    /// Names this vocabulary in the per-thread piece cache
    /// (`crate::cache`; clones share it: same tokens, same
    /// segmentations).
    owner: u32,
    /// One more than the largest rank (size of the long-piece queue).
    rank_bound: usize,
    /// Length of the longest token: longer spans are not looked up.
    max_len: usize,
    /// Whether no two of the tokens given have the same bytes (each rank is then its token's only id).
    distinct: bool,
    /// `byte_ids` with `NONE` for none, as the atoms read them.
    byte_syms: [u32; 256],
    /// The characters a missed piece's merges may start from (`atoms.rs`; empty without `pairs`).
    atoms: std::sync::Arc<Atoms>,
    /// The most frequent tokens, for a thread's front table (`cache::seed`): a piece that is a token is
    /// that token.
    seed: std::sync::Arc<FrontSeed>,
}

/// Tokens of up to this many bytes are keyed by `pack`.
const PACKED: usize = 15;

/// Up to `PACKED` bytes and their length as two words (distinct for
/// distinct byte strings: the length is the top byte; two words, not a
/// `u128`, whose alignment made a table bucket 32 bytes, not 24). Built
/// from two overlapping word loads rather than a variable-length copy (a
/// `memcpy` call per lookup).
#[inline]
fn pack(bytes: &[u8]) -> (u64, u64) {
    let n = bytes.len();
    debug_assert!(n <= PACKED);
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let half = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as u64;
    // the overlapping bytes of the two loads land on the same bits
    let (lo, hi) = if n >= 8 {
        (word(0), if n > 8 { word(n - 8) >> ((16 - n) * 8) } else { 0 })
    } else if n >= 4 {
        (half(0) | half(n - 4) << ((n - 4) * 8), 0)
    } else {
        let mut v = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            v |= (b as u64) << (i * 8);
        }
        (v, 0)
    };
    (lo, hi | (n as u64) << 56)
}

/// Token bytes to id: the lookup of a whole piece. Two-byte tokens (the
/// most frequent lookups) by a direct table, tokens of up to `PACKED` bytes
/// by one packed integer (one multiply to hash, one comparison, no
/// memcmp), longer ones by their bytes. Beside each id, one byte its model
/// may use (`get_marked`, 0 at first: the pipeline BPE remembers there
/// whether the token encodes to itself), in the same bucket as the id: an
/// array of such bytes by id cost a second cache miss per piece on
/// DeepSeek V3, and the bucket is 24 bytes with or without it.
#[derive(Debug, Clone)]
pub(crate) struct TokenTable {
    short: FxHashMap<(u64, u64), Entry>,
    long: FxHashMap<Vec<u8>, Entry>,
    /// the longest token's length: a longer piece (a run of CJK) is no token, and is not hashed
    longest: usize,
    /// id of every two-byte token, indexed by `b0 << 8 | b1` (`NONE`: none)
    pair_ranks: Box<[u32]>,
    /// the marks of the two-byte tokens, indexed alike
    pair_marks: Box<[Mark]>,
}

/// The byte a model keeps beside a token (0 at first).
#[derive(Debug, Default)]
struct Mark(AtomicU8);

impl Clone for Mark {
    fn clone(&self) -> Self {
        Mark(AtomicU8::new(self.0.load(Ordering::Relaxed)))
    }
}

/// A token's id and mark.
#[derive(Debug, Clone)]
struct Entry {
    id: u32,
    mark: Mark,
}

impl Entry {
    fn new(id: u32) -> Self {
        Entry { id, mark: Mark::default() }
    }
}

impl TokenTable {
    /// An empty table with room for `short` tokens of up to `PACKED` bytes and `long` longer ones.
    pub(crate) fn with_capacity(short: usize, long: usize) -> Self {
        TokenTable {
            short: FxHashMap::with_capacity_and_hasher(short, Default::default()),
            long: FxHashMap::with_capacity_and_hasher(long, Default::default()),
            longest: 0,
            pair_ranks: vec![NONE; 1 << 16].into_boxed_slice(),
            pair_marks: (0..1 << 16).map(|_| Mark::default()).collect(),
        }
    }

    /// Adds a token, or keeps the smaller id of bytes given twice; whether the bytes were new.
    pub(crate) fn insert_min(&mut self, t: &[u8], r: u32) -> bool {
        use std::collections::hash_map::Entry as Slot;
        self.longest = self.longest.max(t.len());
        if t.len() > PACKED {
            return match self.long.get_mut(t) {
                Some(old) => {
                    old.id = old.id.min(r);
                    false
                }
                None => {
                    self.long.insert(t.to_vec(), Entry::new(r));
                    true
                }
            };
        }
        let (new, kept) = match self.short.entry(pack(t)) {
            Slot::Vacant(e) => (true, e.insert(Entry::new(r)).id),
            Slot::Occupied(mut e) => {
                let kept = e.get().id.min(r);
                e.get_mut().id = kept;
                (false, kept)
            }
        };
        if t.len() == 2 {
            self.pair_ranks[(t[0] as usize) << 8 | t[1] as usize] = kept;
        }
        new
    }

    /// Adds a token (bytes not in the table yet): a loader's tokens go in one by one, without a map
    /// of their bytes made first.
    pub(crate) fn insert(&mut self, t: &[u8], r: u32) {
        self.longest = self.longest.max(t.len());
        if t.len() == 2 {
            self.pair_ranks[(t[0] as usize) << 8 | t[1] as usize] = r;
        }
        if t.len() <= PACKED {
            self.short.insert(pack(t), Entry::new(r));
        } else {
            self.long.insert(t.to_vec(), Entry::new(r));
        }
    }

    /// The id of these bytes, if they are a token (inlined into the
    /// encoders' per-piece loops: a call's register saves cost as much as
    /// the lookup).
    #[inline(always)]
    pub(crate) fn get(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() == 2 {
            let r = self.pair(bytes[0], bytes[1]);
            return (r != NONE).then_some(r);
        }
        self.entry(bytes).map(|e| e.id)
    }

    /// The entry of a token of any length but two (`pair_ranks` has those).
    #[inline(always)]
    fn entry(&self, bytes: &[u8]) -> Option<&Entry> {
        if bytes.len() <= PACKED {
            self.short.get(&pack(bytes))
        } else if bytes.len() > self.longest {
            None
        } else {
            self.long.get(bytes)
        }
    }

    /// `get`, with the token's mark (in the same bucket as its id).
    #[inline(always)]
    pub(crate) fn get_marked(&self, bytes: &[u8]) -> Option<(u32, &AtomicU8)> {
        if bytes.len() == 2 {
            let at = (bytes[0] as usize) << 8 | bytes[1] as usize;
            let r = self.pair_ranks[at];
            return (r != NONE).then(|| (r, &self.pair_marks[at].0));
        }
        self.entry(bytes).map(|e| (e.id, &e.mark.0))
    }

    /// The id of the two-byte token `a b`, `NONE` if there is none.
    #[inline]
    pub(crate) fn pair(&self, a: u8, b: u8) -> u32 {
        self.pair_ranks[(a as usize) << 8 | b as usize]
    }
}

/// An open-addressing table from (left rank, right rank) to the rank of
/// the concatenated token: the lookup every merge step makes, on two
/// integers and one cache line (12-byte slots, linear probing, at most half
/// full). Pairs of two small numbers (below `GRID_SIDE`: the frequent
/// tokens, whose merges most lookups ask for) are read from a square grid
/// instead, one load from a region that the cache keeps.
#[derive(Debug, Clone)]
pub(crate) struct ConcatRanks {
    /// (left, right, merged); `left == NONE`: empty slot
    slots: Box<[[u32; 3]]>,
    shift: u32,
    /// the merged rank of `left < side, right < side` at `left << side_bits | right` (`NONE`: none); the
    /// side is a power of two, at most `GRID_SIDE`, the smallest above every number given, and smaller
    /// still while the grid would have more than 16 cells per pair
    grid: Box<[u32]>,
    side_bits: u32,
    /// One bit per hash of every pair present: most pairs looked up are
    /// absent, and this small table (in the L2 cache) says so without
    /// touching `slots`.
    filter: Box<[u64]>,
}

/// Merges `part`'s symbols (at most `N`) by `pairs` on the stack (`ConcatRanks::merge_short`, `result`
/// giving a rank's merged symbol) and appends what is left to `out`.
#[inline]
pub(crate) fn merge_symbols<const N: usize>(pairs: &ConcatRanks, part: &[(u32, u32)], result: impl Fn(u32) -> u32, out: &mut Vec<u32>) {
    let mut ids = [NONE; N];
    for (id, s) in ids.iter_mut().zip(part) {
        *id = s.0;
    }
    let len = pairs.merge_short::<N>(&mut ids[..part.len()], result);
    out.extend_from_slice(&ids[..len]);
}

/// Longest token `ConcatRanks` holds: merges into longer tokens (only in
/// pieces longer than `SHORT_PIECE`) are looked up by bytes. Bounds the
/// work of building the table on vocabularies with huge tokens.
const PAIR_MAX_LEN: usize = SHORT_PIECE;

/// Largest side of `ConcatRanks::grid` (4 MB of ranks at most): the merges
/// of Llama 3's English pieces took 362 ns a word without it, 326 with a
/// grid of 256 (the bytes' pairs), 296-325 with 512 and 277-288 with 1024.
const GRID_SIDE: usize = 1024;

/// log2 of the bits in `ConcatRanks::filter` (256 KB).
const FILTER_BITS: u32 = 21;

impl ConcatRanks {
    /// Every split of every token of up to `PAIR_MAX_LEN` bytes into two
    /// tokens (looked up in `table`, whose packed keys need no key bytes
    /// read from the heap); `None` (merge by bytes) if a vocabulary has
    /// implausibly many such splits (real ones have about two per token).
    fn of_tokens(tokens: &[(&[u8], u32)], table: &TokenTable) -> Option<Self> {
        let most = tokens.len() * 8 + (1 << 16);
        // in parallel, a share of the tokens per task (a tenth of a 100k-token file's load on one thread);
        // a task past the bound alone stops early, so that a hostile vocabulary never fills memory
        let parts = crate::parallel::map_chunks(tokens, DERIVE_CHUNK, |_, share| {
            let mut pairs = Vec::with_capacity(share.len() * 2);
            for &(t, r) in share {
                if t.len() > PAIR_MAX_LEN {
                    continue;
                }
                for i in 1..t.len() {
                    // the right part looked up only when the left one is a token
                    if let Some(a) = table.get(&t[..i]) {
                        if let Some(b) = table.get(&t[i..]) {
                            pairs.push((a, b, r));
                        }
                    }
                }
                if pairs.len() > most {
                    return None;
                }
            }
            Some(pairs)
        });
        let parts: Vec<Vec<(u32, u32, u32)>> = parts.into_iter().collect::<Option<_>>()?;
        if parts.iter().map(Vec::len).sum::<usize>() > most {
            return None;
        }
        Some(ConcatRanks::new(&parts.concat()))
    }

    pub(crate) fn new(pairs: &[(u32, u32, u32)]) -> Self {
        let largest = pairs.iter().map(|&(a, b, _)| a.max(b)).max().unwrap_or(0) as usize;
        let mut side_bits = (largest + 1).next_power_of_two().min(GRID_SIDE).trailing_zeros();
        // a grid pays for its memory where it is dense: at most 16 cells per pair (a small vocabulary's
        // few merges keep a small grid, and a small slot table that the cache keeps anyway)
        while side_bits > 0 && 1usize << (2 * side_bits) > 16 * pairs.len() {
            side_bits -= 1;
        }
        // the grid's pairs stay out of the slots (Llama 3's slot table halves: 12 MB to 6)
        let in_slots = pairs.iter().filter(|&&(a, b, _)| (a | b) >> side_bits != 0).count();
        let bits = (in_slots.max(1) * 2).next_power_of_two().trailing_zeros().max(4);
        let mut t = ConcatRanks {
            slots: vec![[NONE; 3]; 1 << bits].into_boxed_slice(),
            shift: 64 - bits,
            grid: vec![NONE; 1 << (2 * side_bits)].into_boxed_slice(),
            side_bits,
            filter: vec![0; 1 << (FILTER_BITS - 6)].into_boxed_slice(),
        };
        for &(a, b, m) in pairs {
            if let Some(at) = t.grid_index(a, b) {
                t.grid[at] = m;
                continue;
            }
            let f = Self::filter_bit(a, b);
            t.filter[f >> 6] |= 1 << (f & 63);
            let mut i = t.home(a, b);
            while t.slots[i][0] != NONE && (t.slots[i][0], t.slots[i][1]) != (a, b) {
                i = (i + 1) & (t.slots.len() - 1);
            }
            t.slots[i] = [a, b, m];
        }
        t
    }

    #[inline]
    fn home(&self, a: u32, b: u32) -> usize {
        ((((a as u64) << 32 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> self.shift) as usize
    }

    #[inline]
    fn filter_bit(a: u32, b: u32) -> usize {
        ((((a as u64) << 32 | b as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)) >> (64 - FILTER_BITS)) as usize
    }

    /// Where the grid holds the pair `a b`, if it does.
    #[inline(always)]
    fn grid_index(&self, a: u32, b: u32) -> Option<usize> {
        ((a | b) >> self.side_bits == 0).then(|| (a as usize) << self.side_bits | b as usize)
    }

    /// Calls `f(left, right, rank)` for every pair the table holds.
    pub(crate) fn for_each(&self, f: &mut dyn FnMut(u32, u32, u32)) {
        let mask = (1usize << self.side_bits) - 1;
        for (at, &m) in self.grid.iter().enumerate() {
            if m != NONE {
                f((at >> self.side_bits) as u32, (at & mask) as u32, m);
            }
        }
        for &[a, b, m] in self.slots.iter() {
            if a != NONE {
                f(a, b, m);
            }
        }
    }

    /// Merges a short word of token numbers in place by these ranks (`pairs::merge_lowest_linked`, on `N`
    /// entries of stack room, `syms.len() <= N`): the pair of lowest rank first, the leftmost of equal ones,
    /// its two numbers replaced by `result(rank)`. Returns the numbers left.
    #[inline(always)]
    pub(crate) fn merge_short<const N: usize>(&self, syms: &mut [u32], result: impl Fn(u32) -> u32) -> usize {
        let mut pairs = [(NONE, ()); N];
        let pair = |a, b| match self.merged(a, b) {
            NONE => None,
            rank => Some((rank, ())),
        };
        super::pairs::merge_lowest_linked::<N, _, _>(syms, &mut pairs, pair, |_, _, rank, ()| result(rank))
    }

    /// Rank of the concatenation of tokens `a` and `b`, `NONE` if it is
    /// not a token.
    #[inline]
    pub(crate) fn merged(&self, a: u32, b: u32) -> u32 {
        if let Some(at) = self.grid_index(a, b) {
            return self.grid[at];
        }
        let f = Self::filter_bit(a, b);
        if self.filter[f >> 6] & (1 << (f & 63)) == 0 {
            return NONE;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(a, b);
        loop {
            let [x, y, m] = self.slots[i];
            if x == a && y == b {
                return m;
            }
            if x == NONE {
                return NONE;
            }
            i = (i + 1) & mask;
        }
    }
}

/// Pieces up to this many bytes use the simple quadratic scan (fastest for
/// short pieces); longer ones a bucket queue over a linked list (linear).
const SHORT_PIECE: usize = 128;

impl ByteRanks {
    /// From (token bytes, id) pairs; bytes given twice keep the smaller id.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn new(tokens: impl IntoIterator<Item = (Vec<u8>, u32)>) -> Self {
        let owned: Vec<(Vec<u8>, u32)> = tokens.into_iter().collect();
        Self::of_slices(owned.iter().map(|(t, id)| (t.as_slice(), *id)))
    }

    /// `new` of borrowed bytes (a tokenizer's table: no copy of each token made for the build), the
    /// tokens put straight into the lookup table (no map of their bytes made first).
    pub(crate) fn of_slices<'a>(tokens: impl IntoIterator<Item = (&'a [u8], u32)>) -> Self {
        let tokens: Vec<(&[u8], u32)> = tokens.into_iter().collect();
        let n_long = tokens.iter().filter(|(t, _)| t.len() > PACKED).count();
        let mut table = TokenTable::with_capacity(tokens.len() - n_long, n_long);
        let mut distinct = true;
        for &(t, id) in &tokens {
            distinct &= table.insert_min(t, id);
        }
        // bytes given twice: the smaller id is the rank, the other one is not a token of the lookups
        let tokens = if distinct { tokens } else { tokens.into_iter().filter(|&(t, id)| table.get(t) == Some(id)).collect() };
        let mut byte_ids = [None; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = table.get(&[b as u8]);
        }
        let rank_bound = tokens.iter().map(|&(_, r)| r as usize + 1).max().unwrap_or(0);
        let max_len = tokens.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
        let pairs = if byte_ids.iter().all(Option::is_some) { ConcatRanks::of_tokens(&tokens, &table) } else { None };
        let owner = cache::new_owner();
        let byte_syms = byte_ids.map(|id| id.unwrap_or(NONE));
        let atoms = pairs.as_ref().map_or_else(Atoms::default, |p| Atoms::build(&tokens, &byte_syms, |a, b| p.merged(a, b), |rank| rank, |f| p.for_each(f), PAIR_MAX_LEN));
        // every token is its own encoding (`encode_piece_in` looks a piece up whole first)
        let seed = FrontSeed::new(tokens.iter().copied(), |_, _| true).into();
        ByteRanks { table, byte_ids, pairs, owner, rank_bound, max_len, distinct, byte_syms, atoms: atoms.into(), seed }
    }

    /// The two tokens `derive_merges` splits the token `rank` (its bytes `t`) into, found on ids
    /// through the pair table instead of hashing byte strings: BPE on `t` with the ranks below `rank`
    /// only (the lowest first, the leftmost on ties) must end in two parts; `Some(None)` when it does
    /// not. The same result as `derive_merges`, whose ranks are these when no two tokens share their
    /// bytes; None when the ids cannot tell (no pair table, bytes given twice, `t` longer than the
    /// table's tokens or not the token `rank`): the caller then derives by bytes.
    /// `scratch`: reused space (two ids per byte of `t`).
    pub(crate) fn derived_split(&self, t: &[u8], rank: u32, scratch: &mut Vec<u32>) -> Option<Option<(u32, u32)>> {
        let pairs = self.pairs.as_ref()?;
        if !self.distinct || t.len() < 2 || t.len() > PAIR_MAX_LEN || self.rank(t) != Some(rank) {
            return None;
        }
        let below = |a: u32, b: u32| {
            let m = pairs.merged(a, b);
            if m < rank { m } else { NONE } // NONE is above every rank
        };
        let mut len = t.len();
        scratch.clear();
        for &b in t {
            scratch.push(self.byte_ids[b as usize]?);
        }
        scratch.resize(2 * len, NONE);
        let (sym, next) = scratch.split_at_mut(len); // next[k]: the rank of merging parts k and k + 1
        for k in 0..len - 1 {
            // two bytes: the direct table of two-byte tokens (no probe of the pair table)
            let m = self.table.pair(t[k], t[k + 1]);
            next[k] = if m < rank { m } else { NONE };
        }
        while len > 2 {
            let best = next[..len - 1].iter().copied().min().unwrap_or(NONE);
            if best == NONE {
                break;
            }
            let at = next[..len - 1].iter().position(|&r| r == best).unwrap_or(0);
            sym[at] = best;
            sym.copy_within(at + 2..len, at + 1);
            next.copy_within(at + 2..len, at + 1);
            len -= 1;
            next[len - 1] = NONE;
            if at + 1 < len {
                next[at] = below(sym[at], sym[at + 1]);
            }
            if at > 0 {
                next[at - 1] = below(sym[at - 1], sym[at]);
            }
        }
        Some((len == 2).then_some((sym[0], sym[1])))
    }

    /// The id (rank) of these bytes, if they are a token.
    #[inline(always)]
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.table.get(bytes)
    }

    fn byte_id(&self, b: u8) -> Result<u32> {
        self.byte_ids[b as usize].ok_or_else(|| {
            Error::Encode(format!("byte 0x{b:02X} has no token in this vocabulary"))
        })
    }

    /// Appends the ids of one piece to `out`. Pieces of up to
    /// `cache::MAX_PIECE` bytes go through this thread's piece cache
    /// (words recur: a hit costs one probe instead of the merges).
    #[inline]
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<()> {
        let done = cache::with_thread_cache(|c| self.encode_piece_in(Some(c), piece, out));
        match done {
            Some(r) => r,
            None => self.encode_piece_in(None, piece, out),
        }
    }

    /// The owner of its pieces in the piece cache.
    pub(crate) fn owner(&self) -> u32 {
        self.owner
    }

    /// Its most frequent tokens for a thread's front table (`cache::seed`).
    pub(crate) fn front_seed(&self) -> Option<&FrontSeed> {
        Some(&self.seed)
    }

    /// `encode_piece` with a cache the caller holds (borrowed once per call
    /// rather than once per piece; None: no cache). A piece that is one
    /// token is looked up first (single bytes and pairs by direct tables);
    /// the cache holds the other pieces. (Probing the cache first, with
    /// whole-piece tokens in it too, measured no faster: both are one
    /// probe of a table larger than a core's L2 cache.)
    #[inline]
    pub(crate) fn encode_piece_in(&self, cache: Option<&mut cache::PieceCache>, piece: &[u8], out: &mut Vec<u32>) -> Result<()> {
        match piece.len() {
            0 => return Ok(()),
            1 => {
                out.push(self.byte_id(piece[0])?);
                return Ok(());
            }
            2 => {
                let r = self.table.pair(piece[0], piece[1]);
                if r != NONE {
                    out.push(r);
                    return Ok(());
                }
            }
            _ => {}
        }
        if let Some(id) = self.rank(piece) {
            out.push(id);
            return Ok(());
        }
        match cache {
            Some(c) => c.through(self.owner, piece, out, |out| self.encode_parts(piece, out)),
            None => self.encode_parts(piece, out),
        }
    }

    /// `encode_piece` without the cache.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn encode_piece_uncached(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        if let Some(id) = self.rank(piece) {
            out.push(id);
            return Ok(());
        }
        self.encode_parts(piece, out)
    }

    /// The merges of a non-empty piece that is not one token.
    fn encode_parts(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<()> {
        if let Some(pairs) = &self.pairs {
            if !self.atoms.is_empty() && !piece.is_ascii() && self.encode_from_atoms(piece, pairs, out) {
                return Ok(());
            }
            if piece.len() <= SHORT_PIECE {
                self.encode_short(piece, pairs, out);
                return Ok(());
            }
        }
        if piece.len() <= SHORT_PIECE {
            let bounds = self.merge_short(piece);
            return self.push_parts(piece, &bounds, out);
        }
        // each part's token was kept while merging: no bytes hashed again
        let mut ids = IdSink { vocab: self, piece, start: out.len(), out, missing: None };
        self.merge_long(piece, &mut ids);
        // a lone byte with no token: the encode's error (byte_id gives it)
        ids.missing.map_or(Ok(()), |b| self.byte_id(b).map(drop))
    }

    /// The merges of a piece that holds atoms (`atoms.rs`), from them, part by part: a part of one symbol
    /// is its token, a short one is merged from its symbols on the stack, a long one (whose merges
    /// may make tokens the pair table lacks) from its bytes. False (nothing appended) without atoms.
    fn encode_from_atoms(&self, piece: &[u8], pairs: &ConcatRanks, out: &mut Vec<u32>) -> bool {
        let mut syms = Vec::with_capacity(piece.len());
        self.atoms.parts(piece, &self.byte_syms, &mut syms, |bytes, part| match part {
            [(id, _)] => out.push(*id),
            _ if bytes.len() <= SHORT_PIECE => match part.len() {
                0..=16 => merge_symbols::<16>(pairs, part, |rank| rank, out),
                17..=32 => merge_symbols::<32>(pairs, part, |rank| rank, out),
                _ => merge_symbols::<SHORT_PIECE>(pairs, part, |rank| rank, out),
            },
            _ => {
                let mut ids = IdSink { vocab: self, piece: bytes, start: out.len(), out: &mut *out, missing: None };
                self.merge_long(bytes, &mut ids);
            }
        })
    }

    /// Appends the ids of `piece` cut at `bounds`: each part's token, or
    /// its byte's when a part is no token (a single byte).
    fn push_parts(&self, piece: &[u8], bounds: &[usize], out: &mut Vec<u32>) -> Result<()> {
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
    pub(crate) fn encode_piece_dropout(&self, piece: &[u8], rng: &mut Dropout, out: &mut Vec<u32>) -> Result<()> {
        let mut bounds: Vec<usize> = (0..=piece.len()).collect();
        loop {
            let mut best: Option<(u32, usize)> = None;
            for i in 0..bounds.len().saturating_sub(2) {
                if let Some(r) = self.rank(&piece[bounds[i]..bounds[i + 2]]) {
                    if !rng.drop_merge() && best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            bounds.remove(i + 1);
        }
        self.push_parts(piece, &bounds, out)
    }

    /// Appends the ids of a piece of 2 to `SHORT_PIECE` bytes: tiktoken's
    /// quadratic loop on stack arrays (no allocation). Every part is a
    /// token (all bytes are), so a pair's rank comes from the two parts'
    /// ids through `ConcatRanks`, with no bytes hashed; a merged part is
    /// unlinked rather than moved, and the scan for the lowest rank skips
    /// it because its rank is `NONE`.
    fn encode_short(&self, piece: &[u8], pairs: &ConcatRanks, out: &mut Vec<u32>) {
        // stack arrays sized to the piece (filling 1.3 KB for a 5-byte
        // piece was a memset call per piece)
        match piece.len() {
            0..=16 => self.encode_short_in::<16>(piece, pairs, out),
            17..=32 => self.encode_short_in::<32>(piece, pairs, out),
            33..=64 => self.encode_short_in::<64>(piece, pairs, out),
            _ => self.encode_short_in::<SHORT_PIECE>(piece, pairs, out),
        }
    }

    /// `encode_short` on arrays of `N` (at least the piece's length, at
    /// most `SHORT_PIECE`) entries: tiktoken's rule is Hugging Face's on
    /// ranks that are the merged tokens themselves (`ConcatRanks::merge_short`).
    #[inline(always)]
    fn encode_short_in<const N: usize>(&self, piece: &[u8], pairs: &ConcatRanks, out: &mut Vec<u32>) {
        let n = piece.len();
        debug_assert!((2..=N).contains(&n) && N <= SHORT_PIECE);
        let mut ids = [NONE; N];
        for (id, &b) in ids.iter_mut().zip(piece) {
            *id = self.byte_ids[b as usize].unwrap_or(NONE);
        }
        let len = pairs.merge_short::<N>(&mut ids[..n], |rank| rank);
        out.extend_from_slice(&ids[..len]);
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

    /// The parts of a long piece after merging: a linked list of parts and
    /// a bucket queue of (rank, start) (`RankQueue`), popped lowest rank
    /// first, leftmost among equal ranks: tiktoken's order. `rank_at[s]` is
    /// the rank of the pair starting at `s` (`NONE`: none, or `s` no longer
    /// starts a part), so a stale entry is one whose rank differs; the span
    /// of the pair at `s` only grows, so a rank never comes back there.
    /// Pieces of `2 * WINDOW` bytes or more are merged a window at a time
    /// (`window.rs`: the same parts, with each window's tables in the cache).
    /// About linear for any piece (the scratch tables are kept per thread).
    fn merge_long(&self, piece: &[u8], sink: &mut impl PartSink) {
        let n = piece.len();
        if n >= u32::MAX as usize - 1 || self.rank_bound > MAX_QUEUE_RANKS {
            // sparse ids (or 4 GB in one piece, never in practice)
            let bounds = if n >= u32::MAX as usize { self.merge_short(piece) } else { self.merge_heap(piece) };
            let parts: Vec<Part> = bounds.windows(2).map(|w| self.part_of(piece, w[0], w[1])).collect();
            return sink.take(&parts);
        }
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut s) => {
                self.merge_windows(piece, &mut s, sink);
                s.trim(); // give back what a huge piece took (merged whole)
            }
            Err(_) => self.merge_windows(piece, &mut Scratch::default(), sink),
        })
    }

    /// The part `piece[a..b]`: its token, `NONE` if it has none (a single byte).
    fn part_of(&self, piece: &[u8], a: usize, b: usize) -> Part {
        Part { start: a as u32, id: self.rank(&piece[a..b]).unwrap_or(NONE), len: (b - a) as u32 }
    }

    /// `merge_long` on the given scratch tables: in windows when the piece
    /// has two or more.
    fn merge_windows(&self, piece: &[u8], s: &mut Scratch, sink: &mut impl PartSink) {
        if piece.len() >= 2 * WINDOW {
            let merge = &mut |a, b, out: &mut Vec<Part>| self.merge_linear(&piece[a..b], a as u32, s, out);
            if merge_in_windows(piece.len(), merge, sink) {
                return;
            }
        }
        let mut parts = Vec::new();
        self.merge_linear(piece, 0, s, &mut parts);
        sink.take(&parts);
    }

    /// Part boundaries after merging a long piece (the tests' view of `merge_long`).
    #[cfg(test)]
    fn merge_long_bounds(&self, piece: &[u8]) -> Vec<usize> {
        let mut parts: Vec<Part> = Vec::new();
        self.merge_long(piece, &mut parts);
        let mut bounds: Vec<usize> = parts.iter().map(|p| p.start as usize).collect();
        bounds.push(piece.len());
        bounds
    }

    /// Rank of the concatenation `piece[a..b]`, `NONE` if not a token.
    #[inline]
    fn span_rank(&self, piece: &[u8], a: u32, b: u32) -> u32 {
        let (a, b) = (a as usize, b as usize);
        if b - a > self.max_len {
            return NONE; // longer than any token: skip hashing it
        }
        self.rank(&piece[a..b]).unwrap_or(NONE)
    }

    /// The merging of `merge_long` on `piece` whole, its parts appended to
    /// `out` with their starts counted from `base`.
    fn merge_linear(&self, piece: &[u8], base: u32, s: &mut Scratch, out: &mut Vec<Part>) {
        let n = piece.len() as u32;
        let Scratch { queue, next, prev, rank_at, ids } = s;
        queue.begin(self.rank_bound);
        // part starting at i is piece[i..next[i]], token ids[i]; next[i] == n for the last part
        next.clear();
        next.extend(1..=n);
        next.push(n);
        prev.clear();
        prev.extend((0..n).map(|i| i.wrapping_sub(1)));
        rank_at.clear();
        rank_at.resize(n as usize, NONE);
        ids.clear();
        ids.extend(piece.iter().map(|&b| self.byte_ids[b as usize].unwrap_or(NONE)));
        // rank of the parts starting at a and b (ending at end) merged:
        // by their ids when every byte is a token, else by their bytes
        let pair_rank = |a: u32, b: u32, end: u32, ids: &[u32]| match &self.pairs {
            Some(t) if (end - a) as usize <= PAIR_MAX_LEN => t.merged(ids[a as usize], ids[b as usize]),
            _ => self.span_rank(piece, a, end),
        };
        for i in 0..n.saturating_sub(1) {
            // `TokenTable::pair` gives NONE for "no token"
            let r = self.table.pair(piece[i as usize], piece[i as usize + 1]);
            rank_at[i as usize] = r;
            if r != NONE {
                queue.push(r, i);
            }
        }
        while let Some((r, st)) = queue.pop() {
            let i = st as usize;
            if rank_at[i] != r {
                continue; // stale
            }
            let mid = next[i];
            let end = next[mid as usize];
            rank_at[mid as usize] = NONE;
            next[i] = end;
            ids[i] = r;
            if end != n {
                prev[end as usize] = st;
                let r = pair_rank(st, end, next[end as usize], ids);
                rank_at[i] = r;
                if r != NONE {
                    queue.push(r, st);
                }
            } else {
                rank_at[i] = NONE;
            }
            let p = prev[i];
            if p != u32::MAX {
                let r = pair_rank(p, st, end, ids);
                rank_at[p as usize] = r;
                if r != NONE {
                    queue.push(r, p);
                }
            }
        }
        let mut i = 0u32;
        while i != n {
            let end = next[i as usize];
            out.push(Part { start: base + i, id: ids[i as usize], len: end - i });
            i = end;
        }
    }

    /// Part boundaries after merging, heap of (rank, start) over a linked
    /// list of parts: the long-piece path for vocabularies whose ids are
    /// too sparse for `RankQueue`'s rank-indexed tables (and the tests'
    /// second oracle). Each start has a version, bumped whenever the pair
    /// starting there changes, so a stale heap entry is recognised without
    /// looking its rank up again. n log n for any piece.
    fn merge_heap(&self, piece: &[u8]) -> Vec<usize> {
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

/// The merges of a byte vocabulary given as ranks (tiktoken's files hold
/// no merges), as (left id, right id, merged id) in id order: each token of
/// two or more bytes split in two by BPE on its bytes with the lower ranks
/// only (the lowest-ranked adjacent pair merged first, leftmost on ties).
/// A token that this does not split into two tokens is left out.
/// `tokens[id]`: the bytes of token `id`, None for no token. Bytes given
/// twice rank as their larger id here (not the smaller, as in encoding), as
/// `Tokenizer._derive_merges` in python/bytepair/tokenizer.py has it.
pub(crate) fn derive_merges(tokens: &[Option<&[u8]>]) -> Vec<(u32, u32, u32)> {
    let mut ranks: FxHashMap<&[u8], u32> = FxHashMap::default();
    for (id, t) in tokens.iter().enumerate() {
        if let Some(t) = t {
            ranks.insert(t, id as u32);
        }
    }
    // each token on its own: a share of the ids per parallel task, the results in id order
    let parts = crate::parallel::map_chunks(tokens, DERIVE_CHUNK, |start, share| {
        let mut out = Vec::new();
        let mut bounds: Vec<usize> = Vec::new();
        for (id, t) in (start..).zip(share) {
            let (Some(t), rank) = (t, id as u32) else { continue };
            if t.len() < 2 {
                continue;
            }
            bounds.clear();
            bounds.extend(0..=t.len());
            // parts are t[bounds[i]..bounds[i + 1]]
            while bounds.len() > 3 {
                let mut best: Option<(u32, usize)> = None;
                for i in 0..bounds.len() - 2 {
                    if let Some(&r) = ranks.get(&t[bounds[i]..bounds[i + 2]]) {
                        if r < rank && best.is_none_or(|(b, _)| r < b) {
                            best = Some((r, i));
                        }
                    }
                }
                let Some((_, i)) = best else { break };
                bounds.remove(i + 1);
            }
            if bounds.len() == 3 {
                if let (Some(&l), Some(&r)) = (ranks.get(&t[..bounds[1]]), ranks.get(&t[bounds[1]..])) {
                    out.push((l, r, rank));
                }
            }
        }
        out
    });
    parts.concat()
}

/// Tokens per parallel task when a byte model's merges or pair table are derived.
const DERIVE_CHUNK: usize = 1 << 13;

/// A long piece's parts as ids, appended to `out` from `start`: a part
/// with no token (a single byte) takes the byte's id; `missing` is the
/// first byte that has none (the encode's error).
struct IdSink<'a> {
    vocab: &'a ByteRanks,
    piece: &'a [u8],
    out: &'a mut Vec<u32>,
    start: usize,
    missing: Option<u8>,
}

impl PartSink for IdSink<'_> {
    fn take(&mut self, parts: &[Part]) {
        for p in parts {
            let id = match p.id {
                NONE => {
                    let byte = self.piece[p.start as usize];
                    self.vocab.byte_ids[byte as usize].unwrap_or_else(|| {
                        self.missing.get_or_insert(byte);
                        NONE
                    })
                }
                id => id,
            };
            self.out.push(id);
        }
    }
    fn forget(&mut self) {
        self.out.truncate(self.start);
        self.missing = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::clear_piece_caches;

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
            assert_eq!(v.merge_short(&piece), v.merge_long_bounds(&piece), "length {n}");
        }
    }

    use crate::testing::Rng;

    /// Up to `count` random tokens (2..=max_len bytes over `alphabet`) with distinct
    /// ranks in a random order, above the 256 single bytes, with gaps.
    fn random_vocab(rng: &mut Rng, alphabet: &[u8], count: usize, max_len: usize) -> ByteRanks {
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        for _ in 0..count * 4 {
            let len = 2 + rng.below(max_len - 1);
            let t: Vec<u8> = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let mut rank = 256u32;
        for t in tokens {
            rank += 1 + rng.below(3) as u32;
            all.push((t, rank));
        }
        ByteRanks::new(all)
    }

    /// A vocabulary as BPE training makes it: repeatedly merge the most
    /// frequent adjacent pair of a random sample (so ranks mostly grow with
    /// length, but a longer token can rank below a part of another).
    fn trained_vocab(rng: &mut Rng, alphabet: &[u8], merges: usize) -> ByteRanks {
        let mut parts: Vec<Vec<u8>> = (0..4000)
            .map(|_| vec![alphabet[rng.below(alphabet.len()).min(rng.below(alphabet.len()))]])
            .collect();
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for k in 0..merges {
            let Some(token) = merge_most_frequent(&mut parts) else { break };
            all.push((token, 256 + k as u32));
        }
        ByteRanks::new(all)
    }

    /// One step of BPE training on `parts`: its most frequent adjacent pair (the greater on ties)
    /// merged everywhere, left to right; the new token, None when no pair is left.
    fn merge_most_frequent(parts: &mut Vec<Vec<u8>>) -> Option<Vec<u8>> {
        let mut counts: FxHashMap<(Vec<u8>, Vec<u8>), usize> = FxHashMap::default();
        for w in parts.windows(2) {
            *counts.entry((w[0].clone(), w[1].clone())).or_default() += 1;
        }
        let ((a, b), _) = counts.into_iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))?;
        let mut merged = Vec::with_capacity(parts.len());
        let mut i = 0;
        while i < parts.len() {
            if i + 1 < parts.len() && parts[i] == a && parts[i + 1] == b {
                merged.push([a.clone(), b.clone()].concat());
                i += 2;
            } else {
                merged.push(parts[i].clone());
                i += 1;
            }
        }
        *parts = merged;
        Some([a, b].concat())
    }

    fn random_piece(rng: &mut Rng, alphabet: &[u8], n: usize) -> Vec<u8> {
        match rng.below(4) {
            // one letter repeated, or a short unit repeated: long ties
            0 => vec![alphabet[rng.below(alphabet.len())]; n],
            1 => {
                let unit: Vec<u8> = (0..1 + rng.below(5)).map(|_| alphabet[rng.below(alphabet.len())]).collect();
                unit.iter().copied().cycle().take(n).collect()
            }
            _ => (0..n).map(|_| alphabet[rng.below(alphabet.len())]).collect(),
        }
    }

    /// A vocabulary trained on random text of `chars` (UTF-8, so merges can join parts of two
    /// characters), with `extra` random spans of that text added at random ranks (fragments: tokens
    /// that start or end inside a character, and tokens of several characters).
    fn utf8_vocab(rng: &mut Rng, chars: &[char], merges: usize, extra: usize) -> (ByteRanks, Vec<u8>) {
        let text: String = (0..3000).map(|_| chars[rng.below(chars.len()).min(rng.below(chars.len()))]).collect();
        let text = text.into_bytes();
        let mut parts: Vec<Vec<u8>> = text.iter().map(|&b| vec![b]).collect();
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let mut order: Vec<Vec<u8>> = Vec::new();
        for _ in 0..merges {
            let Some(token) = merge_most_frequent(&mut parts) else { break };
            order.push(token);
            if rng.below(merges) < extra {
                // anywhere in the order: also before the merges that make its parts
                let at = rng.below(text.len() - 8);
                order.insert(rng.below(order.len() + 1), text[at..at + 2 + rng.below(5)].to_vec());
            }
        }
        all.extend(order.into_iter().zip(256..));
        (ByteRanks::new(all), text)
    }

    #[test]
    fn merging_from_atoms_is_merging_from_bytes() {
        // trained UTF-8 vocabularies with fragments; pieces of their characters: the ids from the
        // atoms (and the parts cut between them) are those of the bytes-only quadratic scan
        let alphabets: [&[char]; 3] = [
            &['a', 'b', ' ', 'д', 'ж', '中', '文', '字', 'é', '€'],
            &['中', '文', '字', '学', '生', '。', 'x'],
            &['ж', 'д', 'я', 'é', 'ü', '中', '文', ' '],
        ];
        let mut rng = Rng(0xA70_5EED_0001);
        let (mut with_atoms, mut with_cuts) = (0, 0);
        for round in 0..24 {
            let chars = alphabets[round % 3];
            let (merges, extra) = (60 + rng.below(200), rng.below(60));
            let (vocab, _) = utf8_vocab(&mut rng, chars, merges, extra);
            for _ in 0..300 {
                let most = [12, 40, 90][rng.below(3)];
                let n = 1 + rng.below(most);
                let piece: String = (0..n).map(|_| chars[rng.below(chars.len())]).collect();
                let piece = piece.as_bytes();
                let mut got = Vec::new();
                vocab.encode_parts(piece, &mut got).unwrap();
                let mut want = Vec::new();
                vocab.push_parts(piece, &vocab.merge_short(piece), &mut want).unwrap();
                assert_eq!(got, want, "round {round}, piece {:?}", String::from_utf8_lossy(piece));
                let mut parts = 0;
                if vocab.atoms.parts(piece, &vocab.byte_syms, &mut Vec::new(), |_, _| parts += 1) {
                    with_atoms += 1;
                    with_cuts += (parts > 1) as usize;
                }
            }
        }
        // the cases reached both rules
        assert!(with_atoms > 2000 && with_cuts > 500, "{with_atoms} pieces from atoms, {with_cuts} cut");
    }

    #[test]
    fn linear_merging_matches_the_quadratic_scan_on_random_vocabularies() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut previous: Option<(ByteRanks, Vec<u8>)> = None;
        for round in 0..400 {
            let alphabet: &[u8] = [&b"ab"[..], b"abc", b"abcd", b"xyz\xff"][round % 4];
            let (count, len) = (3 + rng.below(60), 2 + rng.below(6));
            let mut v = if round % 3 == 0 {
                trained_vocab(&mut rng, alphabet, count)
            } else {
                random_vocab(&mut rng, alphabet, count.min(40), len)
            };
            if round % 5 == 4 {
                // a vocabulary without the token of one of the letters: parts
                // are not all tokens, so merging goes by bytes (no ConcatRanks)
                let gone = alphabet[rng.below(alphabet.len())];
                let mut tokens: Vec<(Vec<u8>, u32)> = Vec::new();
                for (t, r) in v.table.short.iter().map(|(k, e)| (unpack(*k), e.id)).chain(v.table.long.iter().map(|(t, e)| (t.clone(), e.id))) {
                    if t != [gone] {
                        tokens.push((t, r));
                    }
                }
                v = ByteRanks::new(tokens);
                assert!(v.pairs.is_none());
            }
            for k in 0..16 {
                let n = 1 + rng.below([700, SHORT_PIECE + 2, 20][k % 3]);
                let piece = random_piece(&mut rng, alphabet, n);
                let want = v.merge_short(&piece);
                assert_eq!(v.merge_long_bounds(&piece), want, "round {round}, piece {:?}", String::from_utf8_lossy(&piece));
                assert_eq!(v.merge_heap(&piece), want, "round {round}");
                // encode_piece: whole-piece lookup, cache and stack loop
                // (short) or queue (long); an error if a byte left alone has
                // no token
                let want_ids: Option<Vec<u32>> = match v.rank(&piece) {
                    Some(id) => Some(vec![id]),
                    None => want.windows(2).map(|w| v.rank(&piece[w[0]..w[1]])).collect(),
                };
                // twice (the second from the cache), with the previous round's
                // vocabulary encoding in between on this thread
                for again in 0..2 {
                    let mut ids = Vec::new();
                    let got = v.encode_piece(&piece, &mut ids).ok().map(|()| ids);
                    assert_eq!(got, want_ids, "round {round}, attempt {again}");
                    if let Some((pv, pp)) = &previous {
                        let mut other = Vec::new();
                        let _ = pv.encode_piece(pp, &mut other);
                    }
                    if again == 0 && k == 7 {
                        clear_piece_caches();
                    }
                }
                if k == 15 {
                    previous = Some((v.clone(), piece));
                }
            }
        }
    }

    #[test]
    fn long_pieces_merge_in_windows_as_whole() {
        // pieces of 2 to 4 windows (runs, repeated units, random bytes) on
        // trained and random vocabularies: the windows' parts == the heap's
        let mut rng = Rng(0x7A11_0F_D00D);
        for round in 0..24 {
            let alphabet: &[u8] = [&b"ab"[..], b"abc", b"abcd", b"xyz\xff"][round % 4];
            let (count, len) = (3 + rng.below(60), 2 + rng.below(6));
            let v = if round % 2 == 0 {
                trained_vocab(&mut rng, alphabet, count)
            } else {
                random_vocab(&mut rng, alphabet, count.min(40), len)
            };
            let n = 2 * WINDOW + rng.below(2 * WINDOW);
            let piece = random_piece(&mut rng, alphabet, n);
            let want = v.merge_heap(&piece);
            assert_eq!(v.merge_long_bounds(&piece), want, "round {round}");
            // as ids, through the encode's sink (which drops what it took when the windows give up)
            let want_ids: Option<Vec<u32>> = want
                .windows(2)
                .map(|w| match v.part_of(&piece, w[0], w[1]).id {
                    NONE => v.byte_id(piece[w[0]]).ok(),
                    id => Some(id),
                })
                .collect();
            let mut ids = vec![7]; // what was encoded before stays
            let got = v.encode_parts(&piece, &mut ids).ok().map(|()| ids[1..].to_vec());
            assert_eq!(ids[0], 7);
            assert_eq!(got, want_ids, "round {round}");
        }
    }

    fn unpack((lo, hi): (u64, u64)) -> Vec<u8> {
        let n = (hi >> 56) as usize;
        [lo.to_le_bytes(), hi.to_le_bytes()].concat()[..n].to_vec()
    }

    #[test]
    fn tokens_longer_than_the_pair_table_still_merge() {
        // "a" * 2^j for j up to 10: merges past PAIR_MAX_LEN go by bytes
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for j in 1..=10 {
            all.push((vec![b'a'; 1 << j], 255 + j));
        }
        all.push((b"ab".to_vec(), 300));
        let v = ByteRanks::new(all);
        assert!(v.pairs.is_some());
        for n in [300, 1000, 1500, 2049] {
            let piece: Vec<u8> = (0..n).map(|i| if i % 700 == 699 { b'b' } else { b'a' }).collect();
            let want = v.merge_short(&piece);
            assert!(want.windows(2).any(|w| w[1] - w[0] > PAIR_MAX_LEN), "length {n}");
            assert_eq!(v.merge_long_bounds(&piece), want, "length {n}");
        }
    }

    #[test]
    fn pair_table_holds_exactly_the_token_concatenations() {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        for _ in 0..30 {
            let v = random_vocab(&mut rng, b"abc", 40, 6);
            let t = v.pairs.as_ref().unwrap();
            let tokens: Vec<Vec<u8>> = v.table.short.keys().map(|k| unpack(*k)).collect();
            for a in &tokens {
                for b in &tokens {
                    let whole = [a.as_slice(), b.as_slice()].concat();
                    let want = v.rank(&whole).unwrap_or(NONE);
                    assert_eq!(t.merged(v.rank(a).unwrap(), v.rank(b).unwrap()), want);
                }
            }
        }
    }

    #[test]
    fn a_mark_belongs_to_its_token_alone() {
        // a two-byte token (the direct table), a packed one and a long one
        let mut table = TokenTable::with_capacity(4, 1);
        let tokens: [&[u8]; 4] = [b"ab", b"abc", b"a", &[b'x'; PACKED + 5]];
        for (id, t) in tokens.iter().enumerate() {
            table.insert(t, id as u32);
        }
        for (k, t) in tokens.iter().enumerate() {
            let (id, mark) = table.get_marked(t).unwrap();
            assert_eq!(id, k as u32);
            assert_eq!(mark.load(Ordering::Relaxed), 0);
            mark.store(k as u8 + 1, Ordering::Relaxed);
        }
        for (k, t) in tokens.iter().enumerate() {
            assert_eq!(table.get_marked(t).unwrap().1.load(Ordering::Relaxed), k as u8 + 1);
        }
        assert!(table.get_marked(b"b").is_none() && table.get_marked(b"ba").is_none());
        assert!(table.get_marked(&[b'y'; PACKED + 5]).is_none());
    }

    #[test]
    fn pack_keys_every_length_distinctly() {
        let bytes: Vec<u8> = (1..=PACKED as u8).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 0..=PACKED {
            let key = pack(&bytes[..n]);
            assert_eq!(unpack(key), &bytes[..n]);
            assert!(seen.insert(key));
            let zeros = vec![0u8; n];
            assert_eq!(unpack(pack(&zeros)), zeros);
        }
    }

    #[test]
    fn concat_ranks_answer_alike_in_and_out_of_the_grid() {
        // numbers on both sides of the grid's edge (small sets make a small grid), a pair given twice (the
        // last rank stands), and the absent pairs around each present one
        let mut rng = Rng(0x0BAD_5EED_1234_5678);
        for (largest, n) in [(3u32, 3000u32), (200, 3000), (1023, 3000), (1025, 3000), (5000, 3000), (1100, 70_000)] {
            let mut want: FxHashMap<(u32, u32), u32> = FxHashMap::default();
            let mut pairs = Vec::new();
            for m in 0..n {
                let a = rng.below(largest as usize + 1) as u32;
                let b = rng.below(largest as usize + 1) as u32;
                pairs.push((a, b, m));
                want.insert((a, b), m);
            }
            let t = ConcatRanks::new(&pairs);
            assert!(t.grid.len() <= (GRID_SIDE * GRID_SIDE).min(16 * pairs.len()));
            if n == 70_000 {
                assert_eq!(t.side_bits, GRID_SIDE.trailing_zeros()); // the largest grid's edge is crossed too
            }
            for &(a, b, _) in &pairs {
                for (x, y) in [(a, b), (a + 1, b), (a, b + 1), (b, a)] {
                    assert_eq!(t.merged(x, y), want.get(&(x, y)).copied().unwrap_or(NONE), "{x} {y} (largest {largest})");
                }
            }
        }
    }

    #[test]
    fn linked_short_merging_is_the_lowest_rank_scan() {
        // few symbols and ranks (so equal ranks for different pairs: the leftmost wins), words up to the
        // stack's length; the shifting scan of `pairs::merge_lowest_shifting` is the oracle
        let mut rng = Rng(0x5EED_0F_11_4ED);
        for round in 0..400 {
            let symbols = 2 + rng.below(6);
            let mut pairs = Vec::new();
            let mut want: FxHashMap<(u32, u32), u32> = FxHashMap::default();
            for _ in 0..rng.below(3 * symbols * symbols) {
                let (a, b) = (rng.below(symbols) as u32, rng.below(symbols) as u32);
                let rank = rng.below(1 + round % 40) as u32;
                if want.insert((a, b), rank).is_none() {
                    pairs.push((a, b, rank));
                } else {
                    pairs.retain(|&(x, y, _)| (x, y) != (a, b));
                    pairs.push((a, b, rank));
                }
            }
            let table = ConcatRanks::new(&pairs);
            let result = |rank: u32| rank % symbols as u32; // symbols made by merges merge again
            for n in [0, 1, 2, 3, 5, 16, 17, 40, 63] {
                let word: Vec<u32> = (0..n).map(|_| rng.below(symbols) as u32).collect();
                let mut linked = word.clone();
                let len = table.merge_short::<64>(&mut linked, result);
                let mut shifted = word.clone();
                let mut room = vec![(NONE, ()); n];
                let pair = |a, b| want.get(&(a, b)).map(|&r| (r, ()));
                let want_len = super::super::pairs::merge_lowest_shifting(&mut shifted, &mut room, pair, |_, _, r, ()| result(r));
                assert_eq!(&linked[..len], &shifted[..want_len], "{word:?} with {pairs:?}");
            }
        }
    }

    #[test]
    fn sparse_ids_use_the_heap_and_agree() {
        let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        all.push((b"ab".to_vec(), 1 << 30));
        all.push((b"ba".to_vec(), 300));
        all.push((b"aba".to_vec(), 299));
        let v = ByteRanks::new(all);
        assert!(v.rank_bound > MAX_QUEUE_RANKS);
        let piece: Vec<u8> = b"abbab".iter().copied().cycle().take(1000).collect();
        assert_eq!(v.merge_long_bounds(&piece), v.merge_short(&piece));
    }

    #[test]
    fn rank_finds_tokens_of_every_length_and_nothing_else() {
        // tokens of 2..=40 bytes on both sides of PACKED; their prefixes of
        // other lengths, the same bytes with a zero appended, are not tokens
        let tokens: Vec<Vec<u8>> = (2..=40usize).map(|n| (0..n).map(|i| b'a' + ((i * 7 + n) % 26) as u8).collect()).collect();
        let v = vocab(&tokens.iter().map(Vec::as_slice).collect::<Vec<_>>());
        for (k, t) in tokens.iter().enumerate() {
            assert_eq!(v.rank(t), Some(256 + k as u32), "{t:?}");
            assert_eq!(v.rank(&t[..t.len() - 1]).is_some(), t.len() == 2, "{t:?}");
            assert_eq!(v.rank(&[t.as_slice(), &[0]].concat()), None);
        }
        assert_eq!(v.rank(&[0u8; 15]), None);
        assert_eq!(v.rank(b"q"), Some(b'q' as u32));
    }

    #[test]
    fn leftmost_on_ties() {
        let v = vocab(&[b"aa"]);
        let mut out = Vec::new();
        v.encode_piece(b"aaa", &mut out).unwrap();
        assert_eq!(out, [256, b'a' as u32]);
    }

    #[test]
    fn bytes_given_twice_rank_as_their_smaller_id() {
        let long = b"abcdefghijklmnopq"; // longer than PACKED: the table's long map
        for (first, second) in [(300u32, 260u32), (260, 300)] {
            let mut all: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
            all.extend([(b"ab".to_vec(), first), (b"ab".to_vec(), second)]);
            all.extend([(long.to_vec(), first + 1000), (long.to_vec(), second + 1000)]);
            let v = ByteRanks::new(all);
            assert_eq!((v.rank(b"ab"), v.rank(long), v.table.pair(b'a', b'b')), (Some(260), Some(1260), 260));
            assert!(!v.distinct);
            let mut out = Vec::new();
            v.encode_piece_uncached(b"ab", &mut out).unwrap();
            assert_eq!(out, vec![260]);
        }
    }

    #[test]
    fn splits_on_ids_are_the_derived_merges() {
        let mut rng = Rng(7);
        for round in 0..40 {
            // random tokens over a small alphabet (ties, overlaps, tokens no merge makes), ids with gaps
            let alphabet = &b"abcd"[..2 + round % 3];
            let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
            for _ in 0..60 {
                let len = 2 + rng.below(5 + round % 7);
                let t: Vec<u8> = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
                if rng.below(4) == 0 {
                    tokens.push(None);
                }
                if round % 5 != 0 && tokens.contains(&Some(t.clone())) {
                    continue; // every fifth round keeps bytes given twice (the ids cannot tell then)
                }
                tokens.push(Some(t));
            }
            let ranks = ByteRanks::new(tokens.iter().enumerate().filter_map(|(id, t)| Some((t.clone()?, id as u32))));
            let table: Vec<Option<&[u8]>> = tokens.iter().map(|t| t.as_deref()).collect();
            let derived: FxHashMap<u32, (u32, u32)> = derive_merges(&table).into_iter().map(|(l, r, m)| (m, (l, r))).collect();
            let twice = tokens.iter().flatten().collect::<std::collections::HashSet<_>>().len() != tokens.iter().flatten().count();
            for (id, t) in tokens.iter().enumerate() {
                let Some(t) = t.as_deref().filter(|t| t.len() >= 2) else { continue };
                let split = ranks.derived_split(t, id as u32, &mut Vec::new());
                if twice {
                    assert_eq!(split, None);
                } else {
                    assert_eq!(split, Some(derived.get(&(id as u32)).copied()), "round {round}, token {t:?}");
                }
            }
        }
    }

    #[test]
    fn derived_merges_split_tokens_by_lower_ranks() {
        // ids 0-255 are the bytes; then "ab", "abc", "bc", "xyz" (no part a
        // token), "bca" (its pair "ca" is not a token, "bc" ranks below it)
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for t in ["ab", "abc", "bc", "xyz", "bca", "cab"] {
            tokens.push(t.as_bytes().to_vec());
        }
        let table: Vec<Option<&[u8]>> = tokens.iter().map(|t| Some(t.as_slice())).collect();
        let (a, b, c) = (b'a' as u32, b'b' as u32, b'c' as u32);
        // "abc": "ab" (256) before "bc" (258, not below 257); "cab": c + ab
        assert_eq!(derive_merges(&table), [(a, b, 256), (256, c, 257), (b, c, 258), (258, a, 260), (c, 256, 261)]);
        // without the token of "c": "bc" has no split, but "bca" still
        // splits into "bc" + "a" (lookups go by the joined bytes)
        let mut holes = table.clone();
        holes[b'c' as usize] = None;
        assert_eq!(derive_merges(&holes), [(a, b, 256), (258, a, 260)]);
        // bytes given twice rank as their larger id: "ab" again at 262,
        // so "abc" (257) finds no pair below it and is left out
        let mut twice = table.clone();
        twice.push(Some(b"ab"));
        assert_eq!(derive_merges(&twice), [(a, b, 256), (b, c, 258), (258, a, 260), (a, b, 262)]);
    }
}
