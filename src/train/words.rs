//! Word counting: documents to (word, count) in order of first appearance.
//! This table is all that training needs from a corpus.

use crate::error::{Error, Result};
use crate::pretok::pretokenize::Pretokenizer;
use crate::special::SpecialTokens;
use crate::stream::{settled_prefix, Settled};
use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

pub(crate) type WordMap = IndexMap<String, u64, FxBuildHasher>;
/// Counts of one block of documents, the words borrowed from them.
type BlockCounts<'t> = IndexMap<&'t str, u64, FxBuildHasher>;

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
    pub(crate) fn add_text(&mut self, pre: &Pretokenizer, specials: &SpecialTokens, text: &str) -> Result<()> {
        for segment in specials.segments(text) {
            self.add_segment(pre, segment)?;
        }
        Ok(())
    }

    /// Counts the start of a document that goes on after `text` (one block
    /// of a stream): everything `settled_prefix` (crate::stream) says is settled. Returns
    /// the byte length of the counted prefix; the caller puts the rest in
    /// front of the next block (the last block goes to `add_text`).
    pub fn add_text_prefix(&mut self, pre: &Pretokenizer, specials: &SpecialTokens, text: &str) -> Result<usize> {
        settled_prefix(pre, specials, |_| true, text, |part| match part {
            Settled::Plain(segment) => self.add_segment(pre, segment),
            Settled::Special(..) => Ok(()),
            Settled::Words(_, words) => words.iter().try_for_each(|w| self.add_word(w, 1)),
        })
    }

    /// Sizes that training memory depends on: (distinct words, their total
    /// length in bytes, their total length in characters).
    pub fn sizes(&self) -> (usize, usize, usize) {
        let mut bytes = 0;
        let mut chars = 0;
        for w in self.map.keys() {
            bytes += w.len();
            chars += if w.is_ascii() { w.len() } else { w.chars().count() };
        }
        (self.map.len(), bytes, chars)
    }

    fn add_segment(&mut self, pre: &Pretokenizer, segment: &str) -> Result<()> {
        let map = &mut self.map;
        pre.for_each_word(segment, |w| match map.get_mut(w) {
            Some(c) => *c += 1,
            None => {
                map.insert(w.to_owned(), 1);
            }
        })
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
        let per_block = block_size(total);
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
        self.add_counted(&blocks, |block| count_block(pre, specials, block.iter().map(AsRef::as_ref)))
    }

    /// Counts `blocks` (consecutive parts of the corpus) with `count` and
    /// adds their tables in block order. With several threads the blocks
    /// are counted by worker threads, in order, while this thread adds each
    /// table as soon as it and all before it are done: adding is serial
    /// (about a third of counting's work on multilingual text), and this
    /// way it runs beside the counting instead of after it.
    fn add_counted<'a, T: Sync>(
        &mut self,
        blocks: &'a [T],
        count: impl Fn(&'a T) -> Result<BlockCounts<'a>> + Sync,
    ) -> Result<()> {
        let workers = crate::parallel::threads().min(blocks.len());
        if workers < 2 {
            for block in blocks {
                self.add_block(count(block)?)?;
            }
            return Ok(());
        }
        let next = AtomicUsize::new(0);
        let (sender, counted) = mpsc::channel();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let (sender, next, count) = (sender.clone(), &next, &count);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    // a failed send: the adder stopped at an error, so stop too
                    if i >= blocks.len() || sender.send((i, count(&blocks[i]))).is_err() {
                        break;
                    }
                });
            }
            drop(sender);
            // tables that arrived before an earlier block's, by block index
            let mut waiting = std::collections::BTreeMap::new();
            let mut added = 0;
            for (i, table) in counted {
                waiting.insert(i, table);
                while let Some(table) = waiting.remove(&added) {
                    self.add_block(table?)?;
                    added += 1;
                }
            }
            Ok(())
        })
    }

    /// Adds the table of the next block.
    fn add_block(&mut self, table: BlockCounts) -> Result<()> {
        for (w, c) in table {
            self.add_word(w, c)?;
        }
        Ok(())
    }

    /// Counts each line of `data` (a UTF-8 file's bytes) as a document,
    /// the lines being those of Python's `open(path,
    /// encoding="utf-8").read().splitlines(keepends=True)` (see
    /// `universal_newlines`, `python_lines`): the file route of
    /// training, with no Python string per line. Blocks of whole lines are
    /// checked, cut and counted in parallel. Returns the byte offset of
    /// the first invalid UTF-8 sequence (nothing is counted then).
    pub fn add_lines(&mut self, pre: &Pretokenizer, specials: &SpecialTokens, data: &[u8]) -> Result<Option<usize>> {
        // blocks end after a \n byte (never inside a character, nor
        // between the \r and \n of one line end)
        let per_block = block_size(data.len());
        let mut blocks = Vec::new();
        let mut start = 0;
        while start < data.len() {
            let end = match data.get(start + per_block..).and_then(|rest| rest.iter().position(|&b| b == b'\n')) {
                Some(i) => start + per_block + i + 1,
                None => data.len(),
            };
            blocks.push((start, &data[start..end]));
            start = end;
        }
        let texts = crate::parallel::map(&blocks, |&(start, bytes)| match std::str::from_utf8(bytes) {
            Ok(text) => Ok(universal_newlines(text)),
            Err(e) => Err(start + e.valid_up_to()),
        });
        let mut checked = Vec::with_capacity(texts.len());
        for t in texts {
            match t {
                Ok(text) => checked.push(text),
                Err(offset) => return Ok(Some(offset)),
            }
        }
        self.add_counted(&checked, |text| count_block(pre, specials, python_lines(text).into_iter()))?;
        Ok(None)
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

/// Bytes per block when `total` bytes are counted in parallel: four blocks
/// per thread (uneven blocks even out), at least 64 KB.
fn block_size(total: usize) -> usize {
    (total / (crate::parallel::threads() * 4)).max(1 << 16)
}

/// Counts a block of documents; the words borrow from them, so a word is
/// copied once, when it is new to the whole table, not once per block.
fn count_block<'t>(
    pre: &Pretokenizer,
    specials: &SpecialTokens,
    docs: impl Iterator<Item = &'t str>,
) -> Result<BlockCounts<'t>> {
    let mut map = BlockCounts::default();
    for d in docs {
        for segment in specials.segments(d) {
            pre.for_each_word(segment, |w| *map.entry(w).or_insert(0) += 1)?;
        }
    }
    Ok(map)
}

