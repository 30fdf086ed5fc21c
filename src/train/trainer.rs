//! The incremental BPE trainer.
//!
//! The words' symbols live in one flat array of linked positions. Pair
//! counts are built once, then updated per merge at the merged pair's
//! positions and their neighbours only; a max-queue with lazily refreshed
//! entries picks the best pair. Counts are 64-bit.
//!
//! Queue invariant: every live pair has at least one entry whose priority is
//! at least its true priority (an entry is pushed whenever a pair gains
//! occurrences; losing occurrences only lowers the true priority). A popped
//! entry that matches the pair's current state exactly is therefore the
//! best pair; one that does not is pushed back with the current state.

use crate::cache::batch::prefetch;
use crate::error::{Error, Result};
use crate::train::symbol_texts::SymbolTexts;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreak {
    /// Earliest occurrence: (word rank by first appearance, offset in word).
    First,
    /// Smallest `left + right` element-wise, longer on a prefix; then First.
    Alphabetical,
    /// Smallest (left id, right id).
    PairId,
    /// Greatest (left text, right text) as strings: subword-nmt's
    /// `learn_bpe` and HF's `ParityBpeTrainer`. Byte texts compare in the
    /// order `Trainer::with_order` gives (GPT-2's printable form for HF).
    MaxString,
}

impl TieBreak {
    /// The rule of a `tie_break` name: "first", "alphabetical" or "pair-id".
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "first" => Ok(TieBreak::First),
            "alphabetical" => Ok(TieBreak::Alphabetical),
            "pair-id" => Ok(TieBreak::PairId),
            "max-string" => Ok(TieBreak::MaxString),
            other => Err(Error::Training(format!(
                "unknown tie_break {other:?}: use \"first\", \"alphabetical\", \"pair-id\" or \"max-string\""
            ))),
        }
    }

    fn needs_first(self) -> bool {
        matches!(self, TieBreak::First | TieBreak::Alphabetical)
    }

    /// Whether ties are decided by the pair's text (the text heap).
    fn by_text(self) -> bool {
        matches!(self, TieBreak::Alphabetical | TieBreak::MaxString)
    }
}

/// The words to train on, flat: each word's initial symbol ids one after
/// another (no allocation per word), with its count.
#[derive(Default)]
pub struct Words {
    symbols: Vec<u32>,
    /// Where each word starts in `symbols`.
    starts: Vec<usize>,
    counts: Vec<u64>,
}

impl Words {
    pub fn with_capacity(words: usize, symbols: usize) -> Self {
        Words { symbols: Vec::with_capacity(symbols), starts: Vec::with_capacity(words), counts: Vec::with_capacity(words) }
    }

