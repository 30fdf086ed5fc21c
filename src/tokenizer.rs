//! A ready tokenizer: pre-tokenizer, special tokens and one of the two
//! models, with encode, tokenize and decode.

use crate::model::{derive_merges, ByteRanks, CharMerges, Dropout, Sym};
use crate::error::{Error, Result};
use crate::pretok::pretokenize::Pretokenizer;
use crate::special::SpecialTokens;
pub use crate::special::SpecialSet;
use crate::vocab::{CharSpec, SymbolIds};
use rustc_hash::{FxHashMap, FxHashSet};

/// Settings of the char model.
#[derive(Debug, Clone, Default)]
pub struct CharOptions {
    pub end_of_word: Option<String>,
    pub fused: bool,
    /// Id of `<0x00>` when byte fallback is on (the 256 byte tokens follow).
    pub byte_fallback_start: Option<u32>,
    pub unk_id: Option<u32>,
    /// subword-nmt's rule for applying merges (see `CharMerges::with_lowest_rank`).
    pub lowest_rank: bool,
}

#[derive(Debug, Clone)]
pub(crate) enum Model {
    Byte(ByteRanks),
    Char {
        options: CharOptions,
        /// Ids of the initial symbols (characters, marker forms).
        symbol_ids: SymbolIds,
        spec: CharSpec,
        merges: CharMerges,
    },
}

/// One token of the char model before it is turned into ids.
enum CharPiece {
    Known(u32),
    /// A base symbol that is not in the vocabulary; `char_index` is the
    /// position of its character in the text.
    Unknown { text: String, char_index: usize },
}

#[derive(Debug, Clone)]
pub struct Tokenizer {
    pub(crate) model: Model,
    pub(crate) pre: Pretokenizer,
    pub(crate) specials: SpecialTokens,
    /// Token text by id, specials included; None for unused ids.
    tokens: Vec<Option<Vec<u8>>>,
    /// Hugging Face's `ByteLevel(add_prefix_space=true)`: every non-empty
    /// stretch of text between special tokens that does not start with a
    /// space is encoded as if it did (byte model only).
    pub(crate) add_prefix_space: bool,
    /// The merges the model was given, as (left id, right id, merged id)
    /// in rank order; None for a byte model given only its ranks (its
    /// merges are derived when asked for: `merge_triples`).
    merges: Option<Vec<(u32, u32, u32)>>,
}

impl Tokenizer {
    /// A byte-model tokenizer from its vocabulary: `tokens[id]` is the
    /// token's bytes (None for a gap in the ids).
    pub fn byte(tokens: Vec<Option<Vec<u8>>>, pattern: Option<&str>, specials: Vec<(String, u32)>) -> Result<Self> {
        let ranks = ByteRanks::of_slices(tokens.iter().enumerate().filter_map(|(id, t)| Some((t.as_deref()?, id as u32))));
        Self::assemble(Model::Byte(ranks), tokens, pattern, specials, None)
    }

    /// A byte-model tokenizer from its merges alone: (left id, right id)
    /// in rank order, the merged tokens at `merge_ids` (default: 256, 257,
    /// ...). Every token's bytes are derived here in one pass (bytes 0-255,
    /// then each merge's two tokens joined), so no caller builds the table.
    pub fn byte_from_merges(
        merges: &[(u32, u32)],
        merge_ids: Option<&[u32]>,
        pattern: Option<&str>,
        specials: Vec<(String, u32)>,
    ) -> Result<Self> {
        if merge_ids.is_some_and(|ids| ids.len() != merges.len()) {
            return Err(Error::Format("merge_ids must give one id per merge".into()));
        }
        // gaps between merge ids are bounded before the table is allocated
        let largest = merge_ids.and_then(|ids| ids.iter().max()).map_or(0, |&id| id as usize + 1);
        check_unused(largest.saturating_sub(256 + merges.len()))?;
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        tokens.reserve(merges.len().max(largest.saturating_sub(256)));
        let mut triples = Vec::with_capacity(merges.len());
        for (k, &(l, r)) in merges.iter().enumerate() {
            let id = merge_ids.map_or(tokens.len(), |ids| ids[k] as usize);
            let joined = match (tokens.get(l as usize), tokens.get(r as usize)) {
                (Some(Some(a)), Some(Some(b))) => [a.as_slice(), b.as_slice()].concat(),
                _ => return Err(Error::Format(format!("merge {} refers to an unknown id ({l}, {r})", k + 1))),
            };
            if id < tokens.len() || id >= u32::MAX as usize {
                return Err(Error::Format(format!("merge {} has id {id}, which is already taken", k + 1)));
            }
            tokens.resize(id, None);
            tokens.push(Some(joined));
            triples.push((l, r, id as u32));
        }
        let ranks = ByteRanks::of_slices(tokens.iter().enumerate().filter_map(|(id, t)| Some((t.as_deref()?, id as u32))));
        Self::assemble(Model::Byte(ranks), tokens, pattern, specials, Some(triples))
    }

