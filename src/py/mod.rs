//! Python bindings (`bytepair._core`). Every heavy call releases the GIL
//! (a text's encode from 4 KB on: `args.rs`); every core error becomes the
//! matching class of `bytepair.errors`.

mod args;
mod gguf;
mod pylist;
mod vocab_files;

use args::{detach_for, text_arg, text_ids};
use crate::error::Error;
use crate::pretok::pretokenize::Pretokenizer;
use crate::special::SpecialTokens;
use crate::model::Dropout;
use crate::special::SpecialSet;
use crate::tokenizer::{char_spans, CharOptions, Tokenizer};
use crate::train::trainer::{StopReason, TieBreak};
use crate::train::driver::{self, Init, TrainOutput, TrainRequest};
use crate::vocab::{CharSpec, ModelKind};
use crate::train::words;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};
use rustc_hash::FxHashSet;

fn to_py(err: Error) -> PyErr {
    let name = match &err {
        Error::Pattern(_) => "PatternError",
        Error::Training(_) => "TrainingError",
        Error::Encode(_) => "EncodeError",
        Error::DisallowedSpecial(_) => "DisallowedSpecialError",
        Error::UnknownToken(_) => "UnknownTokenError",
        Error::Format(_) => "FormatError",
        Error::Unsupported(_) => "UnsupportedComponentError",
    };
    let message = err.to_string();
    Python::attach(|py| {
        let class = py
            .import("bytepair.errors")
            .and_then(|m| m.getattr(name))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
        match (class, err) {
            // the token is the error's second argument, as tiktoken's callers read it (no message parsed)
            (Ok(class), Error::DisallowedSpecial(token)) => PyErr::from_type(class, (message, token)),
            (Ok(class), _) => PyErr::from_type(class, message),
            (Err(_), _) => PyValueError::new_err(message),
        }
    })
}

trait IntoPyResult<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for crate::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Each of `texts` encoded (`encode(text, ids)`, in one parallel pass with the GIL released:
/// `batch::encode_flat`) and its ids made a list (`IntTable::lists`), in a list; the ids too, for callers that
/// read them again.
fn encode_lists<'py, T, F>(
    py: Python<'py>, ints: &pylist::IntTable, n_vocab: usize, texts: &[T], encode: F,
) -> PyResult<(Bound<'py, pyo3::types::PyList>, crate::batch::Flat)>
where
    T: AsRef<str> + Sync,
    F: Fn(&str, &mut Vec<u32>) -> crate::Result<()> + Sync + Send,
{
    let flat = py.detach(|| crate::batch::encode_flat(texts, encode)).py()?;
    Ok((ints.lists(py, n_vocab, flat.documents())?, flat))
}

/// A call's `allowed` / `disallowed` argument: None for every special token, else a sequence of their texts (an
/// empty one read without extracting it: the common calls).
fn special_set(tokens: Option<Bound<'_, PyAny>>) -> PyResult<SpecialSet> {
    match tokens {
        None => Ok(SpecialSet::All),
        Some(t) if t.len().is_ok_and(|n| n == 0) => Ok(SpecialSet::Some(FxHashSet::default())),
        Some(t) => Ok(SpecialSet::Some(t.extract::<Vec<String>>()?.into_iter().collect())),
    }
}

/// A call's `allowed` and `disallowed` arguments (`special_set`).
fn special_sets(allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>) -> PyResult<(SpecialSet, SpecialSet)> {
    Ok((special_set(allowed)?, special_set(disallowed)?))
}

fn ids_to_u32(ids: Vec<i64>) -> PyResult<Vec<u32>> {
    ids.into_iter()
        .map(|id| {
            u32::try_from(id).map_err(|_| {
                to_py(Error::UnknownToken(format!("token id {id} is not in the vocabulary")))
            })
        })
        .collect()
}

/// Word counts of a corpus, in order of first appearance.
#[pyclass(module = "bytepair._core")]
pub struct WordCounts {
    pre: Pretokenizer,
    specials: SpecialTokens,
    counts: words::WordCounts,
}

#[pymethods]
impl WordCounts {
    #[new]
    #[pyo3(signature = (pattern=None, special_tokens=Vec::new()))]
    fn new(pattern: Option<&str>, special_tokens: Vec<String>) -> PyResult<Self> {
        Ok(WordCounts {
            pre: Pretokenizer::new(pattern).py()?,
            specials: SpecialTokens::new(special_tokens.into_iter().map(|t| (t, 0)).collect()).py()?,
            counts: words::WordCounts::new(),
        })
    }

    /// Counts the words of each document (in parallel, GIL released).
    fn add_documents(&mut self, py: Python<'_>, documents: Vec<String>) -> PyResult<()> {
        let (pre, specials, counts) = (&self.pre, &self.specials, &mut self.counts);
        py.detach(|| counts.add_documents(pre, specials, &documents)).py()
    }

    /// Counts each line of `data` (a UTF-8 file's bytes) as a document, cut
    /// as Python's text-mode reading and `str.splitlines(keepends=True)` cut
    /// them. Returns the byte offset of the first invalid UTF-8 sequence
    /// (nothing is counted then), else None.
    fn add_lines(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<Option<usize>> {
        let (pre, specials, counts) = (&self.pre, &self.specials, &mut self.counts);
        py.detach(|| counts.add_lines(pre, specials, data)).py()
    }

    /// Counts one block of a document that goes on: returns how many
    /// characters of `text` were counted; the caller puts the rest in front
    /// of the next block and gives the last block to `add_documents`.
    fn add_text_prefix(&mut self, py: Python<'_>, text: &str) -> PyResult<usize> {
        let (pre, specials, counts) = (&self.pre, &self.specials, &mut self.counts);
        let used = py.detach(|| counts.add_text_prefix(pre, specials, text)).py()?;
        Ok(text[..used].chars().count())
    }

    /// Adds `count` occurrences of one word, taken as is.
    fn add_word(&mut self, word: &str, count: u64) -> PyResult<()> {
        self.counts.add_word(word, count).py()
    }

    /// Adds another table's counts (words new here keep the other's order).
    fn merge(&mut self, other: &WordCounts) -> PyResult<()> {
        self.counts.merge(other.counts.clone()).py()
    }

    /// (distinct words, their total length in bytes, in characters): what
    /// training memory depends on.
    fn sizes(&self, py: Python<'_>) -> (usize, usize, usize) {
        let counts = &self.counts;
        py.detach(|| counts.sizes())
    }

    fn items(&self) -> Vec<(String, u64)> {
        self.counts.iter().map(|(w, c)| (w.to_owned(), c)).collect()
    }

    fn __len__(&self) -> usize {
        self.counts.len()
    }
}

/// Trains a model from word counts. Returns (base tokens, number of real
/// base symbols, merges as (left, right, count), stop reason).
#[pyfunction]
#[pyo3(signature = (counts, model, *, end_of_word, end_of_word_fused, byte_fallback, tie_break, min_frequency, vocab_size, num_merges, n_special, max_token_length=None, progress=None, init=None, init_fallback_start=None, consume=false))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn train<'py>(
    py: Python<'py>,
    counts: &Bound<'py, WordCounts>,
    model: &str,
    end_of_word: Option<String>,
    end_of_word_fused: bool,
    byte_fallback: bool,
    tie_break: &str,
    min_frequency: u64,
    vocab_size: Option<u64>,
    num_merges: Option<u64>,
    n_special: u64,
    max_token_length: Option<u32>,
    progress: Option<Py<PyAny>>,
    init: Option<PyRef<'py, CoreTokenizer>>,
    init_fallback_start: Option<u32>,
    consume: bool,
) -> PyResult<Trained<'py>> {
    let request = TrainRequest {
        kind: ModelKind::parse(model).py()?,
        char: CharSpec { end_of_word, fused: end_of_word_fused, byte_fallback },
        tie_break: TieBreak::parse(tie_break).py()?,
        min_frequency,
        vocab_size,
        num_merges,
        n_special,
        max_token_length,
        init: init.map(|core| continued_from(&core.inner, init_fallback_start)),
    };
    // consume: the caller is done with the table, which is freed as soon as
    // the trainer has its words (it leaves the Python object empty)
    let owned = if consume { Some(std::mem::take(&mut counts.try_borrow_mut()?.counts)) } else { None };
    let kept = counts.borrow();
    let kept_table = &kept.counts;
    // every ~0.1 s: take the GIL, report progress, and let Ctrl-C stop training
    let mut interrupted: Option<PyErr> = None;
    let mut last = std::time::Instant::now();
    let out = py
        .detach(|| {
            let on_merge = |k, _: &_, total| {
                if last.elapsed() < std::time::Duration::from_millis(100) {
                    return true;
                }
                last = std::time::Instant::now();
                Python::attach(|py| {
                    let step = py.check_signals().and_then(|_| match &progress {
                        Some(f) => f.call1(py, (k + 1, total)).map(|_| ()),
                        None => Ok(()),
                    });
                    match step {
                        Ok(()) => true,
                        Err(e) => {
                            interrupted = Some(e);
                            false
                        }
                    }
                })
            };
            match owned {
                Some(table) => driver::train_consuming(table, &request, on_merge),
                None => driver::train(kept_table, &request, on_merge),
            }
        })
        .py()?;
    drop(kept);
    if let Some(e) = interrupted {
        return Err(e);
    }
    trained(py, &out, &progress)
}