    /// Adds a word: the symbols pushed by `f`, `count` times.
    pub fn push(&mut self, count: u64, f: impl FnOnce(&mut Vec<u32>)) {
        self.starts.push(self.symbols.len());
        self.counts.push(count);
        f(&mut self.symbols);
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Appends the words of `other` after these.
    pub(crate) fn extend(&mut self, other: &Words) {
        let offset = self.symbols.len();
        self.starts.extend(other.starts.iter().map(|&s| s + offset));
        self.counts.extend_from_slice(&other.counts);
        self.symbols.extend_from_slice(&other.symbols);
    }

    /// Symbols of all words, each word counted `count` times: the corpus's
    /// length in initial symbols.
    pub(crate) fn weighted_len(&self) -> u128 {
        let mut ends = self.starts.iter().skip(1).copied().chain(std::iter::once(self.symbols.len()));
        self.starts
            .iter()
            .zip(&self.counts)
            .map(|(&s, &c)| (ends.next().unwrap_or(s) - s) as u128 * u128::from(c))
            .sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merge {
    pub left: u32,
    pub right: u32,
    pub count: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The requested number of merges was reached.
    Done,
    /// No adjacent pair is left in any word.
    NoPairs,
    /// The best pair occurs fewer than `min_frequency` times.
    BelowMinFrequency,
    /// The caller asked to stop (e.g. Ctrl-C).
    Cancelled,
}

pub struct TrainConfig {
    pub tie_break: TieBreak,
    pub min_frequency: u64,
    pub(crate) max_merges: usize,
    /// Pairs whose merged token would be longer than this are never merged
    /// (length in `Trainer::new`'s units: bytes or characters).
    pub max_token_length: Option<u32>,
}

type Pair = (u32, u32);

/// A symbol that never takes part in a pair (a character outside the
/// vocabulary in continued training): pairs with it are never counted.
pub(crate) const BARRIER: u32 = u32::MAX;
/// A position whose symbol was absorbed by its left neighbour. Merge ids
/// stay below it (`driver::run_trainer` caps them at `u32::MAX - 2`).
const DEAD: u32 = u32::MAX - 1;
/// No neighbour: the start or end of a word.
const NONE: u32 = u32::MAX;

/// Positions index one flat array holding every word's initial symbols,
/// words in first-appearance order. Position order is therefore (word rank,
/// offset of the left symbol in initial symbols): the `first` rule's order.
/// A position keeps its index when symbols merge, so it stays comparable.
type Pos = u32;

struct PairInfo {
    count: u64,
    first: Pos,
    first_stale: bool,
    /// Positions where the pair's left symbol was when the pair was formed
    /// there (a position that has since changed is stale; checked on use).
    pos: PosList,
}

/// Slots per arena block: `BLOCK - 1` positions, then the next block's index.
// 16 slots (one cache line): fewer blocks to chase when gathering a list,
// measured 5-10% faster than 8 for a few MB more
const BLOCK: usize = 16;
const PER_BLOCK: u32 = BLOCK as u32 - 1;

/// A list of positions: a chain of blocks in a `PosArena`, or, up to
/// `INLINE` positions, the positions themselves in `head` and `tail` (most
/// pairs formed late in training occur once or twice: no block to take and
/// free, no cache miss on the free list).
#[derive(Clone, Copy)]
struct PosList {
    head: u32,
    tail: u32,
    len: u32,
}

const INLINE: u32 = 2;

impl PosList {
    const EMPTY: PosList = PosList { head: NONE, tail: NONE, len: 0 };
}

/// Every pair's position list in one arena of fixed-size blocks, with a
/// free list: hundreds of thousands of small lists grow and die during
/// training, and one allocation per list cost more than the merging.
struct PosArena {
    slots: Vec<u32>,
    /// First free block (`NONE`: none), chained through the link slots.
    free: u32,
}

impl PosArena {
    fn alloc(&mut self) -> u32 {
        if self.free != NONE {
            let b = self.free;
            self.free = self.slots[b as usize * BLOCK + PER_BLOCK as usize];
            b
        } else {
            let b = (self.slots.len() / BLOCK) as u32;
            self.slots.resize(self.slots.len() + BLOCK, NONE);
            b
        }
    }

    #[inline]
    fn push(&mut self, list: &mut PosList, p: Pos) {
        match list.len {
            0 => list.head = p,
            1 => list.tail = p,
            _ => return self.push_block(list, p),
        }
        list.len += 1;
    }

    fn push_block(&mut self, list: &mut PosList, p: Pos) {
        if list.len == INLINE {
            // the inline positions move to the first block's first slots
            let b = self.alloc();
            let start = b as usize * BLOCK;
            self.slots[start] = list.head;
            self.slots[start + 1] = list.tail;
            self.slots[start + PER_BLOCK as usize] = NONE;
            list.head = b;
            list.tail = b;
        }
        let slot = list.len % PER_BLOCK;
        if slot == 0 {
            let b = self.alloc();
            self.slots[b as usize * BLOCK + PER_BLOCK as usize] = NONE;
            self.slots[list.tail as usize * BLOCK + PER_BLOCK as usize] = b;
            list.tail = b;
        }
        self.slots[list.tail as usize * BLOCK + slot as usize] = p;
        list.len += 1;
    }

    /// Returns the list's blocks to the free list (O(1)).
    fn free(&mut self, list: &mut PosList) {
        if list.len > INLINE {
            self.slots[list.tail as usize * BLOCK + PER_BLOCK as usize] = self.free;
            self.free = list.head;
        }
        *list = PosList::EMPTY;
    }

    /// Appends the list's positions to `out` and frees the list.
    fn take_into(&mut self, list: &mut PosList, out: &mut Vec<Pos>) {
        if list.len <= INLINE {
            out.extend([list.head, list.tail].iter().take(list.len as usize));
            *list = PosList::EMPTY;
            return;
        }
        let (mut b, mut left) = (list.head, list.len);
        out.reserve(left as usize);
        while left > 0 {
            let n = left.min(PER_BLOCK);
            let start = b as usize * BLOCK;
            // element by element: a memmove call per block cost more than the copy
            for &p in &self.slots[start..start + n as usize] {
                out.push(p);
            }
            left -= n;
            b = self.slots[start + PER_BLOCK as usize];
        }
        self.free(list);
    }
}

/// Every live pair: a hash index from the pair to a slot of `infos`
/// (stable while the pair lives, so a merge can keep slots at hand and hash
/// each neighbouring pair once per merge rather than once per occurrence).
#[derive(Default)]
struct LivePairs {
    index: FxHashMap<Pair, u32>,
    infos: Vec<PairInfo>,
    /// Slots of removed pairs, reused first.
    free: Vec<u32>,
}

impl LivePairs {
    #[inline]
    fn get(&self, pair: Pair) -> Option<u32> {
        self.index.get(&pair).copied()
    }

    /// The pair's slot; a new pair starts with count 0 and first occurrence `p`.
    #[inline]
    fn slot(&mut self, pair: Pair, p: Pos) -> u32 {
        let (infos, free) = (&mut self.infos, &mut self.free);
        *self.index.entry(pair).or_insert_with(|| {
            let info = PairInfo { count: 0, first: p, first_stale: false, pos: PosList::EMPTY };
            match free.pop() {
                Some(s) => {
                    infos[s as usize] = info;
                    s
                }
                None => {
                    infos.push(info);
                    (infos.len() - 1) as u32
                }
            }
        })
    }

    /// Removes the pair (if present) and returns its position list.
    fn remove(&mut self, pair: Pair) -> Option<PosList> {
        let s = self.index.remove(&pair)?;
        self.free.push(s);
        Some(std::mem::replace(&mut self.infos[s as usize].pos, PosList::EMPTY))
    }
}

/// Slots of the pairs a merge of (a, b) into z changes next to one symbol x
/// (as left neighbour: (x, a) and (x, z); as right one: (b, x) and (z, x)),
/// valid during merge number `epoch` only.
#[derive(Clone, Copy)]
struct NeighbourSlots {
    /// The symbol x (an entry of the cache serves every symbol equal to it
    /// modulo the cache size).
    sym: u32,
    epoch: u32,
    /// The pair that loses the occurrence (`NONE`: it is the merged pair).
    old: u32,
    /// The pair that gains it.
    new: u32,
}

/// Entries of each side's `NeighbourSlots` cache at most: a fixed size, so
/// the cache does not grow with the vocabulary (a merge's neighbours are
/// far fewer; two that share an entry are looked up again, which is exact).
const SLOT_CACHE: usize = 1 << 16;

/// A heap entry of the pair-id and first rules (small: heap moves are the cost).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    count: u64,
    /// Greater is preferred on equal counts: the complement of the pair
    /// (pair-id) or of its first position (first, alphabetical).
    tie: u64,
    pair: Pair,
}

/// A heap entry of the alphabetical and max-string rules: `left + right`
/// bytes decide ties (max-string: `split` bytes of left, then right;
/// alphabetical: `NO_SPLIT`).
struct TextEntry {
    entry: Entry,
    text: Box<[u8]>,
    split: u32,
}

const NO_SPLIT: u32 = u32::MAX;

/// Greater is preferred: at the first difference the smaller byte wins;
/// when one is a prefix of the other, the longer wins (Python's `max` over
/// lists of negated code points).
fn alphabetical_cmp(a: &[u8], b: &[u8]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return y.cmp(x);
        }
    }
    a.len().cmp(&b.len())
}

