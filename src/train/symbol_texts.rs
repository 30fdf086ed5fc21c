//! The trainer's symbol texts: every symbol's bytes in one arena (no
//! allocation per merge), and the smallest id of each distinct text, keyed
//! by the text's 64-bit hash (no copy of the text per entry).
//!
//! A merge's text is its two parts' texts one after the other. Two merges
//! that spell the same text are one symbol (the smallest id), as they are
//! for the string-based reference, so each new text is looked up.

use rustc_hash::{FxBuildHasher, FxHashMap};
use std::collections::hash_map::Entry;
use std::hash::BuildHasher;

pub(crate) struct SymbolTexts {
    /// Texts of ids 0, 1, ... one after another.
    bytes: Vec<u8>,
    /// Where the text of each id ends in `bytes`.
    ends: Vec<usize>,
    /// Hash of a text -> the smallest id with a text of that hash.
    first: FxHashMap<u64, u32>,
    /// Texts whose hash an earlier, different text has (almost never):
    /// the smallest id of each.
    collided: FxHashMap<Box<[u8]>, u32>,
}

impl SymbolTexts {
    /// The texts of ids `0..texts.len()`.
    pub(crate) fn new(texts: &[Vec<u8>]) -> Self {
        let mut t = SymbolTexts {
            bytes: Vec::with_capacity(texts.iter().map(Vec::len).sum()),
            ends: Vec::with_capacity(texts.len()),
            first: FxHashMap::default(),
            collided: FxHashMap::default(),
        };
        for text in texts {
            t.bytes.extend_from_slice(text);
            t.ends.push(t.bytes.len());
            t.canonical(t.ends.len() as u32 - 1);
        }
        t
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    #[inline]
    pub(crate) fn get(&self, id: u32) -> &[u8] {
        let end = self.ends[id as usize];
        let start = if id == 0 { 0 } else { self.ends[id as usize - 1] };
        &self.bytes[start..end]
    }

    /// Adds the next id, whose text is `left`'s then `right`'s; returns the
    /// smallest id that has this text (the new one when it is new).
    pub(crate) fn push_concat(&mut self, left: u32, right: u32) -> u32 {
        for part in [left, right] {
            let end = self.ends[part as usize];
            let start = if part == 0 { 0 } else { self.ends[part as usize - 1] };
            self.bytes.extend_from_within(start..end);
        }
        self.ends.push(self.bytes.len());
        self.canonical(self.ends.len() as u32 - 1)
    }

    /// The smallest id with `id`'s text, `id` itself when no smaller one has it.
    fn canonical(&mut self, id: u32) -> u32 {
        let hash = FxBuildHasher.hash_one(self.get(id));
        match self.first.entry(hash) {
            Entry::Vacant(e) => {
                e.insert(id);
                id
            }
            Entry::Occupied(e) => {
                let other = *e.get();
                if self.get(other) == self.get(id) {
                    other
                } else {
                    let text: Box<[u8]> = self.get(id).into();
                    *self.collided.entry(text).or_insert(id)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_texts_and_their_smallest_ids() {
        let mut t = SymbolTexts::new(&[b"a".to_vec(), b"b".to_vec(), Vec::new(), Vec::new(), b"a".to_vec()]);
        // repeated texts (the empty ones, a second "a") keep the first id
        assert_eq!((t.len(), t.get(4), t.get(3)), (5, &b"a"[..], &b""[..]));
        assert_eq!(t.push_concat(0, 1), 5); // ab
        assert_eq!(t.push_concat(0, 0), 6); // aa
        assert_eq!(t.push_concat(6, 0), 7); // aaa
        assert_eq!(t.push_concat(0, 6), 7); // a + aa spells aaa again: id 7
        assert_eq!(t.get(8), b"aaa");
        assert_eq!(t.push_concat(5, 1), 9);
        assert_eq!(t.get(9), b"abb");
    }

    #[test]
    fn texts_with_one_hash_stay_apart() {
        // force collisions: every text under one hash goes to the second table
        let mut t = SymbolTexts::new(&[b"x".to_vec(), b"y".to_vec()]);
        let (x, y) = (t.get(0).to_vec(), t.get(1).to_vec());
        let h = FxBuildHasher.hash_one(&x[..]);
        t.first.insert(FxBuildHasher.hash_one(&y[..]), 0); // y's hash now names x
        t.first.insert(h, 0);
        assert_eq!(t.canonical(1), 1); // different text: its own id, through `collided`
        assert_eq!(t.push_concat(1, 1), 2);
        t.first.insert(FxBuildHasher.hash_one(b"yy".as_slice()), 0);
        assert_eq!(t.canonical(2), 2);
        t.bytes.extend_from_slice(b"yy");
        t.ends.push(t.bytes.len());
        assert_eq!(t.canonical(3), 2, "a second yy finds the first in `collided`");
    }
}