/// The char model's base symbols of the words of `counts` and of `extra`,
/// in id order (`vocab::char_base`, as training orders them).
#[pyfunction]
#[pyo3(signature = (counts, extra, end_of_word, end_of_word_fused))]
fn char_base(py: Python<'_>, counts: PyRef<'_, WordCounts>, extra: Vec<String>, end_of_word: Option<String>, end_of_word_fused: bool) -> Vec<String> {
    let spec = CharSpec { end_of_word, fused: end_of_word_fused, byte_fallback: false };
    let table = &counts.counts;
    py.detach(|| crate::vocab::char_base(table.iter().map(|(w, _)| w).chain(extra.iter().map(String::as_str)), &spec))
}

/// What continued training starts from, read from a ready tokenizer (no
/// token's bytes go through Python): every id's text but the special
/// tokens' and the 256 byte-fallback tokens' from `fallback_start` (they
/// never take part in merges), and its merges.
fn continued_from(tok: &Tokenizer, fallback_start: Option<u32>) -> Init {
    let specials: std::collections::HashSet<u32> = tok.specials().iter().map(|&(_, id)| id).collect();
    let fallback = fallback_start.map_or(0..0, |start| start..start.saturating_add(256));
    let tokens = (0..tok.n_vocab() as u32)
        .map(|id| if specials.contains(&id) || fallback.contains(&id) { None } else { tok.token_bytes(id).map(<[u8]>::to_vec) })
        .collect();
    Init { tokens, merges: tok.merge_triples() }
}

/// What training hands Python: base symbol texts, the number of real
/// symbols, merges (left, right, count) and why it stopped; the progress
/// callback sees the final count first.
fn trained<'py>(py: Python<'py>, out: &TrainOutput, progress: &Option<Py<PyAny>>) -> PyResult<Trained<'py>> {
    if let Some(f) = progress {
        f.call1(py, (out.merges.len(), out.merges.len()))?;
    }
    let reason = match out.reason {
        StopReason::Done => "done",
        StopReason::NoPairs => "no-pairs",
        StopReason::BelowMinFrequency => "min-frequency",
        StopReason::Cancelled => "cancelled",
    };
    Ok((
        out.base.iter().map(|b| PyBytes::new(py, b)).collect(),
        out.n_symbols,
        out.merges.iter().map(|m| (m.left, m.right, m.count)).collect(),
        reason,
    ))
}

/// base symbols, n_symbols, merges, stop reason
type Trained<'py> = (Vec<Bound<'py, PyBytes>>, usize, Vec<(u32, u32, u64)>, &'static str);

