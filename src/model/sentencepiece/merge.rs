//! SentencePiece's BPE (`bpe_model.cc`): the adjacent pair whose
//! concatenation is the piece of highest score merges first, leftmost on
//! ties; user-defined pieces frozen; unused pieces merged through and split
//! back (`resegment`). Text is cut where no merge can cross, and each part
//! merged through the word map (`crate::cache::words`).

use super::{Cut, SentencePiece, NONE, TABLE_CHARS, UNUSED};
use crate::model::pairs::{merge_lowest_rank, merge_pairs, merge_pairs_windowed};
use crate::model::window::WINDOW;
use rustc_hash::FxHashMap;
/// Unused piece -> the (left, right) symbol keys it was last pushed from.
type RevMerge = FxHashMap<u32, (u32, u32)>;

impl SentencePiece {
    #[inline]
    pub(super) fn char_key(&self, c: char) -> u32 {
        if (c as usize) < TABLE_CHARS {
            self.char_table[c as usize]
        } else {
            self.char_map.get(&c).copied().unwrap_or(NONE)
        }
    }

    #[inline]
    pub(super) fn pair(&self, a: u32, b: u32) -> Option<(u32, u32)> {
        if a == NONE || b == NONE {
            return None;
        }
        self.pairs.get(&(a, b)).copied()
    }

    /// Initial symbols of `s[start..end]` (no user-defined symbol inside).
    #[inline]
    pub(super) fn chars_of(&self, s: &str, out: &mut Vec<(u32, u32)>) {
        for c in s.chars() {
            out.push((self.char_key(c), c.len_utf8() as u32));
        }
    }