    /// Gives a byte model the merges it was built from: (left id, right
    /// id) in rank order, the merged tokens at `merge_ids` (default: 256,
    /// 257, ...). Each merged token must be its two tokens joined. Only
    /// `merge_triples` reads them: encoding goes by the ranks.
    pub fn with_byte_merges(mut self, merges: &[(u32, u32)], merge_ids: Option<&[u32]>) -> Result<Self> {
        if !matches!(self.model, Model::Byte(_)) {
            return Err(Error::Format("merges of a char model are given to Tokenizer::char".into()));
        }
        if merge_ids.is_some_and(|ids| ids.len() != merges.len()) {
            return Err(Error::Format("merge_ids must give one id per merge".into()));
        }
        let specials: FxHashSet<u32> = self.specials.iter().map(|&(_, id)| id).collect();
        let token = |id: u32| self.tokens.get(id as usize).and_then(Option::as_deref).filter(|_| !specials.contains(&id));
        let mut triples = Vec::with_capacity(merges.len());
        for (k, &(l, r)) in merges.iter().enumerate() {
            let id = merge_ids.map_or(256 + k as u64, |ids| ids[k] as u64);
            let (Some(a), Some(b)) = (token(l), token(r)) else {
                return Err(Error::Format(format!("merge {} refers to an unknown id ({l}, {r})", k + 1)));
            };
            let joined = u32::try_from(id).ok().and_then(token).is_some_and(|t| t.len() == a.len() + b.len() && t.starts_with(a) && t.ends_with(b));
            if !joined {
                return Err(Error::Format(format!("merge {} ({l}, {r}) -> {id}: token {id} is not the two tokens joined", k + 1)));
            }
            triples.push((l, r, id as u32));
        }
        self.merges = Some(triples);
        Ok(self)
    }

    /// Every merge as (left id, right id, merged id) in rank order: the
    /// merges the model was given (char model; byte model built from
    /// merges), or, for a byte model given as ranks, each token of two or
    /// more bytes split in two by BPE with the lower ranks only
    /// (`model::derive_merges`).
    pub fn merge_triples(&self) -> Vec<(u32, u32, u32)> {
        if let Some(merges) = &self.merges {
            return merges.clone();
        }
        let specials: FxHashSet<u32> = self.specials.iter().map(|&(_, id)| id).collect();
        let tokens: Vec<Option<&[u8]>> = self
            .tokens
            .iter()
            .enumerate()
            .map(|(id, t)| t.as_deref().filter(|_| !specials.contains(&(id as u32))))
            .collect();
        derive_merges(&tokens)
    }

    /// The first of a merge list's `triples` (left id, right id, merged id)
    /// that is not the merge `merge_triples` gives its token: its index and
    /// that merge's pair (None when no merge makes the token); None when
    /// every merge is the one bytepair's rule makes (the loaders' last check
    /// of a byte-level merge list).
    pub fn first_underived(&self, triples: &[(u32, u32, u32)]) -> Option<(usize, Option<(u32, u32)>)> {
        if let (None, Model::Byte(ranks)) = (&self.merges, &self.model) {
            // each merge's token split on ids through the pair table (a tenth of the time of deriving every
            // token's merge by bytes); by bytes when the ids cannot tell for one of them
            let mut scratch = Vec::new();
            let by_ids: Option<Vec<Option<(u32, u32)>>> = triples
                .iter()
                .map(|&(_, _, t)| ranks.derived_split(self.token_bytes(t)?, t, &mut scratch))
                .collect();
            if let Some(splits) = by_ids {
                return triples.iter().zip(splits).enumerate().find_map(|(k, (&(l, r, _), pair))| {
                    (pair != Some((l, r))).then_some((k, pair))
                });
            }
        }
        let derived: FxHashMap<u32, (u32, u32)> = self.merge_triples().into_iter().map(|(l, r, t)| (t, (l, r))).collect();
        triples.iter().enumerate().find_map(|(k, &(l, r, t))| {
            let pair = derived.get(&t).copied();
            (pair != Some((l, r))).then_some((k, pair))
        })
    }

