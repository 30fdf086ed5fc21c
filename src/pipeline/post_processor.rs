//! Post-processors for one sequence: the special tokens that
//! `add_special_tokens=True` adds (TemplateProcessing, Roberta, Bert), and
//! ByteLevel (which only trims offsets in HF; ids are unchanged). As in HF,
//! offsets are trimmed whether or not special tokens are added.

use super::spec::{PostSpec, TemplatePiece};

#[derive(Debug, Clone)]
pub(crate) struct PostProcessor(pub PostSpec);

/// Trims the offsets of whitespace at a token's ends, given the ids, their
/// offsets and `add_prefix_space` (HF's `process_offsets` of ByteLevel).
pub(crate) type TrimOffsets<'a> = &'a dyn Fn(&[u32], &mut [(usize, usize)], bool);

impl PostProcessor {
    /// Apply to `(ids, offsets)` of one sequence (special tokens get (0, 0)):
    /// offsets are trimmed when `track`, special tokens added when `add_special_tokens`.
    pub(crate) fn process(
        &self,
        ids: Vec<u32>,
        offsets: Vec<(usize, usize)>,
        add_special_tokens: bool,
        track: bool,
        trim: TrimOffsets,
    ) -> (Vec<u32>, Vec<(usize, usize)>) {
        process(&self.0, ids, offsets, add_special_tokens, track, trim)
    }
}

fn process(
    spec: &PostSpec,
    ids: Vec<u32>,
    mut offsets: Vec<(usize, usize)>,
    add: bool,
    track: bool,
    trim: TrimOffsets,
) -> (Vec<u32>, Vec<(usize, usize)>) {
    let wrap = |cls: u32, sep: u32, ids: Vec<u32>, offsets: Vec<(usize, usize)>| {
        let mut i = Vec::with_capacity(ids.len() + 2);
        i.push(cls);
        i.extend(ids);
        i.push(sep);
        let mut o = Vec::new();
        if track {
            o.push((0, 0));
            o.extend(offsets);
            o.push((0, 0));
        }
        (i, o)
    };
    match spec {
        PostSpec::ByteLevel { trim_offsets, add_prefix_space } => {
            if *trim_offsets && track {
                trim(&ids, &mut offsets, *add_prefix_space);
            }
            (ids, offsets)
        }
        PostSpec::Roberta { cls, sep, trim_offsets, add_prefix_space } => {
            if *trim_offsets && track {
                trim(&ids, &mut offsets, *add_prefix_space);
            }
            if add {
                wrap(cls.1, sep.1, ids, offsets)
            } else {
                (ids, offsets)
            }
        }
        PostSpec::Sequence(items) => {
            let (mut i, mut o) = (ids, offsets);
            for x in items {
                (i, o) = process(x, i, o, add, track, trim);
            }
            (i, o)
        }
        _ if !add => (ids, offsets),
        PostSpec::Bert { cls, sep } => wrap(cls.1, sep.1, ids, offsets),
        PostSpec::Template { single, special } => {
            let mut i = Vec::with_capacity(ids.len() + 4);
            let mut o = Vec::new();
            for p in single {
                match p {
                    TemplatePiece::Sequence { a: true, .. } => {
                        i.extend_from_slice(&ids);
                        if track {
                            o.extend_from_slice(&offsets);
                        }
                    }
                    TemplatePiece::Sequence { a: false, .. } => {}
                    TemplatePiece::Special { id, .. } => {
                        if let Some((_, sids, _)) = special.iter().find(|(k, _, _)| k == id) {
                            i.extend_from_slice(sids);
                            if track {
                                o.extend(std::iter::repeat((0, 0)).take(sids.len()));
                            }
                        }
                    }
                }
            }
            (i, o)
        }
    }
}
