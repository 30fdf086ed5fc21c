//! SentencePiece's BPE model as `sentencepiece` itself runs it, for `.model`
//! files: its normalizer (`normalizer.cc`: precompiled charsmap by longest
//! match, user-defined symbols matched first on the raw text, dummy prefix
//! or suffix, extra-whitespace removal, `▁` escaping, `norm_to_orig`
//! offsets), its BPE (`bpe_model.cc`: the adjacent pair whose concatenation
//! is the piece of highest score merges first, leftmost on ties; user-defined
//! pieces frozen; unused pieces merged through and split back), the
//! output (`PopulateSentencePieceText`: runs of unknown characters fused into
//! one `<unk>`, or byte fallback with its offsets) and its decoder
//! (`SentencePieceProcessor::Decode`), one file per stage: normalizer.rs,
//! merge.rs (through the word map, `crate::cache::words`), output.rs, decode.rs; hf_cut.rs
//! is the same word cut for Hugging Face BPE files of this layout.
//!
//! The description is an extension of Hugging Face's schema:
//! `"model": {"type": "SentencePieceBPE", "pieces": [[text, score, type], ...],
//! "byte_fallback": bool, "unk_surface": str}`, `"normalizer": {"type":
//! "SentencePiece", "precompiled_charsmap": base64, "add_dummy_prefix",
//! "remove_extra_whitespaces", "escape_whitespaces",
//! "treat_whitespace_as_suffix"}` and `"decoder": {"type": "SentencePiece"}`
//! (`python/bytepair/formats/sentencepiece.py` writes it).
//!
//! Speed: pairs are looked up by (left, right) symbol keys in a table built
//! from every split of every piece (a symbol is a piece, or one character
//! that is part of some piece); when no piece has the whitespace marker
//! after another character (the usual `split_by_whitespace` models), the
//! text is cut before each word's marker and words are merged separately
//! and cached (no merge can cross such a cut, so the result is the same).

mod decode;
mod hf_cut;
mod merge;
mod normalizer;
mod output;

pub(crate) use hf_cut::{cut_before, hf_cut_marker};

use super::spec::SpSpec;
use crate::text::charsmap::CharsMap;
use crate::error::{Error, Result};
use normalizer::{user_matcher, Matcher, SpNormalizer};
use rustc_hash::FxHashMap;

pub(crate) const NORMAL: u8 = 1;
pub(crate) const UNKNOWN: u8 = 2;
pub(crate) const CONTROL: u8 = 3;
pub(crate) const USER_DEFINED: u8 = 4;
pub(crate) const UNUSED: u8 = 5;
pub(crate) const BYTE: u8 = 6;

const NONE: u32 = u32::MAX;
const TABLE_CHARS: usize = 0x800;

