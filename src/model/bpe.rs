//! The BPE model as Hugging Face runs it: merges ranked as *pairs* (rank =
//! index in the merge list, the result's id from the vocab), applied
//! lowest rank first, leftmost on ties; byte fallback, unk (fused or not),
//! continuing-subword prefix, end-of-word suffix, ignore_merges, dropout.
//! Words of up to `CACHE_MAX_LEN` bytes are cached per thread.
//! A byte-level model also gets tables on raw bytes (`RawBytes`), for the
//! string-free route (`tokenize_raw_in`): no byte-to-char mapping and no
//! string hashing per piece.

use super::spec::BpeSpec;
use super::pairs::{merge_lowest_rank, merge_pairs, merge_pairs_windowed};
use super::window::AppendIds;
use super::atoms::Atoms;
use super::byte::merge_symbols;
use crate::model::{ConcatRanks, TokenTable};
use crate::cache::seed::FrontSeed;
use crate::error::{Error, Result};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU8, Ordering};

const NONE: u32 = u32::MAX;
const TABLE_CHARS: usize = 0x800;

thread_local! {
    static RNG: RefCell<u64> = RefCell::new(0);
}

#[derive(Debug)]
pub struct Bpe {
    pub vocab: FxHashMap<String, u32>,
    pub(crate) vocab_r: IdTokens,
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    unk_token: Option<String>,
    fuse_unk: bool,
    byte_fallback: bool,
    ignore_merges: bool,
    prefix: Option<String>,
    suffix: Option<String>,
    dropout: Option<f32>,
    byte_ids: [u32; 256],
    char_table: Vec<u32>,
    char_map: FxHashMap<char, u32>,
    cache_id: u64,
    /// Names this model in the per-thread piece cache (`crate::cache`).
    owner: u32,
    /// Names this model's raw-byte keys in the piece cache (`tokenize_raw_in`).
    raw_owner: u32,
    /// Hugging Face's `get_vocab_size` (number of entries)
    pub len: usize,
    /// The tables on raw bytes, once `prepare_raw_bytes` made them.
    raw: Option<RawBytes>,
}

/// Token text by id: every token's text in one buffer, found by its span (a map of 10^5 ids to
/// strings of their own was a tenth of a big model's memory).
#[derive(Debug, Default)]
pub(crate) struct IdTokens {
    text: String,
    /// `spans[id]`, (`usize::MAX`, 0) for an id without a token; empty when the ids are far apart
    spans: Vec<(usize, usize)>,
    /// the spans of ids far apart (more than twice the tokens, plus 1024): no table with holes
    sparse: FxHashMap<u32, (usize, usize)>,
    /// one more than the largest id
    bound: usize,
}

impl IdTokens {
    /// Of distinct `(token, id)` items; Err(the id, the earlier token, the later one) for an id given twice.
    fn new(items: &[(String, u32)]) -> std::result::Result<Self, (u32, String, String)> {
        let bound = items.iter().map(|&(_, id)| id as usize + 1).max().unwrap_or(0);
        let dense = bound <= 2 * items.len() + 1024;
        let mut out = IdTokens {
            text: String::with_capacity(items.iter().map(|(t, _)| t.len()).sum()),
            spans: if dense { vec![(usize::MAX, 0); bound] } else { Vec::new() },
            sparse: FxHashMap::default(),
            bound,
        };
        for (t, id) in items {
            if let Some(other) = out.get(*id) {
                return Err((*id, other.to_string(), t.clone()));
            }
            let span = (out.text.len(), out.text.len() + t.len());
            out.text.push_str(t);
            if dense {
                out.spans[*id as usize] = span;
            } else {
                out.sparse.insert(*id, span);
            }
        }
        Ok(out)
    }

    /// The token of `id`.
    pub(crate) fn get(&self, id: u32) -> Option<&str> {
        let &(a, b) = if self.spans.is_empty() { self.sparse.get(&id)? } else { self.spans.get(id as usize)? };
        self.text.get(a..b)
    }

    /// One more than the largest id (0 without tokens).
    pub(crate) fn bound(&self) -> usize {
        self.bound
    }
}

