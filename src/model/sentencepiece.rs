//! SentencePiece's BPE model as `sentencepiece` itself runs it, for `.model`
//! files: its normalizer (`normalizer.cc`: precompiled charsmap by longest
//! match, user-defined symbols matched first on the raw text, dummy prefix
//! or suffix, extra-whitespace removal, `▁` escaping, `norm_to_orig`
//! offsets), its BPE (`bpe_model.cc`: the adjacent pair whose concatenation
//! is the piece of highest score merges first, leftmost on ties; user-defined
//! pieces frozen; unused pieces merged through and split back), the
//! output (`PopulateSentencePieceText`: runs of unknown characters fused into
//! one `<unk>`, or byte fallback with its offsets) and its decoder
//! (`SentencePieceProcessor::Decode`).
//!
//! The description is an extension of Hugging Face's schema:
//! `"model": {"type": "SentencePieceBPE", "pieces": [[text, score, type], ...],
//! "byte_fallback": bool, "unk_surface": str}`, `"normalizer": {"type":
//! "SentencePiece", "precompiled_charsmap": base64, "add_dummy_prefix",
//! "remove_extra_whitespaces", "escape_whitespaces",
//! "treat_whitespace_as_suffix"}` and `"decoder": {"type": "SentencePiece"}`
//! (`python/bytepair/formats/sentencepiece.py` writes it).
//!
//! Speed: pairs are looked up by (left, right) symbol keys in a table built
//! from every split of every piece (a symbol is a piece, or one character
//! that is part of some piece); when no piece has the whitespace marker
//! after another character (the usual `split_by_whitespace` models), the
//! text is cut before each word's marker and words are merged separately
//! and cached (no merge can cross such a cut, so the result is the same).

use crate::text::charsmap::CharsMap;
use super::spec::{BpeSpec, SpNormSpec, SpSpec};
use crate::error::{Error, Result};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Anchored, Input, MatchKind, StartKind};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) const NORMAL: u8 = 1;
pub(crate) const UNKNOWN: u8 = 2;
pub(crate) const CONTROL: u8 = 3;
pub(crate) const USER_DEFINED: u8 = 4;
pub(crate) const UNUSED: u8 = 5;
pub(crate) const BYTE: u8 = 6;

const NONE: u32 = u32::MAX;
const SPACE: &str = "\u{2581}";
const CACHE_MAX_LEN: usize = 256;
const CACHE_CAPACITY: usize = 1 << 16;
const TABLE_CHARS: usize = 0x800;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
type Cache = FxHashMap<u64, FxHashMap<Box<str>, Box<[(u32, u32)]>>>;
thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(FxHashMap::default());
}

pub fn clear_caches() {
    CACHE.with(|c| c.borrow_mut().clear());
}

fn fail(msg: impl Into<String>) -> Error {
    Error::Format(msg.into())
}

// ---------------------------------------------------------------- normalizer

/// Longest match of a darts-clone trie over raw bytes (`commonPrefixSearch`
/// with an explicit length, as SentencePiece calls it).
fn user_matcher(symbols: &[&str]) -> Result<Option<Matcher>> {
    if symbols.is_empty() {
        return Ok(None);
    }
    let ac = AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .start_kind(StartKind::Anchored)
        .build(symbols)
        .map_err(|e| fail(format!("model.pieces: user-defined symbols: {e}")))?;
    let mut first = [false; 256];
    for s in symbols {
        if let Some(&b) = s.as_bytes().first() {
            first[b as usize] = true;
        }
    }
    Ok(Some(Matcher { ac, first }))
}

/// The user-defined symbols (sentencepiece's `PrefixMatcher`): the longest
/// one starting at a position; the first-byte table skips most positions.
#[derive(Debug)]
pub(crate) struct Matcher {
    ac: AhoCorasick,
    first: [bool; 256],
}

impl Matcher {
    #[inline]
    fn len_at(&self, s: &str, at: usize) -> Option<usize> {
        if !self.first[s.as_bytes()[at] as usize] {
            return None;
        }
        self.ac
            .find(Input::new(s).range(at..).anchored(Anchored::Yes))
            .map(|x| x.len())
    }
}

#[derive(Debug)]
struct SpNormalizer {
    map: Option<CharsMap>,
    spec: SpNormSpec,
}

