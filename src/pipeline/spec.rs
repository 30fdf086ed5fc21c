//! The one immutable description of a pipeline: Hugging Face's
//! `tokenizer.json` schema, parsed from JSON into typed enums and validated
//! once (sizes are checked before anything is allocated from them).
//! Anything a file may hold that the engine cannot run exactly is refused
//! with one line naming the component.

use crate::error::{Error, Result};
use crate::model::spec::{BpeSpec, Merges, SpNormSpec, SpSpec, MAX_MERGES, MAX_TOKEN_BYTES, MAX_VOCAB};
use crate::pretok::split_pattern::Pattern;
use crate::text::spec::NormalizerSpec;
use serde_json::{Map, Value};

pub(crate) const MAX_FILE_BYTES: usize = 1 << 30;
pub(crate) const MAX_DEPTH: usize = 16;
pub(crate) const MAX_ADDED: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PrependScheme {
    Always,
    First,
    Never,
}

#[derive(Debug, Clone)]
pub(crate) enum PreTokenizerSpec {
    ByteLevel { add_prefix_space: bool, use_regex: bool },
    Split { pattern: Pattern, behavior: Behavior, invert: bool },
    Metaspace { replacement: char, prepend_scheme: PrependScheme, split: bool },
    Digits { individual: bool },
    Punctuation { behavior: Behavior },
    Whitespace,
    WhitespaceSplit,
    CharDelimiterSplit(char),
    BertPreTokenizer,
    Sequence(Vec<PreTokenizerSpec>),
    /// bytepair's `{"type": "LlamaSplit", "routine": ..., "classes": {name: class}}` (GGUF files only): one of
    /// llama.cpp's hand-written splitting routines (`pretok/llama_split.rs`), with the classes it reads
    LlamaSplit { routine: String, classes: Vec<(String, String)> },
}

/// How added tokens are cut out of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpecialCut {
    /// Hugging Face: all at once, leftmost-longest.
    #[default]
    Hf,
    /// llama.cpp: one token at a time, longest first; strips take ASCII whitespace.
    LlamaCpp,
}

#[derive(Debug, Clone)]
pub struct AddedTokenSpec {
    pub id: u32,
    pub content: String,
    pub(crate) single_word: bool,
    pub(crate) lstrip: bool,
    pub(crate) rstrip: bool,
    pub normalized: bool,
    pub special: bool,
}

#[derive(Debug, Clone)]
pub enum TemplatePiece {
    Sequence { a: bool, type_id: u32 },
    Special { id: String, type_id: u32 },
}

#[derive(Debug, Clone)]
pub(crate) enum PostSpec {
    Template { single: Vec<TemplatePiece>, special: Vec<(String, Vec<u32>, Vec<String>)> },
    ByteLevel { trim_offsets: bool, add_prefix_space: bool },
    Roberta { cls: (String, u32), sep: (String, u32), trim_offsets: bool, add_prefix_space: bool },
    Bert { cls: (String, u32), sep: (String, u32) },
    Sequence(Vec<PostSpec>),
}

#[derive(Debug, Clone)]
pub(crate) enum DecoderSpec {
    ByteLevel,
    Metaspace { replacement: char, prepend_scheme: PrependScheme },
    ByteFallback,
    Fuse,
    Strip { content: char, start: usize, stop: usize },
    Replace { pattern: Pattern, content: String },
    BpeDecoder { suffix: String },
    WordPiece { prefix: String, cleanup: bool },
    Sequence(Vec<DecoderSpec>),
}

