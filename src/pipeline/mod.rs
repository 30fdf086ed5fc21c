//! A tokenizer as a pipeline: normalizer -> pre-tokenizer -> BPE model ->
//! post-processor, with added tokens around them and a decoder back, all
//! built from one immutable description (Hugging Face's `tokenizer.json`
//! schema, see `spec`). Offsets point into the original text through every
//! normalizer (`crate::text::normalized::NStr` tracks alignments as HF's
//! `NormalizedString` does).
//!
//! Stages here: `spec` (the description), `pre_tokenizer`, `added_tokens`,
//! `post_processor`, `decoder`, `llama_decode` (llama.cpp's decoding, for GGUF files), and `fast` (the
//! string-free byte-level route).
//! The normalizers are in `crate::text`, the models (`bpe`, `sentencepiece`)
//! in `crate::model`.

pub mod added_tokens;
pub mod decoder;
pub mod fast;
pub mod llama_decode;
pub mod post_processor;
pub mod pre_tokenizer;
pub mod spec;
pub(crate) mod spec_typed;

use crate::error::{Error, Result};
use crate::model::bpe::Bpe;
use crate::model::sentencepiece;
use crate::text::normalizer::Normalizer;
use added_tokens::{AddedTokens, Segment};
use decoder::Decoder;
use post_processor::PostProcessor;
use pre_tokenizer::PreTokenizer;
use crate::pretok::patterns::RegexMap;
use spec::Spec;

#[derive(Debug)]
pub struct Pipeline {
    normalizer: Option<Normalizer>,
    pre_tokenizer: Option<PreTokenizer>,
    pub model: Bpe,
    pub added: AddedTokens,
    post: Option<PostProcessor>,
    decoder: Option<Decoder>,
    /// a SentencePiece model: encoding and decoding are sentencepiece's own
    sp: Option<sentencepiece::SentencePiece>,
    /// without a pre-tokenizer: the marker before which the text is cut
    /// (`sentencepiece::hf_cut_marker`: the same ids, words cached)
    cut: Option<char>,
    byte_level: bool,
    needs_alignments: bool,
    n_vocab: usize,
    /// The string-free route for one-regex byte-level pipelines (fast.rs).
    fast: Option<fast::ByteLevelSplit>,
    /// llama.cpp's decoding, for a pipeline loaded from a GGUF file (llama_decode.rs): `decode` and
    /// `decode_bytes` give `llama_detokenize`'s output instead of the decoder's
    llama: Option<llama_decode::LlamaDecode>,
}

/// `Pipeline::pre_tokenize`'s items: an added token (id, original byte range),
/// or a stretch of text (normalized) with its pre-tokens and their ranges.
pub enum PreTokenized {
    Token(u32, usize, usize),
    Text(String, Vec<(String, (usize, usize))>),
}

/// One encoded text: ids and (when asked) each token's byte range in the text.
pub struct Encoding {
    pub ids: Vec<u32>,
    pub offsets: Vec<(usize, usize)>,
}

impl Pipeline {
    pub fn from_json(text: &str, regexes: &RegexMap) -> Result<Pipeline> {
        Pipeline::from_spec(spec_typed::parse(text)?, regexes)
    }

