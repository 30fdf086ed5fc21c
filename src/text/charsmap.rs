//! SentencePiece's precompiled charsmap (HF's `Precompiled` normalizer): a
//! darts-clone double-array trie over UTF-8 keys whose values index a blob of
//! NUL-terminated replacement strings. The blob is untrusted: every index is
//! checked, and a bad map is refused when loaded or a bad entry ignored.

use super::normalized::NStr;
use crate::error::{Error, Result};
use unicode_segmentation::UnicodeSegmentation;

#[derive(Debug, Clone)]
pub struct CharsMap {
    array: Vec<u32>,
    normalized: Vec<u8>,
}

#[inline]
fn has_leaf(u: u32) -> bool {
    (u >> 8) & 1 == 1
}
#[inline]
fn value(u: u32) -> usize {
    (u & ((1u32 << 31) - 1)) as usize
}
#[inline]
fn label(u: u32) -> u32 {
    u & ((1u32 << 31) | 0xFF)
}
#[inline]
fn offset(u: u32) -> usize {
    ((u >> 10) as usize) << ((u & (1u32 << 9)) >> 6)
}

impl CharsMap {
    pub fn new(raw: &[u8]) -> Result<CharsMap> {
        let bad = |why: &str| Error::Format(format!("normalizer Precompiled: bad precompiled_charsmap: {why}"));
        if raw.is_empty() {
            return Ok(CharsMap { array: Vec::new(), normalized: Vec::new() });
        }
        if raw.len() < 4 {
            return Err(bad("shorter than its 4-byte header"));
        }
        let size = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]) as usize;
        let units = size / 4;
        if 4 + units * 4 > raw.len() {
            return Err(bad("the trie is longer than the data"));
        }
        let array = raw[4..4 + units * 4]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let normalized = raw[4 + units * 4..].to_vec();
        if std::str::from_utf8(&normalized).is_err() {
            return Err(bad("the replacement strings are not UTF-8"));
        }
        Ok(CharsMap { array, normalized })
    }

    fn first_prefix_value(&self, key: &[u8]) -> Option<usize> {
        let a = &self.array;
        let mut pos = 0usize;
        let unit = *a.first()?;
        pos ^= offset(unit);
        for &c in key {
            if c == 0 {
                break;
            }
            pos ^= c as usize;
            let unit = *a.get(pos)?;
            if label(unit) != c as u32 {
                return None;
            }
            pos ^= offset(unit);
            if has_leaf(unit) {
                return Some(value(*a.get(pos)?));
            }
        }
        None
    }

    /// SentencePiece's `NormalizePrefix` rule lookup: the longest key that
    /// prefixes `key` (darts-clone's `commonPrefixSearch` over raw bytes) as
    /// (its length, its replacement).
    pub(crate) fn longest_prefix(&self, key: &[u8]) -> Option<(usize, &str)> {
        let a = &self.array;
        let mut pos = offset(*a.first()?);
        let mut best = None;
        for (i, &c) in key.iter().enumerate() {
            pos ^= c as usize;
            let Some(&unit) = a.get(pos) else { break };
            if label(unit) != c as u32 {
                break;
            }
            pos ^= offset(unit);
            if has_leaf(unit) {
                let Some(&leaf) = a.get(pos) else { break };
                best = Some((i + 1, value(leaf)));
            }
        }
        let (n, index) = best?;
        if index > self.normalized.len() {
            return None;
        }
        let end = self.normalized[index..].iter().position(|&b| b == 0).map_or(self.normalized.len(), |p| index + p);
        Some((n, std::str::from_utf8(&self.normalized[index..end]).ok()?))
    }

    /// The replacement of `chunk` (Hugging Face / spm_precompiled: the value
    /// of the shortest key that prefixes it).
    pub(crate) fn transform(&self, chunk: &str) -> Option<&str> {
        let index = self.first_prefix_value(chunk.as_bytes())?;
        if index > self.normalized.len() {
            return None;
        }
        let end = self.normalized[index..].iter().position(|&b| b == 0).map_or(self.normalized.len(), |p| index + p);
        std::str::from_utf8(&self.normalized[index..end]).ok()
    }

    pub(crate) fn normalize(&self, n: &mut NStr) {
        if self.array.is_empty() {
            return;
        }
        let mut tr: Vec<(char, isize)> = Vec::with_capacity(n.s.len());
        let mut modified = false;
        for g in n.s.graphemes(true) {
            if g.len() < 6 {
                if let Some(norm) = self.transform(g) {
                    modified = true;
                    replace(&mut tr, g, norm);
                    continue;
                }
            }
            for (i, c) in g.char_indices() {
                let part = &g[i..i + c.len_utf8()];
                if let Some(norm) = self.transform(part) {
                    modified = true;
                    replace(&mut tr, part, norm);
                } else {
                    tr.push((c, 0));
                }
            }
        }
        if modified {
            n.transform(tr, 0);
        }
    }
}

fn replace(tr: &mut Vec<(char, isize)>, old: &str, new: &str) {
    let diff = new.chars().count() as isize - old.chars().count() as isize;
    tr.extend(new.chars().map(|c| (c, 0)));
    if diff > 0 {
        tr.iter_mut().rev().take(diff as usize).for_each(|(_, cs)| *cs = 1);
    } else if diff < 0 {
        if let Some((_, cs)) = tr.last_mut() {
            *cs += diff;
        }
    }
}
