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

#[derive(Debug, Clone)]
pub struct BpeSpec {
    pub vocab: Vec<(String, u32)>,
    pub merges: Vec<(String, String)>,
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