    pub(crate) fn from_spec(spec: Spec, regexes: &RegexMap) -> Result<Pipeline> {
        let normalizer = spec.normalizer.as_ref().map(|n| Normalizer::new(n, regexes)).transpose()?;
        let pre_tokenizer = spec.pre_tokenizer.as_ref().map(|p| PreTokenizer::new(p, regexes)).transpose()?;
        let cut = if spec.pre_tokenizer.is_none() && spec.sentencepiece.is_none() {
            sentencepiece::hf_cut_marker(&spec.model)
        } else {
            None
        };
        let mut model = Bpe::new(spec.model)?;
        let added = AddedTokens::new(&spec.added_tokens, &model, normalizer.as_ref(), spec.special_cut)?;
        let post = spec.post_processor.clone().map(PostProcessor);
        let decoder = spec.decoder.as_ref().map(|d| Decoder::new(d, regexes)).transpose()?;
        let sp = spec.sentencepiece.as_ref().map(sentencepiece::SentencePiece::new).transpose()?;
        let byte_level = pre_tokenizer.as_ref().is_some_and(|p| p.is_byte_level())
            || matches!(decoder, Some(Decoder::ByteLevel));
        let needs_alignments = pre_tokenizer.as_ref().is_some_and(|p| p.needs_alignments());
        let fast = fast::ByteLevelSplit::of(normalizer.as_ref(), pre_tokenizer.as_ref());
        if fast.is_some() {
            model.prepare_raw_bytes();
        }
        let max_model = model.vocab_r.bound();
        let max_added = added.by_id.keys().max().map_or(0, |&m| m as usize + 1);
        Ok(Pipeline {
            normalizer,
            pre_tokenizer,
            model,
            added,
            post,
            decoder,
            cut,
            sp,
            byte_level,
            needs_alignments,
            n_vocab: max_model.max(max_added),
            fast,
            llama: None,
        })
    }

    /// This pipeline decoding as llama.cpp does (a GGUF file's flags), or with its decoder (None).
    pub fn with_llama_decode(mut self, how: Option<llama_decode::LlamaDecode>) -> Self {
        self.llama = how;
        self
    }

    pub fn n_vocab(&self) -> usize {
        self.n_vocab
    }

    pub fn is_byte_level(&self) -> bool {
        self.byte_level
    }

    /// Encode one text. `add_special_tokens` applies the post-processor;
    /// `ordinary` leaves special added tokens unmatched (their text is
    /// encoded as text); `track` computes byte offsets into `text`.
    pub fn encode(&self, text: &str, add_special_tokens: bool, ordinary: bool, track: bool) -> Result<Encoding> {
        if let Some(sp) = &self.sp {
            // sentencepiece never matches control pieces in text
            let e = sp.encode(text, track)?;
            let (mut ids, mut offsets) = (e.ids, e.offsets);
            if let Some(p) = &self.post {
                // a .model file's post-processor only puts BOS first: no offsets to trim
                (ids, offsets) = p.process(ids, offsets, add_special_tokens, track, &|_, _, _| {});
            }
            return Ok(Encoding { ids, offsets });
        }
        let segments =
            self.added.extract_and_normalize(text, self.normalizer.as_ref(), track || self.needs_alignments, ordinary)?;
        let mut ids = Vec::with_capacity(text.len() / 3 + 4);
        let mut offsets = Vec::new();
        let mut matched = Vec::new(); // (index in ids, edge spaces) of added tokens found in the text
        let mut local = Vec::new();
        for seg in segments {
            match seg {
                Segment::Token(id, a, b, spaces) => {
                    if track {
                        matched.push((ids.len(), spaces));
                        offsets.push((a, b));
                    }
                    ids.push(id);
                }
                Segment::Text(n) => {
                    if n.is_empty() {
                        continue;
                    }
                    if let (Some(f), false) = (&self.fast, track) {
                        f.encode(&n.s, &self.model, &mut ids)?;
                        continue;
                    }
                    let pieces = match (&self.pre_tokenizer, self.cut) {
                        (Some(p), _) => p.pre_tokenize(vec![n])?,
                        (None, Some(m)) => sentencepiece::cut_before(&n.s, m).into_iter().map(|(a, b)| n.slice(a, b)).collect(),
                        (None, None) => vec![n],
                    };
                    for piece in &pieces {
                        if track {
                            local.clear();
                            self.model.tokenize(&piece.s, &mut ids, Some(&mut local))?;
                            offsets.extend(local.iter().map(|&(a, b)| piece.original(a, b)));
                        } else {
                            self.model.tokenize(&piece.s, &mut ids, None)?;
                        }
                    }
                }
            }
        }
        if let Some(p) = &self.post {
            let n = ids.len();
            let trim = |ids: &[u32], offsets: &mut [(usize, usize)], add_prefix_space: bool| {
                // an added token's spaces are those of the text it matched (HF's token string);
                // positions hold only while no special token has been put in front
                let matched: &[(usize, (usize, usize))] = if ids.len() == n { &matched } else { &[] };
                self.trim_offsets(text, ids, offsets, add_prefix_space, matched)
            };
            (ids, offsets) = p.process(ids, offsets, add_special_tokens, track, &trim);
        }
        Ok(Encoding { ids, offsets })
    }

