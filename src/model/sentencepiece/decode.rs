//! `SentencePieceProcessor::Decode`: ids to text (byte pieces decoded a
//! character at a time, the leading space dropped, the denormalizer run).

use super::normalizer::SPACE;
use super::{SentencePiece, BYTE, CONTROL, UNKNOWN};
use crate::error::{Error, Result};

impl SentencePiece {
    /// `SentencePieceProcessor::Decode` of ids; `skip` drops control and
    /// unknown ids (`skip_special_tokens`), the byte pieces on their two sides
    /// decoded apart as sentencepiece decodes them around a control piece.
    pub fn decode(&self, ids: &[u32], skip: bool) -> Result<String> {
        let mut out = String::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut is_bos_ws = true;
        let mut bos_ws_seen = false;
        for &id in ids {
            let t = *self.types.get(id as usize).ok_or_else(|| {
                Error::UnknownToken(format!("token id {id} is not in the vocabulary"))
            })?;
            if skip && (t == CONTROL || t == UNKNOWN) {
                // dropped, but as sentencepiece drops a control piece: the byte pieces on its two sides are
                // decoded apart
                flush_bytes(&mut pending, &mut out);
                continue;
            }
            let piece = self.pieces[id as usize].as_str();
            if t == BYTE {
                let b = u8::from_str_radix(&piece[3..5], 16).unwrap_or(0);
                pending.push(b);
                continue;
            }
            flush_bytes(&mut pending, &mut out);
            if bos_ws_seen || !out.is_empty() {
                is_bos_ws = false;
            }
            match t {
                CONTROL => bos_ws_seen = false,
                UNKNOWN => {
                    out.push_str(&self.unk_surface);
                    bos_ws_seen = false;
                }
                _ => {
                    let mut p = piece;
                    let mut has = false;
                    if is_bos_ws && self.strip_leading_space {
                        if let Some(rest) = p.strip_prefix(SPACE) {
                            p = rest;
                            has = !self.normalizer.spec.remove_extra_whitespaces;
                        }
                    }
                    if p.contains(SPACE) {
                        out.push_str(&p.replace(SPACE, " "));
                    } else {
                        out.push_str(p);
                    }
                    bos_ws_seen = has;
                }
            }
        }
        flush_bytes(&mut pending, &mut out);
        if let Some(d) = &self.denormalizer {
            // sentencepiece's Decode: the whole text through the denormalizer (no user-defined matcher)
            let mut n2o = Vec::new();
            out = d.normalize(&out, None, false, &mut n2o);
        }
        Ok(out)
    }
}

/// Bytes as SentencePiece decodes byte pieces: a character at a time, each
/// byte that does not start a valid character one U+FFFD.
fn flush_bytes(pending: &mut Vec<u8>, out: &mut String) {
    let b = pending.as_slice();
    let mut i = 0;
    while i < b.len() {
        let n = match b[i] {
            0x00..=0x7F => 1,
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        match (n > 0 && i + n <= b.len())
            .then(|| std::str::from_utf8(&b[i..i + n]).ok())
            .flatten()
        {
            Some(s) => {
                out.push_str(s);
                i += n;
            }
            None => {
                out.push('\u{FFFD}');
                i += 1;
            }
        }
    }
    pending.clear();
}
