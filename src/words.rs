//! Word counting: documents to (word, count) in order of first appearance.
//! This table is all that training needs from a corpus.

use crate::error::{Error, Result};
use crate::pretokenize::Pretokenizer;
use crate::special::SpecialTokens;
use indexmap::IndexMap;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

pub type WordMap = IndexMap<String, u64, FxBuildHasher>;

/// Distinct words with their counts; iteration order is first appearance.
#[derive(Debug, Clone, Default)]
pub struct WordCounts {
    map: WordMap,
}

impl WordCounts {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.map.iter().map(|(w, &c)| (w.as_str(), c))
    }

    /// Adds `count` occurrences of `word` (empty words are ignored).
    pub fn add_word(&mut self, word: &str, count: u64) -> Result<()> {
        if word.is_empty() || count == 0 {
            return Ok(());
        }
        let slot = match self.map.get_mut(word) {
            Some(slot) => slot,
            None => self.map.entry(word.to_owned()).or_insert(0),
        };
        *slot = slot
            .checked_add(count)
            .ok_or_else(|| Error::Training(format!("count of word {word:?} overflows 64 bits")))?;
        Ok(())
    }

    /// Counts the words of one document; special-token text cuts it first.
    pub fn add_text(&mut self, pre: &Pretokenizer, specials: &SpecialTokens, text: &str) -> Result<()> {
        for segment in specials.segments(text) {
            let map = &mut self.map;
            pre.for_each_word(segment, |w| {
                match map.get_mut(w) {
                    Some(c) => *c += 1,
                    None => {
                        map.insert(w.to_owned(), 1);
                    }
                }
            })?;
        }
        Ok(())
    }

    /// Counts many documents in parallel; the result (order included) is
    /// the same as adding them one after another.
    pub fn add_documents<S: AsRef<str> + Sync>(
        &mut self,
        pre: &Pretokenizer,
        specials: &SpecialTokens,
        docs: &[S],
    ) -> Result<()> {
        if docs.len() < 2 {
            for d in docs {
                self.add_text(pre, specials, d.as_ref())?;
            }
            return Ok(());
        }
        // blocks of roughly equal byte size, counted independently, merged in order
        let total: usize = docs.iter().map(|d| d.as_ref().len()).sum();
        let per_block = (total / (rayon::current_num_threads() * 4)).max(1 << 16);
        let mut blocks: Vec<&[S]> = Vec::new();
        let (mut start, mut size) = (0, 0);
        for (i, d) in docs.iter().enumerate() {
            size += d.as_ref().len();
            if size >= per_block {
                blocks.push(&docs[start..=i]);
                start = i + 1;
                size = 0;
            }
        }
        if start < docs.len() {
            blocks.push(&docs[start..]);
        }
        let partial: Vec<Result<WordCounts>> = blocks
            .par_iter()
            .map(|block| {
                let mut wc = WordCounts::new();
                for d in block.iter() {
                    wc.add_text(pre, specials, d.as_ref())?;
                }
                Ok(wc)
            })
            .collect();
        for wc in partial {
            self.merge(wc?)?;
        }
        Ok(())
    }

    /// Adds another table; words new to `self` are appended in `other`'s order,
    /// which keeps first-appearance order when `other` came later in the corpus.
    pub fn merge(&mut self, other: WordCounts) -> Result<()> {
        if self.map.is_empty() {
            self.map = other.map;
            return Ok(());
        }
        for (w, c) in other.map {
            match self.map.get_mut(&w) {
                Some(slot) => {
                    *slot = slot.checked_add(c).ok_or_else(|| {
                        Error::Training(format!("count of word {w:?} overflows 64 bits"))
                    })?
                }
                None => {
                    self.map.insert(w, c);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_counting_keeps_first_appearance_order() {
        let pre = Pretokenizer::new(None).unwrap();
        let docs: Vec<String> = (0..5000).map(|i| format!("w{} common w{}", i % 97, i)).collect();
        let mut serial = WordCounts::new();
        for d in &docs {
            serial.add_text(&pre, &SpecialTokens::default(), d).unwrap();
        }
        let mut parallel = WordCounts::new();
        parallel.add_documents(&pre, &SpecialTokens::default(), &docs).unwrap();
        let a: Vec<_> = serial.iter().collect();
        let b: Vec<_> = parallel.iter().collect();
        assert_eq!(a, b);
    }

    #[test]
    fn special_tokens_cut_words() {
        let pre = Pretokenizer::new(None).unwrap();
        let sp = SpecialTokens::new(vec![("<|x|>".into(), 9)]);
        let mut wc = WordCounts::new();
        wc.add_text(&pre, &sp, "ab<|x|>cd ab").unwrap();
        assert_eq!(wc.iter().collect::<Vec<_>>(), [("ab", 2), ("cd", 1)]);
    }
}