    /// `encode(text, add_special_tokens, ordinary, false).ids` appended to `ids`. On the string-free route, where
    /// the normalizer leaves the text as it is (none: Llama 3; an empty sequence: DeepSeek V3; NFC on text already
    /// in NFC: Qwen 2), the text is cut around its added tokens in place
    /// and each part encoded straight into `ids`: no copy of the text, no `Encoding` (a copy of the text and
    /// two vectors per call were a sixth of a batch of 50-byte lines).
    pub fn encode_ids_into(&self, text: &str, add_special_tokens: bool, ordinary: bool, ids: &mut Vec<u32>) -> Result<()> {
        // the post-processor adds ids only when asked to (`post_processor::process`); the normalizer's check
        // reads the text, so it comes last
        match &self.fast {
            Some(f)
                if (self.post.is_none() || !add_special_tokens)
                    && self.sp.is_none()
                    && self.added.parts_borrowed()
                    && self.normalizer.as_ref().is_none_or(|n| n.leaves_unchanged(text)) =>
            {
                self.added.for_each_part(text, ordinary, |part| match part {
                    Ok(id) => {
                        ids.push(id);
                        Ok(())
                    }
                    Err(part) => f.encode(part, &self.model, ids),
                })
            }
            _ => {
                ids.extend_from_slice(&self.encode(text, add_special_tokens, ordinary, false)?.ids);
                Ok(())
            }
        }
    }

    /// `encode_ids_into` a new vector.
    pub fn encode_ids(&self, text: &str, add_special_tokens: bool, ordinary: bool) -> Result<Vec<u32>> {
        let mut ids = Vec::with_capacity(text.len() / 3 + 4);
        self.encode_ids_into(text, add_special_tokens, ordinary, &mut ids)?;
        Ok(ids)
    }

    /// HF's ByteLevel `process_offsets`: a token's leading and trailing
    /// spaces ('Ġ' or whitespace in its string) leave its span, counted in
    /// characters of the original text; one leading space of the first token
    /// stays when the prefix space was added.
    fn trim_offsets(
        &self,
        text: &str,
        ids: &[u32],
        offsets: &mut [(usize, usize)],
        add_prefix_space: bool,
        matched: &[(usize, (usize, usize))],
    ) {
        let mut matched = matched.iter().peekable();
        for (i, (&id, span)) in ids.iter().zip(offsets.iter_mut()).enumerate() {
            let (mut leading, trailing) = match matched.next_if(|m| m.0 == i) {
                Some(&(_, spaces)) => spaces,
                None => match self.encoding_token(id) {
                    Some(token) => added_tokens::edge_spaces(token),
                    None => continue,
                },
            };
            if leading > 0 {
                if (i == 0 || span.0 == 0) && add_prefix_space && leading == 1 {
                    leading = 0;
                }
                span.0 = chars_forward(text, span.0, leading).min(span.1);
            }
            if trailing > 0 {
                if let Some(end) = chars_back(text, span.1, trailing) {
                    span.1 = end.max(span.0);
                }
            }
        }
    }