/// `text` as Python's text mode reads it (`newline=None`): `\r\n` and a
/// lone `\r` become `\n`.
pub(crate) fn universal_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\r') {
        out.push_str(&rest[..i]);
        out.push('\n');
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('\n') {
            rest = r;
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The lines of `text` with their ends, as Python's `str.splitlines(keepends=True)`
/// cuts them: after `\n`, `\r` (`\r\n` is one end), `\x0b`, `\x0c`,
/// `\x1c`-`\x1e`, U+0085, U+2028 and U+2029.
pub(crate) fn python_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let end = match bytes[i] {
            b'\n' | 0x0b | 0x0c | 0x1c..=0x1e => i + 1,
            b'\r' => i + 1 + usize::from(bytes.get(i + 1) == Some(&b'\n')),
            0xc2 if bytes.get(i + 1) == Some(&0x85) => i + 2,
            0xe2 if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) => i + 3,
            _ => {
                i += 1;
                continue;
            }
        };
        lines.push(&text[start..end]);
        start = end;
        i = end;
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
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

    /// Counts `text` in blocks of `block` characters, as a stream reader does.
    fn streamed(pre: &Pretokenizer, sp: &SpecialTokens, text: &str, block: usize) -> Vec<(String, u64)> {
        let mut counts = WordCounts::new();
        let mut carry = String::new();
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(block) {
            carry.extend(chunk);
            let used = counts.add_text_prefix(pre, sp, &carry).unwrap();
            carry.drain(..used);
        }
        counts.add_text(pre, sp, &carry).unwrap();
        counts.iter().map(|(w, c)| (w.to_owned(), c)).collect()
    }

    fn whole(pre: &Pretokenizer, sp: &SpecialTokens, text: &str) -> Vec<(String, u64)> {
        let mut counts = WordCounts::new();
        counts.add_text(pre, sp, text).unwrap();
        counts.iter().map(|(w, c)| (w.to_owned(), c)).collect()
    }

    #[test]
    fn streaming_blocks_count_like_the_whole_document() {
        use crate::pretok::patterns::{CL100K, GPT2, LLAMA3, QWEN2};
        let text = "It's the cat's <|eot|>toy;  we'll see.\n\n  def f(x):\r\n\treturn x**2  # 12345 ok\n   end   <|eot|>".repeat(20);
        let sp = SpecialTokens::new(vec![("<|eot|>".into(), 9)]).unwrap();
        for pattern in [None, Some(CL100K), Some(GPT2), Some(LLAMA3), Some(QWEN2), Some(r"\S+|\s+")] {
            let pre = Pretokenizer::new(pattern).unwrap();
            for block in [1, 2, 3, 7, 16, 100] {
                assert_eq!(whole(&pre, &sp, &text), streamed(&pre, &sp, &text, block), "pattern {pattern:?}, block {block}");
            }
        }
    }

    #[test]
    fn streaming_random_texts_in_random_blocks() {
        use crate::pretok::patterns::{CL100K, GPT2, LLAMA3, QWEN2};
        let pieces = ["a", "Z", "'s", "'", " ", "  ", "\n", "\r\n", "\t", "1", "234", ".", "!?", "é", "你", "<|", "<|eot|>", "|>", "<|e", "\u{3000}", "🙂"];
        let sp = SpecialTokens::new(vec![("<|eot|>".into(), 9), ("<|e".into(), 10)]).unwrap();
        let mut rng = crate::testing::Rng(0x9E3779B97F4A7C15u64);
        let mut next = move || rng.next();
        for _ in 0..3000 {
            let n = (next() % 60) as usize;
            let text: String = (0..n).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
            for pattern in [None, Some(CL100K), Some(GPT2), Some(LLAMA3), Some(QWEN2)] {
                let pre = Pretokenizer::new(pattern).unwrap();
                let block = 1 + (next() % 9) as usize;
                assert_eq!(
                    whole(&pre, &sp, &text),
                    streamed(&pre, &sp, &text, block),
                    "pattern {pattern:?}, block {block}, text {text:?}"
                );
            }
        }
    }

    #[test]
    fn lines_as_python_cuts_them() {
        let text = "a\r\nb\rc\nd\x0be\x0cf\x1cg\x1dh\x1ei\u{85}j\u{2028}k\u{2029}l\u{feff}\n\n\x1f";
        assert_eq!(universal_newlines("a\r\nb\r\rc\r"), "a\nb\n\nc\n");
        assert_eq!(
            python_lines(text),
            ["a\r\n", "b\r", "c\n", "d\x0b", "e\x0c", "f\x1c", "g\x1d", "h\x1e", "i\u{85}", "j\u{2028}", "k\u{2029}", "l\u{feff}\n", "\n", "\x1f"]
        );
        assert!(python_lines("").is_empty());
    }

    #[test]
    fn lines_of_a_large_file_in_blocks() {
        // several blocks of 64 KB, cut after \n bytes: the same table as the lines of the whole text
        use crate::pretok::patterns::CL100K;
        let pre = Pretokenizer::new(Some(CL100K)).unwrap();
        let sp = SpecialTokens::new(vec![("<|eot|>".into(), 9)]).unwrap();
        let text = "It's a line\r\n  with  spaces\rand\x0ccuts\u{2028}é 你 🙂 <|eot|>\n\n 123 \u{85}x\n".repeat(8000);
        let mut blocks = WordCounts::new();
        assert_eq!(blocks.add_lines(&pre, &sp, text.as_bytes()).unwrap(), None);
        let mut whole = WordCounts::new();
        whole.add_documents(&pre, &sp, &python_lines(&universal_newlines(&text))).unwrap();
        assert!(blocks.len() > 10);
        assert_eq!(blocks.iter().collect::<Vec<_>>(), whole.iter().collect::<Vec<_>>());
        let mut bad = text.into_bytes();
        bad[300_001] = 0xff;
        assert_eq!(WordCounts::new().add_lines(&pre, &sp, &bad).unwrap(), Some(300_001));
    }

    #[test]
    fn special_tokens_cut_words() {
        let pre = Pretokenizer::new(None).unwrap();
        let sp = SpecialTokens::new(vec![("<|x|>".into(), 9)]).unwrap();
        let mut wc = WordCounts::new();
        wc.add_text(&pre, &sp, "ab<|x|>cd ab").unwrap();
        assert_eq!(wc.iter().collect::<Vec<_>>(), [("ab", 2), ("cd", 1)]);
    }
}