#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub(crate) normalizer: Option<NormalizerSpec>,
    pub(crate) pre_tokenizer: Option<PreTokenizerSpec>,
    pub(crate) model: BpeSpec,
    pub(crate) added_tokens: Vec<AddedTokenSpec>,
    /// bytepair's key `"special_cut": "llama.cpp"` (GGUF files that need it): added tokens cut as llama.cpp does
    pub(crate) special_cut: SpecialCut,
    pub(crate) post_processor: Option<PostSpec>,
    pub(crate) decoder: Option<DecoderSpec>,
    /// a SentencePiece `.model` run as sentencepiece runs it (model type
    /// `SentencePieceBPE`; see `model/sentencepiece/`): normalizer, model and
    /// decoder are then its own, the fields above only list its vocabulary
    pub(crate) sentencepiece: Option<SpSpec>,
}

fn fail(msg: impl Into<String>) -> Error {
    Error::Format(msg.into())
}

fn obj<'a>(v: &'a Value, at: &str) -> Result<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| fail(format!("{at}: expected an object")))
}

fn type_of<'a>(m: &'a Map<String, Value>, at: &str) -> Result<&'a str> {
    m.get("type").and_then(Value::as_str).ok_or_else(|| fail(format!("{at}: no \"type\" string")))
}

fn get_bool(m: &Map<String, Value>, key: &str, default: bool, at: &str) -> Result<bool> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(fail(format!("{at}.{key}: expected true or false"))),
    }
}

fn get_str<'a>(m: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a str> {
    m.get(key).and_then(Value::as_str).ok_or_else(|| fail(format!("{at}.{key}: expected a string")))
}

fn opt_str(m: &Map<String, Value>, key: &str, at: &str) -> Result<Option<String>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            if s.len() > MAX_TOKEN_BYTES {
                return Err(fail(format!("{at}.{key}: longer than {MAX_TOKEN_BYTES} bytes")));
            }
            Ok(Some(s.clone()))
        }
        Some(_) => Err(fail(format!("{at}.{key}: expected a string or null"))),
    }
}

fn get_u32(m: &Map<String, Value>, key: &str, at: &str) -> Result<u32> {
    m.get(key)
        .and_then(Value::as_u64)
        .and_then(|x| u32::try_from(x).ok())
        .ok_or_else(|| fail(format!("{at}.{key}: expected an integer id below 2**32")))
}

fn one_char(s: &str, at: &str) -> Result<char> {
    let mut it = s.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(fail(format!("{at}: expected exactly one character, got {s:?}"))),
    }
}

fn pattern(v: Option<&Value>, at: &str) -> Result<Pattern> {
    let m = obj(v.ok_or_else(|| fail(format!("{at}: no pattern")))?, at)?;
    if let Some(s) = m.get("String").and_then(Value::as_str) {
        return Ok(Pattern::String(s.to_string()));
    }
    if let Some(s) = m.get("Regex").and_then(Value::as_str) {
        return Ok(Pattern::Regex(s.to_string()));
    }
    Err(fail(format!("{at}: pattern must be {{\"String\": ...}} or {{\"Regex\": ...}}")))
}

fn behavior(m: &Map<String, Value>, at: &str, default: Behavior) -> Result<Behavior> {
    match m.get("behavior").and_then(Value::as_str) {
        None => Ok(default),
        Some("Removed") => Ok(Behavior::Removed),
        Some("Isolated") => Ok(Behavior::Isolated),
        Some("MergedWithPrevious") => Ok(Behavior::MergedWithPrevious),
        Some("MergedWithNext") => Ok(Behavior::MergedWithNext),
        Some("Contiguous") => Ok(Behavior::Contiguous),
        Some(b) => Err(fail(format!("{at}.behavior: unknown split behavior {b:?}"))),
    }
}

fn prepend_scheme(m: &Map<String, Value>, at: &str) -> Result<PrependScheme> {
    if matches!(m.get("add_prefix_space"), Some(Value::Bool(false))) {
        return Ok(PrependScheme::Never);
    }
    match m.get("prepend_scheme").and_then(Value::as_str) {
        Some("always") => Ok(PrependScheme::Always),
        Some("first") => Ok(PrependScheme::First),
        Some("never") => Ok(PrependScheme::Never),
        Some(s) => Err(fail(format!("{at}.prepend_scheme: unknown scheme {s:?}"))),
        // files written before prepend_scheme existed
        None => Ok(PrependScheme::Always),
    }
}