impl Ord for TextEntry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.entry.count.cmp(&other.entry.count))
            .then_with(|| {
                if self.split == NO_SPLIT {
                    alphabetical_cmp(&self.text, &other.text)
                } else {
                    // greater (left, right) is preferred: Rust's string order, tuple-wise
                    let (a, b) = (self.split as usize, other.split as usize);
                    self.text[..a].cmp(&other.text[..b]).then_with(|| self.text[a..].cmp(&other.text[b..]))
                }
            })
            .then(self.entry.tie.cmp(&other.entry.tie))
    }
}
impl PartialOrd for TextEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for TextEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for TextEntry {}

/// Counts below this have a bucket in `CountQueue`.
const BUCKETS: usize = 1 << 14;

/// The max-queue of the pair-id and first rules: a heap for large counts
/// and one small heap per count below `BUCKETS` (ordered by the tie key).
/// Most entries have small counts, and popping from a bucket touches a few
/// entries where the single heap of a million entries missed the cache at
/// every level.
struct CountQueue {
    big: BinaryHeap<Entry>,
    buckets: Vec<BinaryHeap<(u64, Pair)>>,
    /// Every bucket above `top` is empty.
    top: usize,
}

impl CountQueue {
    fn new() -> Self {
        CountQueue { big: BinaryHeap::new(), buckets: (0..BUCKETS).map(|_| BinaryHeap::new()).collect(), top: 0 }
    }

    fn push(&mut self, e: Entry) {
        if e.count >= BUCKETS as u64 {
            self.big.push(e);
        } else {
            let c = e.count as usize;
            self.buckets[c].push((e.tie, e.pair));
            self.top = self.top.max(c);
        }
    }

    /// Lowers `top` to the highest non-empty bucket.
    fn settle(&mut self) {
        while self.top > 0 && self.buckets[self.top].is_empty() {
            self.top -= 1;
        }
    }

    /// Removes the greatest entry (count, then tie key).
    fn pop(&mut self) -> Option<Entry> {
        if let Some(e) = self.big.pop() {
            return Some(e);
        }
        self.settle();
        let count = self.top as u64;
        self.buckets[self.top].pop().map(|(tie, pair)| Entry { count, tie, pair })
    }

    /// Count of the greatest entry.
    fn peek_count(&mut self) -> Option<u64> {
        if let Some(e) = self.big.peek() {
            return Some(e.count);
        }
        self.settle();
        (!self.buckets[self.top].is_empty()).then_some(self.top as u64)
    }
}

/// One position: its symbol, its live neighbours in the word and its word's
/// count (together, so one cache line serves a position's whole update,
/// with no second load from a table of counts).
#[derive(Clone, Copy)]
struct Node {
    /// `DEAD` once merged into its left neighbour.
    sym: u32,
    /// Next and previous live position in the same word (`NONE` at the ends).
    next: u32,
    prev: u32,
    /// The word's count, or `BIG_COUNT` when it does not fit (then found
    /// in `Trainer::counts` by the position).
    count: u32,
}

const BIG_COUNT: u32 = u32::MAX;

/// The state of one training run: build with `new`, then `run`.
pub struct Trainer {
    nodes: Vec<Node>,
    /// Count of each word, and the position where it starts (one extra at the end).
    counts: Vec<u64>,
    starts: Vec<u32>,
    /// Bytes of every symbol by id (initial symbols, then merges), and the
    /// smallest id of each text: a merge whose text already exists yields
    /// that symbol (the reference works on strings, where they are one).
    texts: SymbolTexts,
    /// Length of a symbol for `max_token_length`: bytes, or characters.
    units: Vec<u32>,
    pairs: LivePairs,
    arena: PosArena,
    /// `NeighbourSlots` by symbol id modulo their length (a power of two,
    /// at most `SLOT_CACHE`), for left and right neighbours, and the
    /// current merge's number.
    left_slots: Vec<NeighbourSlots>,
    right_slots: Vec<NeighbourSlots>,
    epoch: u32,
    /// Positions of the pair being merged or refreshed (reused).
    scratch: Vec<Pos>,
    heap: CountQueue,
    /// The heap of the alphabetical and max-string rules (`heap` stays empty then).
    text_heap: BinaryHeap<TextEntry>,
    /// Max-string rule: the rank of each byte value in the text order.
    order: [u8; 256],
    rule: TieBreak,
    /// Pairs that gained occurrences, and those whose count fell to zero,
    /// during the current merge (kept to reuse their allocations).
    grown: Vec<(Pair, u32)>,
    shrunk: Vec<(Pair, u32)>,
    /// The occurrences noted by each run of a parallel merge (reused).
    notes: Vec<Vec<Occurrence>>,
    /// Merges of at least `.0` positions run in `.1` runs (0: one per
    /// thread); `set_parallel_merge` at construction.
    parallel: (usize, usize),
}

impl Trainer {
    /// `symbol_text[id]` for every id below the first merge id; merges get
    /// ids `symbol_text.len() + k`.
    /// `count_chars`: token length is measured in characters (char model)
    /// rather than bytes.
    pub fn new(words: Words, symbol_text: Vec<Vec<u8>>, rule: TieBreak, count_chars: bool) -> Result<Self> {
        Self::with_order(words, symbol_text, rule, count_chars, None)
    }