    /// What the BPE model is given, in order, for `explain`: the normalized
    /// text of each stretch between added tokens, then its pre-tokens (the
    /// strings the model splits into symbols, with their original byte
    /// ranges); an added token as its id and range. `ordinary` as in `encode`.
    pub fn pre_tokenize(&self, text: &str, ordinary: bool) -> Result<Vec<PreTokenized>> {
        if let Some(sp) = &self.sp {
            // sentencepiece normalizes the whole text (control pieces are never matched in it)
            if text.is_empty() {
                return Ok(Vec::new());
            }
            let normalized = sp.normalize(text);
            return Ok(vec![PreTokenized::Text(normalized.clone(), vec![(normalized, (0, text.len()))])]);
        }
        let segments = self.added.extract_and_normalize(text, self.normalizer.as_ref(), true, ordinary)?;
        let mut out = Vec::new();
        for seg in segments {
            match seg {
                Segment::Token(id, a, b, _) => out.push(PreTokenized::Token(id, a, b)),
                Segment::Text(n) => {
                    if n.is_empty() {
                        continue;
                    }
                    let normalized = n.s.clone();
                    let pieces = match &self.pre_tokenizer {
                        Some(p) => p.pre_tokenize(vec![n])?,
                        None => vec![n],
                    };
                    let pieces =
                        pieces.iter().map(|p| (p.s.clone(), p.original(0, p.s.len()))).collect::<Vec<_>>();
                    out.push(PreTokenized::Text(normalized, pieces));
                }
            }
        }
        Ok(out)
    }

    /// The token string of an id (an added token's decoding form first, as HF).
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        if let Some((t, _)) = self.added.by_id.get(&id) {
            return Some(t.as_str());
        }
        self.model.vocab_r.get(id)
    }

    /// The token string of HF's `Encoding`: the model's for an id the model has, else the added token's
    /// (`id_to_token` prefers the added token's normalized content, which may differ: `▁ b` for ` b` under
    /// Prepend).
    fn encoding_token(&self, id: u32) -> Option<&str> {
        self.model.vocab_r.get(id).or_else(|| self.added.by_id.get(&id).map(|(t, _)| t.as_str()))
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.added.by_content.get(token).or_else(|| self.model.vocab.get(token)).copied()
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.added.by_id.get(&id).is_some_and(|(_, s)| *s)
    }

    fn tokens(&self, ids: &[u32], skip_special: bool) -> Result<Vec<String>> {
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let t = self
                .id_to_token(id)
                .ok_or_else(|| Error::UnknownToken(format!("token id {id} is not in the vocabulary")))?;
            if skip_special && self.added.special.contains(t) {
                continue;
            }
            out.push(t.to_string());
        }
        Ok(out)
    }

    /// HF's `decode(ids, skip_special_tokens)`. Unlike HF (which drops them),
    /// ids outside the vocabulary raise `UnknownToken`.
    pub fn decode(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        match self.llama {
            Some(how) => Ok(String::from_utf8_lossy(&how.decode(self, ids, skip_special)?).into_owned()),
            None => self.decoder_text(ids, skip_special),
        }
    }

    /// `decode` by the pipeline's own decoder (or SentencePiece's rules).
    fn decoder_text(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        if let Some(sp) = &self.sp {
            return sp.decode(ids, skip_special);
        }
        let tokens = self.tokens(ids, skip_special)?;
        match &self.decoder {
            Some(d) => Ok(d.decode_chain(tokens)?.concat()),
            None => Ok(tokens.join(" ")),
        }
    }

    /// The bytes `ids` stand for: llama.cpp's for a GGUF file's pipeline; a
    /// byte-level pipeline gives each token's bytes (so a partial character
    /// survives); others give `decode`'s UTF-8.
    pub fn decode_bytes(&self, ids: &[u32], skip_special: bool) -> Result<Vec<u8>> {
        match self.llama {
            Some(how) => how.decode(self, ids, skip_special),
            None => self.decoder_bytes(ids, skip_special),
        }
    }

    /// `decode_bytes` by the pipeline's own decoder.
    fn decoder_bytes(&self, ids: &[u32], skip_special: bool) -> Result<Vec<u8>> {
        if matches!(self.decoder, Some(Decoder::ByteLevel)) {
            let mut out = Vec::new();
            for t in self.tokens(ids, skip_special)? {
                decoder::byte_level_bytes(&t, &mut out);
            }
            return Ok(out);
        }
        Ok(self.decoder_text(ids, skip_special)?.into_bytes())
    }

    /// One token's bytes (byte-level pipelines) or its vocabulary string.
    pub fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        let t = self.id_to_token(id)?;
        if self.byte_level && !self.added.by_id.contains_key(&id) {
            let mut out = Vec::new();
            decoder::byte_level_bytes(t, &mut out);
            Some(out)
        } else {
            Some(t.as_bytes().to_vec())
        }
    }
}