/// A byte-level model's tables on raw bytes: a piece's bytes are its first
/// symbols (each byte's byte-level character's id), merges are looked up by
/// two ids in one open-addressing table, and whole tokens by their bytes.
/// Only made when words get no prefix or suffix. A byte whose character has
/// no token is a hole (GPT-NeoX's vocabulary lacks 0xC0, 0xC1 and
/// 0xF5-0xFF, which UTF-8 text never holds): a piece holding one takes the
/// mapped-character route, which treats the unknown character as Hugging
/// Face does; every other piece gives `tokenize` of the mapped characters.
#[derive(Debug)]
struct RawBytes {
    /// vocabulary tokens by their raw bytes (ignore_merges' whole-word lookup)
    tokens: TokenTable,
    /// id of each byte's byte-level character
    byte_ids: [u32; 256],
    /// (left id, right id) -> the merge's number (`Products`: its rank, or a code ordered as the ranks)
    ranks: ConcatRanks,
    /// the merge's number -> id of its result
    products: Products,
    /// some byte has no token (`NONE` in `byte_ids`)
    holes: bool,
    /// the characters a missed piece's merges may start from (`atoms.rs`; empty with holes)
    atoms: Atoms,
    /// the most frequent tokens that encode to themselves, for a thread's front table (`cache::seed`)
    seed: Option<FrontSeed>,
}

/// How the number `RawBytes::ranks` gives a merge names its result. Each step of a missed word's merges
/// waits on that number's lookup; when the number itself holds the result's id (a code), the step waits on
/// no second load (a rank-to-id table of a large model is a cache miss of its own).
#[derive(Debug)]
enum Products {
    /// The numbers are the ranks, and `results[rank]` the merge's result.
    Ranked { results: Box<[u32]> },
    /// The numbers are codes `result << CODE_SUB | (rank - first[result])`: where the merges into each token
    /// are consecutive ranks, in the order of the tokens' ids (lists converted from tiktoken's, and those of
    /// one merge per token made in id order), they order as the ranks do.
    Coded { first: Box<[u32]>, rank_bound: usize },
}

/// Low bits of a merge's code: its place among the merges into the same token.
const CODE_SUB: u32 = 7;

impl Products {
    /// From `results[rank]` (`NONE` where no merge has that rank): codes when they order as the ranks.
    fn new(results: Vec<u32>) -> Products {
        let rank_bound = results.len();
        let Some(largest) = results.iter().filter(|&&id| id != NONE).max() else {
            return Products::Ranked { results: results.into() };
        };
        let mut first = vec![NONE; *largest as usize + 1];
        for (rank, &id) in results.iter().enumerate().rev().filter(|(_, &id)| id != NONE) {
            first[id as usize] = rank as u32;
        }
        let code = |rank: usize, id: u32| -> Option<u32> {
            let sub = rank as u32 - first[id as usize];
            (sub < 1 << CODE_SUB && id < (NONE >> CODE_SUB)).then_some(id << CODE_SUB | sub)
        };
        let mut last = None;
        for (rank, &id) in results.iter().enumerate().filter(|(_, &id)| id != NONE) {
            match code(rank, id) {
                Some(c) if last.is_none_or(|l| c > l) => last = Some(c),
                _ => return Products::Ranked { results: results.into() },
            }
        }
        Products::Coded { first: first.into(), rank_bound }
    }

    /// The number `ranks` keeps for the merge of rank `rank` into token `id`.
    fn number(&self, rank: u32, id: u32) -> u32 {
        match self {
            Products::Ranked { .. } => rank,
            Products::Coded { first, .. } => id << CODE_SUB | (rank - first[id as usize]),
        }
    }

    /// The result of the merge numbered `number`.
    #[inline(always)]
    fn product(&self, number: u32) -> u32 {
        match self {
            Products::Ranked { results } => results[number as usize],
            Products::Coded { .. } => number >> CODE_SUB,
        }
    }

    /// The rank of the merge numbered `number` (the bucket queue of long pieces counts ranks).
    #[inline]
    fn rank(&self, number: u32) -> u32 {
        match self {
            Products::Ranked { .. } => number,
            Products::Coded { first, .. } => first[(number >> CODE_SUB) as usize] + (number & ((1 << CODE_SUB) - 1)),
        }
    }

    /// One more than the largest rank.
    fn rank_bound(&self) -> usize {
        match self {
            Products::Ranked { results } => results.len(),
            Products::Coded { rank_bound, .. } => *rank_bound,
        }
    }
}

