//! The per-token work of loading vocabulary files, done once in Rust: the
//! lines of a `.tiktoken` file (canonical base64 and a rank), and a
//! byte-level vocabulary with its merge list (Hugging Face's `model.vocab` +
//! `model.merges`, GPT-2's `vocab.json` + `merges.txt`): GPT-2's
//! byte-to-unicode decoding, the checks that bytepair's rule (merge the pair
//! making the token with the lowest id) gives the merge list's ids, and the
//! merges as id triples.
//!
//! Both are fast paths of the Python loaders: anything irregular (a line
//! that is not `base64 rank`, a character outside GPT-2's map, a special
//! token on a taken id, ...) gives `None` / `Fault::Irregular`, and the
//! loader's checked Python path then names the fault as before. Only a
//! merge that fails bytepair's rule on an otherwise regular file (Llama 3's
//! two merges making one token) is reported here, as a typed `MergeFault`.

use rustc_hash::FxHashMap;

/// The largest rank a `.tiktoken` line may hold (ranks are 32-bit ids, one
/// value left for "none"), as the Python loader's `MAX_RANK`.
pub(crate) const MAX_RANK: u64 = (1 << 32) - 2;

fn b64_value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Canonical standard base64 (what tiktoken writes, and the only spelling
/// whose re-encoding is the same text) to its bytes; `=` alone is the empty
/// token (Whisper's file writes it so). None for anything else.
fn canonical_b64(text: &[u8]) -> Option<Vec<u8>> {
    if text == b"=" {
        return Some(Vec::new());
    }
    if text.is_empty() || text.len() % 4 != 0 {
        return None;
    }
    let pad = text.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return None;
    }
    let body = &text[..text.len() - pad];
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in body {
        acc = (acc << 6) | b64_value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // the bits left over must be zero (a non-canonical spelling re-encodes differently)
    (acc == 0 && !out.is_empty()).then_some(out)
}

/// The `(rank, token)` of every line of a strictly regular `.tiktoken` file:
/// lines `BASE64 RANK` cut by `\n` (empty lines skipped), canonical base64,
/// ASCII digits, distinct ranks of at most `MAX_RANK` and distinct tokens.
/// None for anything else: the checked parse then reads the file (and
/// names what is wrong, if anything).
pub(crate) fn tiktoken_ranks(data: &[u8]) -> Option<Vec<(u32, Vec<u8>)>> {
    let mut out = Vec::with_capacity(data.len() / 12);
    let mut seen_rank: FxHashMap<u32, ()> = FxHashMap::default();
    seen_rank.reserve(data.len() / 12);
    for line in data.split(|&b| b == b'\n') {
        if line.is_empty() {
            continue;
        }
        let space = line.iter().position(|&b| b == b' ')?;
        let (b64, digits) = (&line[..space], &line[space + 1..]);
        if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let rank = digits.iter().fold(0u64, |v, &d| v.saturating_mul(10).saturating_add((d - b'0') as u64));
        if rank > MAX_RANK {
            return None;
        }
        let token = canonical_b64(b64)?;
        if seen_rank.insert(rank as u32, ()).is_some() {
            return None;
        }
        out.push((rank as u32, token));
    }
    let mut tokens: FxHashMap<&[u8], ()> = FxHashMap::default();
    tokens.reserve(out.len());
    for (_, t) in &out {
        if tokens.insert(t.as_slice(), ()).is_some() {
            return None;
        }
    }
    Some(out)
}

/// GPT-2's byte-to-unicode map inverted: the byte of each printable
/// character (`bytes_to_unicode` of GPT-2's `encoder.py`), by code point.
fn unicode_to_byte() -> [Option<u8>; 324] {
    let mut map = [None; 324];
    let mut n = 0;
    for b in 0..=255u8 {
        let keep = (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        if keep {
            map[b as usize] = Some(b);
        } else {
            map[256 + n] = Some(b);
            n += 1;
        }
    }
    map
}

/// A token's bytes from GPT-2's printable form; None if a character is
/// outside the map.
fn decode_gpt2(map: &[Option<u8>; 324], token: &str, out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    for c in token.chars() {
        out.push(*map.get(c as usize)?.as_ref()?);
    }
    Some(())
}

/// Why merge `k` (left, right) of a byte-level merge list cannot be run by
/// bytepair's rule, in the order the checks are made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MergeFault {
    /// side 0 or 1 has a character outside GPT-2's map
    Char(usize),
    /// side 0 or 1 is not a token of the vocabulary
    UnknownPart(usize),
    /// left + right is not a token of the vocabulary
    UnknownMerged,
    /// an earlier merge (its index) makes the same token
    MadeBy(usize),
    /// the token made (its id) has a lower id than an earlier merge's
    IdOrder(u32),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fault {
    /// something the checked Python path names (a token outside GPT-2's
    /// map, a special token on a taken id, a token no merge makes under
    /// `ignore_merges`)
    Irregular,
    Merge(usize, MergeFault),
}

/// A byte-level vocabulary with its merges, checked.
#[derive(Debug, Default)]
pub(crate) struct ByteVocab {
    /// (id, bytes) of every token kept, in the vocabulary's order
    pub(crate) tokens: Vec<(u32, Vec<u8>)>,
    /// (left id, right id, merged id) of every merge, in order
    pub(crate) triples: Vec<(u32, u32, u32)>,
}

/// The tokens and merges of a byte-level vocabulary (`vocab`: token text
/// and id, in the file's order; `specials`: the added tokens, which leave
/// the vocabulary where they have the same text and id), checked as
/// Python's `bytepair.formats.convert.byte_ranks` checks them: every merge
/// makes a token of the vocabulary from two of its tokens, no two merges
/// make the same token, the ids made grow with the merge order. Multi-byte
/// tokens no merge makes are left out (refused under `ignore_merges`).
pub(crate) fn byte_vocab(
    vocab: &[(&str, u32)],
    specials: &[(&str, u32)],
    merges: &[(&str, &str)],
    ignore_merges: bool,
) -> Result<ByteVocab, Fault> {
    let map = unicode_to_byte();
    let special_of: FxHashMap<&str, u32> = specials.iter().copied().collect();
    let special_ids: rustc_hash::FxHashSet<u32> = specials.iter().map(|&(_, id)| id).collect();
    let mut rank: FxHashMap<&str, u32> = FxHashMap::default();
    rank.reserve(vocab.len());
    let mut tokens = Vec::with_capacity(vocab.len());
    let mut buf = Vec::new();
    for &(text, id) in vocab {
        if special_of.get(text) == Some(&id) {
            continue; // an added token also listed in the vocab
        }
        if special_ids.contains(&id) {
            return Err(Fault::Irregular); // a special token on a token's id
        }
        decode_gpt2(&map, text, &mut buf).ok_or(Fault::Irregular)?;
        tokens.push((id, buf.clone()));
        rank.insert(text, id);
    }
    let mut triples: Vec<(u32, u32, u32)> = Vec::with_capacity(merges.len());
    let mut last: i64 = -1;
    let mut merged = String::new();
    for (k, &(l, r)) in merges.iter().enumerate() {
        merged.clear();
        merged.push_str(l);
        merged.push_str(r);
        let ids = (rank.get(l), rank.get(r), rank.get(merged.as_str()));
        // the ids made grow with the merges: a token made twice is also one made at or below the last id
        match ids {
            (Some(&lid), Some(&rid), Some(&mid)) if (mid as i64) > last => {
                triples.push((lid, rid, mid));
                last = mid as i64;
            }
            _ => return Err(Fault::Merge(k, merge_fault(&map, &rank, &triples, l, r, &merged))),
        }
    }
    // the ids made, sorted (they grow with the merges)
    let made = |id: u32| triples.binary_search_by_key(&id, |t| t.2).is_ok();
    let mut kept = Vec::with_capacity(tokens.len());
    for (id, bytes) in tokens {
        if bytes.len() > 1 && !made(id) {
            if ignore_merges {
                return Err(Fault::Irregular);
            }
            continue; // the merge rule can never produce it; nor will bytepair
        }
        kept.push((id, bytes));
    }
    Ok(ByteVocab { tokens: kept, triples })
}

/// What is wrong with a merge (left `l`, right `r`) after the merges `made` so far (their triples).
fn merge_fault(
    map: &[Option<u8>; 324],
    rank: &FxHashMap<&str, u32>,
    made: &[(u32, u32, u32)],
    l: &str,
    r: &str,
    merged: &str,
) -> MergeFault {
    let mut buf = Vec::new();
    for (side, part) in [l, r].into_iter().enumerate() {
        if decode_gpt2(map, part, &mut buf).is_none() {
            return MergeFault::Char(side);
        }
        if !rank.contains_key(part) {
            return MergeFault::UnknownPart(side);
        }
    }
    match rank.get(merged) {
        None => MergeFault::UnknownMerged,
        Some(&mid) => match made.iter().position(|t| t.2 == mid) {
            Some(j) => MergeFault::MadeBy(j),
            None => MergeFault::IdOrder(mid),
        },
    }
}

/// Whether two merges of a list make the same text (`left + right`), the
/// text of merge `k` being `made[ends[k - 1]..ends[k]]` (code points, all
/// the merges' texts in one buffer: no string made per merge).
pub(crate) fn merges_repeat_a_token(made: &[u32], ends: &[usize]) -> bool {
    let mut seen: FxHashMap<&[u32], ()> = FxHashMap::default();
    seen.reserve(ends.len());
    let mut start = 0;
    ends.iter().any(|&end| {
        let text = &made[start..end];
        start = end;
        seen.insert(text, ()).is_some()
    })
}

/// A merge written as Hugging Face's legacy `"left right"` string: exactly
/// one space, both sides non-empty.
pub(crate) fn split_legacy_merge(m: &str) -> Option<(&str, &str)> {
    let (l, r) = m.split_once(' ')?;
    (!l.is_empty() && !r.is_empty() && !r.contains(' ')).then_some((l, r))
}

/// What the pipeline route of the `tokenizer.json` loader needs of a file
/// without Python objects for its vocabulary and merges: the document with
/// `model.vocab` and `model.merges` written as `{}` and `[]` (every other
/// byte as the file has it, for Python's own JSON reader), where those two
/// values are (in code points, to parse them later from the same text),
/// and what the loader's routing asks of them.
#[derive(Debug, PartialEq)]
pub(crate) struct HfOutline {
    pub(crate) small: String,
    /// code-point spans of the `model.vocab` object and the `model.merges` list (byte spans when not asked for)
    pub(crate) vocab_span: (usize, usize),
    pub(crate) merges_span: (usize, usize),
    /// the same spans in bytes
    pub(crate) vocab_bytes: (usize, usize),
    pub(crate) merges_bytes: (usize, usize),
    /// distinct tokens (and ids) of `model.vocab`
    pub(crate) n_vocab: usize,
    /// whether the ids are exactly 0 .. n_vocab - 1
    pub(crate) dense: bool,
    /// `(token, id)` of the vocabulary's tokens that are the `content` of an added token
    pub(crate) added_in_vocab: Vec<(String, u32)>,
    pub(crate) n_merges: usize,
    /// whether two merges make the same text (`merges_repeat`), when found in the same pass
    pub(crate) repeats: Option<bool>,
}

/// The outline of a `tokenizer.json` text, or None for anything not
/// strictly regular: not one object, a key twice at the top level or in
/// `model`, no `model.vocab` object or `model.merges` list, an id that is
/// not an integer of 0 to `MAX_RANK`, one token or id twice, a merge item
/// that is neither a string nor a pair of strings, a lone surrogate. The
/// caller then reads the whole file as before (and names what is wrong).
///
/// `points`: whether the spans in code points are wanted (a Python `str`'s slices); without them (the
/// file's bytes are sliced instead) `vocab_span` and `merges_span` are the byte spans, and the text is
/// not counted through.
pub(crate) fn hf_outline(text: &str, points: bool) -> Option<HfOutline> {
    let b = text.as_bytes();
    let (top, model) = object_members(b, ws(b, 0), Some("model"))?;
    if ws(b, top.end) != b.len() {
        return None;
    }
    let model = model?;
    let (vs, ve) = model.get("vocab")?;
    let (gs, ge) = model.get("merges")?;
    if b[vs] != b'{' || b[gs] != b'[' {
        return None;
    }
    let contents = match top.get("added_tokens") {
        Some((s, e)) => added_contents(&text[s..e])?,
        None => Vec::new(),
    };
    let (n_vocab, dense, added_in_vocab) = vocab_facts(&text[vs..ve], &contents)?;
    // whether two merges make one token is asked of byte-level files without a normalizer (the loader's
    // routing, the pipeline's byte model): found in this pass for them, on demand for the others
    let byte_level = |key: &str| top.get(key).is_some_and(|(s, e)| text[s..e].contains("\"ByteLevel\""));
    let plain = top.get("normalizer").is_none_or(|(s, e)| &text[s..e] == "null");
    let (n_merges, repeats) = if byte_level("pre_tokenizer") && plain {
        let (n, repeats) = merge_facts(&text[gs..ge])?;
        (n, Some(repeats))
    } else {
        (merge_items_regular(&text[gs..ge])?, None)
    };
    let (first, second) = if vs < gs { (((vs, ve), "{}"), ((gs, ge), "[]")) } else { (((gs, ge), "[]"), ((vs, ve), "{}")) };
    let mut small = String::with_capacity(text.len() - (ve - vs) - (ge - gs) + 4);
    small.push_str(&text[..first.0 .0]);
    small.push_str(first.1);
    small.push_str(&text[first.0 .1..second.0 .0]);
    small.push_str(second.1);
    small.push_str(&text[second.0 .1..]);
    // byte offsets to code points, counted in one pass over the text
    let mut offsets = [vs, ve, gs, ge];
    offsets.sort_unstable();
    let (mut at, mut count) = (0, 0);
    let mut counted = offsets;
    for (i, &off) in offsets.iter().enumerate().filter(|_| points) {
        count += text[at..off].chars().count();
        at = off;
        counted[i] = count;
    }
    let point = |off: usize| counted[offsets.iter().position(|&o| o == off).unwrap_or(0)];
    Some(HfOutline {
        small,
        vocab_span: (point(vs), point(ve)),
        merges_span: (point(gs), point(ge)),
        vocab_bytes: (vs, ve),
        merges_bytes: (gs, ge),
        n_vocab,
        dense,
        added_in_vocab,
        n_merges,
        repeats,
    })
}

/// The first byte at or after `i` that is not JSON whitespace.
fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the JSON string starting at `i` (its opening quote), past its closing quote.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        i += memchr::memchr2(b'"', b'\\', &b[i..])?;
        match b[i] {
            b'"' => return Some(i + 1),
            _ => i += 2, // an escape: the next byte is never the string's end
        }
    }
    None
}