fn fail(msg: impl Into<String>) -> Error {
    Error::Format(msg.into())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cut {
    /// no cuts: the whole text is one sequence
    None,
    /// before each whitespace marker that follows another character
    BeforeSpace,
    /// after each whitespace marker that precedes another character
    AfterSpace,
}
#[derive(Debug)]
pub struct SentencePiece {
    pub pieces: Vec<String>,
    pub types: Vec<u8>,
    normalizer: SpNormalizer,
    /// run over decoded text (sentencepiece applies it when its charsmap is not empty)
    denormalizer: Option<SpNormalizer>,
    /// pieces SentencePiece merges into and reads (normal, user-defined, unused)
    piece_ids: FxHashMap<String, u32>,
    /// symbol key -> its byte length (piece ids, then the virtual keys of
    /// characters that are no piece but part of one)
    key_len: Vec<u32>,
    char_table: Vec<u32>,
    char_map: FxHashMap<char, u32>,
    /// (left key, right key) -> (score rank, piece id)
    pairs: FxHashMap<(u32, u32), (u32, u32)>,
    matcher: Option<Matcher>,
    has_unused: bool,
    unk_id: u32,
    byte_fallback: bool,
    byte_ids: [u32; 256],
    unk_surface: String,
    strip_leading_space: bool,
    cut: Cut,
    ws: char,
    /// Finds `ws` in a text (made once: a searcher costs as much to make as to run on a short text).
    ws_finder: memchr::memmem::Finder<'static>,
    cache_id: u64,
    /// The owner of its parts' final ids in the piece cache's front table
    /// (`encode_through_front`).
    owner: u32,
}
/// One encoded text: ids and byte offsets into it.
pub struct SpEncoding {
    pub ids: Vec<u32>,
    pub offsets: Vec<(usize, usize)>,
}

impl SentencePiece {
    pub fn new(spec: &SpSpec) -> Result<SentencePiece> {
        let n = spec.pieces.len();
        if n == 0 {
            return Err(fail(
                "model.pieces: a SentencePiece model has at least one piece",
            ));
        }
        let mut piece_ids: FxHashMap<String, u32> = FxHashMap::default();
        let mut reserved: FxHashMap<String, u32> = FxHashMap::default();
        let mut unk = None;
        let mut byte_ids = [NONE; 256];
        for (i, (p, score, t)) in spec.pieces.iter().enumerate() {
            if score.is_nan() {
                return Err(fail(format!("model.pieces[{i}]: the score is NaN")));
            }
            let normal = matches!(*t, NORMAL | USER_DEFINED | UNUSED);
            let map = if normal {
                &mut piece_ids
            } else {
                &mut reserved
            };
            if map.insert(p.clone(), i as u32).is_some() {
                return Err(fail(format!(
                    "model.pieces[{i}]: the piece {p:?} is already defined"
                )));
            }
            if *t == UNKNOWN {
                if unk.is_some() {
                    return Err(fail(format!("model.pieces[{i}]: a second unknown piece")));
                }
                unk = Some(i as u32);
            }
            if *t == BYTE {
                if !spec.byte_fallback {
                    return Err(fail(format!(
                        "model.pieces[{i}]: the byte piece {p:?} although byte_fallback is false"
                    )));
                }
                let b = p
                    .strip_prefix("<0x")
                    .and_then(|h| h.strip_suffix('>'))
                    .filter(|h| h.len() == 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        fail(format!(
                            "model.pieces[{i}]: the byte piece {p:?} is not <0xNN>"
                        ))
                    })?;
                byte_ids[b as usize] = i as u32;
            }
        }
        let unk_id =
            unk.ok_or_else(|| fail("model.pieces: no unknown piece (SentencePiece needs one)"))?;
        if spec.byte_fallback && byte_ids.contains(&NONE) {
            return Err(fail(
                "model.pieces: byte_fallback needs the 256 pieces <0x00>..<0xFF>",
            ));
        }
        let is_target = |t: u8| t == NORMAL || t == UNUSED;
        // symbol keys: piece ids for pieces, then virtual keys for characters inside pieces
        let mut key_len: Vec<u32> = spec.pieces.iter().map(|(p, _, _)| p.len() as u32).collect();
        let mut virtual_keys: FxHashMap<char, u32> = FxHashMap::default();
        let mut key_of = |s: &str, key_len: &mut Vec<u32>| -> Option<u32> {
            if let Some(&id) = piece_ids.get(s) {
                return is_target(spec.pieces[id as usize].2).then_some(id);
            }
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Some(*virtual_keys.entry(c).or_insert_with(|| {
                    key_len.push(c.len_utf8() as u32);
                    (key_len.len() - 1) as u32
                })),
                _ => None,
            }
        };
        // ranks: higher score first; equal scores share a rank (leftmost wins, as in SentencePiece)
        let mut scores: Vec<f32> = spec
            .pieces
            .iter()
            .filter(|(_, _, t)| is_target(*t))
            .map(|(_, s, _)| *s + 0.0)
            .collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        scores.dedup();
        let rank_of = |s: f32| scores.binary_search_by(|x| s.total_cmp(x)).unwrap_or(0) as u32;
        let mut pairs: FxHashMap<(u32, u32), (u32, u32)> = FxHashMap::default();
        for (id, (p, score, t)) in spec.pieces.iter().enumerate() {
            if !is_target(*t) {
                continue;
            }
            let rank = rank_of(*score + 0.0);
            for (k, _) in p.char_indices().skip(1) {
                let (l, r) = (&p[..k], &p[k..]);
                if let (Some(a), Some(b)) = (key_of(l, &mut key_len), key_of(r, &mut key_len)) {
                    pairs.insert((a, b), (rank, id as u32));
                }
            }
        }
        let mut char_table = vec![NONE; TABLE_CHARS];
        let mut char_map = FxHashMap::default();
        let mut set_char = |c: char, k: u32| {
            if (c as usize) < TABLE_CHARS {
                char_table[c as usize] = k;
            } else {
                char_map.insert(c, k);
            }
        };
        for (&c, &k) in &virtual_keys {
            set_char(c, k);
        }
        for (id, (p, _, t)) in spec.pieces.iter().enumerate() {
            let mut it = p.chars();
            if let (Some(c), None) = (it.next(), it.next()) {
                if is_target(*t) {
                    set_char(c, id as u32);
                }
            }
        }
        let user: Vec<&str> = spec
            .pieces
            .iter()
            .filter(|(_, _, t)| *t == USER_DEFINED)
            .map(|(p, _, _)| p.as_str())
            .collect();
        let matcher = user_matcher(&user)?;
        let ns = &spec.normalizer;
        let ws = if ns.escape_whitespaces {
            '\u{2581}'
        } else {
            ' '
        };
        // where the text can be cut: no piece has the marker after (before) another character
        let targets = || {
            spec.pieces
                .iter()
                .filter(|(_, _, t)| is_target(*t))
                .map(|(p, _, _)| p.as_str())
        };
        let cut = if targets().all(|p| p.trim_start_matches(ws).find(ws).is_none()) {
            Cut::BeforeSpace
        } else if targets().all(|p| p.trim_end_matches(ws).find(ws).is_none()) {
            Cut::AfterSpace
        } else {
            Cut::None
        };
        let map = if ns.charsmap.is_empty() {
            None
        } else {
            Some(CharsMap::new(&ns.charsmap)?)
        };
        Ok(SentencePiece {
            pieces: spec.pieces.iter().map(|(p, _, _)| p.clone()).collect(),
            types: spec.pieces.iter().map(|(_, _, t)| *t).collect(),
            normalizer: SpNormalizer {
                map,
                spec: ns.clone(),
            },
            denormalizer: match &spec.denormalizer {
                Some(d) if !d.charsmap.is_empty() => Some(SpNormalizer {
                    map: Some(CharsMap::new(&d.charsmap)?),
                    spec: d.clone(),
                }),
                _ => None,
            },
            has_unused: spec.pieces.iter().any(|(_, _, t)| *t == UNUSED),
            piece_ids,
            key_len,
            char_table,
            char_map,
            pairs,
            matcher,
            unk_id,
            byte_fallback: spec.byte_fallback,
            byte_ids,
            unk_surface: spec.unk_surface.clone(),
            strip_leading_space: ns.add_dummy_prefix || ns.remove_extra_whitespaces,
            cut,
            ws_finder: memchr::memmem::Finder::new(ws.encode_utf8(&mut [0; 4]).as_bytes()).into_owned(),
            ws,
            cache_id: crate::cache::words::new_id(),
            owner: crate::cache::new_owner(),
        })
    }

    /// The normalized text (SentencePiece's `normalize`).
    pub fn normalize(&self, text: &str) -> String {
        let mut n2o = Vec::new();
        self.normalizer
            .normalize(text, self.matcher.as_ref(), false, &mut n2o)
    }

    /// Encode `text` as `SentencePieceProcessor::Encode` does; offsets (byte
    /// ranges of `text`) when `track`.
    pub fn encode(&self, text: &str, track: bool) -> Result<SpEncoding> {
        let mut n2o = Vec::new();
        let norm = self
            .normalizer
            .normalize(text, self.matcher.as_ref(), track, &mut n2o);
        if !track && self.parts_stand_alone() {
            let mut ids = Vec::with_capacity(norm.len() / 3 + 4);
            self.encode_through_front(&norm, &mut ids);
            return Ok(SpEncoding { ids, offsets: Vec::new() });
        }
        let mut syms: Vec<(u32, u32)> = Vec::with_capacity(norm.len() / 3 + 4);
        if !norm.is_empty() {
            if self.has_unused {
                self.merge_all(&norm, &mut syms);
            } else {
                self.merge_cut(&norm, &mut syms);
            }
        }
        self.output(&norm, &syms, track, &n2o)
    }
}