/// The byte offset `n` characters after byte offset `at` (at most the end).
fn chars_forward(text: &str, mut at: usize, n: usize) -> usize {
    for _ in 0..n {
        if at >= text.len() {
            return text.len();
        }
        at += 1;
        while at < text.len() && !text.is_char_boundary(at) {
            at += 1;
        }
    }
    at
}

/// The byte offset `n` characters before byte offset `at`, or None when
/// fewer than `n` characters precede it.
fn chars_back(text: &str, mut at: usize, n: usize) -> Option<usize> {
    at = at.min(text.len());
    for _ in 0..n {
        if at == 0 {
            return None;
        }
        at -= 1;
        while at > 0 && !text.is_char_boundary(at) {
            at -= 1;
        }
    }
    Some(at)
}

/// Byte offsets into `text` -> char offsets (a range inside a char covers it).
pub fn char_offsets(text: &str, offsets: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut char_at = vec![0usize; text.len() + 1];
    let mut n = 0;
    for (i, c) in text.char_indices() {
        for k in 0..c.len_utf8() {
            char_at[i + k] = n;
        }
        n += 1;
    }
    char_at[text.len()] = n;
    offsets
        .iter()
        .map(|&(a, b)| {
            let a = char_at[a.min(text.len())];
            let b = if b == 0 { 0 } else { char_at[(b - 1).min(text.len())] + usize::from(b <= text.len()) };
            (a, b.max(a))
        })
        .collect()
}

impl llama_decode::LlamaVocab for Pipeline {
    fn added(&self, id: u32) -> Option<(&str, bool)> {
        self.added.by_id.get(&id).map(|(text, special)| (text.as_str(), *special))
    }

    fn token(&self, id: u32) -> Option<&str> {
        self.id_to_token(id)
    }

    fn decode_run(&self, ids: &[u32], skip_special: bool) -> Result<Vec<u8>> {
        self.decoder_bytes(ids, skip_special)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> String {
        r#"{"normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
            "model": {"type": "BPE", "vocab": {"h": 0, "e": 1, "l": 2, "o": 3, "he": 4, "ll": 5, "hell": 6, "Ġ": 7},
                      "merges": ["h e", "l l", "he ll"]},
            "decoder": {"type": "ByteLevel"},
            "added_tokens": [{"id": 8, "content": "<s>", "special": true}]}"#
            .to_string()
    }

    #[test]
    fn pair_ranked_merges_and_added_tokens() {
        let p = Pipeline::from_json(&tiny(), &RegexMap::default()).unwrap();
        let e = p.encode("hello<s>", false, false, true).unwrap();
        assert_eq!(e.ids, vec![6, 3, 8]);
        assert_eq!(e.offsets, vec![(0, 4), (4, 5), (5, 8)]);
        assert_eq!(p.decode(&e.ids, true).unwrap(), "hello");
        assert_eq!(p.decode(&e.ids, false).unwrap(), "hello<s>");
    }

    #[test]
    fn unsupported_model_is_one_line() {
        let e = Pipeline::from_json(r#"{"model": {"type": "Unigram", "vocab": []}}"#, &RegexMap::default()).unwrap_err();
        assert!(e.to_string().contains("Unigram") && !e.to_string().contains('\n'));
    }

    #[test]
    fn bad_charsmap_is_refused() {
        assert!(crate::text::charsmap::CharsMap::new(&[200, 0, 0, 0, 1]).is_err());
    }
}