impl SpNormalizer {
    /// One step of `Normalizer::NormalizePrefix`: the replacement of the
    /// text at `at` and how many bytes it consumes.
    #[inline]
    fn prefix<'a>(&'a self, s: &'a str, at: usize, matcher: Option<&Matcher>) -> (&'a str, usize) {
        if let Some(m) = matcher {
            if let Some(n) = m.len_at(s, at) {
                return (&s[at..at + n], n);
            }
        }
        if let Some(map) = &self.map {
            if let Some((n, rep)) = map.longest_prefix(&s.as_bytes()[at..]) {
                return (rep, n);
            }
        }
        let n = s[at..].chars().next().map_or(1, char::len_utf8);
        (&s[at..at + n], n)
    }

    /// `Normalizer::Normalize`: the normalized text and, when `track`, the
    /// original byte offset of each of its bytes (plus one for its end).
    fn normalize(
        &self,
        input: &str,
        matcher: Option<&Matcher>,
        track: bool,
        n2o: &mut Vec<usize>,
    ) -> String {
        n2o.clear();
        let spec = &self.spec;
        let mut at = 0usize;
        let len = input.len();
        if spec.remove_extra_whitespaces {
            while at < len {
                let (p, n) = self.prefix(input, at, matcher);
                if p != " " {
                    break;
                }
                at += n;
            }
        }
        if at >= len {
            return String::new();
        }
        let mut out = String::with_capacity((len - at) * 3 / 2 + 8);
        if track {
            n2o.reserve((len - at) * 3 / 2 + 8);
        }
        let esc = spec.escape_whitespaces;
        let add_ws = |out: &mut String, n2o: &mut Vec<usize>, consumed: usize| {
            if esc {
                out.push_str(SPACE);
                if track {
                    n2o.extend_from_slice(&[consumed; 3]);
                }
            } else {
                out.push(' ');
                if track {
                    n2o.push(consumed);
                }
            }
        };
        if !spec.treat_whitespace_as_suffix && spec.add_dummy_prefix {
            add_ws(&mut out, n2o, at);
        }
        let mut is_prev_space = spec.remove_extra_whitespaces;
        let no_map = self.map.is_none();
        let bytes = input.as_bytes();
        while at < len {
            // the common case without rules: one ASCII byte
            let b = bytes[at];
            let (mut sp, n) = if b < 0x80 && no_map && matcher.is_none_or(|m| !m.first[b as usize])
            {
                (&input[at..at + 1], 1)
            } else {
                self.prefix(input, at, matcher)
            };
            if is_prev_space {
                while let Some(rest) = sp.strip_prefix(' ') {
                    sp = rest;
                }
            }
            if !sp.is_empty() {
                if esc && sp.contains(' ') {
                    for (i, part) in sp.split(' ').enumerate() {
                        if i > 0 {
                            out.push_str(SPACE);
                            if track {
                                n2o.extend_from_slice(&[at; 3]);
                            }
                        }
                        out.push_str(part);
                        if track {
                            n2o.extend(std::iter::repeat_n(at, part.len()));
                        }
                    }
                } else {
                    out.push_str(sp);
                    if track {
                        n2o.extend(std::iter::repeat_n(at, sp.len()));
                    }
                }
                is_prev_space = sp.ends_with(' ');
            }
            at += n;
            if !spec.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        let mut consumed = at;
        if spec.remove_extra_whitespaces {
            let space = if esc { SPACE } else { " " };
            while out.ends_with(space) {
                let l = out.len() - space.len();
                if track {
                    consumed = n2o[l];
                    n2o.truncate(l);
                }
                out.truncate(l);
            }
        }
        if spec.treat_whitespace_as_suffix && spec.add_dummy_prefix {
            add_ws(&mut out, n2o, consumed);
        }
        if track {
            n2o.push(consumed);
        }
        out
    }
}

// ---------------------------------------------------------------- model

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cut {
    /// no cuts: the whole text is one sequence
    None,
    /// before each whitespace marker that follows another character
    BeforeSpace,
    /// after each whitespace marker that precedes another character
    AfterSpace,
}