    /// A char-model tokenizer: `base` symbols take ids 0.., byte-fallback
    /// tokens follow when set, then `merges` (left id, right id) in order.
    /// `merge_ids` gives each merge's id when they are not consecutive
    /// (after continued training).
    pub fn char(
        base: Vec<String>,
        merges: &[(u32, u32)],
        merge_ids: Option<&[u32]>,
        options: CharOptions,
        pattern: Option<&str>,
        specials: Vec<(String, u32)>,
    ) -> Result<Self> {
        let mut tokens: Vec<Option<Vec<u8>>> = base.iter().map(|s| Some(s.clone().into_bytes())).collect();
        if let Some(start) = options.byte_fallback_start {
            if start as usize != tokens.len() {
                return Err(Error::Format("byte-fallback tokens must follow the base symbols".into()));
            }
            tokens.extend((0..=255u8).map(|b| Some(format!("<0x{b:02X}>").into_bytes())));
        }
        let spec = CharSpec {
            end_of_word: options.end_of_word.clone(),
            fused: options.fused,
            byte_fallback: options.byte_fallback_start.is_some(),
        };
        let mut symbol_ids = SymbolIds::new(&base, &spec);
        // a merged text that already is a token takes that token's id (the
        // byte-fallback tokens excepted: they stand for raw bytes)
        let mut text_ids: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        for (id, s) in base.iter().enumerate() {
            text_ids.entry(s.clone().into_bytes()).or_insert(id as u32);
        }
        let mut rules = Vec::with_capacity(merges.len());
        let mut triples = Vec::with_capacity(merges.len());
        let mut unused = 0usize;
        if merge_ids.is_some_and(|ids| ids.len() != merges.len()) {
            return Err(Error::Format("merge_ids must give one id per merge".into()));
        }
        for (k, &(l, r)) in merges.iter().enumerate() {
            let id = merge_ids.map_or(tokens.len() as u32, |ids| ids[k]);
            let (Some(Some(a)), Some(Some(b))) = (tokens.get(l as usize), tokens.get(r as usize)) else {
                return Err(Error::Format(format!("merge {} refers to an unknown id ({l}, {r})", k + 1)));
            };
            let mut t = a.clone();
            t.extend_from_slice(b);
            if (id as usize) < tokens.len() || id == u32::MAX {
                return Err(Error::Format(format!("merge {} has id {id}, which is already taken", k + 1)));
            }
            unused += id as usize - tokens.len();
            check_unused(unused)?;
            tokens.resize(id as usize, None);
            let canonical = *text_ids.entry(t.clone()).or_insert(id);
            tokens.push(Some(t));
            rules.push((l, r, canonical));
            triples.push((l, r, id));
        }
        for (text, &id) in &text_ids {
            symbol_ids.alias(text, id, &spec);
        }
        let lowest_rank = options.lowest_rank;
        let model = Model::Char { options, symbol_ids, spec, merges: CharMerges::new(&rules).with_lowest_rank(lowest_rank) };
        Self::assemble(model, tokens, pattern, specials, Some(triples))
    }

    fn assemble(
        model: Model,
        mut tokens: Vec<Option<Vec<u8>>>,
        pattern: Option<&str>,
        specials: Vec<(String, u32)>,
        merges: Option<Vec<(u32, u32, u32)>>,
    ) -> Result<Self> {
        let largest = specials.iter().map(|&(_, id)| id as usize + 1).max().unwrap_or(0).max(tokens.len());
        let used = tokens.iter().filter(|t| t.is_some()).count() + specials.len();
        check_unused(largest.saturating_sub(used))?;
        let mut special_ids = std::collections::HashSet::new();
        for (text, id) in &specials {
            let id = *id as usize;
            if id >= tokens.len() {
                tokens.resize(id + 1, None);
            }
            if !special_ids.insert(id) {
                // two special texts of one id (tiktoken's o200k_harmony): both encode to it, the first decodes
                continue;
            }
            if tokens[id].is_some() {
                return Err(Error::Format(format!("special token {text:?} reuses id {id}, which is already a token")));
            }
            tokens[id] = Some(text.clone().into_bytes());
        }
        Ok(Tokenizer {
            model,
            pre: Pretokenizer::new(pattern)?,
            specials: SpecialTokens::new(specials)?,
            tokens,
            add_prefix_space: false,
            merges,
        })
    }

