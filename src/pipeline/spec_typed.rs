//! The fast reading of a `tokenizer.json`: `model.vocab` and `model.merges`
//! read by serde straight into the `BpeSpec`'s vectors, everything else as
//! `serde_json::Value`s read by `spec.rs`'s own functions. A `Value` of a
//! vocabulary of 10^5 tokens is a B-tree of 10^5 strings, built, copied out
//! and dropped: most of the time of the description's reading.
//!
//! It gives a `Spec` only when it is the one `Spec::from_value` gives: the
//! vocabulary's tokens and ids distinct (a `Value` keeps the last of two
//! equal keys, and names two equal ids in its key order), every entry one
//! `spec.rs` accepts, no second `model`, `vocab` or `merges` key, a BPE
//! model. Anything else, and every error, gives `None`, and the `Value`
//! reading then names what is wrong, as it always has.

use super::spec::{Spec, MAX_FILE_BYTES};
use crate::model::spec::{Merges, MAX_MERGES, MAX_TOKEN_BYTES, MAX_VOCAB};
use rustc_hash::FxHashSet;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Parse and validate a `tokenizer.json` document: `Spec::from_json`'s
/// result, read the fast way when it can be (see the module's doc).
pub(crate) fn parse(text: &str) -> crate::error::Result<Spec> {
    if text.len() <= MAX_FILE_BYTES {
        if let Some(spec) = read(text) {
            return Ok(spec);
        }
    }
    Spec::from_json(text) // names what is wrong, as it always has
}

/// The description of `text` read the fast way, or None (see the module's doc).
fn read(text: &str) -> Option<Spec> {
    let mut de = serde_json::Deserializer::from_str(text);
    let top = de.deserialize_map(TopVisitor).ok()?;
    de.end().ok()?;
    let model = top.model?;
    let (vocab, merges) = (model.vocab?, model.merges?);
    if model.rest.get("type").is_some_and(|t| t.as_str() != Some("BPE")) || !distinct(&vocab) {
        return None;
    }
    // the model without its two big fields, read by spec.rs: its other fields checked as ever
    let mut small = model.rest;
    small.insert("vocab".into(), Value::Object(Map::new()));
    small.insert("merges".into(), Value::Array(Vec::new()));
    let mut root = top.rest;
    root.insert("model".into(), Value::Object(small));
    let mut spec = Spec::from_value(&Value::Object(root)).ok()?;
    if spec.sentencepiece.is_some() {
        return None;
    }
    spec.model.vocab = vocab;
    spec.model.merges = merges;
    Some(spec)
}

/// The merges of a description given as a list (`read_with_lists`).
#[cfg(any(feature = "python", test))]
pub(crate) enum MergeList {
    /// `"a b"`, cut at the first space as Hugging Face reads a merge string
    Strings(Vec<String>),
    /// `[a, b]`
    Pairs(Vec<Vec<String>>),
}

/// The description `text`, whose BPE model has an empty `vocab` and `merges`, with `tokens` (`tokens[id]`)
/// and `merges` as its vocabulary and merges: what `read` gives of the same description written whole, or
/// None where `read` gives None (the caller then reads the whole description, which names the fault).
#[cfg(any(feature = "python", test))]
pub(crate) fn read_with_lists(text: &str, tokens: Vec<String>, merges: MergeList) -> Option<Spec> {
    if tokens.len() > MAX_VOCAB || tokens.iter().any(|t| t.len() > MAX_TOKEN_BYTES) {
        return None;
    }
    let merges: Merges = match merges {
        MergeList::Strings(strings) => {
            strings.iter().map(|a| a.split_once(' ')).collect::<Option<Merges>>()?
        }
        MergeList::Pairs(pairs) => pairs
            .iter()
            .map(|p| match p.as_slice() {
                [a, b] => Some((a, b)),
                _ => None,
            })
            .collect::<Option<Merges>>()?,
    };
    if merges.len() > MAX_MERGES {
        return None;
    }
    let vocab: Vec<(String, u32)> = tokens.into_iter().zip(0u32..).collect();
    let mut spec = read(text)?;
    if !spec.model.vocab.is_empty() || !spec.model.merges.is_empty() || !distinct(&vocab) {
        return None;
    }
    spec.model.vocab = vocab;
    spec.model.merges = merges;
    Some(spec)
}

/// Whether the tokens and the ids of `vocab` are all distinct.
fn distinct(vocab: &[(String, u32)]) -> bool {
    let mut ids = vec![0u64; vocab.iter().map(|&(_, id)| id as usize / 64 + 1).max().unwrap_or(0)];
    let mut tokens: FxHashSet<&str> = FxHashSet::default();
    tokens.reserve(vocab.len());
    vocab.iter().all(|(t, id)| {
        let (word, bit) = (*id as usize / 64, 1u64 << (id % 64));
        let new_id = ids[word] & bit == 0;
        ids[word] |= bit;
        new_id && tokens.insert(t.as_str())
    })
}