impl Drop for SentencePiece {
    fn drop(&mut self) {
        crate::cache::words::forget(self.cache_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::{BpeSpec, SpNormSpec};

    fn model(pieces: &[(&str, f32, u8)], byte_fallback: bool) -> SentencePiece {
        let spec = SpSpec {
            pieces: pieces
                .iter()
                .map(|(p, s, t)| (p.to_string(), *s, *t))
                .collect(),
            byte_fallback,
            unk_surface: " \u{2047} ".into(),
            normalizer: SpNormSpec {
                add_dummy_prefix: true,
                remove_extra_whitespaces: true,
                escape_whitespaces: true,
                ..Default::default()
            },
            denormalizer: None,
        };
        SentencePiece::new(&spec).unwrap()
    }

    #[test]
    fn equal_scores_merge_leftmost() {
        // "ab" and "bc" have one score: in "abc" the leftmost pair wins
        let m = model(
            &[
                ("<unk>", 0.0, UNKNOWN),
                ("a", -5.0, NORMAL),
                ("b", -5.0, NORMAL),
                ("c", -5.0, NORMAL),
                ("bc", -1.0, NORMAL),
                ("ab", -1.0, NORMAL),
                ("\u{2581}", -6.0, NORMAL),
            ],
            false,
        );
        assert_eq!(m.encode("abc", false).unwrap().ids, vec![6, 5, 3]);
    }

    #[test]
    fn parts_through_the_front_table_give_the_ids_of_the_symbols() {
        // with byte fallback, ids without offsets come a part at a time
        // through the piece cache's front table (`encode_through_front`);
        // with offsets, from the symbols of the whole text (`output`): the
        // same ids, cold and warm, for parts of one to many ids, unknown
        // characters as bytes
        let bytes: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
        let mut pieces: Vec<(&str, f32, u8)> = vec![("<unk>", 0.0, UNKNOWN)];
        pieces.extend(bytes.iter().map(|b| (b.as_str(), 0.0, BYTE)));
        let normal = ["\u{2581}", "a", "b", "c", "ab", "\u{2581}a", "\u{2581}ab", "ba", "abab", "\u{2581}abab", "\n"];
        pieces.extend(normal.iter().enumerate().map(|(i, p)| (*p, -(i as f32), NORMAL)));
        let m = model(&pieces, true);
        let mut rng = crate::testing::Rng(0x5EED_0F_F0_0D);
        let alphabet = ["a", "b", "c", " ", "  ", "\n", "\u{e9}", "\u{4e2d}", "ab", "x"];
        for round in 0..200 {
            let text: String = (0..1 + rng.below(60)).map(|_| alphabet[rng.below(alphabet.len())]).collect();
            let want = m.encode(&text, true).unwrap().ids;
            for pass in 0..2 {
                assert_eq!(m.encode(&text, false).unwrap().ids, want, "round {round}, pass {pass}: {text:?}");
            }
        }
    }

    #[test]
    fn unknown_runs_fuse_and_offsets() {
        let m = model(
            &[
                ("<unk>", 0.0, UNKNOWN),
                ("a", -1.0, NORMAL),
                ("\u{2581}", -2.0, NORMAL),
            ],
            false,
        );
        let e = m.encode("  a xy", true).unwrap();
        assert_eq!(e.ids, vec![2, 1, 2, 0]);
        assert_eq!(e.offsets, vec![(2, 2), (2, 3), (3, 4), (4, 6)]);
        assert_eq!(m.decode(&e.ids, false).unwrap(), "a  \u{2047} ");
    }

    #[test]
    fn cut_marker_only_when_no_merge_crosses() {
        let spec = |merges: &[(&str, &str)], unk: Option<&str>| BpeSpec {
            vocab: ["\u{2581}", "a", "\u{2581}a", "a\u{2581}", "<unk>"]
                .iter()
                .enumerate()
                .map(|(i, t)| (t.to_string(), i as u32))
                .collect(),
            merges: merges
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            dropout: None,
            unk_token: unk.map(str::to_string),
            continuing_subword_prefix: None,
            end_of_word_suffix: None,
            fuse_unk: false,
            byte_fallback: false,
            ignore_merges: false,
        };
        assert_eq!(hf_cut_marker(&spec(&[("\u{2581}", "a")], Some("<unk>"))), Some('\u{2581}'));
        assert_eq!(hf_cut_marker(&spec(&[("a", "\u{2581}")], Some("<unk>"))), None);
        // without unk (or every byte token), HF drops unknown characters and merges across them
        assert_eq!(hf_cut_marker(&spec(&[("\u{2581}", "a")], None)), None);
        assert_eq!(
            cut_before("\u{2581}a\u{2581}\u{2581}b", '\u{2581}'),
            vec![(0, 4), (4, 11)]
        );
    }
}
