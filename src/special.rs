//! Special tokens: finding their text (leftmost, longest at one position)
//! and cutting text around them; which ones a call accepts (`SpecialSet`),
//! and tiktoken's rules on a pipeline's special added tokens
//! (`PipelineSpecials`).

use crate::error::{Error, Result};
use crate::pipeline::{Encoding, Pipeline};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rustc_hash::{FxHashMap, FxHashSet};

/// Which special tokens a call accepts: all of them or a named set.
#[derive(Debug, Clone)]
pub enum SpecialSet {
    All,
    Some(FxHashSet<String>),
}

impl SpecialSet {
    pub(crate) fn contains(&self, token: &str) -> bool {
        match self {
            SpecialSet::All => true,
            SpecialSet::Some(s) => s.contains(token),
        }
    }

    /// Whether the set names no token.
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, SpecialSet::Some(s) if s.is_empty())
    }
}

/// tiktoken's rules (`allowed_special`, `disallowed_special`) over a
/// pipeline's special added tokens. The pipeline matches all its added
/// tokens, or leaves the special ones as text (`ordinary`); a call whose
/// rules need neither is encoded with every token matched, and the special
/// ids among the result are checked: a special token counts as present when
/// the pipeline matched it and its text is in the input (a BOS the
/// post-processor adds, or an `<unk>` the model makes, is no match).
#[derive(Debug, Clone, Default)]
pub struct PipelineSpecials {
    /// one bit per id: the special added tokens
    bits: Box<[u64]>,
    /// id -> text of each special added token
    text: FxHashMap<u32, String>,
}

impl PipelineSpecials {
    pub fn new(pipeline: &Pipeline) -> Self {
        let mut bits = vec![0u64; pipeline.n_vocab().div_ceil(64)].into_boxed_slice();
        let mut text = FxHashMap::default();
        for t in &pipeline.added.special {
            if let Some(&id) = pipeline.added.by_content.get(t) {
                if let Some(word) = bits.get_mut(id as usize / 64) {
                    *word |= 1 << (id % 64);
                    text.insert(id, t.clone());
                }
            }
        }
        PipelineSpecials { bits, text }
    }

    /// The special added tokens' ids among `ids`, each once, in order of first appearance.
    pub fn hits(&self, ids: &[u32]) -> Vec<u32> {
        let mut hits = Vec::new();
        for &id in ids {
            let bit = self.bits.get(id as usize / 64).map_or(0, |w| w >> (id % 64) & 1);
            if bit == 1 && !hits.contains(&id) {
                hits.push(id);
            }
        }
        hits
    }

    /// How a call runs when its rules decide it before encoding: Some(false), every added token matched;
    /// Some(true), special-token text encoded as text; None: matched, then checked (`stand`).
    fn decided(&self, allowed: &SpecialSet, disallowed: &SpecialSet) -> Option<bool> {
        if self.text.is_empty() || matches!(allowed, SpecialSet::All) {
            return Some(false);
        }
        (allowed.is_empty() && disallowed.is_empty()).then_some(true)
    }

    /// Whether `ids`, encoded from `text` with every added token matched, stand under the rules (true), or
    /// the text must be encoded again with special-token text as text (false). Special-token text that is
    /// disallowed is an error, as is text holding both allowed and not-allowed special tokens (the pipeline
    /// matches all of them or none).
    fn stand(&self, ids: &[u32], text: &str, allowed: &SpecialSet, disallowed: &SpecialSet) -> Result<bool> {
        let mut present: Vec<&str> = self.hits(ids).iter().map(|id| self.text[id].as_str()).filter(|t| text.contains(t)).collect();
        if present.is_empty() {
            return Ok(true);
        }
        present.sort_unstable();
        let (allowed_here, not_allowed): (Vec<&str>, Vec<&str>) = present.iter().partition(|t| allowed.contains(t));
        if let Some(refused) = not_allowed.iter().find(|t| disallowed.contains(t)) {
            return Err(Error::DisallowedSpecial(refused.to_string()));
        }
        if not_allowed.is_empty() {
            return Ok(true);
        }
        if !allowed_here.is_empty() {
            return Err(Error::Encode(format!(
                "a tokenizer.json pipeline matches all its special tokens or none: the text holds allowed {allowed_here:?} \
                 and not allowed {not_allowed:?}"
            )));
        }
        Ok(false)
    }

