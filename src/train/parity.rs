//! Parity-aware BPE (Foroutan et al., arXiv 2508.04796), as Hugging Face's
//! `ParityBpeTrainer` does it: one corpus per language, and each merge goes
//! to the language compressed worst so far.
//!
//! Built on the incremental trainer: one `Trainer` per language (and one
//! per dev corpus, whose only use is its length), all sharing the symbol
//! ids. Each step picks a language, takes that language's best pair off
//! its queue, and merges it in every trainer (a trainer where the pair does
//! not occur only records the new symbol). The first `global_merges` steps
//! use one more trainer over all languages' words together, dropped after.
//! The pure-Python oracle is `bytepair.reference_parity`.

use crate::error::{Error, Result};
use crate::train::trainer::{Merge, StopReason, Trainer, Words};
use crate::train::driver::{self, TrainOutput, TrainRequest};
use crate::vocab::ModelKind;
use crate::train::words::WordCounts;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Always the language compressed worst.
    Base,
    /// The worst one, unless it took more than `alpha / languages` of the
    /// last `window_size` merges; then the next worst, and so on.
    Window,
}

impl Variant {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "base" => Ok(Variant::Base),
            "window" => Ok(Variant::Window),
            other => Err(Error::Training(format!("unknown variant {other:?}: use \"base\" or \"window\""))),
        }
    }
}

pub struct ParityRequest {
    pub train: TrainRequest,
    pub variant: Variant,
    pub global_merges: u64,
    pub window_size: usize,
    pub alpha: f64,
    /// Target compression per language (ignored when dev corpora are given).
    pub ratio: Option<Vec<f64>>,
}

/// What a parity run did besides its merges: per language, its length in
/// tokens (training text, and dev text when given) before and after, and
/// how many merges it chose (global merges are not counted).
pub struct ParityStats {
    pub train_before: Vec<u128>,
    pub train_after: Vec<u128>,
    pub dev_before: Vec<u128>,
    pub dev_after: Vec<u128>,
    pub chosen: Vec<u64>,
}

/// The language of greatest value, unless it took more than `threshold` of
/// the window; then the next, and so on (HF's `select_language_window`:
/// when every language is masked, the last one tried).
fn select_window(values: &[f64], recent: &VecDeque<usize>, window_size: usize, threshold: f64) -> usize {
    let mut mask = vec![true; values.len()];
    loop {
        // the first unmasked language of greatest value: HF starts from index 0 even when it is
        // masked, and then loops forever when every unmasked value is -inf (exhausted languages)
        let mut best: Option<usize> = None;
        for (i, &v) in values.iter().enumerate() {
            if mask[i] && best.is_none_or(|b| v > values[b]) {
                best = Some(i);
            }
        }
        let best = best.expect("a language is unmasked");
        let taken = recent.iter().filter(|&&x| x == best).count();
        if taken as f64 / window_size as f64 <= threshold {
            return best;
        }
        mask[best] = false;
        if mask.iter().all(|m| !m) {
            return best;
        }
    }
}

