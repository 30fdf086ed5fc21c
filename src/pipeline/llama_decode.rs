//! llama.cpp's decoding of a pipeline loaded from a GGUF file
//! (`llama_detokenize`): the tokens' pieces joined, then its clean-up.
//!
//! A piece is what llama.cpp's `token_to_piece` gives: an added (control,
//! unknown or user-defined) token's text as it is, nothing for a special
//! one when skipped; a run of other tokens decoded by the pipeline's
//! decoder. The `whitespace` pre type's raw-UTF-8 tokens are read one by one
//! as GPT-2 byte characters (llama.cpp's `llama_decode_text`). Then one
//! leading space of the first piece goes when the vocabulary adds a space
//! prefix, and the `clean_spaces` passes run.

use super::decoder::char_bytes;
use crate::error::{Error, Result};

/// How a GGUF file's vocabulary decodes (its `add_space_prefix` and
/// `clean_spaces` flags, and whether raw-UTF-8 tokens are read as byte
/// characters): a stage of the pipeline, which then decodes as llama.cpp.
#[derive(Debug, Clone, Copy)]
pub struct LlamaDecode {
    pub strip_first_space: bool,
    pub clean_spaces: bool,
    pub byte_text: bool,
}

/// What llama.cpp's decoding reads from its pipeline.
pub trait LlamaVocab {
    /// An added token's text and whether it is special.
    fn added(&self, id: u32) -> Option<(&str, bool)>;
    /// A token's vocabulary string.
    fn token(&self, id: u32) -> Option<&str>;
    /// The pipeline's own decoder on a run of tokens that are not added ones.
    fn decode_run(&self, ids: &[u32], skip_special: bool) -> Result<Vec<u8>>;
}

impl LlamaDecode {
    /// The bytes llama.cpp's `llama_detokenize` gives for `ids`
    /// (`remove_special` = `skip_special`, `unparse_special` true).
    pub fn decode(&self, vocab: &impl LlamaVocab, ids: &[u32], skip_special: bool) -> Result<Vec<u8>> {
        let raw = self.pieces(vocab, ids, skip_special)?;
        let first = self.pieces(vocab, &ids[..ids.len().min(1)], skip_special)?;
        let raw = if self.strip_first_space && first.first() == Some(&b' ') { &raw[1..] } else { &raw[..] };
        Ok(if self.clean_spaces { clean_spaces(raw) } else { raw.to_vec() })
    }

    /// The pieces of `ids`, joined.
    fn pieces(&self, vocab: &impl LlamaVocab, ids: &[u32], skip_special: bool) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut run: Vec<u32> = Vec::new();
        for &id in ids {
            match vocab.added(id) {
                Some((text, special)) => {
                    if !run.is_empty() {
                        out.extend(vocab.decode_run(&run, skip_special)?);
                        run.clear();
                    }
                    if !(special && skip_special) {
                        out.extend_from_slice(text.as_bytes());
                    }
                }
                None if self.byte_text => {
                    let token = vocab
                        .token(id)
                        .ok_or_else(|| Error::UnknownToken(format!("token id {id} is not in the vocabulary")))?;
                    piece_of_byte_text(token, &mut out);
                }
                None => run.push(id),
            }
        }
        if !run.is_empty() {
            out.extend(vocab.decode_run(&run, skip_special)?);
        }
        Ok(out)
    }
}

/// llama.cpp's piece of a byte token (`<0xXX>`: its byte) or of a raw-UTF-8
/// token read as GPT-2 byte characters: each character's byte, and one that
/// is none written `[UNK_BYTE_0x` + its UTF-8 in hex + the whole token + `]`.
fn piece_of_byte_text(token: &str, out: &mut Vec<u8>) {
    let b = token.as_bytes();
    if b.len() == 6 && b.starts_with(b"<0x") && b[5] == b'>' {
        let hex = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        };
        if let (Some(hi), Some(lo)) = (hex(b[3]), hex(b[4])) {
            out.push(hi << 4 | lo);
            return;
        }
    }
    let bytes = char_bytes();
    for c in token.chars() {
        match bytes.get(&c) {
            Some(&byte) => out.push(byte),
            None => {
                out.extend_from_slice(b"[UNK_BYTE_0x");
                let mut utf8 = [0u8; 4];
                for byte in c.encode_utf8(&mut utf8).bytes() {
                    out.extend_from_slice(format!("{byte:02x}").as_bytes());
                }
                out.extend_from_slice(token.as_bytes());
                out.push(b']');
            }
        }
    }
}

/// llama.cpp's three `clean_spaces` passes: no space before `?!.,`; ` ' `
/// made `'`; no space before `'s 'm 're 've`.
fn clean_spaces(raw: &[u8]) -> Vec<u8> {
    if raw.is_empty() {
        return Vec::new();
    }
    let mut text = vec![raw[0]];
    for i in 1..raw.len() {
        if raw[i - 1] == b' ' && b"?!.,".contains(&raw[i]) {
            text.pop();
        }
        text.push(raw[i]);
    }
    let src = text;
    let mut text = vec![src[0]];
    let (mut i, mut prev) = (1, src[0]);
    while i < src.len() {
        let x = src[i];
        if x == b'\'' && i + 1 < src.len() && prev == b' ' && src[i + 1] == b' ' {
            text.pop();
            text.push(x);
            i += 2;
            prev = 0;
            continue;
        }
        text.push(x);
        prev = x;
        i += 1;
    }
    let src = text;
    let mut text = vec![src[0]];
    for i in 1..src.len() {
        if src[i - 1] == b' ' && src[i] == b'\'' && i + 1 < src.len() {
            let next = &src[i + 1..(i + 3).min(src.len())];
            if matches!(next.first(), Some(b's' | b'm')) || next == b"re" || next == b"ve" {
                text.pop();
            }
        }
        text.push(src[i]);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    // The expected values are the outputs of the Python port this module replaced (formats/gguf.py's
    // llama_detokenize and llama_piece_bytes, checked against llama.cpp by tests/test_gguf_llama_cpp.py, as this
    // module is now).
    #[test]
    fn clean_spaces_as_llama_cpp() {
        assert_eq!(clean_spaces(b" Hello , it ' s"), b" Hello, it's");
        assert_eq!(clean_spaces(b"a ' b 're x 've y 'm"), b"a'b're x've y'm");
        assert_eq!(clean_spaces(b"don 't ? ! . , ' '"), b"don 't?!.,''");
        assert_eq!(clean_spaces(b"x 'r"), b"x 'r");
        assert_eq!(clean_spaces(b" '"), b" '");
        assert_eq!(clean_spaces(b""), b"");
    }

    #[test]
    fn byte_text_pieces() {
        let piece = |t: &str| {
            let mut out = Vec::new();
            piece_of_byte_text(t, &mut out);
            out
        };
        assert_eq!(piece("<0x41>"), b"A");
        assert_eq!(piece("<0x4a>"), "<0x4a>".as_bytes()); // llama.cpp's byte tokens are upper case
        assert_eq!(piece("ĠhiĊ"), b" hi\n");
        assert_eq!(piece("a中"), b"a[UNK_BYTE_0xe4b8ada\xe4\xb8\xad]");
    }
}