    /// Turns Hugging Face's `add_prefix_space` on or off (byte model only).
    pub fn set_add_prefix_space(&mut self, on: bool) -> Result<()> {
        if on && !matches!(self.model, Model::Byte(_)) {
            return Err(Error::Format("add_prefix_space is only supported for byte-level models".into()));
        }
        self.add_prefix_space = on;
        Ok(())
    }

    /// Whether a space is put before each stretch of text (see `set_add_prefix_space`).
    pub fn add_prefix_space(&self) -> bool {
        self.add_prefix_space
    }

    /// Number of ids: the largest id plus one (tiktoken's `n_vocab`).
    pub fn n_vocab(&self) -> usize {
        self.tokens.len()
    }

    /// Whether this is the char model (its tokens are text), not the byte model.
    pub fn is_char(&self) -> bool {
        matches!(self.model, Model::Char { .. })
    }

    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.tokens.get(id as usize).and_then(|t| t.as_deref())
    }

    pub fn specials(&self) -> &SpecialTokens {
        &self.specials
    }

    /// Ids of `text` with special-token text treated as plain text.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>> {
        let mut sink = Sink::new(text.len(), false);
        self.encode_plain(text, None, 0, text, &mut sink, &mut None)?;
        Ok(sink.ids)
    }

    /// `encode_ordinary` appending to `out` (a caller's reused buffer: no
    /// allocation per call once it has grown).
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        let mut sink = Sink { ids: std::mem::take(out), spans: Vec::new(), want_spans: false, char_base: 0 };
        let done = self.encode_plain(text, None, 0, text, &mut sink, &mut None);
        *out = sink.ids;
        done
    }

    /// `encode` appending to `out` (see `encode_ordinary_into`).
    pub fn encode_into(&self, text: &str, allowed: &SpecialSet, disallowed: &SpecialSet, out: &mut Vec<u32>) -> Result<()> {
        if let Some((_, token)) = self.first_disallowed(text, allowed, disallowed, usize::MAX) {
            return Err(Error::DisallowedSpecial(token));
        }
        let mut sink = Sink { ids: std::mem::take(out), spans: Vec::new(), want_spans: false, char_base: 0 };
        let done = self.encode_allowed(text, allowed, &mut sink, &mut None);
        *out = sink.ids;
        done
    }

    /// tiktoken's `encode`: disallowed special-token text is an error,
    /// allowed special-token text becomes its id.
    pub fn encode(&self, text: &str, allowed: &SpecialSet, disallowed: &SpecialSet) -> Result<Vec<u32>> {
        Ok(self.encode_full(text, allowed, disallowed, None, false)?.0)
    }

    /// `encode` with optional BPE-dropout and the byte span of each token
    /// in `text` (when `spans` is true).
    pub fn encode_full(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        mut dropout: Option<Dropout>,
        spans: bool,
    ) -> Result<(Vec<u32>, Vec<(usize, usize)>)> {
        if let Some((_, token)) = self.first_disallowed(text, allowed, disallowed, usize::MAX) {
            return Err(Error::DisallowedSpecial(token));
        }
        let mut sink = Sink::new(text.len(), spans);
        self.encode_allowed(text, allowed, &mut sink, &mut dropout)?;
        Ok((sink.ids, sink.spans))
    }

    /// The first disallowed special-token text in `text`, as (start, token),
    /// among the occurrences that start at or before `settled` (occurrences
    /// of longer strings may still be cut off after it; `usize::MAX`: all).
    /// tiktoken's rules: "all" means every special token not allowed (the
    /// occurrence that ends first); an explicit set is checked as given, even
    /// its strings that are not special tokens (the one that starts first).
    pub(crate) fn first_disallowed(&self, text: &str, allowed: &SpecialSet, disallowed: &SpecialSet, settled: usize) -> Option<(usize, String)> {
        match disallowed {
            SpecialSet::All => {
                self.specials.find_first(text, |t| !allowed.contains(t)).map(|(i, t)| (i, t.to_owned()))
            }
            SpecialSet::Some(set) => set
                .iter()
                .filter(|t| !t.is_empty())
                .filter_map(|t| text.find(t.as_str()).map(|i| (i, std::cmp::Reverse(t.len()), t)))
                .filter(|&(i, _, _)| i <= settled)
                .min()
                .map(|(i, _, t)| (i, t.clone())),
        }
    }

    /// Encodes `text` whose disallowed special tokens were checked: the
    /// allowed ones become their ids, the rest is plain text.
    pub(crate) fn encode_allowed(&self, text: &str, allowed: &SpecialSet, sink: &mut Sink, dropout: &mut Option<Dropout>) -> Result<()> {
        let mut last = 0;
        for (start, end, token) in self.specials.find_all(text, |t| allowed.contains(t)) {
            self.encode_plain(&text[last..start], None, last, text, sink, dropout)?;
            sink.push(self.specials.id(token).expect("found special tokens have ids"), start, end);
            last = end;
        }
        self.encode_plain(&text[last..], None, last, text, sink, dropout)
    }

    /// Encodes text without special tokens; `text` starts at byte `base` of
    /// `full`, the caller's whole text (spans and error positions count
    /// from there).
    /// `words`, when given, are the words of `text` already split.
    pub(crate) fn encode_plain<'t>(
        &self,
        text: &'t str,
        words: Option<&[&'t str]>,
        base: usize,
        full: &str,
        sink: &mut Sink,
        dropout: &mut Option<Dropout>,
    ) -> Result<()> {
        match &self.model {
            Model::Byte(ranks) => {
                // HF's prefix space: encode " " + text; the added space covers no
                // byte of the caller's text, so offsets shift back by one
                let prefixed;
                let (text, shift) = if self.add_prefix_space && !text.is_empty() && !text.starts_with(' ') {
                    prefixed = format!(" {text}");
                    (prefixed.as_str(), 1)
                } else {
                    (text, 0)
                };
                if let (None, false, None, Pretokenizer::Lexer(preset)) = (words, sink.want_spans, &dropout, &self.pre) {
                    // the common call (ids only, a preset's lexer): each piece's
                    // bytes straight from the lexer's loop to the model
                    let encode_here = |text: &str, ids: &mut Vec<u32>| -> Result<()> {
                        // one probe of the front table per word (`cache::batch::Words`)
                        crate::cache::with_cache_if(true, |cache| {
                            let slow = |cache: Option<&mut crate::cache::PieceCache>, w: &[u8], ids: &mut Vec<u32>| ranks.encode_piece_in(cache, w, ids);
                            let mut words = crate::cache::batch::Words::new(cache, ranks.owner(), ranks.front_seed(), text.as_bytes(), ids, slow);
                            preset.for_each_word_bytes(text, |w| words.push(w));
                            words.finish()
                        })
                    };
                    // a text long enough for every thread: cut where its words allow, the parts in parallel
                    return preset.encode_on_threads(text, &mut sink.ids, encode_here);
                }
                let mut err = None;
                let mut scratch = Vec::new();
                let cached = dropout.is_none();
                // this thread's piece cache, borrowed once for the whole text
                // (none with dropout: its pieces are not the cached ones)
                let mut body = |mut cache: Option<&mut crate::cache::PieceCache>| self.each_word(text, words, |w| {
                    if err.is_some() {
                        return;
                    }
                    // without spans, ids go straight to the output (no
                    // copy, no token-length lookups)
                    let out = if sink.want_spans {
                        scratch.clear();
                        &mut scratch
                    } else {
                        &mut sink.ids
                    };
                    let done = match dropout {
                        Some(rng) => ranks.encode_piece_dropout(w.as_bytes(), rng, out),
                        None => ranks.encode_piece_in(cache.as_deref_mut(), w.as_bytes(), out),
                    };
                    if let Err(e) = done {
                        err = Some(e);
                        return;
                    }
                    if !sink.want_spans {
                        return;
                    }
                    let mut at = offset_in(text, w);
                    for &id in &scratch {
                        let len = self.tokens[id as usize].as_ref().map_or(0, Vec::len);
                        let (start, mut end) = (at.max(shift) - shift, (at + len).max(shift) - shift);
                        if shift == 1 && end == 0 {
                            // the added space alone: Hugging Face aligns it with the first character
                            // of the text it was put before (NormalizedString::prepend)
                            end = text[1..].chars().next().map_or(0, char::len_utf8);
                        }
                        sink.push(id, base + start, base + end);
                        at += len;
                    }
                });
                crate::cache::with_cache_if(cached, &mut body)?;
                err.map_or(Ok(()), Err)
            }
            Model::Char { .. } => {
                // pieces go to the sink as they are made (a list of them all
                // first was 50 bytes a symbol: a long piece's pages faulted in anew)
                let chars_before = sink.char_base + full[..base].chars().count();
                self.char_pieces(text, words, dropout.as_mut(), |piece, at, len| {
                    let at = base + at;
                    match piece {
                        CharPiece::Known(id) => {
                            sink.push(id, at, at + len);
                            Ok(())
                        }
                        CharPiece::Unknown { text: sym, char_index } => {
                            self.encode_unknown(&sym, chars_before + char_index, at, len, sink)
                        }
                    }
                })
            }
        }
    }

    /// An unseen base symbol: its bytes as byte-fallback tokens (a fused
    /// marker included, so decoding still sees the word boundary), else
    /// `unk`, else an error naming the character and its position. It
    /// stands for `len` bytes of the text at byte `at`.
    fn encode_unknown(&self, sym: &str, position: usize, at: usize, len: usize, sink: &mut Sink) -> Result<()> {
        let Model::Char { options, .. } = &self.model else { unreachable!("char model only") };
        if let Some(start) = options.byte_fallback_start {
            for (i, b) in sym.bytes().enumerate() {
                // bytes of the character cover one byte of text each; marker bytes none
                let (s, e) = if i < len { (at + i, at + i + 1) } else { (at + len, at + len) };
                sink.push(start + b as u32, s, e);
            }
        } else if let Some(unk) = options.unk_id {
            sink.push(unk, at, at + len);
        } else {
            let marker = options.end_of_word.as_deref().filter(|_| options.fused).unwrap_or("");
            let ch = sym.strip_suffix(marker).filter(|c| !c.is_empty()).unwrap_or(sym);
            return Err(Error::Encode(format!(
                "character {ch:?} at position {position} is not in the vocabulary \
                 (train with byte_fallback=True or set unk_token to encode unseen characters)"
            )));
        }
        Ok(())
    }

    /// Char model: every word of `text` as merged pieces, each with the
    /// byte offset in `text` and the byte length of the text it stands for.
    fn char_pieces<'t>(
        &self,
        text: &'t str,
        words: Option<&[&'t str]>,
        mut dropout: Option<&mut Dropout>,
        mut emit: impl FnMut(CharPiece, usize, usize) -> Result<()>,
    ) -> Result<()> {
        let Model::Char { symbol_ids, spec, merges, .. } = &self.model else {
            unreachable!("char_pieces on a byte model")
        };
        let unknown_base = self.tokens.len() as u32;
        let mut unknown: Vec<(String, usize)> = Vec::new();
        let mut symbols: Vec<Sym> = Vec::new();
        let mut scanned = 0usize;
        let mut cursor_chars = 0usize;
        let mut cache: FxHashMap<&str, Vec<Sym>> = FxHashMap::default();
        let mut failed = None;
        let mut out = |piece: CharPiece, at: usize, len: usize| {
            if failed.is_none() {
                if let Err(e) = emit(piece, at, len) {
                    failed = Some(e);
                }
            }
        };
        self.each_word(text, words, |word| {
            // character index of the word's start, counted incrementally
            let start = offset_in(text, word);
            cursor_chars += text[scanned..start].chars().count();
            scanned = start;
            let char_index = cursor_chars;
            let mut at = start;
            if let Some(cached) = cache.get(word) {
                for sym in cached {
                    out(CharPiece::Known(sym.id), at, sym.len as usize);
                    at += sym.len as usize;
                }
                return;
            }
            symbols.clear();
            unknown.clear();
            symbol_ids.each(word, spec, |sym| {
                let id = sym.id.unwrap_or_else(|| {
                    unknown.push((sym.text(spec), char_index + sym.index));
                    unknown_base + unknown.len() as u32 - 1
                });
                symbols.push(Sym { id, len: sym.len as u32 });
            });
            merges.apply(&mut symbols, dropout.as_deref_mut());
            // repeated words are segmented once per call (not with dropout:
            // each occurrence draws anew)
            if unknown.is_empty() && dropout.is_none() {
                cache.insert(word, symbols.clone());
            }
            for sym in &symbols {
                let len = sym.len as usize;
                if sym.id >= unknown_base {
                    let (t, ci) = &unknown[(sym.id - unknown_base) as usize];
                    out(CharPiece::Unknown { text: t.clone(), char_index: *ci }, at, len);
                } else {
                    out(CharPiece::Known(sym.id), at, len);
                }
                at += len;
            }
        })?;
        failed.map_or(Ok(()), Err)
    }

    /// Calls `f` on the words of `text`: `words` when given, else the
    /// pre-tokenizer's.
    fn each_word<'t>(&self, text: &'t str, words: Option<&[&'t str]>, f: impl FnMut(&'t str)) -> Result<()> {
        match words {
            Some(words) => {
                words.iter().copied().for_each(f);
                Ok(())
            }
            None => self.pre.for_each_word(text, f),
        }
    }

    /// The pieces of `text` (special-token text is plain text): token text
    /// as bytes. Never fails on unknown characters.
    pub fn tokenize(&self, text: &str) -> Result<Vec<Vec<u8>>> {
        match &self.model {
            Model::Byte(_) => {
                let ids = self.encode_ordinary(text)?;
                Ok(ids.iter().map(|&id| self.tokens[id as usize].clone().unwrap_or_default()).collect())
            }
            Model::Char { .. } => {
                let mut pieces = Vec::new();
                self.char_pieces(text, None, None, |p, _, _| {
                    pieces.push(match p {
                        CharPiece::Known(id) => self.tokens[id as usize].clone().unwrap_or_default(),
                        CharPiece::Unknown { text, .. } => text.into_bytes(),
                    });
                    Ok(())
                })?;
                Ok(pieces)
            }
        }
    }

    fn lookup(&self, id: u32) -> Result<&[u8]> {
        self.token_bytes(id).ok_or_else(|| {
            Error::UnknownToken(format!("token id {id} is not in the vocabulary (n_vocab is {})", self.n_vocab()))
        })
    }

    /// The bytes that `ids` stand for.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        match &self.model {
            Model::Byte(_) => {
                let mut out = Vec::with_capacity(ids.len() * 4);
                for &id in ids {
                    out.extend_from_slice(self.lookup(id)?);
                }
                Ok(out)
            }
            Model::Char { options, .. } => self.decode_char(ids, options),
        }
    }

    /// Char model: runs of ordinary tokens are concatenated (byte-fallback
    /// tokens as their raw byte) and cut at every end-of-word marker; a group
    /// of boundaries becomes one space, none at the start or the end.
    /// Special tokens are written as they are and never cut.
    fn decode_char(&self, ids: &[u32], options: &CharOptions) -> Result<Vec<u8>> {
        let marker = options.end_of_word.as_deref().filter(|m| !m.is_empty()).map(str::as_bytes);
        let mut out: Vec<u8> = Vec::new();
        let mut boundary = false;
        let emit = |item: &[u8], out: &mut Vec<u8>, boundary: &mut bool| {
            if !item.is_empty() {
                if *boundary && !out.is_empty() {
                    out.push(b' ');
                }
                out.extend_from_slice(item);
                *boundary = false;
            }
        };
        let mut run: Vec<u8> = Vec::new();
        let flush = |run: &mut Vec<u8>, out: &mut Vec<u8>, boundary: &mut bool| {
            match marker {
                None => emit(run, out, boundary),
                Some(m) => {
                    for (k, part) in split_bytes(run, m).enumerate() {
                        if k > 0 {
                            *boundary = true;
                        }
                        emit(part, out, boundary);
                    }
                }
            }
            run.clear();
        };
        for &id in ids {
            let piece = self.lookup(id)?;
            if options.byte_fallback_start.is_some_and(|s| id >= s && id < s + 256) {
                run.push((id - options.byte_fallback_start.unwrap_or(0)) as u8);
            } else if std::str::from_utf8(piece).ok().and_then(|t| self.specials.id(t)) == Some(id) {
                flush(&mut run, &mut out, &mut boundary);
                emit(piece, &mut out, &mut boundary);
            } else {
                run.extend_from_slice(piece);
            }
        }
        flush(&mut run, &mut out, &mut boundary);
        Ok(out)
    }

    /// Encodes many texts in parallel (rayon), results in input order.
    /// (One parallel pass, work split by bytes: see `crate::batch`.)
    pub fn encode_ordinary_batch<T: AsRef<str> + Sync>(&self, texts: &[T]) -> Result<Vec<Vec<u32>>> {
        crate::batch::encode_lists(texts, |t, out| self.encode_ordinary_into(t, out))
    }
}