    /// `new`, where the max-string rule compares texts with byte `b` ranked
    /// `order[b]` (None: byte value order, which is code point order for UTF-8).
    pub(crate) fn with_order(
        words: Words,
        symbol_text: Vec<Vec<u8>>,
        rule: TieBreak,
        count_chars: bool,
        order: Option<[u8; 256]>,
    ) -> Result<Self> {
        let total = words.symbols.len();
        // positions and NONE share u32
        if total >= NONE as usize || words.len() >= u32::MAX as usize {
            return Err(Error::Training("too many symbols in the distinct words (2^32 or more)".into()));
        }
        let units = symbol_text.iter().map(|t| units_of(t, count_chars)).collect();
        let texts = SymbolTexts::new(&symbol_text);
        drop(symbol_text);
        let mut nodes = Vec::with_capacity(total);
        let mut starts: Vec<u32> = words.starts.iter().map(|&s| s as u32).collect();
        starts.push(total as u32);
        for (w, span) in starts.windows(2).enumerate() {
            let (start, end) = (span[0], span[1]);
            for (p, &sym) in (start..end).zip(&words.symbols[start as usize..end as usize]) {
                nodes.push(Node {
                    sym,
                    next: if p + 1 == end { NONE } else { p + 1 },
                    prev: if p == start { NONE } else { p - 1 },
                    count: u32::try_from(words.counts[w]).unwrap_or(BIG_COUNT),
                });
            }
        }
        let max_symbol = words.symbols.iter().copied().filter(|&s| s != BARRIER).max();
        drop(words.symbols);
        let mut t = Trainer {
            nodes,
            counts: words.counts,
            starts,
            texts,
            units,
            pairs: LivePairs::default(),
            left_slots: Vec::new(),
            right_slots: Vec::new(),
            epoch: 0,
            arena: PosArena { slots: Vec::new(), free: NONE },
            scratch: Vec::new(),
            heap: CountQueue::new(),
            text_heap: BinaryHeap::new(),
            order: order.unwrap_or_else(|| std::array::from_fn(|b| b as u8)),
            rule,
            grown: Vec::new(),
            shrunk: Vec::new(),
            notes: Vec::new(),
            parallel: parallel_knobs(),
        };
        t.count_all_pairs(max_symbol.map_or(0, |m| m as usize + 1))?;
        Ok(t)
    }

    /// Builds the pair table and queues every pair. `n`: symbols in the
    /// words are below it.
    fn count_all_pairs(&mut self, n: usize) -> Result<()> {
        // few initial symbols (bytes, a small alphabet): pairs index a dense
        // table of slots rather than the hash index, which gets each distinct
        // pair once at the end
        let mut dense: Vec<u32> = if n * n <= DENSE_PAIRS { vec![NONE; n * n] } else { Vec::new() };
        for w in 0..self.counts.len() {
            let count = self.counts[w];
            let (start, end) = (self.starts[w], self.starts[w + 1]);
            for p in start..end.saturating_sub(1) {
                let pair = (self.nodes[p as usize].sym, self.nodes[p as usize + 1].sym);
                if pair.0 == BARRIER || pair.1 == BARRIER {
                    continue;
                }
                // positions come in increasing order: the first one stays first
                let s = if dense.is_empty() {
                    self.pairs.slot(pair, p)
                } else {
                    let d = &mut dense[pair.0 as usize * n + pair.1 as usize];
                    if *d == NONE {
                        *d = self.pairs.infos.len() as u32;
                        self.pairs.infos.push(PairInfo { count: 0, first: p, first_stale: false, pos: PosList::EMPTY });
                    }
                    *d
                };
                let info = &mut self.pairs.infos[s as usize];
                info.count = info.count.checked_add(count).ok_or_else(|| {
                    Error::Training("a pair count overflows 64 bits".into())
                })?;
                self.arena.push(&mut info.pos, p);
            }
        }
        for (i, &s) in dense.iter().enumerate() {
            if s != NONE {
                self.pairs.index.insert(((i / n) as u32, (i % n) as u32), s);
            }
        }
        let pairs: Vec<(Pair, u32)> = self.pairs.index.iter().map(|(&p, &s)| (p, s)).collect();
        if self.rule.by_text() {
            self.text_heap.reserve(pairs.len());
        }
        for (pair, s) in pairs {
            self.push(pair, s);
        }
        Ok(())
    }

    /// Queues `pair` (slot `s`) with its current count and first occurrence.
    fn push(&mut self, pair: Pair, s: u32) {
        let info = &self.pairs.infos[s as usize];
        let tie = match self.rule {
            TieBreak::PairId | TieBreak::MaxString => !((u64::from(pair.0) << 32) | u64::from(pair.1)),
            TieBreak::First | TieBreak::Alphabetical => !u64::from(info.first),
        };
        let entry = Entry { count: info.count, tie, pair };
        if self.rule.by_text() {
            let (l, r) = (self.texts.get(pair.0), self.texts.get(pair.1));
            let mut text = Vec::with_capacity(l.len() + r.len());
            let split = if self.rule == TieBreak::MaxString {
                text.extend(l.iter().chain(r).map(|&b| self.order[b as usize]));
                l.len() as u32
            } else {
                text.extend_from_slice(l);
                text.extend_from_slice(r);
                NO_SPLIT
            };
            self.text_heap.push(TextEntry { entry, text: text.into_boxed_slice(), split });
        } else {
            self.heap.push(entry);
        }
    }

    /// Whether `pair` occurs at position `p` now.
    #[inline]
    fn holds(&self, p: Pos, pair: Pair) -> bool {
        let node = self.nodes[p as usize];
        node.sym == pair.0 && node.next != NONE && self.nodes[node.next as usize].sym == pair.1
    }