impl RawBytes {
    /// Whether `piece` holds a byte without a token (only looked at when some byte has none).
    #[inline]
    fn has_hole(&self, piece: &[u8]) -> bool {
        self.holes && piece.iter().any(|&b| self.byte_ids[b as usize] == NONE)
    }
}

// The mark of each token in `RawBytes::tokens`: whether the token's own bytes
// encode to it alone, found out the first time a piece is that token (read in
// the same bucket as its id; 0 until then). Without ignore_merges a piece that
// is a token need not come out as that token (the merges may not reach it);
// once checked, the vocabulary answers such a piece and the piece cache keeps
// the pieces that need merges.
const SELF_YES: u8 = 1;
const SELF_NO: u8 = 2;

/// Every byte-level character (GPT-2's map) is below this code point.
const BYTE_CHARS: usize = 0x144;

/// Most merges given tables on raw bytes (their pair table takes 24 bytes
/// per merge: 50 MB at this many; larger models keep the string route).
const RAW_MAX_MERGES: usize = 1 << 21;

/// Pieces of up to this many bytes are merged on the stack (quadratic
/// scan); longer ones by the bucket queue (`merge_pairs`).
const RAW_STACK: usize = 64;

/// Merges looked up per parallel task when a model is built.
const MERGE_CHUNK: usize = 1 << 14;

impl Bpe {
    /// The model of `spec`, whose tokens it takes (a copy of 10^5 of them was a tenth of a big file's load).
    pub fn new(mut spec: BpeSpec) -> Result<Bpe> {
        let vocab_r = IdTokens::new(&spec.vocab).map_err(|(id, other, t)| {
            Error::Format(format!("model.vocab: the id {id} is given to both {other:?} and {t:?}"))
        })?;
        let mut vocab: FxHashMap<String, u32> = FxHashMap::default();
        vocab.reserve(spec.vocab.len());
        vocab.extend(std::mem::take(&mut spec.vocab));
        let prefix_len = spec.continuing_subword_prefix.as_ref().map_or(0, |p| p.len());
        // the merges' ids, looked up in parallel: three probes of a 10^5-token map per merge, each a cache
        // miss, were most of the build of a big vocabulary
        let resolved = crate::parallel::map_chunks(spec.merges.ends(), MERGE_CHUNK, |start, chunk| {
            let mut buf = String::new();
            let mut out = Vec::with_capacity(chunk.len());
            for rank in start..start + chunk.len() {
                let (a, b) = spec.merges.get(rank);
                let miss = |t: &str| {
                    Error::Format(format!("model.merges[{rank}]: the token {t:?} is not in model.vocab"))
                };
                let a_id = *vocab.get(a).ok_or_else(|| miss(a))?;
                let b_id = *vocab.get(b).ok_or_else(|| miss(b))?;
                buf.clear();
                buf.push_str(a);
                let rest = b.get(prefix_len.min(b.len())..).ok_or_else(|| {
                    Error::Format(format!(
                        "model.merges[{rank}]: {b:?} does not start with the continuing_subword_prefix"
                    ))
                })?;
                buf.push_str(rest);
                let new_id = *vocab.get(buf.as_str()).ok_or_else(|| miss(&buf))?;
                out.push(((a_id, b_id), (rank as u32, new_id)));
            }
            Ok(out)
        });
        let mut merges: FxHashMap<(u32, u32), (u32, u32)> = FxHashMap::default();
        merges.reserve(spec.merges.len());
        for part in resolved {
            merges.extend(part?); // in rank order: a pair given twice keeps its last rank, as before
        }
        drop(std::mem::take(&mut spec.merges)); // their text is not needed again
        let mut byte_ids = [NONE; 256];
        if spec.byte_fallback {
            for (b, slot) in byte_ids.iter_mut().enumerate() {
                if let Some(&id) = vocab.get(&format!("<0x{b:02X}>")) {
                    *slot = id;
                }
            }
        }
        let mut char_table = vec![NONE; TABLE_CHARS];
        let mut char_map = FxHashMap::default();
        for (t, &id) in &vocab {
            let mut it = t.chars();
            if let (Some(c), None) = (it.next(), it.next()) {
                if (c as usize) < TABLE_CHARS {
                    char_table[c as usize] = id;
                } else {
                    char_map.insert(c, id);
                }
            }
        }
        Ok(Bpe {
            len: vocab.len(),
            vocab,
            vocab_r,
            merges,
            unk_token: spec.unk_token.take(),
            fuse_unk: spec.fuse_unk,
            byte_fallback: spec.byte_fallback,
            ignore_merges: spec.ignore_merges,
            prefix: spec.continuing_subword_prefix.take(),
            suffix: spec.end_of_word_suffix.take(),
            dropout: spec.dropout.filter(|&p| p > 0.0),
            byte_ids,
            char_table,
            char_map,
            cache_id: crate::cache::words::new_id(),
            owner: crate::cache::new_owner(),
            raw_owner: crate::cache::new_owner(),
            raw: None,
        })
    }

