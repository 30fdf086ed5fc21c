//! The incremental BPE trainer.
//!
//! Pair counts are built once, then updated per merge from the words that
//! hold the merged pair; a max-heap with lazily refreshed entries picks the
//! best pair. Counts are 64-bit.
//!
//! Heap invariant: every live pair has at least one entry whose priority is
//! at least its true priority (an entry is pushed whenever a pair gains
//! occurrences; losing occurrences only lowers the true priority). A popped
//! entry that matches the pair's current state exactly is therefore the
//! best pair; one that does not is pushed back with the current state.

use crate::error::{Error, Result};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreak {
    /// Earliest occurrence: (word rank by first appearance, offset in word).
    First,
    /// Smallest `left + right` element-wise, longer on a prefix; then First.
    Alphabetical,
    /// Smallest (left id, right id).
    PairId,
}

impl TieBreak {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "first" => Ok(TieBreak::First),
            "alphabetical" => Ok(TieBreak::Alphabetical),
            "pair-id" => Ok(TieBreak::PairId),
            other => Err(Error::Training(format!(
                "unknown tie_break {other:?}: use \"first\", \"alphabetical\" or \"pair-id\""
            ))),
        }
    }

    fn needs_first(self) -> bool {
        self != TieBreak::PairId
    }
}

/// A word for training: its initial symbol ids and its count.
pub struct TrainWord {
    pub symbols: Vec<u32>,
    pub count: u64,
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
    pub max_merges: usize,
    /// Pairs whose merged token would be longer than this are never merged
    /// (length in `Trainer::new`'s units: bytes or characters).
    pub max_token_length: Option<u32>,
}

type Pair = (u32, u32);

/// A symbol that never takes part in a pair (a character outside the
/// vocabulary in continued training): pairs with it are never counted.
pub const BARRIER: u32 = u32::MAX;
/// Position of an occurrence: (word index, offset of its left symbol in
/// initial symbols). Stable under merges, so comparable across steps.
type Pos = (u32, u32);

struct PairInfo {
    count: u64,
    first: Pos,
    first_stale: bool,
    /// Words that held the pair at some point (may hold stale entries).
    words: Vec<u32>,
}

struct Entry {
    count: u64,
    first: Pos,
    pair: Pair,
    /// `left + right` bytes, only for the alphabetical rule.
    text: Option<Box<[u8]>>,
    rule: TieBreak,
}

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

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.count.cmp(&other.count).then_with(|| match self.rule {
            TieBreak::PairId => other.pair.cmp(&self.pair),
            TieBreak::First => other.first.cmp(&self.first),
            TieBreak::Alphabetical => {
                let (a, b) = (self.text.as_deref().unwrap_or(&[]), other.text.as_deref().unwrap_or(&[]));
                alphabetical_cmp(a, b).then_with(|| other.first.cmp(&self.first))
            }
        })
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}

pub struct Trainer {
    words: Vec<TrainWord>,
    /// Bytes of every symbol by id (initial symbols, then merges).
    symbol_text: Vec<Vec<u8>>,
    /// Length of a symbol's text in bytes: the offset unit of positions
    /// (stable under merges, and equal for equal texts).
    span: Vec<u32>,
    /// Length of a symbol for `max_token_length`: bytes, or characters.
    units: Vec<u32>,
    /// Text to its smallest id: a merge whose text already exists yields
    /// that symbol (the reference works on strings, where they are one).
    text_ids: FxHashMap<Vec<u8>, u32>,
    pairs: FxHashMap<Pair, PairInfo>,
    heap: BinaryHeap<Entry>,
    rule: TieBreak,
    /// Per word, the last merge step that visited it (dedupes pair word lists).
    visited: Vec<u32>,
    scratch: Vec<u32>,
    /// Pairs whose count fell to zero during the current merge.
    shrunk: Vec<Pair>,
}

impl Trainer {
    /// `symbol_text[id]` for every id below the first merge id; merges get
    /// ids `symbol_text.len() + k`.
    /// `count_chars`: token length is measured in characters (char model)
    /// rather than bytes.
    pub fn new(words: Vec<TrainWord>, symbol_text: Vec<Vec<u8>>, rule: TieBreak, count_chars: bool) -> Result<Self> {
        if words.len() >= u32::MAX as usize {
            return Err(Error::Training("too many distinct words (more than 2^32)".into()));
        }
        let span = symbol_text.iter().map(|t| t.len().max(1) as u32).collect();
        let units = symbol_text.iter().map(|t| units_of(t, count_chars)).collect();
        let mut text_ids = FxHashMap::default();
        for (id, t) in symbol_text.iter().enumerate() {
            text_ids.entry(t.clone()).or_insert(id as u32);
        }
        let visited = vec![0; words.len()];
        let mut t = Trainer {
            words,
            symbol_text,
            span,
            units,
            text_ids,
            pairs: FxHashMap::default(),
            heap: BinaryHeap::new(),
            rule,
            visited,
            scratch: Vec::new(),
            shrunk: Vec::new(),
        };
        t.count_all_pairs()?;
        Ok(t)
    }