/// Parity-aware training (`crate::train::parity`) on one word table per language
/// (`dev`: none or one per language). Returns `train`'s tuple plus the
/// per-language statistics (train before/after, dev before/after, merges chosen).
#[pyfunction]
#[pyo3(signature = (langs, dev, model, *, end_of_word, end_of_word_fused, tie_break, min_frequency, vocab_size, num_merges, n_special, max_token_length=None, variant="base", global_merges=0, window_size=100, alpha=2.0, ratio=None, progress=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn train_parity<'py>(
    py: Python<'py>,
    langs: Vec<PyRef<'py, WordCounts>>,
    dev: Vec<PyRef<'py, WordCounts>>,
    model: &str,
    end_of_word: Option<String>,
    end_of_word_fused: bool,
    tie_break: &str,
    min_frequency: u64,
    vocab_size: Option<u64>,
    num_merges: Option<u64>,
    n_special: u64,
    max_token_length: Option<u32>,
    variant: &str,
    global_merges: u64,
    window_size: usize,
    alpha: f64,
    ratio: Option<Vec<f64>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(
    Vec<Bound<'py, PyBytes>>,
    usize,
    Vec<(u32, u32, u64)>,
    &'static str,
    (Vec<u128>, Vec<u128>, Vec<u128>, Vec<u128>, Vec<u64>),
)> {
    let request = crate::train::parity::ParityRequest {
        train: TrainRequest {
            kind: ModelKind::parse(model).py()?,
            char: CharSpec { end_of_word, fused: end_of_word_fused, byte_fallback: false },
            tie_break: TieBreak::parse(tie_break).py()?,
            min_frequency,
            vocab_size,
            num_merges,
            n_special,
            max_token_length,
            init: None,
        },
        variant: crate::train::parity::Variant::parse(variant).py()?,
        global_merges,
        window_size,
        alpha,
        ratio,
    };
    let lang_tables: Vec<&words::WordCounts> = langs.iter().map(|w| &w.counts).collect();
    let dev_tables: Vec<&words::WordCounts> = dev.iter().map(|w| &w.counts).collect();
    let mut interrupted: Option<PyErr> = None;
    let mut last = std::time::Instant::now();
    let result = py.detach(|| {
        crate::train::parity::train_parity(&lang_tables, &dev_tables, &request, |k, _, total| {
            if last.elapsed() < std::time::Duration::from_millis(100) {
                return true;
            }
            last = std::time::Instant::now();
            Python::attach(|py| {
                let step = py.check_signals().and_then(|_| match &progress {
                    Some(f) => f.call1(py, (k + 1, total)).map(|_| ()),
                    None => Ok(()),
                });
                step.map_err(|e| interrupted = Some(e)).is_ok()
            })
        })
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let (out, stats) = result.py()?;
    let (base, n_symbols, merges, reason) = trained(py, &out, &progress)?;
    Ok((base, n_symbols, merges, reason, (stats.train_before, stats.train_after, stats.dev_before, stats.dev_after, stats.chosen)))
}

/// A ready tokenizer (either model); immutable, shareable across threads.
#[pyclass(module = "bytepair._core", frozen)]
pub struct CoreTokenizer {
    inner: std::sync::Arc<Tokenizer>,
    /// One Python int per id, for lists of ids (`crate::py::pylist`).
    ints: crate::py::pylist::IntTable,
    /// The ids `add_special_tokens=True` puts before and after a text (the description's prefix and suffix
    /// tokens: a tekken.json's BOS); see `with_added`.
    added: (Vec<u32>, Vec<u32>),
    /// `decode(ids, skip_special_tokens=True)` decodes the ids between two special tokens apart (mistral_common's
    /// groups: a character's bytes on both sides of a special token stay apart); else the rest is joined (HF's)
    specials_apart: bool,
    /// the special tokens' ids (what `skip_special_tokens=True` drops)
    special_ids: std::sync::Arc<FxHashSet<u32>>,
}

impl CoreTokenizer {
    fn of(inner: Tokenizer) -> Self {
        let special_ids = std::sync::Arc::new(inner.specials().iter().map(|&(_, id)| id).collect());
        CoreTokenizer { inner: std::sync::Arc::new(inner), ints: Default::default(), added: Default::default(), specials_apart: false, special_ids }
    }

    /// Appends the ids of `text` to `out` by tiktoken's rules (`allowed` and `disallowed` both empty:
    /// special-token text is plain text), between the added ids when `add`.
    fn encode_under(&self, text: &str, allowed: &SpecialSet, disallowed: &SpecialSet, add: bool, out: &mut Vec<u32>) -> crate::Result<()> {
        if add {
            out.extend_from_slice(&self.added.0);
        }
        if allowed.is_empty() && disallowed.is_empty() {
            self.inner.encode_ordinary_into(text, out)?;
        } else {
            self.inner.encode_into(text, allowed, disallowed, out)?;
        }
        if add {
            out.extend_from_slice(&self.added.1);
        }
        Ok(())
    }
}

#[pymethods]
impl CoreTokenizer {
    /// Byte model from `tokens[id]` (bytes, or None for an unused id).
    /// `merges` (pairs of ids, with their results at `merge_ids`, default
    /// 256, 257, ...): the merges it was built from, if any (see
    /// `merge_triples`).
    #[staticmethod]
    #[pyo3(signature = (tokens, pattern, special_tokens, *, add_prefix_space=false, merges=None, merge_ids=None))]
    fn byte(
        tokens: Vec<Option<Vec<u8>>>,
        pattern: Option<&str>,
        special_tokens: Vec<(String, u32)>,
        add_prefix_space: bool,
        merges: Option<Vec<(u32, u32)>>,
        merge_ids: Option<Vec<u32>>,
    ) -> PyResult<Self> {
        let mut inner = Tokenizer::byte(tokens, pattern, special_tokens).py()?;
        inner.set_add_prefix_space(add_prefix_space).py()?;
        if let Some(merges) = merges {
            inner = inner.with_byte_merges(&merges, merge_ids.as_deref()).py()?;
        } else if merge_ids.is_some() {
            return Err(to_py(Error::Format("merge_ids is given without merges".into())));
        }
        Ok(CoreTokenizer::of(inner))
    }

    /// Byte model from its merges alone (pairs of ids, with their results
    /// at `merge_ids`, default 256, 257, ...): the core derives every
    /// token's bytes (see `Tokenizer::byte_from_merges`).
    #[staticmethod]
    #[pyo3(signature = (merges, pattern, special_tokens, *, add_prefix_space=false, merge_ids=None))]
    fn byte_merges(
        py: Python<'_>,
        merges: Vec<(u32, u32)>,
        pattern: Option<&str>,
        special_tokens: Vec<(String, u32)>,
        add_prefix_space: bool,
        merge_ids: Option<Vec<u32>>,
    ) -> PyResult<Self> {
        let mut inner = py
            .detach(|| Tokenizer::byte_from_merges(&merges, merge_ids.as_deref(), pattern, special_tokens))
            .py()?;
        inner.set_add_prefix_space(add_prefix_space).py()?;
        Ok(CoreTokenizer::of(inner))
    }

    /// Char model from its base symbols and merges (pairs of ids).
    #[staticmethod]
    #[pyo3(signature = (base, merges, *, end_of_word, end_of_word_fused, byte_fallback_start, unk_id, pattern, special_tokens, merge_ids=None, lowest_rank=false))]
    #[allow(clippy::too_many_arguments)]
    fn char(
        base: Vec<String>,
        merges: Vec<(u32, u32)>,
        end_of_word: Option<String>,
        end_of_word_fused: bool,
        byte_fallback_start: Option<u32>,
        unk_id: Option<u32>,
        pattern: Option<&str>,
        special_tokens: Vec<(String, u32)>,
        merge_ids: Option<Vec<u32>>,
        lowest_rank: bool,
    ) -> PyResult<Self> {
        let options = CharOptions { end_of_word, fused: end_of_word_fused, byte_fallback_start, unk_id, lowest_rank };
        let inner = Tokenizer::char(base, &merges, merge_ids.as_deref(), options, pattern, special_tokens).py()?;
        Ok(CoreTokenizer::of(inner))
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> Option<Bound<'py, PyBytes>> {
        self.inner.token_bytes(id).map(|b| PyBytes::new(py, b))
    }

    /// Every merge as (left id, right id, merged id) in rank order (see
    /// `Tokenizer::merge_triples`); derived for a byte model given as ranks.
    fn merge_triples(&self, py: Python<'_>) -> Vec<(u32, u32, u32)> {
        py.detach(|| self.inner.merge_triples())
    }

    /// The first of `triples` that is not the merge bytepair's rule gives
    /// its token: (index, that merge's pair or None); None when all are
    /// (see `Tokenizer::first_underived`).
    fn first_underived(&self, py: Python<'_>, triples: Vec<(u32, u32, u32)>) -> Option<(usize, Option<(u32, u32)>)> {
        py.detach(|| self.inner.first_underived(&triples))
    }

    /// `first_underived` of the merges a loader's `ByteVocabRead` holds (no list of them made):
    /// (index, the rule's pair or None, the merge as (left, right, merged) ids); None when all are.
    #[allow(clippy::type_complexity)]
    fn first_underived_read(
        &self,
        py: Python<'_>,
        read: &Bound<'_, crate::py::vocab_files::ByteVocabRead>,
    ) -> Option<(usize, Option<(u32, u32)>, (u32, u32, u32))> {
        let triples = read.get().triples();
        py.detach(|| self.inner.first_underived(triples)).map(|(k, derived)| (k, derived, triples[k]))
    }

    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &Bound<'_, PyAny>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        let text = &*text_arg(text)?;
        let ids = detach_for(py, text.len(), || self.inner.encode_ordinary(text)).py()?;
        self.ints.list(py, self.inner.n_vocab(), &ids)
    }

    /// This tokenizer with `prefix` and `suffix` as the ids `add_special_tokens=True` adds, and `specials_apart`
    /// for `decode` (the tables shared).
    #[pyo3(signature = (prefix, suffix, specials_apart=false))]
    fn with_added(&self, prefix: Vec<u32>, suffix: Vec<u32>, specials_apart: bool) -> Self {
        let (inner, special_ids) = (self.inner.clone(), self.special_ids.clone());
        CoreTokenizer { inner, ints: Default::default(), added: (prefix, suffix), specials_apart, special_ids }
    }

    /// `allowed`/`disallowed`: a list of special tokens, or None for all; `add`: the added ids around.
    #[pyo3(signature = (text, allowed, disallowed, add=false))]
    fn encode<'py>(
        &self, py: Python<'py>, text: &Bound<'_, PyAny>, allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>, add: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        let text = &*text_arg(text)?;
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let ids = text_ids(py, text, |ids| self.encode_under(text, &allowed, &disallowed, add, ids)).py()?;
        self.ints.list(py, self.inner.n_vocab(), &ids)
    }

    /// `encode` with each token's character span in `text` (an added id spans `(0, 0)`, as in Hugging Face).
    #[pyo3(signature = (text, allowed, disallowed, add=false))]
    fn encode_with_offsets(
        &self, py: Python<'_>, text: &Bound<'_, PyAny>, allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>, add: bool,
    ) -> PyResult<(Vec<u32>, Vec<(usize, usize)>)> {
        let (ids, spans) = self.encode_full(py, text, allowed, disallowed, None, true, add)?;
        Ok((ids, spans.unwrap_or_default()))
    }

    /// `encode` with BPE-dropout `(p, seed)` and, when `offsets`, the
    /// character span of each token: returns (ids, spans or None).
    #[pyo3(signature = (text, allowed, disallowed, dropout=None, offsets=false, add=false))]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn encode_full(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        allowed: Option<Bound<'_, PyAny>>,
        disallowed: Option<Bound<'_, PyAny>>,
        dropout: Option<(f64, u64)>,
        offsets: bool,
        add: bool,
    ) -> PyResult<(Vec<u32>, Option<Vec<(usize, usize)>>)> {
        let text = &*text_arg(text)?;
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let dropout = dropout.map(|(p, seed)| Dropout::new(p, seed));
        let (ids, spans) = detach_for(py, text.len(), || {
            let (ids, spans) = self.inner.encode_full(text, &allowed, &disallowed, dropout, offsets)?;
            Ok((ids, offsets.then(|| char_spans(text, &spans))))
        })
        .py()?;
        if !add || (self.added.0.is_empty() && self.added.1.is_empty()) {
            return Ok((ids, spans));
        }
        let (before, after) = &self.added;
        let ids = [before.as_slice(), &ids, after.as_slice()].concat();
        let spans = spans.map(|s| [vec![(0, 0); before.len()], s, vec![(0, 0); after.len()]].concat());
        Ok((ids, spans))
    }

    /// A stream that encodes one long text block by block (see
    /// `EncodeStream`); `allowed`/`disallowed`/`add` as for `encode`.
    #[pyo3(signature = (allowed, disallowed, dropout=None, add=false))]
    fn stream(
        slf: &Bound<'_, Self>,
        allowed: Option<Bound<'_, PyAny>>,
        disallowed: Option<Bound<'_, PyAny>>,
        dropout: Option<(f64, u64)>,
        add: bool,
    ) -> PyResult<EncodeStream> {
        let tok = slf.get();
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let state = tok.inner.stream(allowed, disallowed, dropout.map(|(p, seed)| Dropout::new(p, seed)));
        let (before, after) = if add { tok.added.clone() } else { Default::default() };
        Ok(EncodeStream { tok: slf.clone().unbind(), state, before, after })
    }

    #[pyo3(signature = (texts, allowed, disallowed, add=false))]
    fn encode_batch<'py>(
        &self, py: Python<'py>, texts: Vec<pyo3::pybacked::PyBackedStr>, allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>, add: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let encode = |t: &str, out: &mut Vec<u32>| self.encode_under(t, &allowed, &disallowed, add, out);
        Ok(encode_lists(py, &self.ints, self.inner.n_vocab(), &texts, encode)?.0)
    }

    /// Number of ids of `text` (special-token text is plain text); no ids
    /// are handed to Python.
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = &*text_arg(text)?;
        detach_for(py, text.len(), || {
            COUNT_BUF.with(|b| {
                let mut buf = b.take();
                buf.clear();
                let n = self.inner.encode_ordinary_into(text, &mut buf).map(|()| buf.len());
                if buf.capacity() <= 1 << 20 {
                    b.replace(buf);
                }
                n
            })
        })
        .py()
    }

    /// `count` of each text, in one parallel pass (GIL released).
    fn count_batch(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<usize>> {
        py.detach(|| crate::batch::count(&texts, |t, out| self.inner.encode_ordinary_into(t, out))).py()
    }

    /// `encode` as the bytes of native-endian uint32 ids (for `numpy.frombuffer`, no list between).
    #[pyo3(signature = (text, allowed, disallowed, add=false))]
    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'_, PyAny>,
        allowed: Option<Bound<'_, PyAny>>,
        disallowed: Option<Bound<'_, PyAny>>,
        add: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let text = &*text_arg(text)?;
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let ids = text_ids(py, text, |ids| self.encode_under(text, &allowed, &disallowed, add, ids)).py()?;
        ids_bytes(py, &ids)
    }

    /// Every text encoded in one parallel pass (GIL released), as (the bytes
    /// of all ids, native-endian uint32; the bytes of `len(texts) + 1`
    /// native-endian uint64 offsets: text k is ids[offsets[k]:offsets[k+1]]).
    #[pyo3(signature = (texts, allowed, disallowed, add=false))]
    fn encode_batch_to_buffer<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        allowed: Option<Bound<'_, PyAny>>,
        disallowed: Option<Bound<'_, PyAny>>,
        add: bool,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let flat = py.detach(|| crate::batch::encode_flat(&texts, |t, out| self.encode_under(t, &allowed, &disallowed, add, out))).py()?;
        drop(texts);
        flat_bytes(py, &flat)
    }

    /// `decode_bytes` (`text`: `decode`) of ids given as the bytes of native-endian uint32s.
    #[pyo3(signature = (ids, skip_special_tokens=false, text=false))]
    fn decode_buffer<'py>(&self, py: Python<'py>, ids: &[u8], skip_special_tokens: bool, text: bool) -> PyResult<Bound<'py, PyAny>> {
        let ids = buffer_ids(ids)?;
        if text {
            let out = py.detach(|| self.decode_text(&ids, skip_special_tokens)).py()?;
            return Ok(pyo3::types::PyString::new(py, &out).into_any());
        }
        let bytes = py.detach(|| self.decode_ids(&ids, skip_special_tokens)).py()?;
        Ok(PyBytes::new(py, &bytes).into_any())
    }

    /// The pieces of `text` (special-token text is plain text): bytes in the byte model, str in the char model.
    fn tokenize<'py>(&self, py: Python<'py>, text: &Bound<'_, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let text = &*text_arg(text)?;
        let pieces = detach_for(py, text.len(), || self.inner.tokenize(text)).py()?;
        pieces.iter().map(|p| self.text_of(py, p)).collect()
    }

    /// The bytes that `ids` stand for; `skip_special_tokens`: without the special tokens.
    #[pyo3(signature = (ids, skip_special_tokens=false))]
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<i64>, skip_special_tokens: bool) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_to_u32(ids)?;
        let bytes = py.detach(|| self.decode_ids(&ids, skip_special_tokens)).py()?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// `decode_bytes` as text, invalid UTF-8 replaced (Python's `errors="replace"`).
    #[pyo3(signature = (ids, skip_special_tokens=false))]
    fn decode(&self, py: Python<'_>, ids: Vec<i64>, skip_special_tokens: bool) -> PyResult<String> {
        let ids = ids_to_u32(ids)?;
        py.detach(|| self.decode_text(&ids, skip_special_tokens)).py()
    }

    /// The vocabulary's entry of `id`: its bytes in the byte model, its text in the char model.
    fn token_text<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(raw) = u32::try_from(id).ok().and_then(|id| self.inner.token_bytes(id)) else { return Ok(None) };
        self.text_of(py, raw).map(Some)
    }

    /// content -> id of every special token, and their texts (`CorePipeline.added_tokens`: all are special).
    fn added_tokens(&self) -> (std::collections::HashMap<String, u32>, Vec<String>) {
        let specials = self.inner.specials();
        (specials.iter().cloned().collect(), specials.iter().map(|(t, _)| t.clone()).collect())
    }
}