/// The end of the JSON value starting at `i`, found without reading it (its
/// strings and nesting followed, nothing checked: the value is parsed later).
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let end = b[i..].iter().position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'));
            let end = end.map_or(b.len(), |n| i + n);
            (end > i).then_some(end)
        }
    }
}

/// The members of the JSON object starting at `i`: each key (its text) and
/// its value's byte span; None if it is not an object or a key is repeated.
struct Members {
    items: Vec<(String, (usize, usize))>,
    end: usize,
}

impl Members {
    fn get(&self, key: &str) -> Option<(usize, usize)> {
        self.items.iter().find(|(k, _)| k == key).map(|&(_, span)| span)
    }
}

/// With `inner`, the members of that key's value too, when it is an object (read in the same pass).
fn object_members(b: &[u8], i: usize, inner: Option<&str>) -> Option<(Members, Option<Members>)> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut items: Vec<(String, (usize, usize))> = Vec::new();
    let mut nested = None;
    let mut j = ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Some((Members { items, end: j + 1 }, nested));
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, j)?;
        let key: String = serde_json::from_slice(&b[j..key_end]).ok()?;
        if items.iter().any(|(k, _)| *k == key) {
            return None; // Python keeps the last of two equal keys: left to the whole reading
        }
        j = ws(b, key_end);
        if b.get(j) != Some(&b':') {
            return None;
        }
        let start = ws(b, j + 1);
        let end = if Some(key.as_str()) == inner && b.get(start) == Some(&b'{') {
            let (members, _) = object_members(b, start, None)?;
            let end = members.end;
            nested = Some(members);
            end
        } else {
            value_end(b, start)?
        };
        items.push((key, (start, end)));
        j = ws(b, end);
        match b.get(j) {
            Some(b',') => j = ws(b, j + 1),
            Some(b'}') => return Some((Members { items, end: j + 1 }, nested)),
            _ => return None,
        }
    }
}

