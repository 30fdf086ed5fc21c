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
    let mut rank: FxHashMap<&str, u32> = FxHashMap::default();
    rank.reserve(vocab.len());
    let mut tokens = Vec::with_capacity(vocab.len());
    let mut buf = Vec::new();
    for &(text, id) in vocab {
        if special_of.get(text) == Some(&id) {
            continue; // an added token also listed in the vocab
        }
        decode_gpt2(&map, text, &mut buf).ok_or(Fault::Irregular)?;
        tokens.push((id, buf.clone()));
        rank.insert(text, id);
    }
    let taken: FxHashMap<u32, ()> = tokens.iter().map(|&(id, _)| (id, ())).collect();
    if specials.iter().any(|(_, id)| taken.contains_key(id)) {
        return Err(Fault::Irregular);
    }
    let mut made: FxHashMap<u32, usize> = FxHashMap::default();
    made.reserve(merges.len());
    let mut triples = Vec::with_capacity(merges.len());
    let mut last: i64 = -1;
    let mut merged = String::new();
    for (k, &(l, r)) in merges.iter().enumerate() {
        merged.clear();
        merged.push_str(l);
        merged.push_str(r);
        let ids = (rank.get(l), rank.get(r), rank.get(merged.as_str()));
        let (Some(&lid), Some(&rid), Some(&mid)) = ids else {
            return Err(Fault::Merge(k, merge_fault(&map, &rank, &made, l, r, &merged)));
        };
        if made.contains_key(&mid) || (mid as i64) <= last {
            return Err(Fault::Merge(k, merge_fault(&map, &rank, &made, l, r, &merged)));
        }
        made.insert(mid, k);
        triples.push((lid, rid, mid));
        last = mid as i64;
    }
    let mut kept = Vec::with_capacity(tokens.len());
    for (id, bytes) in tokens {
        if bytes.len() > 1 && !made.contains_key(&id) {
            if ignore_merges {
                return Err(Fault::Irregular);
            }
            continue; // the merge rule can never produce it; nor will bytepair
        }
        kept.push((id, bytes));
    }
    Ok(ByteVocab { tokens: kept, triples })
}

fn merge_fault(
    map: &[Option<u8>; 324],
    rank: &FxHashMap<&str, u32>,
    made: &FxHashMap<u32, usize>,
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
        Some(mid) => match made.get(mid) {
            Some(&j) => MergeFault::MadeBy(j),
            None => MergeFault::IdOrder(*mid),
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
}