/// Ids being encoded, with each token's byte span when asked for.
pub(crate) struct Sink {
    pub(crate) ids: Vec<u32>,
    spans: Vec<(usize, usize)>,
    want_spans: bool,
    /// Characters of the caller's text before the text being encoded (a
    /// stream's earlier blocks): error positions count from the start.
    pub(crate) char_base: usize,
}

impl Sink {
    pub(crate) fn new(text_len: usize, want_spans: bool) -> Self {
        Sink { ids: Vec::with_capacity(text_len / 4), spans: Vec::new(), want_spans, char_base: 0 }
    }

    #[inline]
    pub(crate) fn push(&mut self, id: u32, start: usize, end: usize) {
        self.ids.push(id);
        if self.want_spans {
            self.spans.push((start, end));
        }
    }
}

/// Ids index dense tables: at most this many may be left unused, so that
/// ids declared far above the tokens a file holds cannot ask for memory.
pub(crate) const MAX_UNUSED_IDS: usize = 1 << 20;

fn check_unused(unused: usize) -> Result<()> {
    if unused > MAX_UNUSED_IDS {
        return Err(Error::Format(format!(
            "the ids leave {unused} ids unused; at most {MAX_UNUSED_IDS} may be (ids index a table)"
        )));
    }
    Ok(())
}

