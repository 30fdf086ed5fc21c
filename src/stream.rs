//! Streaming: one long text handed over block by block. `settled_prefix`
//! says where a block can be cut (the words and special tokens that more
//! text can no longer change); streaming word counting
//! (`WordCounts::add_text_prefix`) and the streaming encoder
//! (`Tokenizer::stream`, `EncodeStream`) both cut there.

use crate::model::Dropout;
use crate::error::{Error, Result};
use crate::pretok::pretokenize::Pretokenizer;
use crate::special::SpecialTokens;
use crate::tokenizer::{offset_in, Model, Sink, SpecialSet, Tokenizer};

/// A part of a stream block that more text can no longer change.
pub(crate) enum Settled<'t, 'w> {
    /// Plain text that a special token ends: its words are those of the
    /// text alone.
    Plain(&'t str),
    /// A special token's text: its byte range in the block.
    Special(usize, usize),
    /// Words of the text after the last special token, as the pre-tokenizer
    /// split that text (the first field); never all of them.
    Words(&'t str, &'w [&'t str]),
}

/// Walks the start of a block of a document that goes on after `text`,
/// handing `f` the parts that more text cannot change, in order: plain
/// text cut by a special token accepted by `keep`, that token, then the
/// words after it. The last two words, and text where a special token may
/// be cut off, can change with more text, so they are left out. Returns the
/// byte length of the settled prefix (the rest starts at a word, or holds
/// no word); the caller puts the rest in front of the next block and
/// handles the last block whole. Exact for patterns whose matches depend on
/// at most the text up to the next word's end, as the presets' do. Used by
/// streaming word counting and streaming encoding alike.
pub(crate) fn settled_prefix<'t>(
    pre: &Pretokenizer,
    specials: &SpecialTokens,
    keep: impl Fn(&str) -> bool,
    text: &'t str,
    mut f: impl FnMut(Settled<'t, '_>) -> Result<()>,
) -> Result<usize> {
    let longest = specials.iter().map(|(t, _)| t.len()).max().unwrap_or(1);
    let mut limit = text.len().saturating_sub(longest.saturating_sub(1));
    while !text.is_char_boundary(limit) {
        limit -= 1;
    }
    let mut last = 0;
    let mut cut = text.len();
    for (start, end, _) in specials.find_all(text, keep) {
        if end > limit {
            // not sure yet (a longer special token may start here): stop before it
            cut = start;
            break;
        }
        f(Settled::Plain(&text[last..start]))?;
        f(Settled::Special(start, end))?;
        last = end;
    }
    // a special token may start anywhere from `limit` on, cutting the text
    // there: words are only decided up to that point
    let tail = &text[last..cut.min(limit).max(last)];
    let mut words: Vec<&str> = Vec::new();
    pre.for_each_word(tail, |w| words.push(w))?;
    let keep = words.len().saturating_sub(2);
    let mut consumed = last;
    let mut settled = 0;
    for w in &words[..keep] {
        let end = last + (w.as_ptr() as usize - tail.as_ptr() as usize) + w.len();
        if end > limit {
            break;
        }
        settled += 1;
        consumed = end;
    }
    if settled > 0 {
        f(Settled::Words(tail, &words[..settled]))?;
    }
    // the next block starts where the first unsettled word starts
    if let Some(next) = words.iter().map(|w| last + (w.as_ptr() as usize - tail.as_ptr() as usize)).find(|&s| s >= consumed) {
        consumed = next;
    }
    Ok(consumed)
}

impl Tokenizer {
    /// A stream that encodes one long text given block by block, with
    /// memory bounded by the block size (and the longest word): see
    /// [`EncodeStream`].
    pub fn stream(&self, allowed: SpecialSet, disallowed: SpecialSet, dropout: Option<Dropout>) -> EncodeStream {
        let context = match &disallowed {
            SpecialSet::All if matches!(allowed, SpecialSet::All) => 0,
            SpecialSet::All => self.specials.longest(),
            SpecialSet::Some(set) => set.iter().map(String::len).max().unwrap_or(0),
        };
        EncodeStream {
            allowed,
            disallowed,
            dropout,
            pending: String::new(),
            chars_before: 0,
            checked: String::new(),
            context,
            failed: None,
            next_try: 0,
        }
    }

    /// Adds `block` to the stream's text; appends to `out` the ids of the
    /// text that more text can no longer change. Disallowed special-token
    /// text raises as soon as it is seen; any other error when the stream
    /// ends (`stream_finish`), as `encode` of the whole text would report it.
    pub fn stream_feed(&self, s: &mut EncodeStream, block: &str, out: &mut Vec<u32>) -> Result<()> {
        // disallowed special tokens, searched in the new block with the end
        // of the text before it (an occurrence may straddle the two)
        if s.context > 0 {
            s.checked.push_str(block);
            let settled = s.checked.len().saturating_sub(s.context);
            if let Some((_, token)) = self.first_disallowed(&s.checked, &s.allowed, &s.disallowed, settled) {
                return Err(Error::DisallowedSpecial(token));
            }
            let mut keep_from = s.checked.len().saturating_sub(s.context);
            while !s.checked.is_char_boundary(keep_from) {
                keep_from -= 1;
            }
            s.checked.drain(..keep_from);
        }
        if s.failed.is_some() {
            return Ok(());
        }
        s.pending.push_str(block);
        if self.add_prefix_space {
            // the prefix space changes how a segment's first words split, so a
            // segment cannot be cut: the text is encoded whole at the end
            return Ok(());
        }
        if s.pending.len() < s.next_try {
            return Ok(());
        }
        let EncodeStream { allowed, dropout, pending, chars_before, .. } = s;
        let mut sink = Sink::new(pending.len(), false);
        sink.char_base = *chars_before;
        let text: &str = pending;
        let settled = settled_prefix(&self.pre, &self.specials, |t| allowed.contains(t), text, |part| match part {
            Settled::Plain(segment) => {
                self.encode_plain(segment, None, offset_in(text, segment), text, &mut sink, dropout)
            }
            Settled::Special(start, end) => {
                let id = self.specials.id(&text[start..end]).expect("found special tokens have ids");
                sink.push(id, start, end);
                Ok(())
            }
            Settled::Words(tail, words) => {
                self.encode_plain(tail, Some(words), offset_in(text, tail), text, &mut sink, dropout)
            }
        });
        let used = match settled {
            Ok(used) => used,
            Err(e) => {
                s.failed = Some(e);
                s.pending = String::new();
                return Ok(());
            }
        };
        out.extend_from_slice(&sink.ids);
        if matches!(self.model, Model::Char { .. }) {
            s.chars_before += s.pending[..used].chars().count();
        }
        s.pending.drain(..used);
        // little was settled (one long word): wait until the text has doubled,
        // so that a word of n bytes costs O(n) in all, not O(n^2)
        s.next_try = if s.pending.len() * 2 > used + s.pending.len() { 2 * s.pending.len() } else { 0 };
        if s.pending.capacity() > 4 * s.pending.len().max(1 << 16) {
            s.pending.shrink_to(2 * s.pending.len());
        }
        Ok(())
    }

    /// Ends the stream: appends the ids of the rest of the text, or returns
    /// the error that `encode` of the whole text would have returned.
    pub fn stream_finish(&self, s: &mut EncodeStream, out: &mut Vec<u32>) -> Result<()> {
        if s.context > 0 {
            if let Some((_, token)) = self.first_disallowed(&s.checked, &s.allowed, &s.disallowed, usize::MAX) {
                return Err(Error::DisallowedSpecial(token));
            }
        }
        if let Some(e) = s.failed.take() {
            return Err(e);
        }
        let text = std::mem::take(&mut s.pending);
        let mut sink = Sink::new(text.len(), false);
        sink.char_base = s.chars_before;
        self.encode_allowed(&text, &s.allowed, &mut sink, &mut s.dropout)?;
        out.extend_from_slice(&sink.ids);
        Ok(())
    }
}

/// The state of [`Tokenizer::stream`]: one long text encoded block by
/// block, with the same ids (and errors) as `encode_full` of the whole text.
/// Held text: the unsettled end of the text (the last two words, or one
/// long word) and the longest special token's length of context.
#[derive(Debug)]
pub struct EncodeStream {
    allowed: SpecialSet,
    disallowed: SpecialSet,
    dropout: Option<Dropout>,
    /// Text not encoded yet; it starts where a word starts.
    pending: String,
    /// Characters of the text before `pending` (char model error positions).
    chars_before: usize,
    /// The end of the text searched for disallowed special tokens.
    checked: String,
    /// Bytes of context the search keeps: the longest disallowed string.
    context: usize,
    /// An encoding error, returned at the end unless disallowed special
    /// text comes first (whole-text `encode` checks for that first).
    failed: Option<Error>,
    /// Length `pending` must reach before settling is tried again.
    next_try: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::patterns::{CL100K, LLAMA3, QWEN2};
    use rustc_hash::FxHashSet;

    fn byte_tokenizer(pattern: Option<&str>) -> Tokenizer {
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        for t in ["ab", "abab", " a", "e|", "你"] {
            tokens.push(Some(t.as_bytes().to_vec()));
        }
        Tokenizer::byte(tokens, pattern, vec![("<|eot|>".into(), 300), ("<|e".into(), 301)]).unwrap()
    }

    fn streamed(tok: &Tokenizer, text: &str, block: usize, allowed: &SpecialSet, disallowed: &SpecialSet) -> Result<Vec<u32>> {
        let mut s = tok.stream(allowed.clone(), disallowed.clone(), None);
        let mut out = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(block) {
            tok.stream_feed(&mut s, &chunk.iter().collect::<String>(), &mut out)?;
        }
        tok.stream_finish(&mut s, &mut out)?;
        Ok(out)
    }

    #[test]
    fn streams_encode_like_the_whole_text() {
        let pieces = ["a", "b", "ab", " ", "  ", "\n", "1", "234", "é", "你", "<|", "<|eot|>", "|>", "<|e", "🙂"];
        let none = SpecialSet::Some(FxHashSet::default());
        let options = [(SpecialSet::All, SpecialSet::All), (none.clone(), none.clone()), (none.clone(), SpecialSet::All)];
        let mut rng = crate::testing::Rng(0x2545F4914F6CDD1Du64);
        let mut next = move || rng.next();
        for pattern in [None, Some(CL100K), Some(LLAMA3), Some(QWEN2), Some(r"\S+|\s+")] {
            let tok = byte_tokenizer(pattern);
            for _ in 0..500 {
                let n = (next() % 40) as usize;
                let text: String = (0..n).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
                let block = 1 + (next() % 8) as usize;
                for (allowed, disallowed) in &options {
                    let whole = tok.encode(&text, allowed, disallowed);
                    assert_eq!(whole, streamed(&tok, &text, block, allowed, disallowed), "{pattern:?} {block} {text:?}");
                }
            }
        }
    }
}