    /// Finds the exact first occurrence of `pair` (slot `s`) and drops
    /// stale positions from its list.
    fn refresh_first(&mut self, pair: Pair, s: u32) {
        let info = &mut self.pairs.infos[s as usize];
        let mut pos = std::mem::take(&mut self.scratch);
        pos.clear();
        self.arena.take_into(&mut info.pos, &mut pos);
        let nodes = &self.nodes;
        pos.retain(|&p| {
            let node = nodes[p as usize];
            node.sym == pair.0 && node.next != NONE && nodes[node.next as usize].sym == pair.1
        });
        if let Some(&f) = pos.iter().min() {
            info.first = f;
        }
        info.first_stale = false;
        for &p in &pos {
            self.arena.push(&mut info.pos, p);
        }
        self.scratch = pos;
    }

    /// Count of the heap's top entry.
    fn next_count(&mut self) -> Option<u64> {
        if self.rule.by_text() {
            self.text_heap.peek().map(|t| t.entry.count)
        } else {
            self.heap.peek_count()
        }
    }

    /// Pops the best pair, or None when no pair is left.
    fn best(&mut self, max_len: Option<u32>) -> Option<(Pair, u64)> {
        loop {
            let top = if self.rule.by_text() {
                self.text_heap.pop().map(|t| t.entry)
            } else {
                self.heap.pop()
            };
            let Some(top) = top else { break };
            let Some(s) = self.pairs.get(top.pair) else { continue };
            let info = &self.pairs.infos[s as usize];
            let (count, first_stale) = (info.count, info.first_stale);
            if count == 0 {
                continue;
            }
            if max_len.is_some_and(|m| self.units[top.pair.0 as usize] + self.units[top.pair.1 as usize] > m) {
                continue; // too long for good: its length never changes
            }
            // Every other pair's entries are at least its true priority, so
            // when all of them count less, this pair is the best whatever its
            // tie-break key: skip refreshing its first occurrence (a scan of
            // its positions).
            if top.count == count && self.rule.needs_first() && self.next_count() < Some(top.count) {
                return Some((top.pair, top.count));
            }
            if self.rule.needs_first() && first_stale {
                self.refresh_first(top.pair, s);
            }
            let info = &self.pairs.infos[s as usize];
            if top.count == info.count && (!self.rule.needs_first() || top.tie == !u64::from(info.first)) {
                return Some((top.pair, top.count));
            }
            self.push(top.pair, s);
        }
        None
    }

    /// The slots of the pairs that a merge of `pair` into `new_id` changes
    /// next to symbol `x` (`left`: x is the left neighbour), looked up once
    /// per merge.
    #[inline]
    fn neighbour_slots(&mut self, x: u32, left: bool, pair: Pair, new_id: u32, p: Pos) -> NeighbourSlots {
        let cache = if left { &mut self.left_slots } else { &mut self.right_slots };
        let at = x as usize & (cache.len() - 1);
        let cached = cache[at];
        if cached.epoch == self.epoch && cached.sym == x {
            return cached;
        }
        let (old, new) = if left { ((x, pair.0), (x, new_id)) } else { ((pair.1, x), (new_id, x)) };
        // absent only when it is the merged pair itself (already removed)
        let old = self.pairs.get(old).unwrap_or(NONE);
        let s = self.pairs.slot(new, p);
        self.grown.push((new, s));
        let slots = NeighbourSlots { sym: x, epoch: self.epoch, old, new: s };
        let cache = if left { &mut self.left_slots } else { &mut self.right_slots };
        cache[at] = slots;
        slots
    }

    #[inline]
    fn add_occurrence(&mut self, s: u32, p: Pos, count: u64) {
        let info = &mut self.pairs.infos[s as usize];
        if info.count == 0 {
            info.first = p;
            info.first_stale = false;
        } else if !info.first_stale && p < info.first {
            info.first = p;
        }
        info.count += count;
        self.arena.push(&mut info.pos, p);
    }

    #[inline]
    fn remove_occurrence(&mut self, pair: Pair, s: u32, p: Pos, count: u64) {
        if s == NONE {
            return;
        }
        let info = &mut self.pairs.infos[s as usize];
        debug_assert!(info.count >= count);
        info.count = info.count.saturating_sub(count);
        if info.count == 0 {
            self.shrunk.push((pair, s));
        }
        if info.first == p {
            info.first_stale = true;
        }
    }

    /// Count of the word holding position `p` (for counts of 2^32 - 1 or more).
    #[cold]
    fn word_count(&self, p: Pos) -> u64 {
        word_count(&self.starts, &self.counts, p)
    }

    /// The one-thread merge: rewrites each occurrence at `pos` (sorted) and
    /// updates the pair counts around it, one occurrence after another.
    fn merge_serial(&mut self, pos: &[Pos], pair: Pair, new_id: u32) -> u128 {
        let (a, b) = pair;
        let mut merged: u128 = 0;
        for (i, &p) in pos.iter().enumerate() {
            // the positions are spread over the whole array: fetch ahead
            if let Some(&ahead) = pos.get(i + PREFETCH) {
                prefetch(&self.nodes[ahead as usize]);
            }
            if !self.holds(p, pair) {
                continue;
            }
            let node = self.nodes[p as usize];
            let q = node.next;
            let count = if node.count != BIG_COUNT { u64::from(node.count) } else { self.word_count(p) };
            merged += u128::from(count);
            let l = node.prev;
            if l != NONE {
                let left = self.nodes[l as usize].sym;
                if left != BARRIER {
                    let slots = self.neighbour_slots(left, true, pair, new_id, l);
                    self.remove_occurrence((left, a), slots.old, l, count);
                    self.add_occurrence(slots.new, l, count);
                }
            }
            let r = self.nodes[q as usize].next;
            if r != NONE {
                let right = self.nodes[r as usize].sym;
                if right != BARRIER {
                    let slots = self.neighbour_slots(right, false, pair, new_id, p);
                    self.remove_occurrence((b, right), slots.old, q, count);
                    self.add_occurrence(slots.new, p, count);
                }
                self.nodes[r as usize].prev = p;
            }
            self.nodes[p as usize].sym = new_id;
            self.nodes[p as usize].next = r;
            self.nodes[q as usize].sym = DEAD;
        }
        merged
    }

