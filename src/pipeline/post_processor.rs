//! Post-processors for one sequence: the special tokens that
//! `add_special_tokens=True` adds (TemplateProcessing, Roberta, Bert), and
//! ByteLevel (which only trims offsets in HF; ids are unchanged).

use super::spec::{PostSpec, TemplatePiece};

#[derive(Debug, Clone)]
pub struct PostProcessor(pub PostSpec);

impl PostProcessor {
    /// Apply to `(ids, offsets)` of one sequence (special tokens get (0, 0)).
    pub fn process(&self, ids: Vec<u32>, offsets: Vec<(usize, usize)>, track: bool) -> (Vec<u32>, Vec<(usize, usize)>) {
        process(&self.0, ids, offsets, track)
    }
}

fn process(
    spec: &PostSpec,
    ids: Vec<u32>,
    offsets: Vec<(usize, usize)>,
    track: bool,
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
        PostSpec::ByteLevel { .. } => (ids, offsets),
        PostSpec::Roberta { cls, sep, .. } | PostSpec::Bert { cls, sep } => wrap(cls.1, sep.1, ids, offsets),
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
        PostSpec::Sequence(items) => {
            let (mut i, mut o) = (ids, offsets);
            for x in items {
                (i, o) = process(x, i, o, track);
            }
            (i, o)
        }
    }
}