/// Trains on one word table per language (`dev`: none, or one per
/// language). `on_merge(k, merge, max_merges)` follows progress and stops
/// training by returning false.
pub fn train_parity(
    langs: &[&WordCounts],
    dev: &[&WordCounts],
    req: &ParityRequest,
    mut on_merge: impl FnMut(usize, &Merge, usize) -> bool,
) -> Result<(TrainOutput, ParityStats)> {
    let tr = &req.train;
    let n = langs.len();
    if n == 0 {
        return Err(Error::Training("parity training needs at least one language".into()));
    }
    if tr.init.is_some() {
        return Err(Error::Training("parity training cannot continue an initial tokenizer (init)".into()));
    }
    if let Some(i) = langs.iter().position(|t| t.is_empty()) {
        return Err(Error::Training(format!("the corpus of language {i} is empty: it has no words to train on")));
    }
    if !dev.is_empty() && dev.len() != n {
        return Err(Error::Training(format!("{} dev corpora for {n} languages: give one per language", dev.len())));
    }
    let ratio = if dev.is_empty() { req.ratio.clone() } else { None }; // the dev set takes precedence (HF)
    if let Some(r) = &ratio {
        if r.len() != n {
            return Err(Error::Training(format!("ratio has {} values for {n} languages", r.len())));
        }
        if let Some((i, v)) = r.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v > 0.0)) {
            return Err(Error::Training(format!("ratio of language {i} must be a positive finite number, got {v}")));
        }
    }
    if req.variant == Variant::Window && (req.window_size == 0 || !(req.alpha.is_finite() && req.alpha > 0.0)) {
        return Err(Error::Training(format!(
            "the window variant needs window_size >= 1 and a positive finite alpha (got {} and {})",
            req.window_size, req.alpha
        )));
    }

    let tables: Vec<&WordCounts> = langs.iter().chain(dev).copied().collect();
    let (base, n_symbols, ids) = driver::base_vocabulary(&tables, tr);
    let (fixed, what, symbol_text) = driver::fixed_vocabulary(&base, n_symbols, tr);
    let max_merges = driver::merge_limit(tr, fixed, &what)?;
    let chars = tr.kind == ModelKind::Char;
    let order = driver::text_order(tr);
    let trainer = |words: Words| Trainer::with_order(words, symbol_text.clone(), tr.tie_break, chars, order);

    let mut global = if req.global_merges > 0 && max_merges > 0 {
        let mut all = Words::default();
        for t in langs {
            all.extend(&driver::initial_words(t, tr, ids.as_ref()));
        }
        Some(trainer(all)?)
    } else {
        None
    };
    let mut train_len = Vec::with_capacity(n);
    let mut trainers = Vec::with_capacity(n);
    for t in langs {
        let words = driver::initial_words(t, tr, ids.as_ref());
        train_len.push(words.weighted_len());
        trainers.push(trainer(words)?);
    }
    let mut dev_len = Vec::with_capacity(dev.len());
    let mut dev_trainers = Vec::with_capacity(dev.len());
    for t in dev {
        let words = driver::initial_words(t, tr, ids.as_ref());
        dev_len.push(words.weighted_len());
        dev_trainers.push(trainer(words)?);
    }
    let train_before = train_len.clone();
    let dev_before = dev_len.clone();

    let threshold = req.alpha / n as f64;
    let mut recent: VecDeque<usize> = VecDeque::with_capacity(req.window_size + 1);
    let mut exhausted = vec![false; n];
    let mut chosen = vec![0u64; n];
    let mut merges: Vec<Merge> = Vec::new();
    let mut reason = StopReason::Done;
    while merges.len() < max_merges {
        if exhausted.iter().all(|&e| e) {
            reason = StopReason::NoPairs;
            break;
        }
        let lang = if (merges.len() as u64) < req.global_merges {
            None
        } else if let Some(r) = &ratio {
            // HF: adjusted = (initial / current) / ratio, lowest first (f64, as HF computes it)
            let adjusted: Vec<f64> =
                (0..n).map(|i| (train_before[i] as f64 / train_len[i] as f64) / r[i]).collect();
            Some(match req.variant {
                Variant::Base => {
                    let (mut best, mut best_val) = (0, f64::INFINITY);
                    for i in (0..n).filter(|&i| !exhausted[i]) {
                        if adjusted[i] < best_val {
                            best = i;
                            best_val = adjusted[i];
                        }
                    }
                    best
                }
                Variant::Window => {
                    let values: Vec<f64> =
                        (0..n).map(|i| if exhausted[i] { f64::NEG_INFINITY } else { -adjusted[i] }).collect();
                    select_window(&values, &recent, req.window_size, threshold)
                }
            })
        } else {
            let lengths = if dev.is_empty() { &train_len } else { &dev_len };
            Some(match req.variant {
                Variant::Base => {
                    let mut best: Option<usize> = None;
                    for i in (0..n).filter(|&i| !exhausted[i]) {
                        if best.is_none_or(|b| lengths[i] > lengths[b]) {
                            best = Some(i);
                        }
                    }
                    best.unwrap_or(0)
                }
                Variant::Window => {
                    // lengths are integers in HF (i64); as f64 they compare alike below 2^53
                    let values: Vec<f64> =
                        (0..n).map(|i| if exhausted[i] { f64::NEG_INFINITY } else { lengths[i] as f64 }).collect();
                    select_window(&values, &recent, req.window_size, threshold)
                }
            })
        };
        if let (Some(l), Variant::Window) = (lang, req.variant) {
            recent.push_back(l);
            if recent.len() > req.window_size {
                recent.pop_front();
            }
        }
        let source = match lang {
            None => global.as_mut().expect("the global trainer lives during the global merges"),
            Some(l) => &mut trainers[l],
        };
        let best = source.best_pair(tr.max_token_length).filter(|&(_, c)| c >= tr.min_frequency.max(1));
        let Some((pair, count)) = best else {
            match lang {
                None => {
                    reason = StopReason::NoPairs;
                    break;
                }
                Some(l) => {
                    exhausted[l] = true;
                    continue;
                }
            }
        };
        if let Some(l) = lang {
            chosen[l] += 1;
        }
        if let Some(g) = global.as_mut() {
            g.merge(pair);
        }
        for (l, t) in trainers.iter_mut().enumerate() {
            // an exhausted language is never chosen again: its counts no longer matter
            if !exhausted[l] {
                train_len[l] -= t.merge(pair);
            }
        }
        for (l, t) in dev_trainers.iter_mut().enumerate() {
            if !exhausted[l] {
                dev_len[l] -= t.merge(pair);
            }
        }
        if merges.len() as u64 + 1 >= req.global_merges {
            global = None;
        }
        let merge = Merge { left: pair.0, right: pair.1, count };
        let go_on = on_merge(merges.len(), &merge, max_merges);
        merges.push(merge);
        if !go_on {
            reason = StopReason::Cancelled;
            break;
        }
    }
    let stats = ParityStats { train_before, train_after: train_len, dev_before, dev_after: dev_len, chosen };
    Ok((TrainOutput { base, n_symbols, merges, reason }, stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::trainer::TieBreak;
    use crate::vocab::CharSpec;

    fn table(words: &[(&str, u64)]) -> WordCounts {
        let mut t = WordCounts::new();
        for (w, c) in words {
            t.add_word(w, *c).unwrap();
        }
        t
    }

    fn run(langs: &[&[(&str, u64)]], n: u64, variant: Variant, window: usize, alpha: f64) -> Vec<String> {
        let langs: Vec<WordCounts> = langs.iter().map(|l| table(l)).collect();
        let req = ParityRequest {
            train: TrainRequest {
                kind: ModelKind::Char,
                char: CharSpec { end_of_word: None, fused: false, byte_fallback: false },
                tie_break: TieBreak::MaxString,
                min_frequency: 1,
                vocab_size: None,
                num_merges: Some(n),
                n_special: 0,
                max_token_length: None,
                init: None,
            },
            variant,
            global_merges: 0,
            window_size: window,
            alpha,
            ratio: None,
        };
        let langs: Vec<&WordCounts> = langs.iter().collect();
        let (out, _) = train_parity(&langs, &[], &req, |_, _, _| true).unwrap();
        let mut names: Vec<String> = out.base.iter().map(|b| String::from_utf8(b.clone()).unwrap()).collect();
        out.merges
            .iter()
            .map(|m| {
                let (l, r) = (names[m.left as usize].clone(), names[m.right as usize].clone());
                names.push(format!("{l}{r}"));
                format!("{l} {r}")
            })
            .collect()
    }

    #[test]
    fn languages_take_turns() {
        // HF's own test: tied lengths alternate, lower index first; "b b" > "a a"
        let m = run(&[&[("aabb", 10)], &[("ccdd", 10)]], 6, Variant::Base, 100, 2.0);
        assert_eq!(m, ["b b", "d d", "a bb", "c dd", "a abb", "c cdd"]);
    }

    #[test]
    fn window_interleaves() {
        let m = run(&[&[("aabb", 100)], &[("ccdd", 1)]], 6, Variant::Window, 2, 1.0);
        assert_eq!(m, ["b b", "a bb", "d d", "a abb", "c dd", "c cdd"]);
    }

    #[test]
    fn exhausted_language_is_skipped() {
        let m = run(&[&[("ab", 10)], &[("cdef", 10)]], 10, Variant::Base, 100, 2.0);
        assert_eq!(m, ["e f", "d ef", "a b", "c def"]);
    }
}