    /// Makes the tables on raw bytes that `tokenize_raw_in` uses, when
    /// this model allows them (see `RawBytes`); the pipeline calls it for
    /// the byte-level shapes of its string-free route.
    pub(crate) fn prepare_raw_bytes(&mut self) {
        self.raw = self.raw_bytes();
    }

    fn raw_bytes(&self) -> Option<RawBytes> {
        if self.prefix.is_some() || self.suffix.is_some() || self.dropout.is_some() || self.merges.len() > RAW_MAX_MERGES {
            return None;
        }
        let chars = crate::text::byte_level::bytes_char();
        let mut byte_ids = [NONE; 256];
        for (slot, &c) in byte_ids.iter_mut().zip(chars.iter()) {
            *slot = self.char_id(c).unwrap_or(NONE);
        }
        let holes = byte_ids.contains(&NONE);
        // the byte of each byte-level character, by code point (all below BYTE_CHARS)
        let mut byte_of = [None; BYTE_CHARS];
        for (&c, b) in chars.iter().zip(0..=255u8) {
            *byte_of.get_mut(c as usize)? = Some(b);
        }
        // tokens whose characters are all byte-level ones (the others never
        // match a piece's mapped characters); the mapping is one-to-one, so their bytes are distinct,
        // and they go into the table one by one (a map of them first was a tenth of Llama 3's peak)
        let mut tokens = TokenTable::with_capacity(self.vocab.len(), 0);
        let mut buf = Vec::new();
        // every token's raw bytes in one buffer, for the atoms: (end, id)
        let (mut all_bytes, mut ends) = (Vec::new(), Vec::with_capacity(self.vocab.len()));
        for (t, &id) in &self.vocab {
            buf.clear();
            if t.chars().all(|c| byte_of.get(c as usize).copied().flatten().map(|b| buf.push(b)).is_some()) {
                tokens.insert(&buf, id);
                all_bytes.extend_from_slice(&buf);
                ends.push((all_bytes.len(), id));
            }
        }
        let mut results = vec![NONE; self.merges.values().map(|&(rank, _)| rank as usize + 1).max().unwrap_or(0)];
        for &(rank, id) in self.merges.values() {
            results[rank as usize] = id;
        }
        let products = Products::new(results);
        let triples: Vec<(u32, u32, u32)> =
            self.merges.iter().map(|(&(a, b), &(rank, id))| (a, b, products.number(rank, id))).collect();
        let ranks = ConcatRanks::new(&triples);
        let listed: Vec<(&[u8], u32)> =
            ends.iter().scan(0, |start, &(end, id)| Some((&all_bytes[std::mem::replace(start, end)..end], id))).collect();
        let atoms = Atoms::build(&listed, &byte_ids, |a, b| ranks.merged(a, b), |n| products.product(n), |f| ranks.for_each(f), usize::MAX);
        let mut raw = RawBytes { tokens, byte_ids, ranks, products, holes, atoms, seed: None };
        // the seeds are `whole_token_raw`'s answers: under ignore_merges every token is itself; otherwise a
        // token whose merges make it alone (the candidates' merges run once here, in parallel)
        raw.seed = Some(if self.ignore_merges {
            FrontSeed::new(listed.iter().copied(), |_, _| true)
        } else {
            let is_own = |t: &[u8], id: u32| {
                let mut ids = Vec::new();
                !raw.has_hole(t) && {
                    self.tokenize_raw_bytes(&raw, t, &mut ids);
                    ids == [id]
                }
            };
            FrontSeed::new(listed.iter().copied(), is_own)
        });
        Some(raw)
    }