impl CoreTokenizer {
    /// `decode_bytes`, without the special tokens when `skip_special`.
    fn decode_ids(&self, ids: &[u32], skip_special: bool) -> crate::Result<Vec<u8>> {
        if !skip_special || self.special_ids.is_empty() {
            return self.inner.decode_bytes(ids);
        }
        let kept: Vec<u32> = ids.iter().copied().filter(|id| !self.special_ids.contains(id)).collect();
        self.inner.decode_bytes(&kept)
    }

    /// `decode_ids` as text, invalid UTF-8 replaced; with `specials_apart`, the ids between skipped special
    /// tokens each decoded apart.
    fn decode_text(&self, ids: &[u32], skip_special: bool) -> crate::Result<String> {
        if !(skip_special && self.specials_apart) {
            return self.decode_ids(ids, skip_special).map(|b| String::from_utf8_lossy(&b).into_owned());
        }
        let mut out = String::new();
        for group in ids.split(|id| self.special_ids.contains(id)) {
            out.push_str(&String::from_utf8_lossy(&self.inner.decode_bytes(group)?));
        }
        Ok(out)
    }

    /// A token's text as Python sees it: bytes in the byte model, str in the char model (its tokens are text).
    fn text_of<'py>(&self, py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        if !self.inner.is_char() {
            return Ok(PyBytes::new(py, raw).into_any());
        }
        let text = std::str::from_utf8(raw).map_err(|e| PyValueError::new_err(format!("a char-model token is not UTF-8: {e}")))?;
        Ok(pyo3::types::PyString::new(py, text).into_any())
    }
}