    /// How many runs a merge of `n` positions is cut into (1: the serial loop).
    fn parallel_chunks(&self, n: usize) -> usize {
        let (min, runs) = self.parallel;
        if n < min.max(2) {
            return 1;
        }
        let runs = if runs == 0 { crate::parallel::threads() } else { runs };
        runs.min(n)
    }

    /// The many-thread merge: the sorted positions are cut at word starts
    /// into `chunks` runs, each owning its words' nodes, rewritten in
    /// parallel (`rewrite_chunk`), each run noting its occurrences with
    /// their neighbours in order. The pair counts are then updated from
    /// the runs' notes in run order: the same updates in the same order
    /// as `merge_serial`, so the result is identical.
    fn merge_parallel(&mut self, pos: &[Pos], pair: Pair, new_id: u32, chunks: usize) -> u128 {
        let (a, b) = pair;
        let mut notes = std::mem::take(&mut self.notes);
        notes.resize_with(chunks, Vec::new);
        {
            let starts = &self.starts;
            let counts = &self.counts;
            // node ranges [cut_k, cut_k+1) and position ranges, cut at word starts
            let word_start = |p: Pos| starts[starts.partition_point(|&s| s <= p) - 1];
            let mut runs: Vec<Run> = Vec::with_capacity(chunks);
            let mut rest: &mut [Node] = &mut self.nodes;
            let (mut node_lo, mut pos_lo) = (0 as Pos, 0usize);
            let mut notes_iter = notes.iter_mut();
            for k in 1..=chunks {
                let (node_hi, pos_hi) = if k == chunks {
                    (node_lo + rest.len() as Pos, pos.len())
                } else {
                    let cut = word_start(pos[pos.len() * k / chunks]).max(node_lo);
                    (cut, pos_lo + pos[pos_lo..].partition_point(|&p| p < cut))
                };
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut((node_hi - node_lo) as usize);
                rest = tail;
                let out = notes_iter.next().expect("one note list per run");
                out.clear();
                runs.push(Run { nodes: mine, base: node_lo, pos: &pos[pos_lo..pos_hi], out });
                (node_lo, pos_lo) = (node_hi, pos_hi);
            }
            crate::parallel::map_mut(&mut runs, |run| rewrite_chunk(run, pair, new_id, starts, counts));
        }
        let mut merged: u128 = 0;
        for run in &notes {
            for o in run {
                merged += u128::from(o.count);
                if o.left != BARRIER {
                    let slots = self.neighbour_slots(o.left, true, pair, new_id, o.l);
                    self.remove_occurrence((o.left, a), slots.old, o.l, o.count);
                    self.add_occurrence(slots.new, o.l, o.count);
                }
                if o.right != BARRIER {
                    let slots = self.neighbour_slots(o.right, false, pair, new_id, o.p);
                    self.remove_occurrence((b, o.right), slots.old, o.q, o.count);
                    self.add_occurrence(slots.new, o.p, o.count);
                }
            }
        }
        self.notes = notes;
        merged
    }

    /// Replaces `pair` by `new_id` at its positions, left to right without
    /// overlap inside each word, and updates the pair counts around each
    /// occurrence. Only the merged positions and their neighbours are touched.
    /// Returns how many symbols the words lost (occurrences times word counts).
    ///
    /// A merge with many positions rewrites its words on every thread
    /// (`rewrite_parallel`); the pair counts are then updated from the
    /// occurrences in position order, exactly as the one-thread loop does.
    fn apply_merge(&mut self, pair: Pair, new_id: u32) -> u128 {
        // absent: a merge chosen from another corpus (parity training)
        let Some(mut list) = self.pairs.remove(pair) else { return 0 };
        let mut pos = std::mem::take(&mut self.scratch);
        pos.clear();
        self.arena.take_into(&mut list, &mut pos);
        let cache = self.texts.len().next_power_of_two().min(SLOT_CACHE);
        let unset = NeighbourSlots { sym: NONE, epoch: 0, old: NONE, new: NONE };
        self.left_slots.resize(cache, unset);
        self.right_slots.resize(cache, unset);
        self.epoch += 1;
        // increasing positions: left to right in each word, so of two
        // overlapping occurrences ("aaa") the left one merges
        let chunks = self.parallel_chunks(pos.len());
        let merged = if chunks > 1 {
            crate::parallel::sort_unstable(&mut pos);
            self.merge_parallel(&pos, pair, new_id, chunks)
        } else {
            pos.sort_unstable();
            self.merge_serial(&pos, pair, new_id)
        };
        self.scratch = pos;
        // the merged pair is gone for good (its symbols never meet again)
        if let Some(mut list) = self.pairs.remove(pair) {
            self.arena.free(&mut list);
        }
        let mut grown = std::mem::take(&mut self.grown);
        grown.sort_unstable();
        grown.dedup();
        for &(p, s) in &grown {
            if self.pairs.infos[s as usize].count > 0 {
                self.push(p, s);
            }
        }
        grown.clear();
        self.grown = grown;
        let mut shrunk = std::mem::take(&mut self.shrunk);
        for &(p, s) in &shrunk {
            // a pair may fall to zero twice (and regain occurrences in between)
            if self.pairs.infos[s as usize].count == 0 && self.pairs.get(p) == Some(s) {
                if let Some(mut list) = self.pairs.remove(p) {
                    self.arena.free(&mut list);
                }
            }
        }
        shrunk.clear();
        self.shrunk = shrunk;
        merged
    }