/// The `content` strings of an `added_tokens` list (its other fields are read by the loader).
fn added_contents(text: &str) -> Option<Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let items = value.as_array()?;
    Some(items.iter().filter_map(|t| t.get("content")?.as_str().map(str::to_string)).collect())
}

/// A JSON string read as borrowed text where it has no escape.
struct CowStr;

impl<'de> serde::de::DeserializeSeed<'de> for CowStr {
    type Value = std::borrow::Cow<'de, str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for CowStr {
    type Value = std::borrow::Cow<'de, str>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Borrowed(s))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Owned(s.to_string()))
    }
}

/// (distinct tokens, ids exactly 0 .. n - 1, the tokens among `contents` with their ids) of a
/// `model.vocab` object whose tokens and ids are distinct and whose ids are integers of 0 to `MAX_RANK`.
/// Tokens are told apart by a 64-bit hash of their text: two equal hashes (two equal tokens, or
/// rarely two tokens whose hashes collide) give None, and the file is read whole, as any irregular one.
#[allow(clippy::type_complexity)]
fn vocab_facts(text: &str, contents: &[String]) -> Option<(usize, bool, Vec<(String, u32)>)> {
    use serde::de::{MapAccess, Visitor};
    use std::hash::Hasher;
    fn hash(s: &str) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        h.write(s.as_bytes());
        h.finish()
    }
    struct V<'c>(&'c [String], usize);
    impl<'de> Visitor<'de> for V<'_> {
        type Value = (usize, bool, Vec<(String, u32)>);

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a vocabulary")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let refuse = || serde::de::Error::custom("irregular");
            let wanted: rustc_hash::FxHashSet<&str> = self.0.iter().map(String::as_str).collect();
            let wanted_hashes: rustc_hash::FxHashSet<u64> = self.0.iter().map(|c| hash(c)).collect();
            // the hashes, sorted at the end to find two equal ones (no set grown token by token)
            let mut seen: Vec<u64> = Vec::with_capacity(self.1 / 12); // about one entry per 12 bytes
            let (mut bits, mut top, mut found) = (Vec::<u64>::new(), 0u64, Vec::new());
            while let Some(token) = map.next_key_seed(CowStr)? {
                let id: u64 = map.next_value()?;
                if id > MAX_RANK || token.is_empty() {
                    return Err(refuse()); // the whole reading names it
                }
                let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
                if word >= bits.len() {
                    if word > 4 * (seen.len() + 1024) {
                        return Err(refuse()); // ids far apart: no bitset of them (the whole reading bounds them)
                    }
                    bits.resize(word + 1, 0);
                }
                if bits[word] & bit != 0 {
                    return Err(refuse());
                }
                bits[word] |= bit;
                top = top.max(id);
                let h = hash(&token);
                seen.push(h);
                if wanted_hashes.contains(&h) && wanted.contains(token.as_ref()) {
                    found.push((token.into_owned(), id as u32));
                }
            }
            seen.sort_unstable();
            if seen.windows(2).any(|w| w[0] == w[1]) {
                return Err(refuse());
            }
            let n = seen.len();
            Ok((n, n == 0 || top + 1 == n as u64, found))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = serde::Deserializer::deserialize_map(&mut de, V(contents, text.len())).ok()?;
    de.end().ok()?;
    Some(out)
}