/// Ids given as the bytes of native-endian uint32s.
fn buffer_ids(ids: &[u8]) -> PyResult<Vec<u32>> {
    if ids.len() % 4 != 0 {
        return Err(PyValueError::new_err("the id buffer's length is not a multiple of 4"));
    }
    Ok(ids.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// One long text encoded block by block: `feed(block)` returns the ids
/// that more text can no longer change, `finish()` the rest. The ids (and
/// errors) are those of `encode` on the whole text.
#[pyclass(module = "bytepair._core")]
pub struct EncodeStream {
    tok: Py<CoreTokenizer>,
    state: crate::stream::EncodeStream,
    /// the added ids still to come before the first ids, and after the last
    before: Vec<u32>,
    after: Vec<u32>,
}

#[pymethods]
impl EncodeStream {
    fn feed(&mut self, py: Python<'_>, block: &str) -> PyResult<Vec<u32>> {
        let (tok, state) = (&self.tok.get().inner, &mut self.state);
        let mut out = std::mem::take(&mut self.before);
        py.detach(|| tok.stream_feed(state, block, &mut out).map(|_| out)).py()
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let (tok, state) = (&self.tok.get().inner, &mut self.state);
        let mut out = std::mem::take(&mut self.before);
        let after = std::mem::take(&mut self.after);
        py.detach(|| {
            tok.stream_finish(state, &mut out)?;
            out.extend_from_slice(&after);
            Ok(out)
        })
        .py()
    }
}

/// The words of `text` under a pattern (None: `str.split()`); the pattern is compiled once
/// for the calls that follow (`Pretokenizer::cached`).
#[pyfunction]
#[pyo3(signature = (text, pattern))]
fn split_words(py: Python<'_>, text: &str, pattern: Option<&str>) -> PyResult<Vec<String>> {
    let pre = Pretokenizer::cached(pattern, false).py()?;
    py.detach(|| pre.words(text).map(|w| w.into_iter().map(str::to_owned).collect())).py()
}

/// The preset whose hand-written lexer runs `pattern` (its name, as `Preset`
/// spells it), or None when the regex engine does.
#[pyfunction]
fn pattern_lexer(pattern: &str) -> Option<String> {
    crate::pretok::pretokenize::preset_of(pattern).map(|p| format!("{p:?}"))
}

/// Like `split_words`, but always with the regex engine, never a preset's
/// hand-written lexer (the lexers are tested against it).
#[pyfunction]
#[pyo3(signature = (text, pattern))]
fn split_words_regex(py: Python<'_>, text: &str, pattern: Option<&str>) -> PyResult<Vec<String>> {
    let pre = Pretokenizer::cached(pattern, true).py()?;
    py.detach(|| pre.words(text).map(|w| w.into_iter().map(str::to_owned).collect())).py()
}

thread_local! {
    /// `count`'s reused id buffer.
    static COUNT_BUF: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

fn write_ids(buf: &mut [u8], ids: &[u32]) {
    for (d, s) in buf.chunks_exact_mut(4).zip(ids) {
        d.copy_from_slice(&s.to_ne_bytes());
    }
}

/// `ids` as the bytes of native-endian uint32s (for `numpy.frombuffer`).
fn ids_bytes<'py>(py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, ids.len() * 4, |buf| {
        write_ids(buf, ids);
        Ok(())
    })
}