fn replacement(m: &Map<String, Value>, at: &str) -> Result<char> {
    let r = m.get("replacement").or_else(|| m.get("str_rep")).and_then(Value::as_str).unwrap_or("\u{2581}");
    one_char(r, &format!("{at}.replacement"))
}

fn unsupported(kind: &str, name: &str, at: &str) -> Error {
    Error::Unsupported(format!("{at}: the {kind} {name:?} is not supported by bytepair's pipeline engine"))
}

fn seq_items<'a>(m: &'a Map<String, Value>, key: &str, at: &str, depth: usize) -> Result<&'a Vec<Value>> {
    if depth >= MAX_DEPTH {
        return Err(fail(format!("{at}: Sequences nested deeper than {MAX_DEPTH}")));
    }
    m.get(key).and_then(Value::as_array).ok_or_else(|| fail(format!("{at}.{key}: expected a list")))
}

pub(crate) fn normalizer(v: &Value, at: &str, depth: usize) -> Result<Option<NormalizerSpec>> {
    if v.is_null() {
        return Ok(None);
    }
    let m = obj(v, at)?;
    let t = type_of(m, at)?;
    Ok(Some(match t {
        "NFC" => NormalizerSpec::Nfc,
        "NFD" => NormalizerSpec::Nfd,
        "NFKC" => NormalizerSpec::Nfkc,
        "NFKD" => NormalizerSpec::Nfkd,
        "Lowercase" => NormalizerSpec::Lowercase,
        "StripAccents" => NormalizerSpec::StripAccents,
        "ByteLevel" => NormalizerSpec::ByteLevel,
        "Strip" => NormalizerSpec::Strip {
            left: get_bool(m, "strip_left", true, at)?,
            right: get_bool(m, "strip_right", true, at)?,
        },
        "Replace" => NormalizerSpec::Replace {
            pattern: pattern(m.get("pattern"), &format!("{at}.pattern"))?,
            content: get_str(m, "content", at)?.to_string(),
        },
        "Prepend" => NormalizerSpec::Prepend(get_str(m, "prepend", at)?.to_string()),
        "Precompiled" => {
            use base64::Engine;
            let b64 = match m.get("precompiled_charsmap") {
                None | Some(Value::Null) => "",
                Some(Value::String(s)) => s.as_str(),
                Some(_) => return Err(fail(format!("{at}.precompiled_charsmap: expected base64 text"))),
            };
            let raw = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| fail(format!("{at}.precompiled_charsmap: invalid base64: {e}")))?;
            NormalizerSpec::Precompiled(raw)
        }
        "Sequence" => {
            let items = seq_items(m, "normalizers", at, depth)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                if let Some(n) = normalizer(x, &format!("{at}.normalizers[{i}]"), depth + 1)? {
                    out.push(n);
                }
            }
            NormalizerSpec::Sequence(out)
        }
        other => return Err(unsupported("normalizer", other, at)),
    }))
}