    /// The best pair and its count, taken off the queue (None: no pair left).
    /// Pairs whose token would be longer than `max_len` are never offered.
    /// Merge it with `merge`, or not at all: this trainer does not offer it again.
    pub(crate) fn best_pair(&mut self, max_len: Option<u32>) -> Option<((u32, u32), u64)> {
        self.best(max_len)
    }

    /// Records the next merge, `pair`, and applies it to the words (where it
    /// occurs: the pair may be absent, when it was chosen elsewhere). Returns
    /// how many symbols the words lost, counts included.
    pub fn merge(&mut self, pair: (u32, u32)) -> u128 {
        let new_id = self.texts.push_concat(pair.0, pair.1);
        self.units.push(self.units[pair.0 as usize] + self.units[pair.1 as usize]);
        self.apply_merge(pair, new_id)
    }

    /// Runs up to `config.max_merges` merges; `on_merge(k, merge)` is
    /// called after each and stops training by returning false. Returns
    /// the merges and why training stopped.
    pub(crate) fn run(
        mut self,
        config: &TrainConfig,
        mut on_merge: impl FnMut(usize, &Merge) -> bool,
    ) -> (Vec<Merge>, StopReason) {
        let mut merges = Vec::new();
        let mut reason = StopReason::Done;
        while merges.len() < config.max_merges {
            let Some((pair, count)) = self.best(config.max_token_length) else {
                reason = StopReason::NoPairs;
                break;
            };
            if count < config.min_frequency {
                reason = StopReason::BelowMinFrequency;
                break;
            }
            let merge = Merge { left: pair.0, right: pair.1, count };
            self.merge(pair);
            let go_on = on_merge(merges.len(), &merge);
            merges.push(merge);
            if !go_on {
                reason = StopReason::Cancelled;
                break;
            }
        }
        (merges, reason)
    }
}

/// Count of the word holding position `p`, from the words' starts and counts.
#[cold]
fn word_count(starts: &[u32], counts: &[u64], p: Pos) -> u64 {
    counts[starts.partition_point(|&s| s <= p) - 1]
}

/// One merged occurrence at `p` (its right symbol at `q`), with its left
/// neighbour symbol at `l` and its right neighbour symbol, as they were
/// just before it merged (`BARRIER`: none, or a barrier).
#[derive(Clone, Copy)]
struct Occurrence {
    left: u32,
    l: Pos,
    right: u32,
    p: Pos,
    q: Pos,
    count: u64,
}

/// One run of a parallel merge: the nodes of whole words (`nodes[0]` is
/// position `base`), the merged pair's positions among them, and the
/// occurrences it merged, in order.
struct Run<'a> {
    nodes: &'a mut [Node],
    base: Pos,
    pos: &'a [Pos],
    out: &'a mut Vec<Occurrence>,
}

/// Merges `pair` into `new_id` at the run's positions, left to right
/// without overlap (as `Trainer::merge_serial` rewrites nodes), noting each
/// occurrence with its neighbours.
fn rewrite_chunk(run: &mut Run, pair: Pair, new_id: u32, starts: &[u32], counts: &[u64]) {
    let base = run.base as usize;
    let nodes = &mut *run.nodes;
    let out = &mut *run.out;
    let at = |p: Pos| p as usize - base;
    for (i, &p) in run.pos.iter().enumerate() {
        if let Some(&ahead) = run.pos.get(i + PREFETCH) {
            prefetch(&nodes[at(ahead)]);
        }
        let node = nodes[at(p)];
        if node.sym != pair.0 || node.next == NONE || nodes[at(node.next)].sym != pair.1 {
            continue;
        }
        let q = node.next;
        let count = if node.count != BIG_COUNT { u64::from(node.count) } else { word_count(starts, counts, p) };
        let l = node.prev;
        let left = if l != NONE { nodes[at(l)].sym } else { BARRIER };
        let r = nodes[at(q)].next;
        let right = if r != NONE {
            let right = nodes[at(r)].sym;
            nodes[at(r)].prev = p;
            right
        } else {
            BARRIER
        };
        nodes[at(p)].sym = new_id;
        nodes[at(p)].next = r;
        nodes[at(q)].sym = DEAD;
        out.push(Occurrence { left, l, right, p, q, count });
    }
}

/// Merges with at least this many positions run on every thread (set by
/// `set_parallel_merge`; fewer positions cost less than a fork-join).
const PARALLEL_MIN_POSITIONS: usize = 1024;
static PARALLEL_MIN: AtomicUsize = AtomicUsize::new(PARALLEL_MIN_POSITIONS);
/// Runs per parallel merge (0: one per thread).
static PARALLEL_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Sets the parallel merge's knobs: merges with at least `min_positions`
/// positions run in `runs` runs (0: one per thread; a merge runs on one
/// thread when that is 1). Returns the previous setting. Training's result
/// never depends on it: tests lower the threshold so small corpora take
/// the parallel path.
pub fn set_parallel_merge(min_positions: usize, runs: usize) -> (usize, usize) {
    (PARALLEL_MIN.swap(min_positions, AtomicOrdering::Relaxed), PARALLEL_RUNS.swap(runs, AtomicOrdering::Relaxed))
}

/// The knobs as `set_parallel_merge` left them: (least positions, runs).
fn parallel_knobs() -> (usize, usize) {
    (PARALLEL_MIN.load(AtomicOrdering::Relaxed), PARALLEL_RUNS.load(AtomicOrdering::Relaxed))
}

/// Largest dense table of initial pairs (4 bytes each): 256 x 256 bytes and
/// alphabets of up to 1024 characters fit.
const DENSE_PAIRS: usize = 1 << 20;

