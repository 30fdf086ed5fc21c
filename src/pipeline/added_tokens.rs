//! Added tokens as Hugging Face matches them: tokens with `normalized=false`
//! are found in the raw text, the others in the normalized text (their own
//! content normalized), leftmost-longest, with `single_word`, `lstrip` and
//! `rstrip`. Ids: the model's id when the content is in its vocab, else the
//! next free id after the model's (HF's `add_tokens`).
//!
//! A GGUF file's tokens can be cut as llama.cpp cuts them instead
//! ([`SpecialCut::LlamaCpp`], `tokenizer_st_partition`): one token at a time,
//! longest first, each out of what earlier ones left, its `lstrip` / `rstrip`
//! taking C's `isspace` (ASCII) whitespace inside that stretch only.

use crate::model::bpe::Bpe;
use crate::text::normalized::NStr;
use crate::text::normalizer::Normalizer;
use super::spec::{AddedTokenSpec, SpecialCut};
use crate::error::{Error, Result};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use fancy_regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::OnceLock;

#[derive(Debug, Clone)]
pub struct AddedToken {
    pub(crate) spec: AddedTokenSpec,
    pub id: u32,
}

#[derive(Debug)]
pub struct AddedTokens {
    pub tokens: Vec<AddedToken>,
    /// `SpecialCut::LlamaCpp`: the tokens' indices longest first (ties by id), each with its searcher
    llama_order: Option<Vec<(usize, memchr::memmem::Finder<'static>)>>,
    /// id -> (content used for decoding, special)
    pub(crate) by_id: FxHashMap<u32, (String, bool)>,
    pub by_content: FxHashMap<String, u32>,
    pub special: FxHashSet<String>,
    raw: Option<(AhoCorasick, Vec<usize>)>,
    normalized: Option<(AhoCorasick, Vec<usize>)>,
}

fn word_regexes() -> &'static (Regex, Regex) {
    static R: OnceLock<(Regex, Regex)> = OnceLock::new();
    R.get_or_init(|| (Regex::new(r"^\w").unwrap(), Regex::new(r"\w$").unwrap()))
}

fn build(patterns: &[(String, usize)]) -> Result<Option<(AhoCorasick, Vec<usize>)>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let ac = AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .build(patterns.iter().map(|(p, _)| p.as_str()))
        .map_err(|e| Error::Format(format!("added_tokens: {e}")))?;
    Ok(Some((ac, patterns.iter().map(|(_, i)| *i).collect())))
}

/// C's `isspace` in the C locale, which llama.cpp's strips call on each byte.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

pub(crate) enum Segment {
    /// An added token: id, original byte span, and the spaces at the ends of
    /// the matched text (what HF's ByteLevel offset trimming counts).
    Token(u32, usize, usize, (usize, usize)),
    Text(NStr),
}

/// The leading and trailing characters of `s` that HF's ByteLevel offset
/// trimming counts as spaces ('Ġ' or whitespace).
pub(crate) fn edge_spaces(s: &str) -> (usize, usize) {
    let is_space = |c: &char| *c == '\u{120}' || c.is_whitespace();
    (s.chars().take_while(is_space).count(), s.chars().rev().take_while(is_space).count())
}