    fn count_all_pairs(&mut self) -> Result<()> {
        for (w, word) in self.words.iter().enumerate() {
            if word.symbols.len() > u32::MAX as usize {
                return Err(Error::Training("a word longer than 2^32 symbols".into()));
            }
            let mut off = 0u32;
            for pair in word.symbols.windows(2) {
                let pos = (w as u32, off);
                off += self.span_of(pair[0]);
                if pair[0] == BARRIER || pair[1] == BARRIER {
                    continue;
                }
                let info = self.pairs.entry((pair[0], pair[1])).or_insert_with(|| PairInfo {
                    count: 0,
                    first: pos,
                    first_stale: false,
                    words: Vec::new(),
                });
                info.count = info.count.checked_add(word.count).ok_or_else(|| {
                    Error::Training("a pair count overflows 64 bits".into())
                })?;
                if info.words.last() != Some(&(w as u32)) {
                    info.words.push(w as u32);
                }
            }
        }
        let pairs: Vec<Pair> = self.pairs.keys().copied().collect();
        for pair in pairs {
            self.push(pair);
        }
        Ok(())
    }

    fn push(&mut self, pair: Pair) {
        let info = &self.pairs[&pair];
        let text = (self.rule == TieBreak::Alphabetical).then(|| {
            let (l, r) = (&self.symbol_text[pair.0 as usize], &self.symbol_text[pair.1 as usize]);
            let mut t = Vec::with_capacity(l.len() + r.len());
            t.extend_from_slice(l);
            t.extend_from_slice(r);
            t.into_boxed_slice()
        });
        self.heap.push(Entry { count: info.count, first: info.first, pair, text, rule: self.rule });
    }

    /// Finds the exact first occurrence of `pair` and drops words that no
    /// longer hold it from its word list.
    fn refresh_first(&mut self, pair: Pair) {
        let Some(info) = self.pairs.get_mut(&pair) else { return };
        let mut words = std::mem::take(&mut info.words);
        words.sort_unstable();
        words.dedup();
        let mut first: Option<Pos> = None;
        words.retain(|&w| {
            let syms = &self.words[w as usize].symbols;
            let mut off = 0u32;
            let mut found = false;
            for i in 0..syms.len().saturating_sub(1) {
                if (syms[i], syms[i + 1]) == pair {
                    if !found {
                        found = true;
                        let pos = (w, off);
                        if first.map_or(true, |f| pos < f) {
                            first = Some(pos);
                        }
                    }
                    break;
                }
                off += if syms[i] == BARRIER { 1 } else { self.span[syms[i] as usize] };
            }
            found
        });
        if let Some(f) = first {
            info.first = f;
        }
        info.first_stale = false;
        info.words = words;
    }

    /// Pops the best pair, or None when no pair is left.
    fn best(&mut self, max_len: Option<u32>) -> Option<(Pair, u64)> {
        while let Some(top) = self.heap.pop() {
            let Some(info) = self.pairs.get(&top.pair) else { continue };
            if info.count == 0 {
                continue;
            }
            if max_len.is_some_and(|m| self.units[top.pair.0 as usize] + self.units[top.pair.1 as usize] > m) {
                continue; // too long for good: its length never changes
            }
            if self.rule.needs_first() && info.first_stale {
                self.refresh_first(top.pair);
            }
            let info = &self.pairs[&top.pair];
            if top.count == info.count && (!self.rule.needs_first() || top.first == info.first) {
                return Some((top.pair, top.count));
            }
            self.push(top.pair);
        }
        None
    }

    /// Span of a word symbol (a barrier counts as one byte: only the order
    /// of offsets matters).
    #[inline]
    fn span_of(&self, id: u32) -> u32 {
        if id == BARRIER {
            1
        } else {
            self.span[id as usize]
        }
    }

    fn add_occurrence(&mut self, pair: Pair, w: u32, off: u32, count: u64, grown: &mut Vec<Pair>) {
        if pair.0 == BARRIER || pair.1 == BARRIER {
            return;
        }
        let info = self.pairs.entry(pair).or_insert_with(|| PairInfo {
            count: 0,
            first: (w, off),
            first_stale: false,
            words: Vec::new(),
        });
        if info.count == 0 {
            info.first = (w, off);
            info.first_stale = false;
        } else if !info.first_stale && (w, off) < info.first {
            info.first = (w, off);
        }
        info.count += count;
        if info.words.last() != Some(&w) {
            info.words.push(w);
        }
        grown.push(pair);
    }

    fn remove_occurrence(&mut self, pair: Pair, w: u32, off: u32, count: u64) {
        if pair.0 == BARRIER || pair.1 == BARRIER {
            return;
        }
        if let Some(info) = self.pairs.get_mut(&pair) {
            debug_assert!(info.count >= count);
            info.count = info.count.saturating_sub(count);
            if info.count == 0 {
                self.shrunk.push(pair);
            }
            if info.first == (w, off) {
                info.first_stale = true;
            }
        }
    }