/// The `(token, id)` items of a `model.vocab` object (the text of the span
/// an outline found: the outline checked them), borrowed where they have no escape.
#[cfg(feature = "python")] // read by the bindings only
pub(crate) fn vocab_items(text: &str) -> Option<Vec<(std::borrow::Cow<'_, str>, u32)>> {
    use serde::de::{MapAccess, Visitor};
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<(std::borrow::Cow<'de, str>, u32)>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a vocabulary")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(map.size_hint().unwrap_or(1 << 16));
            while let Some(token) = map.next_key_seed(CowStr)? {
                let id: u64 = map.next_value()?;
                if id > MAX_RANK {
                    return Err(serde::de::Error::custom("irregular"));
                }
                out.push((token, id as u32));
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = serde::Deserializer::deserialize_map(&mut de, V).ok()?;
    de.end().ok()?;
    Some(out)
}

/// The `(left, right)` of a `model.merges` list whose items are `"left right"`
/// (`split_legacy_merge`) or pairs of non-empty strings; None for any other item.
#[cfg(feature = "python")] // read by the bindings only
pub(crate) fn merge_items(text: &str) -> Option<Vec<(std::borrow::Cow<'_, str>, std::borrow::Cow<'_, str>)>> {
    use std::borrow::Cow;
    struct L;
    impl<'de> serde::de::Visitor<'de> for L {
        type Value = Vec<(Cow<'de, str>, Cow<'de, str>)>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a merge list")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let refuse = || serde::de::Error::custom("irregular");
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(1 << 16));
            while let Some((a, b)) = seq.next_element_seed(MergeItem)? {
                let pair = match (a, b) {
                    (a, Some(b)) => (!a.is_empty() && !b.is_empty()).then_some((a, b)),
                    (Cow::Borrowed(a), None) => split_legacy_merge(a).map(|(l, r)| (Cow::Borrowed(l), Cow::Borrowed(r))),
                    (Cow::Owned(a), None) => {
                        split_legacy_merge(&a).map(|(l, r)| (Cow::Owned(l.to_string()), Cow::Owned(r.to_string())))
                    }
                };
                out.push(pair.ok_or_else(refuse)?);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = serde::Deserializer::deserialize_seq(&mut de, L).ok()?;
    de.end().ok()?;
    Some(out)
}

/// A merge item: a string (its text, None), or a pair of strings.
struct MergeItem;

impl<'de> serde::de::DeserializeSeed<'de> for MergeItem {
    type Value = (std::borrow::Cow<'de, str>, Option<std::borrow::Cow<'de, str>>);

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MergeItem {
    type Value = (std::borrow::Cow<'de, str>, Option<std::borrow::Cow<'de, str>>);

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a merge")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok((std::borrow::Cow::Borrowed(s), None))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok((std::borrow::Cow::Owned(s.to_string()), None))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let refuse = || serde::de::Error::custom("irregular");
        let a = seq.next_element_seed(CowStr)?.ok_or_else(refuse)?;
        let b = seq.next_element_seed(CowStr)?.ok_or_else(refuse)?;
        match seq.next_element::<serde::de::IgnoredAny>()? {
            None => Ok((a, Some(b))),
            Some(_) => Err(refuse()),
        }
    }
}

/// The number of items of a `model.merges` list of strings and pairs of strings (its strings
/// read, escapes and all, but not kept); None for anything else.
fn merge_items_regular(text: &str) -> Option<usize> {
    struct List;
    impl<'de> serde::de::Visitor<'de> for List {
        type Value = usize;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a merge list")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut n = 0;
            while seq.next_element_seed(MergeItem)?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = serde::Deserializer::deserialize_seq(&mut de, List).ok()?;
    de.end().ok()?;
    Some(out)
}

/// Whether two items of a `model.merges` list of strings and pairs of strings make the same text
/// (`left + right`; an item `"a b"` without its first space, as `merges_repeat_a_token`); None
/// for any other list.
pub(crate) fn merges_repeat(text: &str) -> Option<bool> {
    merge_facts(text).map(|(_, repeats)| repeats)
}

/// (items, whether two make the same text) of a `model.merges` list of strings and pairs of strings.
fn merge_facts(text: &str) -> Option<(usize, bool)> {
    use serde::de::{SeqAccess, Visitor};
    struct List;
    impl<'de> Visitor<'de> for List {
        type Value = (usize, bool);

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a merge list")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // every merge's text in one buffer (no string made per merge), then a set of its slices
            let (mut made, mut ends) = (Vec::<u8>::new(), Vec::<usize>::new());
            while let Some((a, b)) = seq.next_element_seed(MergeItem)? {
                match b {
                    Some(b) => {
                        made.extend_from_slice(a.as_bytes());
                        made.extend_from_slice(b.as_bytes());
                    }
                    None => match a.split_once(' ') {
                        Some((l, r)) => {
                            made.extend_from_slice(l.as_bytes());
                            made.extend_from_slice(r.as_bytes());
                        }
                        None => made.extend_from_slice(a.as_bytes()),
                    },
                }
                ends.push(made.len());
            }
            let mut seen: rustc_hash::FxHashSet<&[u8]> = Default::default();
            seen.reserve(ends.len());
            let mut start = 0;
            let repeats = !ends.iter().all(|&end| {
                let new = seen.insert(&made[start..end]);
                start = end;
                new
            });
            Ok((ends.len(), repeats))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = serde::Deserializer::deserialize_seq(&mut de, List).ok()?;
    de.end().ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn base64_is_read_only_in_its_canonical_spelling() {
        for token in [&b"a"[..], b"ab", b"abc", b"abcd", b"\xff\x00", b" hello"] {
            assert_eq!(canonical_b64(b64(token).as_bytes()).as_deref(), Some(token));
        }
        assert_eq!(canonical_b64(b"="), Some(Vec::new()));
        for bad in [&b"YR=="[..], b"YQ=", b"YQ", b"Y===", b"====", b"", b"Y Q=", b"YQ==YQ=="] {
            assert_eq!(canonical_b64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn tiktoken_lines_are_strict_or_left_to_the_checked_parse() {
        assert_eq!(tiktoken_ranks(b"YQ== 0\nYg== 1\n"), Some(vec![(0, b"a".to_vec()), (1, b"b".to_vec())]));
        assert_eq!(tiktoken_ranks(b"YQ== 0\n\nYg== 1"), Some(vec![(0, b"a".to_vec()), (1, b"b".to_vec())]));
        for irregular in [&b"YQ== 0\r\n"[..], b"YQ== 0\nYg== 0\n", b"YQ== 0\nYQ== 1\n", b"YQ==  0\n", b"YQ== x\n",
                          b"YQ==\n", b"YQ== 4294967295\n", b"YR== 0\n", b" YQ== 0\n", b"YQ== 0 \n"] {
            assert_eq!(tiktoken_ranks(irregular), None, "{:?}", String::from_utf8_lossy(irregular));
        }
    }

    fn alphabet() -> Vec<String> {
        let map = unicode_to_byte();
        let mut chars = vec![String::new(); 256];
        for (c, b) in map.iter().enumerate() {
            if let Some(b) = b {
                chars[*b as usize] = char::from_u32(c as u32).unwrap().to_string();
            }
        }
        chars
    }

    #[test]
    fn byte_vocab_decodes_gpt2_characters_and_ranks_merges() {
        let chars = alphabet();
        assert_eq!(chars[b' ' as usize], "Ġ");
        let mut vocab: Vec<(&str, u32)> = chars.iter().enumerate().map(|(i, c)| (c.as_str(), i as u32)).collect();
        vocab.extend([("Ġa", 256), ("Ġab", 257), ("zz", 258), ("<|x|>", 259)]);
        let merges = [("Ġ", "a"), ("Ġa", "b")];
        let got = byte_vocab(&vocab, &[("<|x|>", 259)], &merges, false).unwrap();
        assert_eq!(got.triples, vec![(32, 97, 256), (256, 98, 257)]);
        assert!(got.tokens.contains(&(257, b" ab".to_vec())));
        assert!(!got.tokens.iter().any(|(id, _)| *id == 258 || *id == 259)); // no merge makes "zz"; the special leaves
        assert_eq!(byte_vocab(&vocab, &[("<|x|>", 259)], &merges, true).unwrap_err(), Fault::Irregular);
        let mut outside = vocab.clone();
        outside.push(("\u{2581}x", 260)); // not in GPT-2's map
        assert_eq!(byte_vocab(&outside, &[], &merges, false).unwrap_err(), Fault::Irregular);
        assert_eq!(byte_vocab(&vocab, &[("<|y|>", 100)], &merges, false).unwrap_err(), Fault::Irregular); // id taken
        let vocab = &vocab[..258];
        let fault = |m: &[(&str, &str)]| byte_vocab(vocab, &[], m, false).unwrap_err();
        assert_eq!(fault(&[("Ġ", "a"), ("Ġ", "ab")]), Fault::Merge(1, MergeFault::UnknownPart(1)));
        assert_eq!(fault(&[("Ġ", "x")]), Fault::Merge(0, MergeFault::UnknownMerged));
        assert_eq!(fault(&[("Ġ", "a"), ("Ġa", "b"), ("Ġ", "a")]), Fault::Merge(2, MergeFault::MadeBy(0)));
        assert_eq!(fault(&[("Ġa", "b"), ("Ġ", "a")]), Fault::Merge(1, MergeFault::IdOrder(256)));
        assert_eq!(fault(&[("Ġ", "a"), ("a", "\u{1}")]), Fault::Merge(1, MergeFault::Char(1)));
    }

    #[test]
    fn legacy_merges_have_one_space() {
        assert_eq!(split_legacy_merge("a b"), Some(("a", "b")));
        for bad in ["ab", "a  b", " a", "a ", "a b c"] {
            assert_eq!(split_legacy_merge(bad), None);
        }
        let made = |texts: &[&str]| {
            let ends: Vec<usize> = texts.iter().scan(0, |n, t| { *n += t.chars().count(); Some(*n) }).collect();
            merges_repeat_a_token(&texts.iter().flat_map(|t| t.chars().map(|c| c as u32)).collect::<Vec<_>>(), &ends)
        };
        assert!(made(&["abc", "x", "abc"])); // ("a", "bc"), ("x", ""), ("ab", "c")
        assert!(!made(&["ab", "abc", "a", "b"]));
        assert!(!made(&[]));
    }

    #[test]
    fn hf_outline_cuts_out_vocab_and_merges() {
        let text = r#"{"added_tokens": [{"id": 3, "content": "ab"}, {"id": 4, "content": "<s>"}],
            "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "\u00e9": 2, "ab": 3}, "x": [1, {"y": "]"}],
            "merges": ["a b", ["b", "a"]]}, "z": "é"}"#;
        let o = hf_outline(text, true).unwrap();
        assert_eq!(hf_outline(text, false).unwrap().vocab_span, o.vocab_bytes);
        assert_eq!(o.small, text.replace(r#"{"a": 0, "b": 1, "\u00e9": 2, "ab": 3}"#, "{}").replace(r#"["a b", ["b", "a"]]"#, "[]"));
        let chars: Vec<char> = text.chars().collect();
        let span = |(s, e): (usize, usize)| chars[s..e].iter().collect::<String>();
        assert_eq!(span(o.vocab_span), r#"{"a": 0, "b": 1, "\u00e9": 2, "ab": 3}"#);
        assert_eq!(span(o.merges_span), r#"["a b", ["b", "a"]]"#);
        assert_eq!((o.n_vocab, o.dense, o.added_in_vocab.clone(), o.n_merges), (4, true, vec![("ab".to_string(), 3)], 2));
        let merges = |t: &str| { let o = hf_outline(t, true).unwrap(); merges_repeat(&t[o.merges_bytes.0..o.merges_bytes.1]) };
        assert_eq!(merges(text), Some(false));
        assert_eq!(o.repeats, None); // a normalizer: found on demand
        let byte = text.replace(r#""model""#, r#""pre_tokenizer": {"type": "ByteLevel"}, "normalizer": null, "model""#);
        assert_eq!(hf_outline(&byte, true).unwrap().repeats, Some(false));
        assert_eq!(hf_outline(&byte.replace(r#"["b", "a"]"#, r#""a b""#), true).unwrap().repeats, Some(true));
        assert_eq!(merges(&text.replace(r#"["b", "a"]"#, r#"["a", "b"]"#)), Some(true));
        assert_eq!(merges(&text.replace(r#"["b", "a"]"#, r#""ab""#)), Some(true)); // no space: its text as it is
        let holes = text.replace(r#""ab": 3"#, r#""ab": 7"#);
        assert!(!hf_outline(&holes, true).unwrap().dense);
        for irregular in [
            text.replace(r#""b": 1"#, r#""b": 0"#),           // an id twice
            text.replace(r#""b": 1"#, r#""a": 1"#),           // a token twice
            text.replace(r#""b": 1"#, r#""b": -1"#),          // not an id
            text.replace(r#""b": 1"#, r#""b": 1.0"#),
            text.replace(r#""b": 1"#, r#""b": 4294967295"#),   // too large
            text.replace(r#"["b", "a"]"#, r#"["b"]"#),        // not a pair
            text.replace(r#"["b", "a"]"#, r#"1"#),
            text.replace(r#""x": [1"#, r#""vocab": [1"#),     // a key twice
            text.replace(r#""z": "é""#, r#""model": 1"#),
            text.replace(r#""merges""#, r#""merge""#),          // no merges
            text.replace(r#""\u00e9""#, r#""\ud800""#),         // a lone surrogate
            format!("{text}x"),
            text.replace(r#""merges": ["a b""#, r#""merges": {"a": "b"}, "m": ["a b""#),
        ] {
            assert!(hf_outline(&irregular, true).is_none(), "{irregular}");
        }
    }
}