#[derive(Debug)]
pub struct SentencePiece {
    pub pieces: Vec<String>,
    pub types: Vec<u8>,
    normalizer: SpNormalizer,
    /// run over decoded text (sentencepiece applies it when its charsmap is not empty)
    denormalizer: Option<SpNormalizer>,
    /// pieces SentencePiece merges into and reads (normal, user-defined, unused)
    piece_ids: FxHashMap<String, u32>,
    /// symbol key -> its byte length (piece ids, then the virtual keys of
    /// characters that are no piece but part of one)
    key_len: Vec<u32>,
    char_table: Vec<u32>,
    char_map: FxHashMap<char, u32>,
    /// (left key, right key) -> (score rank, piece id)
    pairs: FxHashMap<(u32, u32), (u32, u32)>,
    matcher: Option<Matcher>,
    has_unused: bool,
    unk_id: u32,
    byte_fallback: bool,
    byte_ids: [u32; 256],
    unk_surface: String,
    strip_leading_space: bool,
    cut: Cut,
    ws: char,
    cache_id: u64,
}

/// An agenda entry: (rank, left, right, size, piece).
type Agenda = (u32, usize, usize, u32, u32);
/// Unused piece -> the (left, right) symbol keys it was last pushed from.
type RevMerge = FxHashMap<u32, (u32, u32)>;

/// One encoded text: ids and byte offsets into it.
pub struct SpEncoding {
    pub ids: Vec<u32>,
    pub offsets: Vec<(usize, usize)>,
}