impl AddedTokens {
    pub fn new(
        specs: &[AddedTokenSpec],
        model: &Bpe,
        normalizer: Option<&Normalizer>,
        cut: SpecialCut,
    ) -> Result<AddedTokens> {
        let mut by_content: FxHashMap<String, u32> = FxHashMap::default();
        let mut by_id_tok: FxHashMap<u32, AddedTokenSpec> = FxHashMap::default();
        let mut normalized_cache: FxHashMap<u32, String> = FxHashMap::default();
        let mut special = FxHashSet::default();
        let vocab_size = model.len as u32;
        let mut next_id = match by_id_tok.keys().max() {
            None => vocab_size,
            Some(&m) => {
                if m >= vocab_size || vocab_size == 0 {
                    m + 1
                } else {
                    vocab_size
                }
            }
        };
        for t in specs {
            if t.content.is_empty() {
                continue;
            }
            let id = match by_content.get(&t.content).copied().or_else(|| model.vocab.get(&t.content).copied()) {
                Some(id) => id,
                None => {
                    let id = next_id;
                    next_id = next_id
                        .checked_add(1)
                        .ok_or_else(|| Error::Format("added_tokens: too many ids".to_string()))?;
                    id
                }
            };
            if t.normalized {
                if let Some(n) = normalizer {
                    let mut s = NStr::new(&t.content, 0, false);
                    n.normalize(&mut s)?;
                    if s.s != t.content {
                        normalized_cache.insert(id, s.s);
                    }
                }
            }
            by_content.insert(t.content.clone(), id);
            if t.special {
                special.insert(t.content.clone());
            }
            by_id_tok.insert(id, t.clone());
        }
        let mut ids: Vec<u32> = by_id_tok.keys().copied().collect();
        ids.sort_unstable();
        let mut tokens = Vec::with_capacity(ids.len());
        let mut raw_p = Vec::new();
        let mut norm_p = Vec::new();
        let mut by_id = FxHashMap::default();
        for id in ids {
            let t = by_id_tok.remove(&id).unwrap();
            let shown = normalized_cache.get(&id).cloned().unwrap_or_else(|| t.content.clone());
            by_id.insert(id, (shown.clone(), special.contains(&t.content)));
            if t.normalized {
                norm_p.push((shown, tokens.len()));
            } else {
                raw_p.push((t.content.clone(), tokens.len()));
            }
            tokens.push(AddedToken { spec: t, id });
        }
        let llama_order = match cut {
            SpecialCut::Hf => None,
            SpecialCut::LlamaCpp => {
                if let Some(t) = tokens.iter().find(|t| t.spec.normalized) {
                    return Err(Error::Format(format!(
                        "added_tokens: {:?} is normalized, which llama.cpp's cut (special_cut) does not run",
                        t.spec.content
                    )));
                }
                let mut order: Vec<usize> = (0..tokens.len()).collect();
                // llama.cpp sorts by length alone (std::sort); the loader refuses files where ties could matter
                order.sort_by_key(|&k| (std::cmp::Reverse(tokens[k].spec.content.len()), tokens[k].id));
                Some(
                    order
                        .into_iter()
                        .map(|k| (k, memchr::memmem::Finder::new(tokens[k].spec.content.as_bytes()).into_owned()))
                        .collect(),
                )
            }
        };
        Ok(AddedTokens {
            llama_order,
            raw: build(&raw_p)?,
            normalized: build(&norm_p)?,
            tokens,
            by_id,
            by_content,
            special,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// llama.cpp's `tokenizer_st_partition` on one text: for each token, longest first, every stretch of
    /// text left is searched left to right; the text before a match loses its trailing ASCII whitespace
    /// when the token has `lstrip`, the text after it its leading one when it has `rstrip`.
    fn split_llama(
        &self,
        order: &[(usize, memchr::memmem::Finder<'static>)],
        n: NStr,
        skip_special: bool,
        out: &mut Vec<Segment>,
    ) {
        let bytes = n.s.as_bytes();
        // (start, end, the token's index or None for text)
        let mut parts: Vec<(usize, usize, Option<usize>)> = vec![(0, bytes.len(), None)];
        let mut any = false;
        for (k, finder) in order {
            let t = &self.tokens[*k];
            if skip_special && t.spec.special {
                continue;
            }
            let len = t.spec.content.len();
            // one SIMD scan of the whole text first: most tokens are not in it, and the stretches left are
            // walked only for those that are (the work stays linear in the text for each token)
            if finder.find(bytes).is_none() {
                continue;
            }
            let mut next = Vec::with_capacity(parts.len() + 2);
            for &(a, end, tok) in &parts {
                if tok.is_some() {
                    next.push((a, end, tok));
                    continue;
                }
                let mut base = a;
                while base < end {
                    let Some(at) = finder.find(&bytes[base..end]) else {
                        next.push((base, end, None));
                        break;
                    };
                    let m = base + at;
                    let mut left = m;
                    if t.spec.lstrip {
                        while left > base && is_c_space(bytes[left - 1]) {
                            left -= 1;
                        }
                    }
                    if left > base {
                        next.push((base, left, None));
                    }
                    next.push((m, m + len, Some(*k)));
                    any = true;
                    base = m + len;
                    if t.spec.rstrip {
                        while base < end && is_c_space(bytes[base]) {
                            base += 1;
                        }
                    }
                }
            }
            parts = next;
        }
        if !any {
            out.push(Segment::Text(n));
            return;
        }
        for (a, b, tok) in parts {
            match tok {
                Some(k) => {
                    let (oa, ob) = n.original(a, b);
                    out.push(Segment::Token(self.tokens[k].id, oa, ob, edge_spaces(&n.s[a..b])));
                }
                None => out.push(Segment::Text(n.slice(a, b))),
            }
        }
    }

    /// HF's `find_matches` + `split_with_indices` on one piece.
    fn split(&self, n: NStr, normalized: bool, skip_special: bool, out: &mut Vec<Segment>) {
        let Some(pieces) = self.cut(&n.s, normalized, skip_special) else {
            out.push(Segment::Text(n));
            return;
        };
        let s = n.s.as_str();
        for (id, a, b) in pieces {
            match id {
                Some(id) => {
                    let (oa, ob) = n.original(a, b);
                    out.push(Segment::Token(id, oa, ob, edge_spaces(&s[a..b])));
                }
                None => out.push(Segment::Text(n.slice(a, b))),
            }
        }
    }

    /// The parts of `s` around the added tokens it holds (id, or None for text, and the byte range), or None when
    /// it holds none: `split`'s cut, on any text.
    fn cut(&self, s: &str, normalized: bool, skip_special: bool) -> Option<Vec<(Option<u32>, usize, usize)>> {
        let ac = if normalized { &self.normalized } else { &self.raw };
        let (ac, which) = ac.as_ref()?;
        let mut start_offset = 0usize;
        let mut any = false;
        let mut pieces: Vec<(Option<u32>, usize, usize)> = Vec::new();
        for m in ac.find_iter(s) {
            let t = &self.tokens[which[m.pattern().as_usize()]];
            let (mut start, mut stop) = (m.start(), m.end());
            if skip_special && t.spec.special {
                continue;
            }
            if t.spec.single_word {
                let (starts, ends) = word_regexes();
                let start_space = start == 0 || !ends.is_match(&s[..start]).unwrap_or(false);
                let stop_space = stop == s.len() || !starts.is_match(&s[stop..]).unwrap_or(false);
                if !stop_space || !start_space {
                    continue;
                }
            }
            if t.spec.lstrip {
                let before = &s[..start];
                let newstart = before.trim_end_matches(char::is_whitespace).len();
                start = newstart.max(start_offset);
            }
            if t.spec.rstrip {
                let after = &s[stop..];
                stop += after.len() - after.trim_start_matches(char::is_whitespace).len();
            }
            if start_offset < start {
                pieces.push((None, start_offset, start));
            }
            if start >= stop {
                // All of it was taken by the previous token's `rstrip`: HF drops the empty split
                // (and panics, "AddedVocabulary bad split", when start > stop; dropped here too).
                start_offset = start_offset.max(stop);
                continue;
            }
            pieces.push((Some(t.id), start, stop));
            start_offset = stop;
            any = true;
        }
        if !any {
            return None;
        }
        if start_offset != s.len() {
            pieces.push((None, start_offset, s.len()));
        }
        Some(pieces)
    }

    /// Whether `for_each_part` cuts as `extract_and_normalize` does (no llama.cpp cut).
    pub(crate) fn parts_borrowed(&self) -> bool {
        self.llama_order.is_none()
    }

    /// `extract_and_normalize` of a text that normalizing leaves as it is (or with no normalizer), without
    /// offsets, its parts borrowed from `text`: `f(Ok(id))` for an added token, `f(Err(part))` for text (never
    /// empty), in order.
    pub(crate) fn for_each_part<'t>(
        &self, text: &'t str, skip_special: bool, mut f: impl FnMut(std::result::Result<u32, &'t str>) -> Result<()>,
    ) -> Result<()> {
        debug_assert!(self.parts_borrowed());
        // a text part of the first cut is cut again around the tokens matched on normalized text
        let text_part = |part: &'t str, f: &mut dyn FnMut(std::result::Result<u32, &'t str>) -> Result<()>| -> Result<()> {
            match self.cut(part, true, skip_special) {
                None if part.is_empty() => Ok(()),
                None => f(Err(part)),
                Some(pieces) => {
                    for (id, a, b) in pieces {
                        match id {
                            Some(id) => f(Ok(id))?,
                            None if a < b => f(Err(&part[a..b]))?,
                            None => {}
                        }
                    }
                    Ok(())
                }
            }
        };
        match self.cut(text, false, skip_special) {
            None => text_part(text, &mut f),
            Some(pieces) => {
                for (id, a, b) in pieces {
                    match id {
                        Some(id) => f(Ok(id))?,
                        None => text_part(&text[a..b], &mut f)?,
                    }
                }
                Ok(())
            }
        }
    }

    /// Split `text` around added tokens and normalize the rest.
    pub(crate) fn extract_and_normalize(
        &self,
        text: &str,
        normalizer: Option<&Normalizer>,
        track: bool,
        skip_special: bool,
    ) -> Result<Vec<Segment>> {
        let mut first = Vec::new();
        match &self.llama_order {
            Some(order) => self.split_llama(order, NStr::new(text, 0, track), skip_special, &mut first),
            None => self.split(NStr::new(text, 0, track), false, skip_special, &mut first),
        }
        let mut out = Vec::with_capacity(first.len());
        for seg in first {
            match seg {
                Segment::Text(mut n) => {
                    if let Some(norm) = normalizer {
                        norm.normalize(&mut n)?;
                    }
                    self.split(n, true, skip_special, &mut out);
                }
                t => out.push(t),
            }
        }
        Ok(out)
    }
}
