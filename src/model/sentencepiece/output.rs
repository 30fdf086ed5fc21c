//! `PopulateSentencePieceText`: merged symbols to ids, runs of unknown
//! characters fused into one `<unk>` or written as byte pieces, with the
//! offsets into the original text.

use super::{SentencePiece, SpEncoding};
use crate::error::Result;

impl SentencePiece {
    /// `PopulateSentencePieceText`: ids, unknown runs fused or bytes, offsets.
    pub(super) fn output(
        &self,
        norm: &str,
        syms: &[(u32, u32)],
        track: bool,
        n2o: &[usize],
    ) -> Result<SpEncoding> {
        let mut ids = Vec::with_capacity(syms.len());
        if self.byte_fallback && !track {
            self.fallback_ids(norm, syms, &mut ids);
            return Ok(SpEncoding { ids, offsets: Vec::new() });
        }
        let mut offsets = Vec::with_capacity(if track { syms.len() } else { 0 });
        let n_pieces = self.pieces.len() as u32;
        let mut pos = 0usize;
        let mut prev_unk = false;
        for &(k, len) in syms {
            let len = len as usize;
            let w = &norm[pos..pos + len];
            // a symbol that is no piece is unknown (sentencepiece 0.2.x: a one-character control piece too)
            let id = if k < n_pieces { k } else { self.unk_id };
            let is_unk = id == self.unk_id;
            let (ob, oe) = if track {
                (n2o[pos], n2o[pos + len])
            } else {
                (0, 0)
            };
            if is_unk && self.byte_fallback {
                let wb = w.as_bytes();
                for (i, &b) in wb.iter().enumerate() {
                    ids.push(self.byte_ids[b as usize]);
                    if track {
                        offsets.push(if i + 1 == wb.len() {
                            (ob, oe)
                        } else {
                            (ob, ob)
                        });
                    }
                }
            } else if is_unk && prev_unk {
                if track {
                    if let Some(last) = offsets.last_mut() {
                        last.1 = oe;
                    }
                }
            } else {
                ids.push(id);
                if track {
                    offsets.push((ob, oe));
                }
            }
            prev_unk = is_unk;
            pos += len;
        }
        Ok(SpEncoding { ids, offsets })
    }

    /// `output`'s ids with byte fallback, no offsets: a symbol that is no
    /// piece, or is the unknown piece, is written as its bytes' pieces.
    pub(super) fn fallback_ids(&self, norm: &str, syms: &[(u32, u32)], ids: &mut Vec<u32>) {
        debug_assert!(self.byte_fallback);
        let n_pieces = self.pieces.len() as u32;
        let mut pos = 0usize;
        for &(k, len) in syms {
            let len = len as usize;
            let id = if k < n_pieces { k } else { self.unk_id };
            if id == self.unk_id {
                ids.extend(norm.as_bytes()[pos..pos + len].iter().map(|&b| self.byte_ids[b as usize]));
            } else {
                ids.push(id);
            }
            pos += len;
        }
    }
}