pub(crate) fn pre_tokenizer(v: &Value, at: &str, depth: usize) -> Result<Option<PreTokenizerSpec>> {
    if v.is_null() {
        return Ok(None);
    }
    let m = obj(v, at)?;
    let t = type_of(m, at)?;
    Ok(Some(match t {
        "ByteLevel" => PreTokenizerSpec::ByteLevel {
            add_prefix_space: get_bool(m, "add_prefix_space", true, at)?,
            use_regex: get_bool(m, "use_regex", true, at)?,
        },
        "Split" => PreTokenizerSpec::Split {
            pattern: pattern(m.get("pattern"), &format!("{at}.pattern"))?,
            behavior: behavior(m, at, Behavior::Removed)?,
            invert: get_bool(m, "invert", false, at)?,
        },
        "Metaspace" => PreTokenizerSpec::Metaspace {
            replacement: replacement(m, at)?,
            prepend_scheme: prepend_scheme(m, at)?,
            split: get_bool(m, "split", true, at)?,
        },
        "Digits" => PreTokenizerSpec::Digits { individual: get_bool(m, "individual_digits", false, at)? },
        "Punctuation" => PreTokenizerSpec::Punctuation { behavior: behavior(m, at, Behavior::Isolated)? },
        "Whitespace" => PreTokenizerSpec::Whitespace,
        "WhitespaceSplit" => PreTokenizerSpec::WhitespaceSplit,
        "BertPreTokenizer" => PreTokenizerSpec::BertPreTokenizer,
        "LlamaSplit" => {
            let classes = m
                .get("classes")
                .and_then(Value::as_object)
                .ok_or_else(|| fail(format!("{at}.classes: expected an object of class patterns")))?;
            let mut out = Vec::with_capacity(classes.len());
            for (name, v) in classes {
                let class = v.as_str().ok_or_else(|| fail(format!("{at}.classes.{name}: expected a string")))?;
                out.push((name.clone(), class.to_string()));
            }
            PreTokenizerSpec::LlamaSplit { routine: get_str(m, "routine", at)?.to_string(), classes: out }
        }
        "CharDelimiterSplit" => {
            PreTokenizerSpec::CharDelimiterSplit(one_char(get_str(m, "delimiter", at)?, &format!("{at}.delimiter"))?)
        }
        "Sequence" => {
            let items = seq_items(m, "pretokenizers", at, depth)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                if let Some(p) = pre_tokenizer(x, &format!("{at}.pretokenizers[{i}]"), depth + 1)? {
                    out.push(p);
                }
            }
            PreTokenizerSpec::Sequence(out)
        }
        other => return Err(unsupported("pre-tokenizer", other, at)),
    }))
}

fn model(v: &Value) -> Result<BpeSpec> {
    let at = "model";
    let m = obj(v, at)?;
    let t = m.get("type").and_then(Value::as_str).unwrap_or(if m.contains_key("merges") { "BPE" } else { "?" });
    if t != "BPE" {
        return Err(Error::Unsupported(format!(
            "model: the model {t:?} is not supported by bytepair's pipeline engine (only BPE models are)"
        )));
    }
    // Hugging Face refuses a BPE model without both ("Missing vocab/merges"): zero merges would encode silently
    for key in ["vocab", "merges"] {
        if !m.contains_key(key) {
            return Err(fail(format!("model.{key}: missing (a BPE model needs both vocab and merges)")));
        }
    }
    let vocab_m = m.get("vocab").and_then(Value::as_object).ok_or_else(|| fail("model.vocab: expected an object"))?;
    if vocab_m.len() > MAX_VOCAB {
        return Err(fail(format!("model.vocab: {} entries; at most {MAX_VOCAB} are allowed", vocab_m.len())));
    }
    let mut vocab = Vec::with_capacity(vocab_m.len());
    for (k, v) in vocab_m {
        if k.len() > MAX_TOKEN_BYTES {
            return Err(fail(format!("model.vocab: a token is longer than {MAX_TOKEN_BYTES} bytes")));
        }
        let id = v
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .filter(|&x| (x as usize) < MAX_VOCAB)
            .ok_or_else(|| fail(format!("model.vocab[{k:?}]: expected an id below {MAX_VOCAB}")))?;
        vocab.push((k.clone(), id));
    }
    let merges_v = match m.get("merges") {
        Some(Value::Array(a)) => {
            if a.len() > MAX_MERGES {
                return Err(fail(format!("model.merges: {} entries; at most {MAX_MERGES} are allowed", a.len())));
            }
            let mut out = Merges::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                let pair = match x {
                    Value::String(s) => {
                        let mut it = s.splitn(2, ' ');
                        match (it.next(), it.next()) {
                            (Some(a), Some(b)) => Some((a, b)),
                            _ => None,
                        }
                    }
                    Value::Array(p) if p.len() == 2 => match (p[0].as_str(), p[1].as_str()) {
                        (Some(a), Some(b)) => Some((a, b)),
                        _ => None,
                    },
                    _ => None,
                };
                let (a, b) = pair.ok_or_else(|| fail(format!("model.merges[{i}]: expected \"a b\" or [a, b]")))?;
                out.push(a, b);
            }
            out
        }
        _ => return Err(fail("model.merges: expected a list")),
    };
    let dropout = match m.get("dropout") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let p = v.as_f64().ok_or_else(|| fail("model.dropout: expected a number"))?;
            if !(0.0..=1.0).contains(&p) {
                return Err(fail(format!("model.dropout: {p} is not between 0 and 1")));
            }
            Some(p as f32)
        }
    };
    Ok(BpeSpec {
        vocab,
        merges: merges_v,
        dropout,
        unk_token: opt_str(m, "unk_token", at)?,
        continuing_subword_prefix: opt_str(m, "continuing_subword_prefix", at)?,
        end_of_word_suffix: opt_str(m, "end_of_word_suffix", at)?,
        fuse_unk: get_bool(m, "fuse_unk", false, at)?,
        byte_fallback: get_bool(m, "byte_fallback", false, at)?,
        ignore_merges: get_bool(m, "ignore_merges", false, at)?,
    })
}