/// Byte offset of `part` (a slice of `whole`) in `whole`.
pub(crate) fn offset_in(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// Byte spans to character spans: a span starting inside a character
/// starts at that character; one ending inside a character ends after it.
pub fn char_spans(text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // chars_before[b]: number of characters that start before byte b
    let mut chars_before = Vec::with_capacity(text.len() + 1);
    let mut count = 0usize;
    for &b in text.as_bytes() {
        chars_before.push(count);
        if (b as i8) >= -0x40 {
            count += 1;
        }
    }
    chars_before.push(count);
    // the character containing byte b (for b inside the text)
    let containing = |b: usize| -> usize {
        if b < text.len() && !text.is_char_boundary(b) {
            chars_before[b] - 1
        } else {
            chars_before[b]
        }
    };
    spans
        .iter()
        .map(|&(s, e)| {
            let start = containing(s);
            let end = if e > s { containing(e - 1) + 1 } else { start };
            (start, end)
        })
        .collect()
}

/// `hay` cut at every occurrence of `sep` (like Python's `bytes.split`).
fn split_bytes<'a>(hay: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    let mut rest = Some(hay);
    std::iter::from_fn(move || {
        let h = rest?;
        match h.windows(sep.len()).position(|w| w == sep) {
            Some(at) => {
                rest = Some(&h[at + sep.len()..]);
                Some(&h[..at])
            }
            None => {
                rest = None;
                Some(h)
            }
        }
    })
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    fn bytes() -> Vec<Option<Vec<u8>>> {
        (0..=255u8).map(|b| Some(vec![b])).collect()
    }

    #[test]
    fn declared_ids_far_above_the_tokens_are_refused_before_allocating() {
        let far = (256 + MAX_UNUSED_IDS + 1) as u32;
        assert!(matches!(Tokenizer::byte(bytes(), None, vec![("<x>".into(), far)]), Err(Error::Format(_))));
        assert!(Tokenizer::byte(bytes(), None, vec![("<x>".into(), far - 1)]).is_ok());
        let base = vec!["a".to_string(), "b".to_string()];
        let merge_ids = [u32::MAX - 1];
        let made = Tokenizer::char(base, &[(0, 1)], Some(&merge_ids), CharOptions::default(), None, vec![]);
        assert!(matches!(made, Err(Error::Format(_))));
    }

    #[test]
    fn merges_not_derived_by_the_rule_are_found() {
        let mut tokens = bytes();
        tokens.extend([Some(b"ab".to_vec()), Some(b"abc".to_vec())]);
        let tok = Tokenizer::byte(tokens, None, vec![]).unwrap();
        let derived = tok.merge_triples();
        assert_eq!(derived, vec![(97, 98, 256), (256, 99, 257)]);
        assert_eq!(tok.first_underived(&derived), None);
        assert_eq!(tok.first_underived(&[(97, 98, 256), (97, 99, 257)]), Some((1, Some((256, 99)))));
        assert_eq!(tok.first_underived(&[(97, 98, 256), (97, 98, 300)]), Some((1, None)));
    }

    #[test]
    fn long_patterns_and_special_tokens() {
        let long = "a".repeat(crate::pretok::pretokenize::MAX_PATTERN_BYTES + 1);
        assert!(matches!(Tokenizer::byte(bytes(), Some(&long), vec![]), Err(Error::Pattern(_))));
        // a long repetitive special token (the contiguous NFA) is still found
        let special = "a".repeat(10_000);
        let tok = Tokenizer::byte(bytes(), Some(r"\S+|\s+"), vec![(special.clone(), 256)]).unwrap();
        let text = format!("b{special}c");
        let ids = tok.encode(&text, &SpecialSet::All, &SpecialSet::Some(Default::default())).unwrap();
        assert_eq!(ids, [b'b' as u32, 256, b'c' as u32]);
    }
}