    /// Replaces `pair` by `new_id` in every word, left to right without
    /// overlap, and updates the pair counts around each occurrence.
    fn apply_merge(&mut self, pair: Pair, new_id: u32, step: u32) {
        let (a, b) = pair;
        let info = self.pairs.remove(&pair).expect("merged pair is present");
        let mut grown: Vec<Pair> = Vec::new();
        let mut scratch = std::mem::take(&mut self.scratch);
        for &w in &info.words {
            if self.visited[w as usize] == step {
                continue;
            }
            self.visited[w as usize] = step;
            let count = self.words[w as usize].count;
            let syms = std::mem::take(&mut self.words[w as usize].symbols);
            if !syms.windows(2).any(|p| p[0] == a && p[1] == b) {
                self.words[w as usize].symbols = syms;
                continue;
            }
            scratch.clear();
            let n = syms.len();
            let (mut i, mut off, mut prev_off) = (0usize, 0u32, 0u32);
            while i < n {
                if i + 1 < n && syms[i] == a && syms[i + 1] == b {
                    if let Some(&prev) = scratch.last() {
                        self.remove_occurrence((prev, a), w, prev_off, count);
                        self.add_occurrence((prev, new_id), w, prev_off, count, &mut grown);
                    }
                    if i + 2 < n {
                        let next = syms[i + 2];
                        let next_off = off + self.span[a as usize];
                        self.remove_occurrence((b, next), w, next_off, count);
                        self.add_occurrence((new_id, next), w, off, count, &mut grown);
                    }
                    scratch.push(new_id);
                    prev_off = off;
                    off += self.span[a as usize] + self.span[b as usize];
                    i += 2;
                } else {
                    scratch.push(syms[i]);
                    prev_off = off;
                    off += self.span_of(syms[i]);
                    i += 1;
                }
            }
            let mut syms = syms;
            syms.clear();
            syms.extend_from_slice(&scratch);
            self.words[w as usize].symbols = syms;
        }
        self.scratch = scratch;
        // the merged pair itself is gone for good: its symbols never meet again
        self.pairs.remove(&pair);
        grown.sort_unstable();
        grown.dedup();
        for p in grown {
            if self.pairs.get(&p).is_some_and(|i| i.count > 0) {
                self.push(p);
            }
        }
        for p in std::mem::take(&mut self.shrunk) {
            if self.pairs.get(&p).is_some_and(|i| i.count == 0) {
                self.pairs.remove(&p);
            }
        }
    }

    /// Runs up to `config.max_merges` merges; `on_merge(k, merge)` is
    /// called after each and stops training by returning false.
    pub fn run(
        mut self,
        config: &TrainConfig,
        mut on_merge: impl FnMut(usize, &Merge) -> bool,
    ) -> (Vec<Merge>, StopReason, Vec<TrainWord>) {
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
            let merge_id = self.symbol_text.len() as u32;
            let mut text = self.symbol_text[pair.0 as usize].clone();
            text.extend_from_slice(&self.symbol_text[pair.1 as usize]);
            let new_id = *self.text_ids.entry(text.clone()).or_insert(merge_id);
            self.symbol_text.push(text);
            self.span.push(self.span[pair.0 as usize] + self.span[pair.1 as usize]);
            self.units.push(self.units[pair.0 as usize] + self.units[pair.1 as usize]);
            let merge = Merge { left: pair.0, right: pair.1, count };
            self.apply_merge(pair, new_id, merges.len() as u32 + 1);
            let go_on = on_merge(merges.len(), &merge);
            merges.push(merge);
            if !go_on {
                reason = StopReason::Cancelled;
                break;
            }
        }
        (merges, reason, self.words)
    }
}

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

    fn chars(words: &[(&str, u64)]) -> (Vec<TrainWord>, Vec<Vec<u8>>) {
        let mut alphabet: Vec<char> = words.iter().flat_map(|(w, _)| w.chars()).collect();
        alphabet.sort_unstable();
        alphabet.dedup();
        let text = alphabet.iter().map(|c| c.to_string().into_bytes()).collect();
        let tw = words
            .iter()
            .map(|(w, c)| TrainWord {
                symbols: w.chars().map(|ch| alphabet.binary_search(&ch).unwrap() as u32).collect(),
                count: *c,
            })
            .collect();
        (tw, text)
    }

    fn run(words: &[(&str, u64)], rule: TieBreak, n: usize) -> Vec<String> {
        let (tw, text) = chars(words);
        let t = Trainer::new(tw, text, rule, true).unwrap();
        let mut names: Vec<String> = t.symbol_text.iter().map(|b| String::from_utf8(b.clone()).unwrap()).collect();
        let cfg = TrainConfig { tie_break: rule, min_frequency: 1, max_merges: n, max_token_length: None };
        let (merges, _, _) = t.run(&cfg, |_, _| true);
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
    fn alphabetical_prefers_longer_on_prefix() {
        assert_eq!(alphabetical_cmp(b"ab", b"abc"), Ordering::Less);
        assert_eq!(alphabetical_cmp(b"ab", b"ac"), Ordering::Greater);
    }
}