fn added_tokens(v: Option<&Value>) -> Result<Vec<AddedTokenSpec>> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(fail("added_tokens: expected a list")),
    };
    if items.len() > MAX_ADDED {
        return Err(fail(format!("added_tokens: {} entries; at most {MAX_ADDED} are allowed", items.len())));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        let at = format!("added_tokens[{i}]");
        let m = obj(x, &at)?;
        let content = get_str(m, "content", &at)?;
        if content.len() > MAX_TOKEN_BYTES {
            return Err(fail(format!("{at}.content: longer than {MAX_TOKEN_BYTES} bytes")));
        }
        let special = get_bool(m, "special", false, &at)?;
        out.push(AddedTokenSpec {
            id: get_u32(m, "id", &at)?,
            content: content.to_string(),
            single_word: get_bool(m, "single_word", false, &at)?,
            lstrip: get_bool(m, "lstrip", false, &at)?,
            rstrip: get_bool(m, "rstrip", false, &at)?,
            normalized: get_bool(m, "normalized", !special, &at)?,
            special,
        });
    }
    Ok(out)
}

fn special_cut(v: Option<&Value>) -> Result<SpecialCut> {
    match v {
        None | Some(Value::Null) => Ok(SpecialCut::Hf),
        Some(Value::String(s)) if s == "llama.cpp" => Ok(SpecialCut::LlamaCpp),
        Some(other) => Err(fail(format!("special_cut: expected \"llama.cpp\" or null, not {other}"))),
    }
}

fn id_pair(v: Option<&Value>, at: &str) -> Result<(String, u32)> {
    match v.and_then(Value::as_array) {
        Some(a) if a.len() == 2 => match (a[0].as_str(), a[1].as_u64().and_then(|x| u32::try_from(x).ok())) {
            (Some(s), Some(id)) => Ok((s.to_string(), id)),
            _ => Err(fail(format!("{at}: expected [token, id]"))),
        },
        _ => Err(fail(format!("{at}: expected [token, id]"))),
    }
}