/// A refusal of the fast reading (its text is never shown: the `Value` reading names the fault).
fn irregular<E: de::Error>() -> E {
    E::custom("irregular")
}

struct Top {
    model: Option<Model>,
    rest: Map<String, Value>,
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer.json object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top { model: None, rest: Map::new() };
        while let Some(key) = map.next_key::<String>()? {
            if key == "model" {
                if top.model.is_some() {
                    return Err(irregular());
                }
                top.model = Some(map.next_value_seed(ModelSeed)?);
            } else {
                let v: Value = map.next_value()?;
                top.rest.insert(key, v); // a repeated key: the last one, as a Value keeps it
            }
        }
        Ok(top)
    }
}

struct Model {
    vocab: Option<Vec<(String, u32)>>,
    merges: Option<Merges>,
    rest: Map<String, Value>,
}

struct ModelSeed;

impl<'de> DeserializeSeed<'de> for ModelSeed {
    type Value = Model;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Model, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ModelSeed {
    type Value = Model;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a model object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Model, A::Error> {
        let mut m = Model { vocab: None, merges: None, rest: Map::new() };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "vocab" if m.vocab.is_none() => m.vocab = Some(map.next_value_seed(VocabSeed)?),
                "merges" if m.merges.is_none() => m.merges = Some(map.next_value_seed(MergesSeed)?),
                "vocab" | "merges" => return Err(irregular()),
                _ => {
                    let v: Value = map.next_value()?;
                    m.rest.insert(key, v);
                }
            }
        }
        Ok(m)
    }
}

/// `model.vocab`: `token -> id`, each as `spec.rs` accepts it.
struct VocabSeed;

impl<'de> DeserializeSeed<'de> for VocabSeed {
    type Value = Vec<(String, u32)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for VocabSeed {
    type Value = Vec<(String, u32)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a vocabulary object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0).min(1 << 20));
        while let Some((token, id)) = map.next_entry::<String, u64>()? {
            if out.len() >= MAX_VOCAB || token.len() > MAX_TOKEN_BYTES || id >= MAX_VOCAB as u64 {
                return Err(irregular());
            }
            out.push((token, id as u32));
        }
        Ok(out)
    }
}

/// `model.merges`: items `"a b"` (cut at the first space, both parts present) or `[a, b]`, as `spec.rs` reads them.
struct MergesSeed;

impl<'de> DeserializeSeed<'de> for MergesSeed {
    type Value = Merges;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for MergesSeed {
    type Value = Merges;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Merges::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        // each merge read into the list's buffer (no string made per side)
        while seq.next_element_seed(MergeSeed(&mut out))?.is_some() {
            if out.len() > MAX_MERGES {
                return Err(irregular());
            }
        }
        Ok(out)
    }
}

/// One merge, pushed onto the list.
struct MergeSeed<'a>(&'a mut Merges);

impl<'de> DeserializeSeed<'de> for MergeSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MergeSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        let (a, b) = s.split_once(' ').ok_or_else(irregular)?;
        self.0.push(a, b);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let a: std::borrow::Cow<'de, str> = seq.next_element_seed(CowStr)?.ok_or_else(irregular)?;
        let b: std::borrow::Cow<'de, str> = seq.next_element_seed(CowStr)?.ok_or_else(irregular)?;
        match seq.next_element::<IgnoredAny>()? {
            None => {
                self.0.push(&a, &b);
                Ok(())
            }
            Some(_) => Err(irregular()),
        }
    }
}

/// A JSON string, borrowed from the text where it has no escape.
struct CowStr;

impl<'de> DeserializeSeed<'de> for CowStr {
    type Value = std::borrow::Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for CowStr {
    type Value = std::borrow::Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Borrowed(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Owned(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast reading's Spec, in the terms that matter: the model's vocabulary (as a sorted set), merges,
    /// options, and the other stages' descriptions.
    fn summary(spec: &Spec) -> String {
        let mut vocab = spec.model.vocab.clone();
        vocab.sort();
        let mut model = spec.model.clone();
        model.vocab = vocab;
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?}",
            model, spec.normalizer, spec.pre_tokenizer, spec.added_tokens, spec.post_processor, spec.decoder
        )
    }

    fn value_reading(text: &str) -> crate::error::Result<Spec> {
        let v: Value = serde_json::from_str(text).map_err(|e| crate::error::Error::Format(e.to_string()))?;
        Spec::from_value(&v)
    }

    const BASE: &str = r#"{"version": "1.0", "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
        "added_tokens": [{"id": 3, "content": "<s>", "special": true}],
        "model": {"type": "BPE", "dropout": null, "ignore_merges": true, "vocab": VOCAB, "merges": MERGES}}"#;

    fn doc(vocab: &str, merges: &str) -> String {
        BASE.replace("VOCAB", vocab).replace("MERGES", merges)
    }

