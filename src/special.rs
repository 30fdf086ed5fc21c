//! Special tokens: finding their text (leftmost, longest at one position)
//! and cutting text around them.

use crate::error::{Error, Result};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rustc_hash::FxHashMap;

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