    /// Appends the ids of the byte-level word whose raw bytes are `piece`
    /// (non-empty), by the tables of `raw`: Hugging Face's rule, as
    /// `tokenize_uncached` runs it on the mapped characters.
    fn tokenize_raw_bytes(&self, raw: &RawBytes, piece: &[u8], ids: &mut Vec<u32>) {
        if self.ignore_merges {
            if let Some(id) = raw.tokens.get(piece) {
                ids.push(id);
                return;
            }
        }
        if !raw.atoms.is_empty() && !piece.is_ascii() && Self::merge_from_atoms(raw, piece, ids) {
            return;
        }
        let n = piece.len();
        if n > RAW_STACK {
            let pair = |a, b| match raw.ranks.merged(a, b) {
                NONE => None,
                number => Some((raw.products.rank(number), raw.products.product(number))),
            };
            let initial = |i: usize| (raw.byte_ids[piece[i] as usize], 1);
            let bound = raw.products.rank_bound();
            // a long piece's symbols are made a window at a time; else (or if the windows give up) whole
            if !merge_pairs_windowed(n, initial, bound, pair, &mut AppendIds::new(ids)) {
                let mut word: Vec<(u32, u32)> = (0..n).map(initial).collect();
                merge_pairs(&mut word, bound, false, pair);
                ids.extend(word.iter().map(|s| s.0));
            }
            return;
        }
        if n <= 16 {
            Self::merge_bytes::<16>(raw, piece, ids)
        } else {
            Self::merge_bytes::<RAW_STACK>(raw, piece, ids)
        }
    }

    /// `tokenize_raw_bytes` of a piece of at most `N` bytes from its bytes, on the stack (arrays no longer
    /// than needed: most pieces are short).
    #[inline(always)]
    fn merge_bytes<const N: usize>(raw: &RawBytes, piece: &[u8], ids: &mut Vec<u32>) {
        let mut sym = [0u32; N];
        for (s, &b) in sym.iter_mut().zip(piece) {
            *s = raw.byte_ids[b as usize];
        }
        let len = raw.ranks.merge_short::<N>(&mut sym[..piece.len()], |number| raw.products.product(number));
        ids.extend_from_slice(&sym[..len]);
    }

    /// `tokenize_raw_bytes`' merges from the atoms of a piece that holds some (`atoms.rs`), part by
    /// part; false (nothing appended) without atoms.
    fn merge_from_atoms(raw: &RawBytes, piece: &[u8], ids: &mut Vec<u32>) -> bool {
        let mut syms = Vec::with_capacity(piece.len());
        let result = |number: u32| raw.products.product(number);
        raw.atoms.parts(piece, &raw.byte_ids, &mut syms, |_, part| match part {
            [(id, _)] => ids.push(*id),
            _ if part.len() <= 16 => merge_symbols::<16>(&raw.ranks, part, result, ids),
            _ if part.len() <= RAW_STACK => merge_symbols::<RAW_STACK>(&raw.ranks, part, result, ids),
            _ => {
                let mut word = part.to_vec();
                let pair = |a, b| match raw.ranks.merged(a, b) {
                    NONE => None,
                    number => Some((raw.products.rank(number), result(number))),
                };
                merge_pairs(&mut word, raw.products.rank_bound(), true, pair);
                ids.extend(word.iter().map(|s| s.0));
            }
        })
    }

    #[inline]
    fn char_id(&self, c: char) -> Option<u32> {
        let id = if (c as usize) < TABLE_CHARS { self.char_table[c as usize] } else { *self.char_map.get(&c)? };
        (id != NONE).then_some(id)
    }