    #[test]
    fn the_fast_reading_is_the_value_reading() {
        for (vocab, merges) in [
            (r#"{"b": 1, "a": 0, "ab": 2}"#, r#"["a b"]"#),
            (r#"{"b": 1, "a": 0, "ab": 2}"#, r#"[["a", "b"]]"#),
            (r#"{"a": 0, "a b": 1, "b": 2, "\u00e9": 4}"#, r#"["a  b", ["a", "b"]]"#), // spaces, escapes
            (r#"{}"#, r#"[]"#),
        ] {
            let text = doc(vocab, merges);
            let fast = read(&text).expect("regular");
            assert_eq!(summary(&fast), summary(&value_reading(&text).unwrap()), "{text}");
        }
    }

    #[test]
    fn the_lists_reading_is_the_whole_reading() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let tokens = strings(&["a", "b", "ab", "a b", "\u{e9}"]);
        let vocab = r#"{"a": 0, "b": 1, "ab": 2, "a b": 3, "\u00e9": 4}"#;
        let empty = doc("{}", "[]");
        let merges = || MergeList::Strings(strings(&["a b", "a  b"]));
        let pairs = MergeList::Pairs(vec![strings(&["a", "b"]), strings(&["a", " b"])]);
        let from_strings = read_with_lists(&empty, tokens.clone(), merges()).expect("regular");
        let from_pairs = read_with_lists(&empty, tokens.clone(), pairs).expect("regular");
        assert_eq!(summary(&from_strings), summary(&read(&doc(vocab, r#"["a b", "a  b"]"#)).unwrap()));
        assert_eq!(summary(&from_pairs), summary(&read(&doc(vocab, r#"[["a", "b"], ["a", " b"]]"#)).unwrap()));
        // irregular: left to the whole description's reading, which names the fault
        let two = strings(&["a", "a"]);
        assert!(read_with_lists(&empty, two, merges()).is_none()); // one token twice
        assert!(read_with_lists(&empty, tokens.clone(), MergeList::Strings(strings(&["ab"]))).is_none()); // no space
        assert!(read_with_lists(&empty, tokens.clone(), MergeList::Pairs(vec![strings(&["a"])])).is_none());
        assert!(read_with_lists(&doc("{}", r#"["a b"]"#), tokens.clone(), merges()).is_none()); // merges in both
        assert!(read_with_lists(&doc(r#"{"a": 0}"#, "[]"), tokens.clone(), merges()).is_none()); // vocab in both
        assert!(read_with_lists(&doc("{}", "[]").replace("BPE", "WordPiece"), tokens, merges()).is_none());
    }

    #[test]
    fn anything_irregular_is_left_to_the_value_reading() {
        for (vocab, merges) in [
            (r#"{"a": 0, "b": 0}"#, r#"[]"#),         // one id twice: the Value reading names both
            (r#"{"a": 0, "a": 1}"#, r#"[]"#),         // one token twice: a Value keeps the last
            (r#"{"a": -1}"#, r#"[]"#),                // not an id
            (r#"{"a": 1.0}"#, r#"[]"#),               // not an id
            (r#"{"a": 16777216}"#, r#"[]"#),          // an id too large
            (r#"{"a": 0}"#, r#"["ab"]"#),             // no space
            (r#"{"a": 0}"#, r#"[["a"]]"#),            // not a pair
            (r#"{"a": 0}"#, r#"[["a", "b", "c"]]"#),  // not a pair
            (r#"{"a": 0}"#, r#"[["a", 1]]"#),         // not strings
            (r#"{"a": 0}"#, r#"[1]"#),                // not a merge
            (r#"[]"#, r#"[]"#),                       // not an object
            (r#"{"a": 0}"#, r#"{}"#),                 // not a list
        ] {
            assert!(read(&doc(vocab, merges)).is_none(), "{vocab} {merges}");
        }
        for text in [
            r#"{"model": {"type": "BPE", "vocab": {}}}"#.to_string(),                  // no merges
            r#"{"model": {"type": "BPE", "merges": []}}"#.to_string(),                 // no vocab
            r#"{"model": {"type": "WordPiece", "vocab": {}, "merges": []}}"#.to_string(),
            r#"{"model": {"vocab": {}, "merges": [], "vocab": {}}}"#.to_string(),      // a key twice
            r#"{"model": {"vocab": {}, "merges": []}, "model": {"vocab": {}, "merges": []}}"#.to_string(),
            doc("{}", "[]").replace("\"NFC\"", "\"NFX\""),                                 // a stage refused
            doc("{}", "[]") + "x",                                                         // trailing text
            r#"{"model": {"vocab": {"\ud800": 0}, "merges": []}}"#.to_string(),       // a lone surrogate
        ] {
            assert!(read(&text).is_none(), "{text}");
        }
    }
}