impl SentencePiece {
    pub fn new(spec: &SpSpec) -> Result<SentencePiece> {
        let n = spec.pieces.len();
        if n == 0 {
            return Err(fail(
                "model.pieces: a SentencePiece model has at least one piece",
            ));
        }
        let mut piece_ids: FxHashMap<String, u32> = FxHashMap::default();
        let mut reserved: FxHashMap<String, u32> = FxHashMap::default();
        let mut unk = None;
        let mut byte_ids = [NONE; 256];
        for (i, (p, score, t)) in spec.pieces.iter().enumerate() {
            if score.is_nan() {
                return Err(fail(format!("model.pieces[{i}]: the score is NaN")));
            }
            let normal = matches!(*t, NORMAL | USER_DEFINED | UNUSED);
            let map = if normal {
                &mut piece_ids
            } else {
                &mut reserved
            };
            if map.insert(p.clone(), i as u32).is_some() {
                return Err(fail(format!(
                    "model.pieces[{i}]: the piece {p:?} is already defined"
                )));
            }
            if *t == UNKNOWN {
                if unk.is_some() {
                    return Err(fail(format!("model.pieces[{i}]: a second unknown piece")));
                }
                unk = Some(i as u32);
            }
            if *t == BYTE {
                if !spec.byte_fallback {
                    return Err(fail(format!(
                        "model.pieces[{i}]: the byte piece {p:?} although byte_fallback is false"
                    )));
                }
                let b = p
                    .strip_prefix("<0x")
                    .and_then(|h| h.strip_suffix('>'))
                    .filter(|h| h.len() == 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        fail(format!(
                            "model.pieces[{i}]: the byte piece {p:?} is not <0xNN>"
                        ))
                    })?;
                byte_ids[b as usize] = i as u32;
            }
        }
        let unk_id =
            unk.ok_or_else(|| fail("model.pieces: no unknown piece (SentencePiece needs one)"))?;
        if spec.byte_fallback && byte_ids.contains(&NONE) {
            return Err(fail(
                "model.pieces: byte_fallback needs the 256 pieces <0x00>..<0xFF>",
            ));
        }
        let is_target = |t: u8| t == NORMAL || t == UNUSED;
        // symbol keys: piece ids for pieces, then virtual keys for characters inside pieces
        let mut key_len: Vec<u32> = spec.pieces.iter().map(|(p, _, _)| p.len() as u32).collect();
        let mut virtual_keys: FxHashMap<char, u32> = FxHashMap::default();
        let mut key_of = |s: &str, key_len: &mut Vec<u32>| -> Option<u32> {
            if let Some(&id) = piece_ids.get(s) {
                return is_target(spec.pieces[id as usize].2).then_some(id);
            }
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Some(*virtual_keys.entry(c).or_insert_with(|| {
                    key_len.push(c.len_utf8() as u32);
                    (key_len.len() - 1) as u32
                })),
                _ => None,
            }
        };
        // ranks: higher score first; equal scores share a rank (leftmost wins, as in SentencePiece)
        let mut scores: Vec<f32> = spec
            .pieces
            .iter()
            .filter(|(_, _, t)| is_target(*t))
            .map(|(_, s, _)| *s + 0.0)
            .collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        scores.dedup();
        let rank_of = |s: f32| scores.binary_search_by(|x| s.total_cmp(x)).unwrap_or(0) as u32;
        let mut pairs: FxHashMap<(u32, u32), (u32, u32)> = FxHashMap::default();
        for (id, (p, score, t)) in spec.pieces.iter().enumerate() {
            if !is_target(*t) {
                continue;
            }
            let rank = rank_of(*score + 0.0);
            for (k, _) in p.char_indices().skip(1) {
                let (l, r) = (&p[..k], &p[k..]);
                if let (Some(a), Some(b)) = (key_of(l, &mut key_len), key_of(r, &mut key_len)) {
                    pairs.insert((a, b), (rank, id as u32));
                }
            }
        }
        let mut char_table = vec![NONE; TABLE_CHARS];
        let mut char_map = FxHashMap::default();
        let mut set_char = |c: char, k: u32| {
            if (c as usize) < TABLE_CHARS {
                char_table[c as usize] = k;
            } else {
                char_map.insert(c, k);
            }
        };
        for (&c, &k) in &virtual_keys {
            set_char(c, k);
        }
        for (id, (p, _, t)) in spec.pieces.iter().enumerate() {
            let mut it = p.chars();
            if let (Some(c), None) = (it.next(), it.next()) {
                if is_target(*t) {
                    set_char(c, id as u32);
                }
            }
        }
        let user: Vec<&str> = spec
            .pieces
            .iter()
            .filter(|(_, _, t)| *t == USER_DEFINED)
            .map(|(p, _, _)| p.as_str())
            .collect();
        let matcher = user_matcher(&user)?;
        let ns = &spec.normalizer;
        let ws = if ns.escape_whitespaces {
            '\u{2581}'
        } else {
            ' '
        };
        // where the text can be cut: no piece has the marker after (before) another character
        let targets = || {
            spec.pieces
                .iter()
                .filter(|(_, _, t)| is_target(*t))
                .map(|(p, _, _)| p.as_str())
        };
        let cut = if targets().all(|p| p.trim_start_matches(ws).find(ws).is_none()) {
            Cut::BeforeSpace
        } else if targets().all(|p| p.trim_end_matches(ws).find(ws).is_none()) {
            Cut::AfterSpace
        } else {
            Cut::None
        };
        let map = if ns.charsmap.is_empty() {
            None
        } else {
            Some(CharsMap::new(&ns.charsmap)?)
        };
        Ok(SentencePiece {
            pieces: spec.pieces.iter().map(|(p, _, _)| p.clone()).collect(),
            types: spec.pieces.iter().map(|(_, _, t)| *t).collect(),
            normalizer: SpNormalizer {
                map,
                spec: ns.clone(),
            },
            denormalizer: match &spec.denormalizer {
                Some(d) if !d.charsmap.is_empty() => Some(SpNormalizer {
                    map: Some(CharsMap::new(&d.charsmap)?),
                    spec: d.clone(),
                }),
                _ => None,
            },
            has_unused: spec.pieces.iter().any(|(_, _, t)| *t == UNUSED),
            piece_ids,
            key_len,
            char_table,
            char_map,
            pairs,
            matcher,
            unk_id,
            byte_fallback: spec.byte_fallback,
            byte_ids,
            unk_surface: spec.unk_surface.clone(),
            strip_leading_space: ns.add_dummy_prefix || ns.remove_extra_whitespaces,
            cut,
            ws,
            cache_id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    #[inline]
    fn char_key(&self, c: char) -> u32 {
        if (c as usize) < TABLE_CHARS {
            self.char_table[c as usize]
        } else {
            self.char_map.get(&c).copied().unwrap_or(NONE)
        }
    }

    #[inline]
    fn pair(&self, a: u32, b: u32) -> Option<(u32, u32)> {
        if a == NONE || b == NONE {
            return None;
        }
        self.pairs.get(&(a, b)).copied()
    }

    /// The normalized text (SentencePiece's `normalize`).
    pub fn normalize(&self, text: &str) -> String {
        let mut n2o = Vec::new();
        self.normalizer
            .normalize(text, self.matcher.as_ref(), false, &mut n2o)
    }

    /// Encode `text` as `SentencePieceProcessor::Encode` does; offsets (byte
    /// ranges of `text`) when `track`.
    pub fn encode(&self, text: &str, track: bool) -> Result<SpEncoding> {
        let mut n2o = Vec::new();
        let norm = self
            .normalizer
            .normalize(text, self.matcher.as_ref(), track, &mut n2o);
        let mut syms: Vec<(u32, u32)> = Vec::with_capacity(norm.len() / 3 + 4);
        if !norm.is_empty() {
            if self.has_unused {
                self.merge_all(&norm, &mut syms);
            } else {
                self.merge_cut(&norm, &mut syms);
            }
        }
        self.output(&norm, &syms, track, &n2o)
    }

    /// Initial symbols of `s[start..end]` (no user-defined symbol inside).
    #[inline]
    fn chars_of(&self, s: &str, out: &mut Vec<(u32, u32)>) {
        for c in s.chars() {
            out.push((self.char_key(c), c.len_utf8() as u32));
        }
    }

    /// Cut the text where no merge can cross, merge each part (cached).
    fn merge_cut(&self, s: &str, syms: &mut Vec<(u32, u32)>) {
        let bytes = s.as_bytes();
        let mut start = 0usize;
        let mut at = 0usize;
        let mut prev_ws = true;
        let ws = self.ws;
        let mut word = Vec::new();
        while at < bytes.len() {
            if let Some(m) = &self.matcher {
                if let Some(n) = m.len_at(s, at) {
                    self.merge_part(&s[start..at], syms, &mut word);
                    let id = self.piece_ids.get(&s[at..at + n]).copied().unwrap_or(NONE);
                    syms.push((id, n as u32));
                    at += n;
                    start = at;
                    prev_ws = true;
                    continue;
                }
            }
            let c = if bytes[at] < 0x80 {
                bytes[at] as char
            } else {
                s[at..].chars().next().unwrap_or(' ')
            };
            let is_ws = c == ws;
            let cut_here = match self.cut {
                Cut::BeforeSpace => is_ws && !prev_ws,
                Cut::AfterSpace => !is_ws && prev_ws && at > start,
                Cut::None => false,
            };
            if cut_here && at > start {
                self.merge_part(&s[start..at], syms, &mut word);
                start = at;
            }
            prev_ws = is_ws;
            at += c.len_utf8();
        }
        self.merge_part(&s[start..], syms, &mut word);
    }

    fn merge_part(&self, w: &str, syms: &mut Vec<(u32, u32)>, word: &mut Vec<(u32, u32)>) {
        if w.is_empty() {
            return;
        }
        let run = |word: &mut Vec<(u32, u32)>| {
            word.clear();
            self.chars_of(w, word);
            if word.len() <= 48 {
                self.merge_small(word);
            } else {
                self.merge_heap(word, None);
            }
        };
        if w.len() >= CACHE_MAX_LEN {
            run(word);
            syms.extend_from_slice(word);
            return;
        }
        CACHE.with(|cell| {
            let mut all = cell.borrow_mut();
            let local = all.entry(self.cache_id).or_default();
            if let Some(hit) = local.get(w) {
                syms.extend_from_slice(hit);
                return;
            }
            run(word);
            syms.extend_from_slice(word);
            if local.len() >= CACHE_CAPACITY {
                local.clear();
            }
            local.insert(w.into(), word.clone().into_boxed_slice());
        });
    }

    /// Best pair first (lowest rank, then leftmost), by scanning: short words.
    fn merge_small(&self, word: &mut Vec<(u32, u32)>) {
        super::bpe::merge_lowest_rank(word, |a, b| self.pair(a, b));
    }

    /// SentencePiece's agenda, step for step (the same pushes in the same
    /// order, so that `rev_merge` records what SentencePiece's does).
    fn merge_heap(&self, word: &mut Vec<(u32, u32)>, mut rev: Option<&mut RevMerge>) {
        let n = word.len();
        let mut prev: Vec<isize> = (0..n as isize).map(|i| i - 1).collect();
        let mut next: Vec<isize> = (0..n as isize)
            .map(|i| if i + 1 < n as isize { i + 1 } else { -1 })
            .collect();
        let mut heap: BinaryHeap<Reverse<Agenda>> = BinaryHeap::with_capacity(n);
        let push = |heap: &mut BinaryHeap<_>,
                    word: &[(u32, u32)],
                    l: usize,
                    r: usize,
                    rev: &mut Option<&mut RevMerge>| {
            if let Some((rank, id)) = self.pair(word[l].0, word[r].0) {
                heap.push(Reverse((rank, l, r, word[l].1 + word[r].1, id)));
                if let Some(m) = rev.as_deref_mut() {
                    if self.types[id as usize] == UNUSED {
                        m.insert(id, (word[l].0, word[r].0));
                    }
                }
            }
        };
        for i in 1..n {
            push(&mut heap, word, i - 1, i, &mut rev);
        }
        while let Some(Reverse((_, l, r, size, id))) = heap.pop() {
            if word[l].1 == 0 || word[r].1 == 0 || word[l].1 + word[r].1 != size {
                continue;
            }
            word[l] = (id, size);
            word[r].1 = 0;
            let nn = next[r];
            next[l] = nn;
            if nn >= 0 {
                prev[nn as usize] = l as isize;
            }
            if prev[l] >= 0 {
                push(&mut heap, word, prev[l] as usize, l, &mut rev);
            }
            if nn >= 0 {
                push(&mut heap, word, l, nn as usize, &mut rev);
            }
        }
        word.retain(|s| s.1 != 0);
    }

    /// The whole text at once, with `rev_merge` (models with unused pieces).
    fn merge_all(&self, s: &str, syms: &mut Vec<(u32, u32)>) {
        let mut word = Vec::with_capacity(s.len());
        let mut at = 0;
        while at < s.len() {
            if let Some(m) = &self.matcher {
                if let Some(n) = m.len_at(s, at) {
                    let id = self.piece_ids.get(&s[at..at + n]).copied().unwrap_or(NONE);
                    word.push((id, n as u32));
                    at += n;
                    continue;
                }
            }
            let c = s[at..].chars().next().unwrap_or(' ');
            word.push((self.char_key(c), c.len_utf8() as u32));
            at += c.len_utf8();
        }
        let mut rev = FxHashMap::default();
        self.merge_heap(&mut word, Some(&mut rev));
        for (k, len) in word {
            self.resegment(k, len, &rev, syms, 0);
        }
    }

    fn resegment(&self, k: u32, len: u32, rev: &RevMerge, out: &mut Vec<(u32, u32)>, depth: usize) {
        if (k as usize) < self.types.len() && self.types[k as usize] == UNUSED && depth < 1 << 16 {
            if let Some(&(a, b)) = rev.get(&k) {
                self.resegment(a, self.key_len[a as usize], rev, out, depth + 1);
                self.resegment(b, self.key_len[b as usize], rev, out, depth + 1);
                return;
            }
        }
        out.push((k, len));
    }

    /// `PopulateSentencePieceText`: ids, unknown runs fused or bytes, offsets.
    fn output(
        &self,
        norm: &str,
        syms: &[(u32, u32)],
        track: bool,
        n2o: &[usize],
    ) -> Result<SpEncoding> {
        let mut ids = Vec::with_capacity(syms.len());
        let mut offsets = Vec::with_capacity(if track { syms.len() } else { 0 });
        let n_pieces = self.pieces.len() as u32;
        let mut pos = 0usize;
        let mut prev_unk = false;
        for &(k, len) in syms {
            let len = len as usize;
            let w = &norm[pos..pos + len];
            // a symbol that is no piece is unknown (sentencepiece 0.2.x: a one-character control piece too)
            let id = if k < n_pieces { k } else { self.unk_id };
            let is_unk = id == self.unk_id;
            let (ob, oe) = if track {
                (n2o[pos], n2o[pos + len])
            } else {
                (0, 0)
            };
            if is_unk && self.byte_fallback {
                let wb = w.as_bytes();
                for (i, &b) in wb.iter().enumerate() {
                    ids.push(self.byte_ids[b as usize]);
                    if track {
                        offsets.push(if i + 1 == wb.len() {
                            (ob, oe)
                        } else {
                            (ob, ob)
                        });
                    }
                }
            } else if is_unk && prev_unk {
                if track {
                    if let Some(last) = offsets.last_mut() {
                        last.1 = oe;
                    }
                }
            } else {
                ids.push(id);
                if track {
                    offsets.push((ob, oe));
                }
            }
            prev_unk = is_unk;
            pos += len;
        }
        Ok(SpEncoding { ids, offsets })
    }

    // ------------------------------------------------------------ decoding

    /// `SentencePieceProcessor::Decode` of ids; `skip` drops control and
    /// unknown ids first (Hugging Face's `skip_special_tokens`).
    pub fn decode(&self, ids: &[u32], skip: bool) -> Result<String> {
        let mut out = String::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut is_bos_ws = true;
        let mut bos_ws_seen = false;
        for &id in ids {
            let t = *self.types.get(id as usize).ok_or_else(|| {
                Error::UnknownToken(format!("token id {id} is not in the vocabulary"))
            })?;
            if skip && (t == CONTROL || t == UNKNOWN) {
                continue;
            }
            let piece = self.pieces[id as usize].as_str();
            if t == BYTE {
                let b = u8::from_str_radix(&piece[3..5], 16).unwrap_or(0);
                pending.push(b);
                continue;
            }
            flush_bytes(&mut pending, &mut out);
            if bos_ws_seen || !out.is_empty() {
                is_bos_ws = false;
            }
            match t {
                CONTROL => bos_ws_seen = false,
                UNKNOWN => {
                    out.push_str(&self.unk_surface);
                    bos_ws_seen = false;
                }
                _ => {
                    let mut p = piece;
                    let mut has = false;
                    if is_bos_ws && self.strip_leading_space {
                        if let Some(rest) = p.strip_prefix(SPACE) {
                            p = rest;
                            has = !self.normalizer.spec.remove_extra_whitespaces;
                        }
                    }
                    if p.contains(SPACE) {
                        out.push_str(&p.replace(SPACE, " "));
                    } else {
                        out.push_str(p);
                    }
                    bos_ws_seen = has;
                }
            }
        }
        flush_bytes(&mut pending, &mut out);
        if let Some(d) = &self.denormalizer {
            // sentencepiece's Decode: the whole text through the denormalizer (no user-defined matcher)
            let mut n2o = Vec::new();
            out = d.normalize(&out, None, false, &mut n2o);
        }
        Ok(out)
    }
}

/// For a Hugging Face BPE run without a pre-tokenizer (the Llama 2 /
/// Mistral `tokenizer.json` layout, and bytepair's word-start char model):
/// `▁` when the text may be cut before each `▁` that follows another
/// character without changing the ids: no merge makes a token with `▁`
/// after another character, `▁` is a token (so no unknown run reaches
/// across), no character is ever dropped (HF drops a character with no
/// token, no byte token and no unk: its neighbours then merge across it and
/// the offsets after it shift), and no option looks at word ends (prefix,
/// suffix, ignore_merges, dropout).
pub(crate) fn hf_cut_marker(spec: &BpeSpec) -> Option<char> {
    const M: char = '\u{2581}';
    let tokens: std::collections::HashSet<&str> = spec.vocab.iter().map(|(t, _)| t.as_str()).collect();
    let every_byte = || (0..=255u8).all(|b| tokens.contains(format!("<0x{b:02X}>").as_str()));
    let never_drops = spec.unk_token.is_some() || (spec.byte_fallback && every_byte());
    if spec.dropout.is_some_and(|p| p > 0.0)
        || spec.continuing_subword_prefix.is_some()
        || spec.end_of_word_suffix.is_some()
        || spec.ignore_merges
        || !tokens.contains(SPACE)
        || !never_drops
    {
        return None;
    }
    let crosses = |s: &str| s.trim_start_matches(M).contains(M);
    if spec.merges.iter().any(|(a, b)| {
        crosses(a) || crosses(b) || (b.starts_with(M) && !a.trim_start_matches(M).is_empty())
    }) {
        return None;
    }
    Some(M)
}

/// Byte ranges of `s` cut before each `m` that follows another character.
pub(crate) fn cut_before(s: &str, m: char) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev_m = true;
    for (i, c) in s.char_indices() {
        let is_m = c == m;
        if is_m && !prev_m && i > start {
            out.push((start, i));
            start = i;
        }
        prev_m = is_m;
    }
    if start < s.len() {
        out.push((start, s.len()));
    }
    out
}