    /// Initial symbols (id, byte length) of a word.
    fn initial(&self, w: &str) -> Result<Vec<(u32, u32)>> {
        let mut word: Vec<(u32, u32)> = Vec::with_capacity(w.len());
        let mut unk: Option<(u32, u32)> = None;
        let mut s = String::new();
        let mut it = w.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            let is_first = i == 0;
            let is_last = it.peek().is_none();
            let byte_len = c.len_utf8() as u32;
            let plain = (is_first || self.prefix.is_none()) && (!is_last || self.suffix.is_none());
            let found = if plain {
                self.char_id(c)
            } else {
                s.clear();
                if !is_first {
                    if let Some(p) = &self.prefix {
                        s.push_str(p);
                    }
                }
                s.push(c);
                if is_last {
                    if let Some(x) = &self.suffix {
                        s.push_str(x);
                    }
                }
                self.vocab.get(s.as_str()).copied()
            };
            if let Some(id) = found {
                if let Some(u) = unk.take() {
                    word.push(u);
                }
                word.push((id, byte_len));
                continue;
            }
            if self.byte_fallback {
                if plain {
                    s.clear();
                    s.push(c);
                }
                if s.bytes().all(|b| self.byte_ids[b as usize] != NONE) {
                    for b in s.bytes() {
                        word.push((self.byte_ids[b as usize], 1));
                    }
                    continue;
                }
            }
            if let Some(unk_token) = &self.unk_token {
                let unk_id = || {
                    self.vocab.get(unk_token).copied().ok_or_else(|| {
                        Error::Encode(format!("the unk_token {unk_token:?} is not in the vocabulary"))
                    })
                };
                unk = match (unk, self.fuse_unk) {
                    (Some((id, len)), true) => Some((id, len + byte_len)),
                    (Some(prev), false) => {
                        word.push(prev);
                        Some((unk_id()?, byte_len))
                    }
                    (None, _) => Some((unk_id()?, byte_len)),
                };
            }
        }
        if let Some(u) = unk {
            word.push(u);
        }
        Ok(word)
    }

    fn merge_small(&self, word: &mut Vec<(u32, u32)>) {
        merge_lowest_rank(word, |a, b| self.merges.get(&(a, b)).copied());
    }

    fn merge_heap(&self, word: &mut Vec<(u32, u32)>, dropout: Option<f32>) {
        let n = word.len();
        let mut prev: Vec<isize> = (0..n as isize).map(|i| i - 1).collect();
        let mut next: Vec<isize> = (0..n as isize).map(|i| if i + 1 < n as isize { i + 1 } else { -1 }).collect();
        let mut heap: BinaryHeap<Reverse<(u32, usize, u32)>> = BinaryHeap::with_capacity(n);
        for i in 0..n.saturating_sub(1) {
            if let Some(&(rank, new_id)) = self.merges.get(&(word[i].0, word[i + 1].0)) {
                heap.push(Reverse((rank, i, new_id)));
            }
        }
        let mut skip = Vec::new();
        while let Some(Reverse(top)) = heap.pop() {
            let (_, pos, new_id) = top;
            if let Some(p) = dropout {
                if next_f32() < p {
                    skip.push(Reverse(top));
                    continue;
                }
                heap.extend(skip.drain(..));
            }
            if word[pos].1 == 0 || next[pos] == -1 {
                continue;
            }
            let np = next[pos] as usize;
            match self.merges.get(&(word[pos].0, word[np].0)) {
                Some(&(_, id)) if id == new_id => {}
                _ => continue,
            }
            word[pos] = (new_id, word[pos].1 + word[np].1);
            word[np].1 = 0;
            let nn = next[np];
            next[pos] = nn;
            if nn >= 0 {
                prev[nn as usize] = pos as isize;
            }
            if prev[pos] >= 0 {
                let pp = prev[pos] as usize;
                if let Some(&(rank, id)) = self.merges.get(&(word[pp].0, word[pos].0)) {
                    heap.push(Reverse((rank, pp, id)));
                }
            }
            if nn >= 0 {
                if let Some(&(rank, id)) = self.merges.get(&(word[pos].0, word[nn as usize].0)) {
                    heap.push(Reverse((rank, pos, id)));
                }
            }
        }
        word.retain(|s| s.1 != 0);
    }

    fn merge_word(&self, w: &str) -> Result<Vec<(u32, u32)>> {
        let mut word = self.initial(w)?;
        if self.dropout.is_some() {
            self.merge_heap(&mut word, self.dropout);
        } else if word.len() <= 48 {
            self.merge_small(&mut word);
        } else {
            merge_pairs(&mut word, self.merges.len(), true, |a, b| self.merges.get(&(a, b)).copied());
        }
        Ok(word)
    }

    /// Append the ids of one piece (and, if asked, each token's byte range in it).
    pub fn tokenize(&self, w: &str, ids: &mut Vec<u32>, offsets: Option<&mut Vec<(usize, usize)>>) -> Result<()> {
        if w.is_empty() {
            return Ok(());
        }
        // without offsets, a short piece's ids come from the bounded per-thread
        // piece cache first (one 64-byte slot, whole tokens included); a miss
        // takes the path below and keeps its ids there
        if offsets.is_none() && self.dropout.is_none() {
            if let Some(key) = crate::cache::Key::new(self.owner, w.as_bytes()) {
                let hit = crate::cache::extend_from_cache(&key, ids);
                if hit == Some(true) {
                    return Ok(());
                }
                let start = ids.len();
                self.tokenize_uncached(w, ids, None)?;
                if hit.is_some() {
                    crate::cache::with_thread_cache(|c| c.insert(&key, &ids[start..]));
                }
                return Ok(());
            }
        }
        self.tokenize_uncached(w, ids, offsets)
    }

    /// Whether `tokenize_raw_in` may use a piece cache (no dropout: its
    /// pieces are not the cached ones).
    pub(crate) fn caches_pieces(&self) -> bool {
        self.dropout.is_none()
    }

    /// Its most frequent tokens for a thread's front table (`cache::seed`), when it has them.
    pub(crate) fn front_seed(&self) -> Option<&FrontSeed> {
        self.raw.as_ref().and_then(|r| r.seed.as_ref())
    }

    /// The owner of its raw-byte pieces in the piece cache.
    pub(crate) fn raw_owner(&self) -> u32 {
        self.raw_owner
    }

    /// `tokenize` of the byte-level chars of `raw` (a byte-level pipeline's
    /// piece before its byte-to-char mapping), no offsets: the piece cache is
    /// keyed on the raw bytes, so a hit maps nothing.
    /// The caller holds the piece cache (borrowed once per text rather
    /// than twice per piece; None: no cache).
    pub(crate) fn tokenize_raw_in(&self, cache: Option<&mut crate::cache::PieceCache>, raw: &[u8], ids: &mut Vec<u32>) -> Result<()> {
        if self.whole_token_raw(raw, ids) {
            return Ok(());
        }
        self.tokenize_raw_missed(cache, raw, ids)
    }

    /// `tokenize_raw_in` of a non-empty piece that `whole_token_raw` just answered false for
    /// (the caller's loop asked it first: not asked twice).
    #[inline]
    pub(crate) fn tokenize_raw_missed(&self, cache: Option<&mut crate::cache::PieceCache>, raw: &[u8], ids: &mut Vec<u32>) -> Result<()> {
        if raw.is_empty() {
            return Ok(());
        }
        let compute = |ids: &mut Vec<u32>| match &self.raw {
            Some(tables) if !tables.has_hole(raw) => {
                self.tokenize_raw_bytes(tables, raw, ids);
                Ok(())
            }
            _ => {
                let t = crate::text::byte_level::bytes_char();
                let mapped: String = raw.iter().map(|&b| t[b as usize]).collect();
                self.tokenize_uncached(&mapped, ids, None)
            }
        };
        // no cache with dropout: its pieces are not the cached ones
        match cache.filter(|_| self.dropout.is_none()) {
            Some(c) => c.through(self.raw_owner, raw, ids, compute),
            None => compute(ids),
        }
    }

    /// Appends the id of `raw` and returns true when it is a token that
    /// encodes to itself: with HF's ignore_merges every token does; otherwise
    /// the merges decide, checked once per token (the token's mark in the table; the check
    /// appends the merged ids, whatever they are). The vocabulary answers
    /// such a piece exactly, never evicted, and the piece cache keeps only the
    /// pieces that need merges. Inlined into the callers' loops (one per piece).
    #[inline(always)]
    pub(crate) fn whole_token_raw(&self, raw: &[u8], ids: &mut Vec<u32>) -> bool {
        let Some(tables) = &self.raw else { return false };
        if self.ignore_merges {
            let Some(id) = tables.tokens.get(raw) else { return false };
            ids.push(id);
            return true;
        }
        if self.dropout.is_some() {
            return false; // dropout's merges are drawn anew each time
        }
        let Some((id, mark)) = tables.tokens.get_marked(raw) else { return false };
        match mark.load(Ordering::Relaxed) {
            SELF_YES => {
                ids.push(id);
                true
            }
            SELF_NO => false,
            _ => self.check_self_encoding(tables, raw, id, mark, ids),
        }
    }

    /// Appends the ids of `raw`, the bytes of token `id`, and remembers
    /// whether they are that token alone; false (nothing appended) for a
    /// token holding a byte without a token of its own, which the
    /// mapped-character route encodes.
    #[cold]
    fn check_self_encoding(&self, tables: &RawBytes, raw: &[u8], id: u32, mark: &AtomicU8, ids: &mut Vec<u32>) -> bool {
        if tables.has_hole(raw) {
            mark.store(SELF_NO, Ordering::Relaxed);
            return false;
        }
        let start = ids.len();
        self.tokenize_raw_bytes(tables, raw, ids);
        let alone = ids[start..] == [id];
        mark.store(if alone { SELF_YES } else { SELF_NO }, Ordering::Relaxed);
        true
    }

    /// `tokenize` without the piece cache (the word cache below still applies).
    fn tokenize_uncached(&self, w: &str, ids: &mut Vec<u32>, offsets: Option<&mut Vec<(usize, usize)>>) -> Result<()> {
        if self.ignore_merges {
            if let Some(&id) = self.vocab.get(w) {
                ids.push(id);
                if let Some(o) = offsets {
                    o.push((0, w.len()));
                }
                return Ok(());
            }
        }
        let emit = |word: &[(u32, u32)], ids: &mut Vec<u32>, offsets: Option<&mut Vec<(usize, usize)>>| {
            ids.extend(word.iter().map(|s| s.0));
            if let Some(o) = offsets {
                let mut at = 0usize;
                for s in word {
                    o.push((at, at + s.1 as usize));
                    at += s.1 as usize;
                }
            }
        };
        if self.dropout.is_some() {
            let word = self.merge_word(w)?;
            emit(&word, ids, offsets);
            return Ok(());
        }
        let mut word = Vec::new();
        let run = |word: &mut Vec<(u32, u32)>| -> Result<()> {
            *word = self.merge_word(w)?;
            Ok(())
        };
        crate::cache::words::merged(self.cache_id, w, &mut word, run, |s| emit(s, ids, offsets))
    }
}

