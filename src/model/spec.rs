//! The descriptions the models are built from, and their size limits: a
//! pair-ranked BPE (Hugging Face's `"model": {"type": "BPE"}`) and a
//! SentencePiece `.model` (its pieces, normalizer and denormalizer). The
//! description layer (`pipeline/spec.rs`) reads files into them; the models
//! only run them.

/// Most tokens a vocabulary may hold.
pub(crate) const MAX_VOCAB: usize = 1 << 24;
/// Most merges a model may list.
pub(crate) const MAX_MERGES: usize = 1 << 24;
/// Longest token, in bytes.
pub(crate) const MAX_TOKEN_BYTES: usize = 1 << 16;

/// A BPE merge list: every merge's two sides in one buffer (a pair of strings per merge was 48
/// bytes and two allocations each: 30 MB of Llama 3's load, freed again at once).
#[derive(Clone, Default, PartialEq)]
pub struct Merges {
    text: String,
    /// the end of each merge's left side and of its right side in `text` (the next merge starts there)
    ends: Vec<(usize, usize)>,
}

impl Merges {
    pub fn with_capacity(merges: usize) -> Self {
        Merges { text: String::new(), ends: Vec::with_capacity(merges) }
    }

    pub fn push(&mut self, left: &str, right: &str) {
        self.text.push_str(left);
        let mid = self.text.len();
        self.text.push_str(right);
        self.ends.push((mid, self.text.len()));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Merge `k`: (left, right).
    pub fn get(&self, k: usize) -> (&str, &str) {
        let start = if k == 0 { 0 } else { self.ends[k - 1].1 };
        let (mid, end) = self.ends[k];
        (&self.text[start..mid], &self.text[mid..end])
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        (0..self.len()).map(move |k| self.get(k))
    }

    /// One item per merge (its sides' ends), for splitting the list into shares (`parallel::map_chunks`).
    pub(crate) fn ends(&self) -> &[(usize, usize)] {
        &self.ends
    }
}

impl<A: AsRef<str>, B: AsRef<str>> FromIterator<(A, B)> for Merges {
    fn from_iter<I: IntoIterator<Item = (A, B)>>(items: I) -> Self {
        let mut out = Merges::default();
        for (a, b) in items {
            out.push(a.as_ref(), b.as_ref());
        }
        out
    }
}

impl std::fmt::Debug for Merges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[derive(Debug, Clone)]
pub struct BpeSpec {
    pub vocab: Vec<(String, u32)>,
    pub merges: Merges,
    pub dropout: Option<f32>,
    pub(crate) unk_token: Option<String>,
    pub(crate) continuing_subword_prefix: Option<String>,
    pub(crate) end_of_word_suffix: Option<String>,
    pub(crate) fuse_unk: bool,
    pub byte_fallback: bool,
    pub(crate) ignore_merges: bool,
}

/// A SentencePiece `NormalizerSpec`'s fields.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpNormSpec {
    pub(crate) charsmap: Vec<u8>,
    pub(crate) add_dummy_prefix: bool,
    pub(crate) remove_extra_whitespaces: bool,
    pub(crate) escape_whitespaces: bool,
    pub(crate) treat_whitespace_as_suffix: bool,
}

#[derive(Debug, Clone)]
pub struct SpSpec {
    pub pieces: Vec<(String, f32, u8)>,
    pub byte_fallback: bool,
    pub(crate) unk_surface: String,
    pub(crate) normalizer: SpNormSpec,
    /// sentencepiece's `denormalizer_spec` (a normalizer run over the decoded text)
    pub(crate) denormalizer: Option<SpNormSpec>,
}