    /// Appends the ids of `text` under the rules to `out` (`add_special_tokens`: the post-processor's ids).
    pub fn encode_into(
        &self, pipeline: &Pipeline, text: &str, add_special_tokens: bool, allowed: &SpecialSet, disallowed: &SpecialSet,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        if let Some(ordinary) = self.decided(allowed, disallowed) {
            return pipeline.encode_ids_into(text, add_special_tokens, ordinary, out);
        }
        let start = out.len();
        pipeline.encode_ids_into(text, add_special_tokens, false, out)?;
        if !self.stand(&out[start..], text, allowed, disallowed)? {
            out.truncate(start);
            pipeline.encode_ids_into(text, add_special_tokens, true, out)?;
        }
        Ok(())
    }

    /// `encode_into` with each token's byte range in `text`.
    pub fn encode_with_offsets(
        &self, pipeline: &Pipeline, text: &str, add_special_tokens: bool, allowed: &SpecialSet, disallowed: &SpecialSet,
    ) -> Result<Encoding> {
        if let Some(ordinary) = self.decided(allowed, disallowed) {
            return pipeline.encode(text, add_special_tokens, ordinary, true);
        }
        let matched = pipeline.encode(text, add_special_tokens, false, true)?;
        if self.stand(&matched.ids, text, allowed, disallowed)? {
            return Ok(matched);
        }
        pipeline.encode(text, add_special_tokens, true, true)
    }
}

#[derive(Debug, Clone, Default)]
pub struct SpecialTokens {
    tokens: Vec<(String, u32)>,
    ids: FxHashMap<String, u32>,
    /// Standard-semantics automaton: reports every occurrence, overlapping.
    any_matcher: Option<AhoCorasick>,
}

impl SpecialTokens {
    /// The matcher of `tokens` (text, id); empty texts are left out.
    pub fn new(tokens: Vec<(String, u32)>) -> Result<Self> {
        let tokens: Vec<(String, u32)> = tokens.into_iter().filter(|(t, _)| !t.is_empty()).collect();
        let any_matcher = if tokens.is_empty() {
            None
        } else {
            // the DFA the library picks for few tokens searches fastest, but
            // takes time quadratic in a long repetitive token's length to
            // build; a contiguous NFA builds in linear time
            let total: usize = tokens.iter().map(|(t, _)| t.len()).sum();
            let kind = (total > 1 << 12).then_some(AhoCorasickKind::ContiguousNFA);
            let built = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(kind)
                .build(tokens.iter().map(|(t, _)| t.as_str()));
            Some(built.map_err(|e| Error::Format(format!("the special tokens cannot be matched: {e}")))?)
        };
        let ids = tokens.iter().cloned().collect();
        Ok(SpecialTokens { tokens, ids, any_matcher })
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    pub fn iter(&self) -> impl Iterator<Item = &(String, u32)> {
        self.tokens.iter()
    }

    /// Every occurrence in `text` of a token that `keep` accepts, as
    /// (start, end, token), left to right without overlap: the leftmost
    /// accepted token wins, the longest at one position. Tokens that `keep`
    /// rejects are not searched for at all.
    pub(crate) fn find_all<'a>(
        &'a self,
        text: &str,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<(usize, usize, &'a str)> {
        let mut out = Vec::new();
        let Some(ac) = &self.any_matcher else { return out };
        // all accepted occurrences, then a leftmost-longest greedy pass
        let mut hits: Vec<(usize, usize, usize)> = ac
            .find_overlapping_iter(text)
            .filter(|m| keep(&self.tokens[m.pattern().as_usize()].0))
            .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
            .collect();
        hits.sort_unstable_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
        let mut from = 0;
        for (start, end, k) in hits {
            if start >= from {
                out.push((start, end, self.tokens[k].0.as_str()));
                from = end;
            }
        }
        out
    }

    /// The first occurrence (the one that ends first) of any token
    /// accepted by `keep`: (start, token).
    pub(crate) fn find_first(&self, text: &str, keep: impl Fn(&str) -> bool) -> Option<(usize, &str)> {
        let ac = self.any_matcher.as_ref()?;
        ac.find_overlapping_iter(text)
            .map(|m| (m.start(), self.tokens[m.pattern().as_usize()].0.as_str()))
            .find(|(_, t)| keep(t))
    }

    /// Byte length of the longest token (0 without tokens).
    pub(crate) fn longest(&self) -> usize {
        self.tokens.iter().map(|(t, _)| t.len()).max().unwrap_or(0)
    }

    /// Cuts `text` at every special token: the plain segments in order.
    pub(crate) fn segments<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        let mut last = 0;
        for (start, end, _) in self.find_all(text, |_| true) {
            out.push(&text[last..start]);
            last = end;
        }
        out.push(&text[last..]);
        out
    }
}