    /// Cut the text where no merge can cross, merge each part (cached).
    pub(super) fn merge_cut(&self, s: &str, syms: &mut Vec<(u32, u32)>) {
        if self.matcher.is_none() && matches!(self.cut, Cut::BeforeSpace) {
            return self.merge_cut_before_spaces(s, syms);
        }
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

    /// `merge_cut` without user-defined symbols, cutting before each run of
    /// whitespace markers: the markers found by `memmem` instead of a look at
    /// every character. A marker cuts where the character before it is not one
    /// (at the start of the text, as if one were).
    fn merge_cut_before_spaces(&self, s: &str, syms: &mut Vec<(u32, u32)>) {
        let mut word = Vec::new();
        self.parts_before_spaces(s, |part| self.merge_part(part, syms, &mut word));
    }

    /// Calls `f` on each part of `s` cut before each run of whitespace
    /// markers (the parts of `merge_cut_before_spaces`, in order; the last
    /// may be empty).
    #[inline]
    pub(super) fn parts_before_spaces<'s>(&self, s: &'s str, mut f: impl FnMut(&'s str)) {
        let ws_len = self.ws.len_utf8();
        let (mut start, mut after_ws) = (0, 0);
        for at in self.ws_finder.find_iter(s.as_bytes()) {
            if at > start && at != after_ws {
                f(&s[start..at]);
                start = at;
            }
            after_ws = at + ws_len;
        }
        f(&s[start..]);
    }

    /// Whether a normalized text's parts (cut before its whitespace markers) each encode to ids of their own:
    /// with byte fallback (an unknown character's bytes, not one `<unk>` fused across parts), no unused
    /// pieces (whose merges look at the whole text) and no user-defined ones (matched across a cut).
    pub(super) fn parts_stand_alone(&self) -> bool {
        self.byte_fallback && !self.has_unused && self.matcher.is_none() && self.cut == Cut::BeforeSpace
    }

    /// The ids of a normalized text cut before its whitespace markers
    /// (`merge_cut_before_spaces`, then `output` with byte fallback), each
    /// part through the piece cache's front table (`cache::batch::Words`):
    /// with byte fallback a part's ids depend on the part alone.
    pub(super) fn encode_through_front(&self, norm: &str, ids: &mut Vec<u32>) {
        debug_assert!(self.parts_stand_alone());
        crate::cache::with_cache_if(true, |cache| {
            let (mut syms, mut word) = (Vec::new(), Vec::new());
            let slow = |_: Option<&mut crate::cache::PieceCache>, part: &[u8], ids: &mut Vec<u32>| {
                // SAFETY: the words pushed below are the bytes of slices of `norm`, a `str`
                let part = unsafe { std::str::from_utf8_unchecked(part) };
                syms.clear();
                self.merge_part(part, &mut syms, &mut word);
                self.fallback_ids(part, &syms, ids);
                Ok(())
            };
            let mut words = crate::cache::batch::Words::new(cache, self.owner, None, norm.as_bytes(), ids, slow);
            self.parts_before_spaces(norm, |part| {
                if !part.is_empty() {
                    words.push(part.as_bytes());
                }
            });
            // the model never fails a part (unknown characters become bytes)
            let _ = words.finish();
        })
    }

    /// `merge_heap` of a long part that is ASCII after an optional whitespace
    /// marker (the common shape), its initial symbols made a window at a time
    /// from its bytes instead of a list of them all first (8 bytes a
    /// character: a long part's pages faulted in anew); false (`word` empty)
    /// for another shape, or where the windows do not apply.
    fn merge_long_ascii(&self, w: &str, word: &mut Vec<(u32, u32)>) -> bool {
        let (marker, rest) = match w.strip_prefix(self.ws) {
            Some(rest) => (Some((self.char_key(self.ws), self.ws.len_utf8() as u32)), rest),
            None => (None, w),
        };
        if !rest.is_ascii() {
            return false;
        }
        let (bytes, skip) = (rest.as_bytes(), marker.is_some() as usize);
        let initial = |i: usize| match (i, marker) {
            (0, Some(m)) => m,
            _ => (self.char_key(bytes[i - skip] as char), 1),
        };
        merge_pairs_windowed(bytes.len() + skip, initial, self.types.len(), |a, b| self.pair(a, b), word)
    }

    /// Best pair first (lowest rank, then leftmost), by scanning: short words.
    pub(super) fn merge_small(&self, word: &mut Vec<(u32, u32)>) {
        merge_lowest_rank(word, |a, b| self.pair(a, b));
    }

    /// SentencePiece's agenda: the pair of lowest rank (highest score)
    /// first, leftmost on ties, by the bucket queue (`merge_pairs`); with
    /// `rev`, not in windows, so that pairs are looked up exactly where
    /// SentencePiece's agenda pushes them, in the same order, and
    /// `rev_merge` records what SentencePiece's does.
    pub(super) fn merge_heap(&self, word: &mut Vec<(u32, u32)>, mut rev: Option<&mut RevMerge>) {
        let windows = rev.is_none();
        merge_pairs(word, self.types.len(), windows, |a, b| {
            let (rank, id) = self.pair(a, b)?;
            if let Some(m) = rev.as_deref_mut() {
                if self.types[id as usize] == UNUSED {
                    m.insert(id, (a, b));
                }
            }
            Some((rank, id))
        });
    }

    /// The whole text at once, with `rev_merge` (models with unused pieces).
    pub(super) fn merge_all(&self, s: &str, syms: &mut Vec<(u32, u32)>) {
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

    pub(super) fn resegment(&self, k: u32, len: u32, rev: &RevMerge, out: &mut Vec<(u32, u32)>, depth: usize) {
        if (k as usize) < self.types.len() && self.types[k as usize] == UNUSED && depth < 1 << 16 {
            if let Some(&(a, b)) = rev.get(&k) {
                self.resegment(a, self.key_len[a as usize], rev, out, depth + 1);
                self.resegment(b, self.key_len[b as usize], rev, out, depth + 1);
                return;
            }
        }
        out.push((k, len));
    }

    /// One part of a text (no merge crosses its ends), merged through the word map.
    pub(super) fn merge_part(&self, w: &str, syms: &mut Vec<(u32, u32)>, word: &mut Vec<(u32, u32)>) {
        if w.is_empty() {
            return;
        }
        let run = |word: &mut Vec<(u32, u32)>| {
            word.clear();
            // only a part of two windows or more is merged in windows: a shorter one skips the ASCII scan
            if w.len() >= 2 * WINDOW && self.merge_long_ascii(w, word) {
                return;
            }
            self.chars_of(w, word);
            if word.len() <= 48 {
                self.merge_small(word);
            } else {
                self.merge_heap(word, None);
            }
        };
        let run = |word: &mut Vec<(u32, u32)>| -> Result<(), std::convert::Infallible> {
            run(word);
            Ok(())
        };
        let _ = crate::cache::words::merged(self.cache_id, w, word, run, |s| syms.extend_from_slice(s));
    }
}