impl Drop for Bpe {
    fn drop(&mut self) {
        crate::cache::words::forget(self.cache_id);
    }
}

fn next_f32() -> f32 {
    RNG.with(|r| {
        let mut x = *r.borrow();
        if x == 0 {
            x = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x9E37_79B9_7F4A_7C15)
                | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *r.borrow_mut() = x;
        (x >> 40) as f32 / (1u64 << 24) as f32
    })
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_codes_order_as_ranks_and_name_their_results() {
        // results[rank]: merges into each token consecutive, tokens in id order (a hole at rank 3)
        let results = vec![300, 300, 301, NONE, 301, 301, 305, 310, 310];
        let p = Products::new(results.clone());
        assert!(matches!(p, Products::Coded { .. }));
        let live: Vec<(u32, u32)> =
            results.iter().enumerate().filter(|(_, &id)| id != NONE).map(|(r, &id)| (r as u32, id)).collect();
        let numbers: Vec<u32> = live.iter().map(|&(rank, id)| p.number(rank, id)).collect();
        assert!(numbers.windows(2).all(|w| w[0] < w[1]));
        for (&(rank, id), &n) in live.iter().zip(&numbers) {
            assert_eq!((p.product(n), p.rank(n)), (id, rank));
        }
        assert_eq!(p.rank_bound(), results.len());
        // a token made again after a later one, too many merges into one token, an id past the codes' room:
        // ranks, and the table of results
        let too_many = vec![7; 1 + (1 << CODE_SUB)];
        for results in [vec![300, 301, 300], too_many, vec![1, NONE >> CODE_SUB]] {
            let p = Products::new(results.clone());
            assert!(matches!(p, Products::Ranked { .. }), "{results:?}");
            for (rank, &id) in results.iter().enumerate() {
                let n = p.number(rank as u32, id);
                assert_eq!((p.product(n), p.rank(n)), (id, rank as u32));
            }
        }
    }
}