/// Bytes as SentencePiece decodes byte pieces: a character at a time, each
/// byte that does not start a valid character one U+FFFD.
fn flush_bytes(pending: &mut Vec<u8>, out: &mut String) {
    let b = pending.as_slice();
    let mut i = 0;
    while i < b.len() {
        let n = match b[i] {
            0x00..=0x7F => 1,
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        match (n > 0 && i + n <= b.len())
            .then(|| std::str::from_utf8(&b[i..i + n]).ok())
            .flatten()
        {
            Some(s) => {
                out.push_str(s);
                i += n;
            }
            None => {
                out.push('\u{FFFD}');
                i += 1;
            }
        }
    }
    pending.clear();
}

impl Drop for SentencePiece {
    fn drop(&mut self) {
        let id = self.cache_id;
        let _ = CACHE.try_with(|c| c.borrow_mut().remove(&id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(pieces: &[(&str, f32, u8)], byte_fallback: bool) -> SentencePiece {
        let spec = SpSpec {
            pieces: pieces
                .iter()
                .map(|(p, s, t)| (p.to_string(), *s, *t))
                .collect(),
            byte_fallback,
            unk_surface: " \u{2047} ".into(),
            normalizer: SpNormSpec {
                add_dummy_prefix: true,
                remove_extra_whitespaces: true,
                escape_whitespaces: true,
                ..Default::default()
            },
            denormalizer: None,
        };
        SentencePiece::new(&spec).unwrap()
    }

    #[test]
    fn equal_scores_merge_leftmost() {
        // "ab" and "bc" have one score: in "abc" the leftmost pair wins
        let m = model(
            &[
                ("<unk>", 0.0, UNKNOWN),
                ("a", -5.0, NORMAL),
                ("b", -5.0, NORMAL),
                ("c", -5.0, NORMAL),
                ("bc", -1.0, NORMAL),
                ("ab", -1.0, NORMAL),
                ("\u{2581}", -6.0, NORMAL),
            ],
            false,
        );
        assert_eq!(m.encode("abc", false).unwrap().ids, vec![6, 5, 3]);
    }

    #[test]
    fn unknown_runs_fuse_and_offsets() {
        let m = model(
            &[
                ("<unk>", 0.0, UNKNOWN),
                ("a", -1.0, NORMAL),
                ("\u{2581}", -2.0, NORMAL),
            ],
            false,
        );
        let e = m.encode("  a xy", true).unwrap();
        assert_eq!(e.ids, vec![2, 1, 2, 0]);
        assert_eq!(e.offsets, vec![(2, 2), (2, 3), (3, 4), (4, 6)]);
        assert_eq!(m.decode(&e.ids, false).unwrap(), "a  \u{2047} ");
    }

    #[test]
    fn cut_marker_only_when_no_merge_crosses() {
        let spec = |merges: &[(&str, &str)], unk: Option<&str>| BpeSpec {
            vocab: ["\u{2581}", "a", "\u{2581}a", "a\u{2581}", "<unk>"]
                .iter()
                .enumerate()
                .map(|(i, t)| (t.to_string(), i as u32))
                .collect(),
            merges: merges
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            dropout: None,
            unk_token: unk.map(str::to_string),
            continuing_subword_prefix: None,
            end_of_word_suffix: None,
            fuse_unk: false,
            byte_fallback: false,
            ignore_merges: false,
        };
        assert_eq!(hf_cut_marker(&spec(&[("\u{2581}", "a")], Some("<unk>"))), Some('\u{2581}'));
        assert_eq!(hf_cut_marker(&spec(&[("a", "\u{2581}")], Some("<unk>"))), None);
        // without unk (or every byte token), HF drops unknown characters and merges across them
        assert_eq!(hf_cut_marker(&spec(&[("\u{2581}", "a")], None)), None);
        assert_eq!(
            cut_before("\u{2581}a\u{2581}\u{2581}b", '\u{2581}'),
            vec![(0, 4), (4, 11)]
        );
    }
}