pub(crate) fn post_processor(v: &Value, at: &str, depth: usize) -> Result<Option<PostSpec>> {
    if v.is_null() {
        return Ok(None);
    }
    let m = obj(v, at)?;
    let t = type_of(m, at)?;
    Ok(Some(match t {
        "ByteLevel" => PostSpec::ByteLevel {
            trim_offsets: get_bool(m, "trim_offsets", true, at)?,
            add_prefix_space: get_bool(m, "add_prefix_space", true, at)?,
        },
        "RobertaProcessing" => PostSpec::Roberta {
            cls: id_pair(m.get("cls"), &format!("{at}.cls"))?,
            sep: id_pair(m.get("sep"), &format!("{at}.sep"))?,
            trim_offsets: get_bool(m, "trim_offsets", true, at)?,
            add_prefix_space: get_bool(m, "add_prefix_space", true, at)?,
        },
        "BertProcessing" => PostSpec::Bert {
            cls: id_pair(m.get("cls"), &format!("{at}.cls"))?,
            sep: id_pair(m.get("sep"), &format!("{at}.sep"))?,
        },
        "TemplateProcessing" => {
            let single = m.get("single").and_then(Value::as_array).ok_or_else(|| fail(format!("{at}.single: expected a list")))?;
            let mut pieces = Vec::with_capacity(single.len());
            for (i, p) in single.iter().enumerate() {
                let pat = format!("{at}.single[{i}]");
                let pm = obj(p, &pat)?;
                if let Some(s) = pm.get("Sequence") {
                    let sm = obj(s, &pat)?;
                    let a = get_str(sm, "id", &pat)? != "B";
                    pieces.push(TemplatePiece::Sequence { a, type_id: get_u32(sm, "type_id", &pat)? });
                } else if let Some(s) = pm.get("SpecialToken") {
                    let sm = obj(s, &pat)?;
                    pieces.push(TemplatePiece::Special {
                        id: get_str(sm, "id", &pat)?.to_string(),
                        type_id: get_u32(sm, "type_id", &pat)?,
                    });
                } else {
                    return Err(fail(format!("{pat}: expected Sequence or SpecialToken")));
                }
            }
            let mut special = Vec::new();
            if let Some(st) = m.get("special_tokens") {
                for (k, sv) in obj(st, &format!("{at}.special_tokens"))? {
                    let sat = format!("{at}.special_tokens[{k:?}]");
                    let sm = obj(sv, &sat)?;
                    let ids = sm
                        .get("ids")
                        .and_then(Value::as_array)
                        .ok_or_else(|| fail(format!("{sat}.ids: expected a list")))?
                        .iter()
                        .map(|x| x.as_u64().and_then(|x| u32::try_from(x).ok()))
                        .collect::<Option<Vec<u32>>>()
                        .ok_or_else(|| fail(format!("{sat}.ids: expected ids")))?;
                    let tokens = sm
                        .get("tokens")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect())
                        .unwrap_or_default();
                    special.push((k.clone(), ids, tokens));
                }
            }
            for p in &pieces {
                if let TemplatePiece::Special { id, .. } = p {
                    if !special.iter().any(|(k, _, _)| k == id) {
                        return Err(fail(format!("{at}: the template uses {id:?}, which special_tokens lacks")));
                    }
                }
            }
            PostSpec::Template { single: pieces, special }
        }
        "Sequence" => {
            let items = seq_items(m, "processors", at, depth)?;
            let mut out = Vec::new();
            for (i, x) in items.iter().enumerate() {
                if let Some(p) = post_processor(x, &format!("{at}.processors[{i}]"), depth + 1)? {
                    out.push(p);
                }
            }
            PostSpec::Sequence(out)
        }
        other => return Err(unsupported("post-processor", other, at)),
    }))
}