/// A batch's ids as (the bytes of all ids, native-endian uint32; the bytes
/// of `docs + 1` native-endian uint64 offsets).
fn flat_bytes<'py>(py: Python<'py>, flat: &crate::batch::Flat) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let mut offsets = Vec::new();
    let ids = PyBytes::new_with(py, flat.len() * 4, |buf| {
        // nobody else can see the new bytes object yet: filled without the GIL
        offsets = py.detach(|| {
            let mut offsets = vec![0u8; (flat.docs() + 1) * 8];
            flat.write(buf, &mut offsets);
            offsets
        });
        Ok(())
    })?;
    Ok((ids, PyBytes::new(py, &offsets)))
}

/// Sets the byte budget of each thread's cache of encoded pieces (0 turns
/// it off); returns the budget in force (rounded down to a power of two
/// slots).
#[pyfunction]
fn set_cache_bytes(bytes: usize) -> usize {
    crate::cache::set_cache_bytes(bytes);
    crate::cache::PieceCache::size_for(bytes)
}

/// (budget per thread in bytes of the piece slots, bytes held by all threads' piece slots, this
/// thread's hits, this thread's misses, budget per thread of the word maps, bytes held by all
/// threads' word maps).
#[pyfunction]
fn cache_info() -> (usize, usize, u64, u64, usize, usize) {
    let (hits, misses) = crate::cache::thread_stats();
    let size = crate::cache::PieceCache::size_for(crate::cache::cache_bytes());
    let words = crate::cache::words::held_bytes();
    (size, crate::cache::allocated_bytes(), hits, misses, crate::cache::words::budget(), words)
}

/// Empties the per-thread caches of encoded pieces and the word maps (for
/// benchmarks that time encoding from a cold start; ids never depend on them).
#[pyfunction]
fn clear_caches() {
    crate::model::clear_piece_caches();
}

/// Internal knob of the training merge loop: merges with at least
/// `min_positions` positions run in `runs` parallel runs (0: one per
/// thread). Returns the previous (min_positions, runs). Results never
/// depend on it; tests lower it so small corpora take the parallel path.
#[pyfunction]
fn _set_parallel_merge(min_positions: usize, runs: usize) -> (usize, usize) {
    crate::train::trainer::set_parallel_merge(min_positions, runs)
}


// ---------------------------------------------------------------- HF pipelines (src/pipeline)

fn pipeline_ids(ids: Vec<i64>) -> PyResult<Vec<u32>> {
    ids_to_u32(ids)
}

/// A tokenizer pipeline built from a Hugging Face `tokenizer.json` text.
#[pyclass(module = "bytepair._core", frozen)]
pub struct CorePipeline {
    inner: crate::pipeline::Pipeline,
    ints: crate::py::pylist::IntTable,
    /// tiktoken's rules over the special added tokens
    specials: crate::special::PipelineSpecials,
}

impl CorePipeline {
    fn of(inner: crate::pipeline::Pipeline) -> Self {
        let specials = crate::special::PipelineSpecials::new(&inner);
        CorePipeline { inner, ints: Default::default(), specials }
    }

    /// Appends the ids of `text` to `out` by tiktoken's rules over the special added tokens (the batch
    /// helpers' shape); `add`: the post-processor's ids.
    fn encode_under(&self, text: &str, allowed: &SpecialSet, disallowed: &SpecialSet, add: bool, out: &mut Vec<u32>) -> crate::Result<()> {
        self.specials.encode_into(&self.inner, text, add, allowed, disallowed, out)
    }
}

/// The flags of `CorePipeline`'s `llama_decode` argument.
fn llama_decode_of((strip_first_space, clean_spaces, byte_text): (bool, bool, bool)) -> crate::pipeline::llama_decode::LlamaDecode {
    crate::pipeline::llama_decode::LlamaDecode { strip_first_space, clean_spaces, byte_text }
}

#[pymethods]
impl CorePipeline {
    /// `description`: the JSON text, a `str` or its UTF-8 `bytes` (read where it is, no copy made).
    /// `llama_decode`: a GGUF file's `(strip_first_space, clean_spaces, byte_text)`, decoding as llama.cpp does.
    #[new]
    #[pyo3(signature = (description, regexes=None, llama_decode=None))]
    fn new(
        py: Python<'_>,
        description: &Bound<'_, PyAny>,
        regexes: Option<std::collections::HashMap<String, String>>,
        llama_decode: Option<(bool, bool, bool)>,
    ) -> PyResult<Self> {
        let map: crate::pretok::patterns::RegexMap = regexes.unwrap_or_default().into_iter().collect();
        let source = crate::py::vocab_files::Source::of(description)?;
        let bytes = source.bytes();
        let inner = py
            .detach(|| match std::str::from_utf8(bytes) {
                Ok(text) => crate::pipeline::Pipeline::from_json(text, &map),
                Err(e) => Err(Error::Format(format!("the description is not UTF-8 (byte offset {})", e.valid_up_to()))),
            })
            .py()?;
        Ok(CorePipeline::of(inner.with_llama_decode(llama_decode.map(llama_decode_of))))
    }

