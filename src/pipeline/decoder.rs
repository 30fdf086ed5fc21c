//! Decoders: token strings -> text, exactly as Hugging Face's
//! `decode_chain`s (the results are then concatenated; without a decoder
//! HF joins the tokens with spaces).

use crate::pretok::split_pattern::CompiledPattern;
use crate::text::byte_level::bytes_char;
use super::spec::{DecoderSpec, PrependScheme};
use crate::error::Result;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

#[derive(Debug, Clone)]
pub enum Decoder {
    ByteLevel,
    Metaspace { replacement: char, prepend_scheme: PrependScheme },
    ByteFallback,
    Fuse,
    Strip { content: char, start: usize, stop: usize },
    Replace { pattern: CompiledPattern, content: String },
    BpeDecoder { suffix: String },
    WordPiece { prefix: String, cleanup: bool },
    Sequence(Vec<Decoder>),
}

pub(crate) fn char_bytes() -> &'static FxHashMap<char, u8> {
    static M: OnceLock<FxHashMap<char, u8>> = OnceLock::new();
    M.get_or_init(|| bytes_char().iter().enumerate().map(|(b, &c)| (c, b as u8)).collect())
}

/// The bytes a byte-level token stands for (a token with a char outside the
/// byte map: its own UTF-8, as Hugging Face does).
pub(crate) fn byte_level_bytes(token: &str, out: &mut Vec<u8>) {
    let m = char_bytes();
    let start = out.len();
    for c in token.chars() {
        match m.get(&c) {
            Some(&b) => out.push(b),
            None => {
                out.truncate(start);
                out.extend_from_slice(token.as_bytes());
                return;
            }
        }
    }
}

fn wordpiece_cleanup(s: &str) -> String {
    s.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" do not", " don't")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}

impl Decoder {
    pub(crate) fn new(spec: &DecoderSpec, regexes: &crate::pretok::patterns::RegexMap) -> Result<Decoder> {
        Ok(match spec {
            DecoderSpec::ByteLevel => Decoder::ByteLevel,
            DecoderSpec::Metaspace { replacement, prepend_scheme } => {
                Decoder::Metaspace { replacement: *replacement, prepend_scheme: *prepend_scheme }
            }
            DecoderSpec::ByteFallback => Decoder::ByteFallback,
            DecoderSpec::Fuse => Decoder::Fuse,
            DecoderSpec::Strip { content, start, stop } => Decoder::Strip { content: *content, start: *start, stop: *stop },
            DecoderSpec::Replace { pattern, content } => Decoder::Replace {
                pattern: CompiledPattern::new(pattern, regexes, "decoder Replace")?,
                content: content.clone(),
            },
            DecoderSpec::BpeDecoder { suffix } => Decoder::BpeDecoder { suffix: suffix.clone() },
            DecoderSpec::WordPiece { prefix, cleanup } => Decoder::WordPiece { prefix: prefix.clone(), cleanup: *cleanup },
            DecoderSpec::Sequence(items) => {
                Decoder::Sequence(items.iter().map(|d| Decoder::new(d, regexes)).collect::<Result<_>>()?)
            }
        })
    }

    pub(crate) fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(match self {
            Decoder::ByteLevel => {
                let mut bytes = Vec::new();
                for t in &tokens {
                    byte_level_bytes(t, &mut bytes);
                }
                vec![String::from_utf8_lossy(&bytes).into_owned()]
            }
            Decoder::Metaspace { replacement, prepend_scheme } => tokens
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    t.chars()
                        .filter_map(|c| {
                            if c == *replacement {
                                if i == 0 && *prepend_scheme != PrependScheme::Never {
                                    None
                                } else {
                                    Some(' ')
                                }
                            } else {
                                Some(c)
                            }
                        })
                        .collect()
                })
                .collect(),
            Decoder::ByteFallback => {
                let mut out = Vec::with_capacity(tokens.len());
                let mut pending: Vec<u8> = Vec::new();
                let flush = |pending: &mut Vec<u8>, out: &mut Vec<String>| {
                    if !pending.is_empty() {
                        match String::from_utf8(pending.clone()) {
                            Ok(s) => out.push(s),
                            Err(_) => out.extend(std::iter::repeat("\u{fffd}".to_string()).take(pending.len())),
                        }
                        pending.clear();
                    }
                };
                for t in tokens {
                    let byte = if t.len() == 6 && t.starts_with("<0x") && t.ends_with('>') {
                        u8::from_str_radix(&t[3..5], 16).ok()
                    } else {
                        None
                    };
                    match byte {
                        Some(b) => pending.push(b),
                        None => {
                            flush(&mut pending, &mut out);
                            out.push(t);
                        }
                    }
                }
                flush(&mut pending, &mut out);
                out
            }
            Decoder::Fuse => vec![tokens.concat()],
            Decoder::Strip { content, start, stop } => tokens
                .iter()
                .map(|t| {
                    let chars: Vec<char> = t.chars().collect();
                    let mut a = 0;
                    for (i, &c) in chars.iter().enumerate().take(*start) {
                        if c == *content {
                            a = i + 1;
                        } else {
                            break;
                        }
                    }
                    let mut b = chars.len();
                    for (i, &c) in chars.iter().rev().enumerate().take(*stop) {
                        if c == *content {
                            b = chars.len() - i - 1;
                        } else {
                            break;
                        }
                    }
                    chars[a.min(b)..b].iter().collect()
                })
                .collect(),
            Decoder::Replace { pattern, content } => {
                let mut out = Vec::with_capacity(tokens.len());
                for t in tokens {
                    let mut s = String::with_capacity(t.len());
                    for ((a, b), m) in pattern.find_matches(&t)? {
                        if m {
                            s.push_str(content);
                        } else {
                            s.push_str(&t[a..b]);
                        }
                    }
                    out.push(s);
                }
                out
            }
            Decoder::BpeDecoder { suffix } => {
                let n = tokens.len();
                tokens
                    .iter()
                    .enumerate()
                    .map(|(i, t)| t.replace(suffix.as_str(), if i + 1 == n { "" } else { " " }))
                    .collect()
            }
            Decoder::WordPiece { prefix, cleanup } => tokens
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut t = t.clone();
                    if i != 0 {
                        if t.starts_with(prefix.as_str()) {
                            t = t.replacen(prefix.as_str(), "", 1);
                        } else {
                            t = format!(" {t}");
                        }
                    }
                    if *cleanup {
                        t = wordpiece_cleanup(&t);
                    }
                    t
                })
                .collect(),
            Decoder::Sequence(items) => {
                let mut t = tokens;
                for d in items {
                    t = d.decode_chain(t)?;
                }
                t
            }
        })
    }
}