pub(crate) fn decoder(v: &Value, at: &str, depth: usize) -> Result<Option<DecoderSpec>> {
    if v.is_null() {
        return Ok(None);
    }
    let m = obj(v, at)?;
    let t = type_of(m, at)?;
    Ok(Some(match t {
        "ByteLevel" => DecoderSpec::ByteLevel,
        "Metaspace" => DecoderSpec::Metaspace { replacement: replacement(m, at)?, prepend_scheme: prepend_scheme(m, at)? },
        "ByteFallback" => DecoderSpec::ByteFallback,
        "Fuse" => DecoderSpec::Fuse,
        "Strip" => DecoderSpec::Strip {
            content: one_char(get_str(m, "content", at)?, &format!("{at}.content"))?,
            start: get_u32(m, "start", at)? as usize,
            stop: get_u32(m, "stop", at)? as usize,
        },
        "Replace" => DecoderSpec::Replace {
            pattern: pattern(m.get("pattern"), &format!("{at}.pattern"))?,
            content: get_str(m, "content", at)?.to_string(),
        },
        "BPEDecoder" => DecoderSpec::BpeDecoder {
            suffix: opt_str(m, "suffix", at)?.unwrap_or_else(|| "</w>".to_string()),
        },
        "WordPiece" => DecoderSpec::WordPiece {
            prefix: opt_str(m, "prefix", at)?.unwrap_or_else(|| "##".to_string()),
            cleanup: get_bool(m, "cleanup", true, at)?,
        },
        "Sequence" => {
            let items = seq_items(m, "decoders", at, depth)?;
            let mut out = Vec::new();
            for (i, x) in items.iter().enumerate() {
                if let Some(d) = decoder(x, &format!("{at}.decoders[{i}]"), depth + 1)? {
                    out.push(d);
                }
            }
            DecoderSpec::Sequence(out)
        }
        other => return Err(unsupported("decoder", other, at)),
    }))
}

/// The SentencePiece description of a `tokenizer.json`-shaped document, or
/// `None` when its model is not `SentencePieceBPE` (the schema's extension
/// is described at the top of `model/sentencepiece/mod.rs`).
fn sentencepiece(root: &Map<String, Value>) -> Result<Option<SpSpec>> {
    let model = match root.get("model").and_then(Value::as_object) {
        Some(m) if m.get("type").and_then(Value::as_str) == Some("SentencePieceBPE") => m,
        _ => return Ok(None),
    };
    let items = model
        .get("pieces")
        .and_then(Value::as_array)
        .ok_or_else(|| fail("model.pieces: expected a list"))?;
    if items.len() > MAX_VOCAB {
        return Err(fail(format!(
            "model.pieces: {} entries; at most {} are allowed",
            items.len(),
            MAX_VOCAB
        )));
    }
    let mut pieces = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        let bad = || fail(format!("model.pieces[{i}]: expected [text, score, type]"));
        let a = x.as_array().filter(|a| a.len() == 3).ok_or_else(bad)?;
        let text = a[0]
            .as_str()
            .filter(|s| !s.is_empty() && s.len() <= MAX_TOKEN_BYTES)
            .ok_or_else(bad)?;
        let score = a[1].as_f64().ok_or_else(bad)? as f32;
        let t = a[2]
            .as_u64()
            .filter(|t| (1..=6).contains(t))
            .ok_or_else(bad)? as u8;
        pieces.push((text.to_string(), score, t));
    }
    let unk_surface = match model.get("unk_surface") {
        None | Some(Value::Null) => " \u{2047} ".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(fail("model.unk_surface: expected a string")),
    };
    let normalizer = match root.get("normalizer") {
        None | Some(Value::Null) => SpNormSpec::default(),
        Some(Value::Object(n))
            if n.get("type").and_then(Value::as_str) == Some("SentencePiece") =>
        {
            norm_spec(n, "normalizer", true)?
        }
        Some(_) => {
            return Err(fail(
                "normalizer: a SentencePieceBPE model needs the SentencePiece normalizer (or null)",
            ))
        }
    };
    if !root.get("pre_tokenizer").is_none_or(Value::is_null) {
        return Err(fail(
            "pre_tokenizer: a SentencePieceBPE model runs without a pre-tokenizer",
        ));
    }
    let mut denormalizer = None;
    match root.get("decoder") {
        None | Some(Value::Null) => {}
        Some(Value::Object(d))
            if d.get("type").and_then(Value::as_str) == Some("SentencePiece") =>
        {
            match d.get("denormalizer") {
                None | Some(Value::Null) => {}
                Some(Value::Object(n)) => {
                    denormalizer = Some(norm_spec(n, "decoder.denormalizer", false)?)
                }
                Some(_) => return Err(fail("decoder.denormalizer: expected an object")),
            }
        }
        Some(_) => {
            return Err(fail(
                "decoder: a SentencePieceBPE model needs the SentencePiece decoder (or null)",
            ))
        }
    }
    Ok(Some(SpSpec {
        pieces,
        byte_fallback: get_bool(model, "byte_fallback", false, "model")?,
        unk_surface,
        normalizer,
        denormalizer,
    }))
}