    /// The pipeline of a BPE `description` whose `model.vocab` and `model.merges` are empty in its text and
    /// given here as lists (`tokens[id]`; merges as `"a b"` strings, cut at the first space, or as `[a, b]`
    /// pairs): a vocabulary of 10^5 tokens is never written as JSON and read back. None when the lists or
    /// the description are irregular (as `spec_typed` reads them): the caller then builds from the whole
    /// description's JSON, which names the fault.
    #[staticmethod]
    #[pyo3(signature = (description, regexes, tokens, merges, llama_decode=None))]
    fn with_lists(
        py: Python<'_>,
        description: String,
        regexes: std::collections::HashMap<String, String>,
        tokens: &Bound<'_, PyAny>,
        merges: &Bound<'_, PyAny>,
        llama_decode: Option<(bool, bool, bool)>,
    ) -> PyResult<Option<Self>> {
        let Ok(tokens) = tokens.extract::<Vec<String>>() else {
            return Ok(None);
        };
        let merges = if let Ok(strings) = merges.extract::<Vec<String>>() {
            crate::pipeline::spec_typed::MergeList::Strings(strings)
        } else if let Ok(pairs) = merges.extract::<Vec<Vec<String>>>() {
            crate::pipeline::spec_typed::MergeList::Pairs(pairs)
        } else {
            return Ok(None);
        };
        let map: crate::pretok::patterns::RegexMap = regexes.into_iter().collect();
        let inner = py.detach(|| {
            crate::pipeline::spec_typed::read_with_lists(&description, tokens, merges)
                .map(|spec| crate::pipeline::Pipeline::from_spec(spec, &map))
                .transpose()
        });
        let how = llama_decode.map(llama_decode_of);
        Ok(inner.py()?.map(|pipeline| CorePipeline::of(pipeline.with_llama_decode(how))))
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }

    #[getter]
    fn is_byte_level(&self) -> bool {
        self.inner.is_byte_level()
    }

    /// content -> id of every added token, and the set of special ones
    fn added_tokens(&self) -> (std::collections::HashMap<String, u32>, Vec<String>) {
        let map = self.inner.added.by_content.iter().map(|(k, v)| (k.clone(), *v)).collect();
        (map, self.inner.added.special.iter().cloned().collect())
    }

    /// The calls of `CoreTokenizer`, with the same arguments: `allowed`/`disallowed` a list of special tokens
    /// or None for all (tiktoken's rules over the special added tokens), `add` the post-processor's ids.
    #[pyo3(signature = (text, allowed, disallowed, add=false))]
    fn encode<'py>(
        &self, py: Python<'py>, text: &Bound<'_, PyAny>, allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>, add: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        let text = &*text_arg(text)?;
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let ids = text_ids(py, text, |ids| self.encode_under(text, &allowed, &disallowed, add, ids)).py()?;
        self.ints.list(py, self.inner.n_vocab(), &ids)
    }

    /// `CoreTokenizer.encode_full`: a pipeline takes no dropout at call time (its model's `dropout` field is
    /// the description's).
    #[pyo3(signature = (text, allowed, disallowed, dropout=None, offsets=false, add=false))]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn encode_full(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        allowed: Option<Bound<'_, PyAny>>,
        disallowed: Option<Bound<'_, PyAny>>,
        dropout: Option<(f64, u64)>,
        offsets: bool,
        add: bool,
    ) -> PyResult<(Vec<u32>, Option<Vec<(usize, usize)>>)> {
        if dropout.is_some() {
            return Err(to_py(no_dropout()));
        }
        if offsets {
            let (ids, spans) = self.encode_with_offsets(py, text, allowed, disallowed, add)?;
            return Ok((ids, Some(spans)));
        }
        let text = &*text_arg(text)?; // the ids alone: no offsets tracked
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        Ok((text_ids(py, text, |ids| self.encode_under(text, &allowed, &disallowed, add, ids)).py()?, None))
    }

    /// `encode` as the bytes of native-endian uint32 ids (for `numpy.frombuffer`).
    #[pyo3(signature = (text, allowed, disallowed, add=false))]
    fn encode_to_buffer<'py>(
        &self, py: Python<'py>, text: &Bound<'_, PyAny>, allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>, add: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let text = &*text_arg(text)?;
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let ids = text_ids(py, text, |ids| self.encode_under(text, &allowed, &disallowed, add, ids)).py()?;
        ids_bytes(py, &ids)
    }

    /// Every text encoded in one parallel pass (GIL released), as
    /// `CoreTokenizer.encode_batch_to_buffer` gives them.
    #[pyo3(signature = (texts, allowed, disallowed, add=false))]
    fn encode_batch_to_buffer<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<pyo3::pybacked::PyBackedStr>,
        allowed: Option<Bound<'_, PyAny>>,
        disallowed: Option<Bound<'_, PyAny>>,
        add: bool,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let flat = py.detach(|| crate::batch::encode_flat(&texts, |t, out| self.encode_under(t, &allowed, &disallowed, add, out))).py()?;
        drop(texts);
        flat_bytes(py, &flat)
    }

    /// `encode` with each token's character span in `text` (Hugging Face's offsets).
    #[pyo3(signature = (text, allowed, disallowed, add=false))]
    fn encode_with_offsets(
        &self, py: Python<'_>, text: &Bound<'_, PyAny>, allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>, add: bool,
    ) -> PyResult<(Vec<u32>, Vec<(usize, usize)>)> {
        let text = &*text_arg(text)?;
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        detach_for(py, text.len(), || {
            self.specials.encode_with_offsets(&self.inner, text, add, &allowed, &disallowed).map(|e| {
                let spans = crate::pipeline::char_offsets(text, &e.offsets);
                (e.ids, spans)
            })
        })
        .py()
    }

    #[pyo3(signature = (texts, allowed, disallowed, add=false))]
    fn encode_batch<'py>(
        &self, py: Python<'py>, texts: Vec<pyo3::pybacked::PyBackedStr>, allowed: Option<Bound<'_, PyAny>>, disallowed: Option<Bound<'_, PyAny>>, add: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        let encode = |t: &str, out: &mut Vec<u32>| self.encode_under(t, &allowed, &disallowed, add, out);
        Ok(encode_lists(py, &self.ints, self.inner.n_vocab(), &texts, encode)?.0)
    }

    /// `CoreTokenizer.stream`'s calls on a pipeline: its pre-tokenizer can look arbitrarily far ahead, so the
    /// blocks are joined and encoded at `finish` (memory grows with the text).
    #[pyo3(signature = (allowed, disallowed, dropout=None, add=false))]
    fn stream(
        slf: &Bound<'_, Self>,
        allowed: Option<Bound<'_, PyAny>>,
        disallowed: Option<Bound<'_, PyAny>>,
        dropout: Option<(f64, u64)>,
        add: bool,
    ) -> PyResult<PipelineStream> {
        if dropout.is_some() {
            return Err(to_py(no_dropout()));
        }
        let (allowed, disallowed) = special_sets(allowed, disallowed)?;
        Ok(PipelineStream { pipe: slf.clone().unbind(), text: String::new(), allowed, disallowed, add })
    }

    /// Number of ids of `text` with special added tokens' text as text, no list made.
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = &*text_arg(text)?;
        detach_for(py, text.len(), || self.inner.encode_ids(text, false, true)).py().map(|ids| ids.len())
    }

    /// `count` of each text, in one parallel pass (GIL released).
    fn count_batch(&self, py: Python<'_>, texts: Vec<pyo3::pybacked::PyBackedStr>) -> PyResult<Vec<usize>> {
        py.detach(|| crate::batch::count(&texts, |t, out| self.inner.encode_ids_into(t, false, true, out))).py()
    }

    #[pyo3(signature = (ids, skip_special_tokens=false))]
    fn decode(&self, py: Python<'_>, ids: Vec<i64>, skip_special_tokens: bool) -> PyResult<String> {
        let ids = pipeline_ids(ids)?;
        py.detach(|| self.inner.decode(&ids, skip_special_tokens)).py()
    }

    #[pyo3(signature = (ids, skip_special_tokens=false))]
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<i64>, skip_special_tokens: bool) -> PyResult<Bound<'py, PyBytes>> {
        let ids = pipeline_ids(ids)?;
        let out = py.detach(|| self.inner.decode_bytes(&ids, skip_special_tokens)).py()?;
        Ok(PyBytes::new(py, &out))
    }

    /// `decode_bytes` (`text`: `decode`) of ids given as the bytes of native-endian uint32s.
    #[pyo3(signature = (ids, skip_special_tokens=false, text=false))]
    fn decode_buffer<'py>(&self, py: Python<'py>, ids: &[u8], skip_special_tokens: bool, text: bool) -> PyResult<Bound<'py, PyAny>> {
        let ids = buffer_ids(ids)?;
        if text {
            let out = py.detach(|| self.inner.decode(&ids, skip_special_tokens)).py()?;
            return Ok(pyo3::types::PyString::new(py, &out).into_any());
        }
        let out = py.detach(|| self.inner.decode_bytes(&ids, skip_special_tokens)).py()?;
        Ok(PyBytes::new(py, &out).into_any())
    }

    /// The tokens of `text` (every added token matched): bytes in byte-level pipelines, else the
    /// vocabulary's strings (Hugging Face's `encode(text).tokens`).
    fn tokenize<'py>(&self, py: Python<'py>, text: &Bound<'_, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let text = &*text_arg(text)?;
        let ids = detach_for(py, text.len(), || self.inner.encode_ids(text, false, false)).py()?;
        let byte_level = self.inner.is_byte_level();
        Ok(ids
            .iter()
            .map(|&id| match byte_level {
                true => self.inner.token_bytes(id).map(|b| PyBytes::new(py, &b).into_any()),
                false => self.inner.id_to_token(id).map(|t| pyo3::types::PyString::new(py, t).into_any()),
            }
            .unwrap_or_else(|| py.None().into_bound(py)))
            .collect())
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: i64) -> Option<Bound<'py, PyBytes>> {
        let id = u32::try_from(id).ok()?;
        self.inner.token_bytes(id).map(|b| PyBytes::new(py, &b))
    }

    /// The vocabulary's entry of `id`: its string in the file (`id_to_token`).
    fn token_text(&self, id: i64) -> Option<String> {
        self.id_to_token(id)
    }

    fn id_to_token(&self, id: i64) -> Option<String> {
        u32::try_from(id).ok().and_then(|id| self.inner.id_to_token(id).map(str::to_string))
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// For `explain`: [(None, normalized text, [(pre-token, (start, end))...]) or (id, None, [(content, (start, end))])],
    /// ranges in characters of `text`.
    #[pyo3(signature = (text, ordinary=false))]
    #[allow(clippy::type_complexity)]
    fn pre_tokenize(
        &self,
        py: Python<'_>,
        text: &str,
        ordinary: bool,
    ) -> PyResult<Vec<(Option<u32>, Option<String>, Vec<(String, (usize, usize))>)>> {
        use crate::pipeline::PreTokenized;
        let items = py.detach(|| self.inner.pre_tokenize(text, ordinary)).py()?;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item {
                PreTokenized::Token(id, a, b) => {
                    let span = crate::pipeline::char_offsets(text, &[(a, b)])[0];
                    out.push((Some(id), None, vec![(text.get(a..b).unwrap_or("").to_string(), span)]));
                }
                PreTokenized::Text(normalized, pieces) => {
                    let ranges = pieces.iter().map(|(_, r)| *r).collect::<Vec<_>>();
                    let spans = crate::pipeline::char_offsets(text, &ranges);
                    let pieces = pieces.into_iter().zip(spans).map(|((p, _), s)| (p, s)).collect();
                    out.push((None, Some(normalized), pieces));
                }
            }
        }
        Ok(out)
    }
}