/// How many positions ahead `apply_merge` asks for memory.
const PREFETCH: usize = 8;

/// Length of a text in bytes, or in characters (UTF-8 lead bytes).
fn units_of(text: &[u8], count_chars: bool) -> u32 {
    if count_chars {
        text.iter().filter(|&&b| (b as i8) >= -0x40).count() as u32
    } else {
        text.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(words: &[(&str, u64)]) -> (Words, Vec<Vec<u8>>) {
        let mut alphabet: Vec<char> = words.iter().flat_map(|(w, _)| w.chars()).collect();
        alphabet.sort_unstable();
        alphabet.dedup();
        let text = alphabet.iter().map(|c| c.to_string().into_bytes()).collect();
        let mut tw = Words::default();
        for (w, c) in words {
            tw.push(*c, |s| s.extend(w.chars().map(|ch| alphabet.binary_search(&ch).unwrap() as u32)));
        }
        (tw, text)
    }

    fn run(words: &[(&str, u64)], rule: TieBreak, n: usize) -> Vec<String> {
        let (tw, text) = chars(words);
        let t = Trainer::new(tw, text, rule, true).unwrap();
        let mut names: Vec<String> =
            (0..t.texts.len() as u32).map(|id| String::from_utf8(t.texts.get(id).to_vec()).unwrap()).collect();
        let cfg = TrainConfig { tie_break: rule, min_frequency: 1, max_merges: n, max_token_length: None };
        let (merges, _) = t.run(&cfg, |_, _| true);
        merges
            .iter()
            .map(|m| {
                let s = format!("{}+{}", names[m.left as usize], names[m.right as usize]);
                names.push(format!("{}{}", names[m.left as usize], names[m.right as usize]));
                s
            })
            .collect()
    }

    #[test]
    fn seed_002_merges() {
        // seed 002: most_common(1) on {"low": 5, "lower": 2, "newest": 6, "widest": 3}
        let m = run(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], TieBreak::First, 5);
        assert_eq!(m, ["e+s", "es+t", "l+o", "lo+w", "n+e"]);
    }

    #[test]
    fn overlapping_pairs_count_every_position() {
        // "aaa" holds (a, a) twice; merging gives "aa a", then (aa, a)
        let m = run(&[("aaa", 1)], TieBreak::First, 5);
        assert_eq!(m, ["a+a", "aa+a"]);
    }

    #[test]
    fn counts_beyond_32_bits() {
        // the nodes keep counts below 2^32 - 1; larger ones are found by position
        let words = [("xab", 5), ("cab", u64::from(u32::MAX)), ("abd", 1 << 40), ("zab", 7)];
        let (tw, text) = chars(&words);
        let t = Trainer::new(tw, text, TieBreak::PairId, true).unwrap();
        let cfg = TrainConfig { tie_break: TieBreak::PairId, min_frequency: 1, max_merges: 3, max_token_length: None };
        let counts: Vec<u64> = t.run(&cfg, |_, _| true).0.iter().map(|m| m.count).collect();
        assert_eq!(counts, [(1 << 40) + u64::from(u32::MAX) + 12, 1 << 40, u64::from(u32::MAX)]);
    }

    /// Merges (left, right, count) of `words` with the merge loop cut into
    /// `runs` runs for merges of at least `min` positions.
    fn merges_with(words: &[(String, u64)], rule: TieBreak, parallel: (usize, usize)) -> Vec<Merge> {
        let refs: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        let (tw, text) = chars(&refs);
        let mut t = Trainer::new(tw, text, rule, true).unwrap();
        t.parallel = parallel;
        let cfg = TrainConfig { tie_break: rule, min_frequency: 1, max_merges: usize::MAX, max_token_length: None };
        t.run(&cfg, |_, _| true).0
    }

    #[test]
    fn parallel_merges_equal_serial_ones() {
        // tiny alphabets: overlapping pairs ("aaa"), ties and repeated
        // neighbours on every step; runs cut at word starts, some empty
        let mut rng = crate::testing::Rng(0x2545F4914F6CDD1Du64);
        let mut next = move || rng.next();
        for round in 0..300 {
            let alphabet = ["a", "b", "c", "ab", "é"];
            let n_words = 1 + (next() % 40) as usize;
            let words: Vec<(String, u64)> = (0..n_words)
                .map(|_| {
                    let len = 1 + (next() % 12) as usize;
                    let w: String = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
                    // a few counts beyond 32 bits take the word-count lookup
                    let count = if next() % 17 == 0 { u64::from(u32::MAX) + next() % 5 } else { 1 + next() % 9 };
                    (w, count)
                })
                .collect();
            for rule in [TieBreak::First, TieBreak::PairId, TieBreak::Alphabetical, TieBreak::MaxString] {
                let serial = merges_with(&words, rule, (usize::MAX, 1));
                for runs in [2, 3, 7] {
                    let parallel = merges_with(&words, rule, (1 + round % 3, runs));
                    assert_eq!(serial, parallel, "{rule:?}, {runs} runs, words {words:?}");
                }
            }
        }
    }

    #[test]
    fn parallel_merge_of_one_long_word() {
        // one word: every run but the one holding it is empty
        let words = vec![("ab".repeat(500) + &"a".repeat(301), 3u64), ("ba".into(), 1)];
        let serial = merges_with(&words, TieBreak::First, (usize::MAX, 1));
        assert_eq!(serial, merges_with(&words, TieBreak::First, (1, 4)));
        assert!(serial.len() > 5);
    }

    #[test]
    fn alphabetical_prefers_longer_on_prefix() {
        assert_eq!(alphabetical_cmp(b"ab", b"abc"), Ordering::Less);
        assert_eq!(alphabetical_cmp(b"ab", b"ac"), Ordering::Greater);
    }
}