/// A `NormalizerSpec`'s fields (`default` for the three flags sentencepiece
/// defaults to true: the normalizer's; a denormalizer's are written out).
fn norm_spec(n: &Map<String, Value>, at: &str, default: bool) -> Result<SpNormSpec> {
    use base64::Engine;
    let raw = match n.get("precompiled_charsmap") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(|e| fail(format!("{at}.precompiled_charsmap: invalid base64: {e}")))?,
        Some(_) => return Err(fail(format!("{at}.precompiled_charsmap: expected base64 text"))),
    };
    Ok(SpNormSpec {
        charsmap: raw,
        add_dummy_prefix: get_bool(n, "add_dummy_prefix", default, at)?,
        remove_extra_whitespaces: get_bool(n, "remove_extra_whitespaces", default, at)?,
        escape_whitespaces: get_bool(n, "escape_whitespaces", default, at)?,
        treat_whitespace_as_suffix: get_bool(n, "treat_whitespace_as_suffix", false, at)?,
    })
}

impl Spec {
    /// Parse and validate a `tokenizer.json` document.
    pub(crate) fn from_json(text: &str) -> Result<Spec> {
        if text.len() > MAX_FILE_BYTES {
            return Err(fail(format!("the description is {} bytes; at most {MAX_FILE_BYTES} are allowed", text.len())));
        }
        // serde_json refuses nesting deeper than 128 levels
        let v: Value = serde_json::from_str(text).map_err(|e| fail(format!("invalid JSON: {e}")))?;
        Spec::from_value(&v)
    }

    pub(crate) fn from_value(v: &Value) -> Result<Spec> {
        let m = obj(v, "tokenizer.json")?;
        if let Some(sp) = sentencepiece(m)? {
            let vocab = sp.pieces.iter().enumerate().map(|(i, (p, _, _))| (p.clone(), i as u32)).collect();
            return Ok(Spec {
                normalizer: None,
                pre_tokenizer: None,
                model: BpeSpec {
                    vocab,
                    merges: Merges::default(),
                    dropout: None,
                    unk_token: None,
                    continuing_subword_prefix: None,
                    end_of_word_suffix: None,
                    fuse_unk: false,
                    byte_fallback: false,
                    ignore_merges: false,
                },
                added_tokens: added_tokens(m.get("added_tokens"))?,
                special_cut: special_cut(m.get("special_cut"))?,
                post_processor: post_processor(m.get("post_processor").unwrap_or(&Value::Null), "post_processor", 0)?,
                decoder: None,
                sentencepiece: Some(sp),
            });
        }
        Ok(Spec {
            normalizer: normalizer(m.get("normalizer").unwrap_or(&Value::Null), "normalizer", 0)?,
            pre_tokenizer: pre_tokenizer(m.get("pre_tokenizer").unwrap_or(&Value::Null), "pre_tokenizer", 0)?,
            model: model(m.get("model").ok_or_else(|| fail("tokenizer.json: it has no \"model\" object"))?)?,
            added_tokens: added_tokens(m.get("added_tokens"))?,
            special_cut: special_cut(m.get("special_cut"))?,
            post_processor: post_processor(m.get("post_processor").unwrap_or(&Value::Null), "post_processor", 0)?,
            decoder: decoder(m.get("decoder").unwrap_or(&Value::Null), "decoder", 0)?,
            sentencepiece: None,
        })
    }
}