/// The error of a pipeline call given a dropout.
fn no_dropout() -> Error {
    Error::Encode("dropout is not an encode option of a tokenizer.json pipeline; set the BPE model's 'dropout' in its description".into())
}

/// A pipeline's `EncodeStream`: the blocks joined, encoded at `finish`.
#[pyclass(module = "bytepair._core")]
pub struct PipelineStream {
    pipe: Py<CorePipeline>,
    text: String,
    allowed: SpecialSet,
    disallowed: SpecialSet,
    add: bool,
}

#[pymethods]
impl PipelineStream {
    fn feed(&mut self, block: &str) -> Vec<u32> {
        self.text.push_str(block);
        Vec::new()
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let (pipe, text) = (self.pipe.get(), std::mem::take(&mut self.text));
        text_ids(py, &text, |ids| pipe.encode_under(&text, &self.allowed, &self.disallowed, self.add, ids)).py()
    }
}

// ---------------------------------------------------------------- end of HF pipelines

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WordCounts>()?;
    m.add_class::<CoreTokenizer>()?;
    m.add_class::<EncodeStream>()?;
    m.add_class::<CorePipeline>()?;
    m.add_class::<PipelineStream>()?;
    m.add_function(wrap_pyfunction!(train, m)?)?;
    m.add_function(wrap_pyfunction!(train_parity, m)?)?;
    m.add_function(wrap_pyfunction!(char_base, m)?)?;
    m.add_function(wrap_pyfunction!(clear_caches, m)?)?;
    m.add_function(wrap_pyfunction!(_set_parallel_merge, m)?)?;
    m.add_function(wrap_pyfunction!(set_cache_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(cache_info, m)?)?;
    m.add_function(wrap_pyfunction!(split_words, m)?)?;
    m.add_function(wrap_pyfunction!(split_words_regex, m)?)?;
    m.add_function(wrap_pyfunction!(pattern_lexer, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::gguf::gguf_strings, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::vocab_files::tiktoken_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::vocab_files::hf_vocab_ok, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::vocab_files::merges_repeat_a_token, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::vocab_files::byte_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::vocab_files::hf_outline, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::vocab_files::hf_byte_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(crate::py::vocab_files::hf_merges_repeat, m)?)?;
    m.add_class::<crate::py::vocab_files::ByteVocabRead>()?;
    Ok(())
}
