//! Bindings of `vocab_files` (the per-token work of the loaders): Python's
//! dicts and lists read once, without a Python object made per token
//! except the results. Anything irregular in them gives `None` or
//! `("irregular",)`, and the Python loader's checked path runs instead.

use crate::model::vocab_files::{self, Fault, MergeFault};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};

const MAX_ID: u64 = (1 << 32) - 2;

/// `{rank: token bytes}` of a strictly regular `.tiktoken` file, else None.
#[pyfunction]
pub(crate) fn tiktoken_ranks<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(ranks) = py.detach(|| vocab_files::tiktoken_ranks(data)) else {
        return Ok(None);
    };
    let out = PyDict::new(py);
    for (rank, token) in ranks {
        out.set_item(rank, PyBytes::new(py, &token))?;
    }
    Ok(Some(out))
}

/// The `str -> id` items of a dict whose keys are non-empty strings and
/// whose values are distinct ids (ints, not bools, 0 to 2**32 - 2); None
/// otherwise.
fn str_ids<'py>(d: &Bound<'py, PyDict>) -> PyResult<Option<(Vec<Bound<'py, PyString>>, Vec<u32>)>> {
    let (mut keys, mut ids) = (Vec::with_capacity(d.len()), Vec::with_capacity(d.len()));
    for (k, v) in d.iter() {
        let Ok(k) = k.cast_into::<PyString>() else { return Ok(None) };
        if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
            return Ok(None);
        }
        match v.extract::<u64>() {
            Ok(id) if id <= MAX_ID => ids.push(id as u32),
            _ => return Ok(None),
        }
        keys.push(k);
    }
    Ok(Some((keys, ids)))
}

/// The strings (copied: the limited API has no borrowed UTF-8 view), or
/// None if one is empty or holds a lone surrogate.
fn strs(keys: &[Bound<'_, PyString>]) -> Option<Vec<String>> {
    let mut buf = Vec::new();
    keys.iter().map(|k| text_of(k, &mut buf).filter(|s| !s.is_empty())).collect()
}

/// The text of a Python string, read through its code points (no Python
/// bytes object made, as `to_cow` makes one under the limited API of 3.9);
/// None if it holds a lone surrogate. `buf` is scratch space.
fn text_of(s: &Bound<'_, PyString>, buf: &mut Vec<u32>) -> Option<String> {
    buf.clear();
    push_code_points(s, buf).ok()?;
    buf.iter().map(|&c| char::from_u32(c)).collect()
}

/// Whether Hugging Face's `model.vocab` is regular: non-empty string tokens
/// with distinct ids (the checked path names what is not).
#[pyfunction]
pub(crate) fn hf_vocab_ok(vocab: &Bound<'_, PyDict>) -> PyResult<bool> {
    if !vocab.is_exact_instance_of::<PyDict>() {
        return Ok(false); // a subclass (a vocabulary read on first use) may not hold its items yet
    }
    let Some((keys, ids)) = str_ids(vocab)? else { return Ok(false) };
    if strs(&keys).is_none() {
        return Ok(false);
    }
    let mut seen = rustc_hash::FxHashSet::default();
    Ok(ids.iter().all(|id| seen.insert(*id)))
}

/// The strings of a merge list: each item `"left right"` (one space) or a
/// list / tuple of two non-empty strings; None if any item is not.
enum Item {
    Legacy(usize),
    Pair(usize, usize),
}

fn merge_strings<'py>(merges: &Bound<'py, PyList>) -> PyResult<Option<(Vec<Bound<'py, PyString>>, Vec<Item>)>> {
    let (mut held, mut items) = (Vec::with_capacity(merges.len() * 2), Vec::with_capacity(merges.len()));
    for m in merges.iter() {
        if let Ok(s) = m.cast::<PyString>() {
            items.push(Item::Legacy(held.len()));
            held.push(s.clone());
            continue;
        }
        let Some((a, b)) = string_pair(&m) else { return Ok(None) };
        items.push(Item::Pair(held.len(), held.len() + 1));
        held.push(a);
        held.push(b);
    }
    Ok(Some((held, items)))
}

/// The two strings of a merge item that is a list or tuple of two strings, else None.
fn string_pair<'py>(m: &Bound<'py, PyAny>) -> Option<(Bound<'py, PyString>, Bound<'py, PyString>)> {
    let pair: Vec<Bound<'py, PyAny>> = if let Ok(l) = m.cast::<PyList>() {
        l.iter().collect()
    } else {
        m.cast::<PyTuple>().ok()?.iter().collect()
    };
    match pair.as_slice() {
        [a, b] => Some((a.cast::<PyString>().ok()?.clone(), b.cast::<PyString>().ok()?.clone())),
        _ => None,
    }
}

fn merge_strs(held: &[Bound<'_, PyString>]) -> Option<Vec<String>> {
    let mut buf = Vec::new();
    held.iter().map(|h| text_of(h, &mut buf)).collect()
}

fn merge_pairs<'a>(s: &'a [String], items: &[Item]) -> Option<Vec<(&'a str, &'a str)>> {
    items
        .iter()
        .map(|item| match *item {
            Item::Legacy(i) => vocab_files::split_legacy_merge(&s[i]),
            Item::Pair(a, b) => (!s[a].is_empty() && !s[b].is_empty()).then_some((s[a].as_str(), s[b].as_str())),
        })
        .collect()
}

/// Appends the code points of `s` to `out`, without a Python object or a
/// string made (`PyUnicode_AsUCS4`, in the limited API).
fn push_code_points(s: &Bound<'_, PyString>, out: &mut Vec<u32>) -> PyResult<()> {
    // SAFETY: `s` is a live str; PyUnicode_AsUCS4 writes at most `n` code points into the `n` reserved
    // after `start` (no NUL: copy_null is 0), and `out` keeps only what was written
    let n = unsafe { pyo3::ffi::PyUnicode_GetLength(s.as_ptr()) };
    if n < 0 {
        return Err(PyErr::fetch(s.py()));
    }
    let start = out.len();
    out.resize(start + n as usize, 0);
    if n > 0 {
        let buf = unsafe { out.as_mut_ptr().add(start) };
        if unsafe { pyo3::ffi::PyUnicode_AsUCS4(s.as_ptr(), buf, n, 0) }.is_null() {
            out.truncate(start);
            return Err(PyErr::fetch(s.py()));
        }
    }
    Ok(())
}

/// Whether two merges of a list make the same token: the text `left +
/// right` of each item, a string (its first space taken out, Hugging Face's
/// legacy `"left right"`) or a list or tuple of two strings. None for a
/// list with any other item.
#[pyfunction]
pub(crate) fn merges_repeat_a_token(merges: &Bound<'_, PyList>) -> PyResult<Option<bool>> {
    if !merges.is_exact_instance_of::<PyList>() {
        return Ok(None); // as for a dict subclass in hf_vocab_ok
    }
    let (mut made, mut ends) = (Vec::with_capacity(merges.len() * 8), Vec::with_capacity(merges.len()));
    for m in merges.iter() {
        if let Ok(s) = m.cast::<PyString>() {
            let start = made.len();
            push_code_points(s, &mut made)?;
            if let Some(space) = made[start..].iter().position(|&c| c == ' ' as u32) {
                made.remove(start + space);
            }
        } else {
            let Some((a, b)) = string_pair(&m) else { return Ok(None) };
            push_code_points(&a, &mut made)?;
            push_code_points(&b, &mut made)?;
        }
        ends.push(made.len());
    }
    Ok(Some(merges.py().detach(|| vocab_files::merges_repeat_a_token(&made, &ends))))
}

/// A byte-level vocabulary with its merges, checked (`vocab_files::byte_vocab`):
/// `("ok", {id: bytes}, [(left, right, merged)])`, `("merge", k, fault,
/// detail)` for merge `k` that bytepair's rule cannot run (fault `"char"`,
/// `"unknown-part"` with the side 0 or 1, `"unknown-merged"`, `"made-by"`
/// with the earlier merge's index, `"id-order"` with the id made), or
/// `("irregular",)`.
#[pyfunction]
pub(crate) fn byte_vocab<'py>(
    py: Python<'py>,
    vocab: &Bound<'py, PyDict>,
    specials: &Bound<'py, PyDict>,
    merges: &Bound<'py, PyList>,
    ignore_merges: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let irregular = || PyTuple::new(py, ["irregular"]);
    if !(vocab.is_exact_instance_of::<PyDict>() && specials.is_exact_instance_of::<PyDict>()
        && merges.is_exact_instance_of::<PyList>())
    {
        return irregular(); // as in hf_vocab_ok
    }
    let (Some((vkeys, vids)), Some((skeys, sids)), Some((held, items))) =
        (str_ids(vocab)?, str_ids(specials)?, merge_strings(merges)?)
    else {
        return irregular();
    };
    let (Some(vstr), Some(sstr), Some(mstr)) = (strs(&vkeys), strs(&skeys), merge_strs(&held)) else {
        return irregular();
    };
    let Some(pairs) = merge_pairs(&mstr, &items) else { return irregular() };
    let v: Vec<(&str, u32)> = vstr.iter().map(String::as_str).zip(vids).collect();
    let s: Vec<(&str, u32)> = sstr.iter().map(String::as_str).zip(sids).collect();
    match vocab_files::byte_vocab(&v, &s, &pairs, ignore_merges) {
        Ok(got) => {
            let ids = PyDict::new(py);
            for (id, bytes) in &got.tokens {
                ids.set_item(id, PyBytes::new(py, bytes))?;
            }
            let triples = PyList::new(py, got.triples)?;
            PyTuple::new(py, [PyString::new(py, "ok").into_any(), ids.into_any(), triples.into_any()])
        }
        Err(Fault::Irregular) => irregular(),
        Err(Fault::Merge(k, fault)) => merge_fault(py, k, fault),
    }
}

/// A `tokenizer.json`'s text as the loader holds it: the file's bytes (borrowed from the Python
/// `bytes`, no copy; UTF-8 checked where it is read) or a `str` (its UTF-8 copy, which the limited
/// API makes).
pub(crate) enum Source<'py> {
    Bytes(Bound<'py, PyBytes>),
    Str(pyo3::pybacked::PyBackedStr),
}

impl<'py> Source<'py> {
    pub(crate) fn of(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        match obj.cast::<PyBytes>() {
            Ok(b) => Ok(Source::Bytes(b.clone())),
            Err(_) => Ok(Source::Str(obj.extract()?)),
        }
    }

    /// The UTF-8 bytes of the text (not checked yet for `bytes`).
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Source::Bytes(b) => b.as_bytes(),
            Source::Str(s) => s.as_bytes(),
        }
    }
}

/// The text of `bytes[a..b]`, None when the span is out of range or not UTF-8.
fn span_text(bytes: &[u8], (a, b): (usize, usize)) -> Option<&str> {
    std::str::from_utf8(bytes.get(a..b)?).ok()
}

/// The outline of a `tokenizer.json` text (a `str`, or the file's `bytes`; `vocab_files::hf_outline`):
/// `(small, (vocab span, merges span in code points (in bytes for `bytes`), the same in bytes), n_vocab, dense, {token: id}
/// of the added tokens' contents found in the vocabulary, (n_merges, repeats or None when not found
/// yet))`; None when the file is not strictly regular (or its bytes are not UTF-8).
#[pyfunction]
pub(crate) fn hf_outline<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let source = Source::of(text)?;
    let (bytes, points) = (source.bytes(), matches!(source, Source::Str(_)));
    let Some(o) = py.detach(|| vocab_files::hf_outline(std::str::from_utf8(bytes).ok()?, points)) else { return Ok(None) };
    let found = PyDict::new(py);
    for (token, id) in &o.added_in_vocab {
        found.set_item(token, id)?;
    }
    let spans = (o.vocab_span, o.merges_span, o.vocab_bytes, o.merges_bytes);
    let out = (o.small, spans, o.n_vocab, o.dense, found, (o.n_merges, o.repeats));
    Ok(Some(out.into_pyobject(py)?))
}

/// `merges_repeat_a_token` of the `model.merges` list at the byte span `merges_span` of a
/// `tokenizer.json` text (a `str` or its bytes; its outline's span), read here; None when an item is
/// neither a string nor a pair of strings.
#[pyfunction]
pub(crate) fn hf_merges_repeat(py: Python<'_>, text: &Bound<'_, PyAny>, merges_span: (usize, usize)) -> PyResult<Option<bool>> {
    let source = Source::of(text)?;
    let bytes = source.bytes();
    Ok(py.detach(|| vocab_files::merges_repeat(span_text(bytes, merges_span)?)))
}

/// A byte-level vocabulary read straight from a `tokenizer.json`'s text and checked
/// (`hf_byte_vocab`): its tokens and merges stay here, for the loader's next steps.
#[pyclass(module = "bytepair._core", frozen)]
pub(crate) struct ByteVocabRead {
    vocab: vocab_files::ByteVocab,
}

#[pymethods]
impl ByteVocabRead {
    /// `tokens[id]`: the bytes of each id kept, None for the others, up to the largest id kept.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let top = self.vocab.tokens.iter().map(|&(id, _)| id as usize + 1).max().unwrap_or(0);
        let mut table: Vec<Option<&[u8]>> = vec![None; top];
        for (id, bytes) in &self.vocab.tokens {
            table[*id as usize] = Some(bytes);
        }
        PyList::new(py, table.into_iter().map(|t| t.map(|b| PyBytes::new(py, b))))
    }

    /// The number of merges read.
    #[getter]
    fn n_merges(&self) -> usize {
        self.vocab.triples.len()
    }
}

impl ByteVocabRead {
    /// The merges as (left, right, merged) ids, in order (`CoreTokenizer.first_underived_read` checks them).
    pub(crate) fn triples(&self) -> &[(u32, u32, u32)] {
        &self.vocab.triples
    }
}

/// `byte_vocab` of the `model.vocab` and `model.merges` of a `tokenizer.json` text (a `str` or its bytes), at the byte
/// spans its outline found (`hf_outline`), read here: `("ok", ByteVocabRead)`, or what
/// `byte_vocab` gives for a fault (`("merge", ...)`, `("irregular",)`).
#[pyfunction]
pub(crate) fn hf_byte_vocab<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    vocab_span: (usize, usize),
    merges_span: (usize, usize),
    specials: &Bound<'py, PyDict>,
    ignore_merges: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let irregular = || PyTuple::new(py, ["irregular"]);
    let Some((skeys, sids)) = str_ids(specials)? else { return irregular() };
    let Some(sstr) = strs(&skeys) else { return irregular() };
    let s: Vec<(&str, u32)> = sstr.iter().map(String::as_str).zip(sids).collect();
    let source = Source::of(text)?;
    let bytes = source.bytes();
    let read = py.detach(|| {
        let span = |span: (usize, usize)| span_text(bytes, span);
        let vocab = vocab_files::vocab_items(span(vocab_span)?)?;
        let merges = vocab_files::merge_items(span(merges_span)?)?;
        let v: Vec<(&str, u32)> = vocab.iter().map(|(t, id)| (t.as_ref(), *id)).collect();
        let m: Vec<(&str, &str)> = merges.iter().map(|(l, r)| (l.as_ref(), r.as_ref())).collect();
        Some(vocab_files::byte_vocab(&v, &s, &m, ignore_merges))
    });
    match read {
        None | Some(Err(Fault::Irregular)) => irregular(),
        Some(Ok(vocab)) => {
            let read = Bound::new(py, ByteVocabRead { vocab })?;
            PyTuple::new(py, [PyString::new(py, "ok").into_any(), read.into_any()])
        }
        Some(Err(Fault::Merge(k, fault))) => merge_fault(py, k, fault),
    }
}

/// A merge's fault as the Python checks read it: `("merge", index, kind, detail)`.
fn merge_fault(py: Python<'_>, k: usize, fault: MergeFault) -> PyResult<Bound<'_, PyTuple>> {
    let (kind, detail) = match fault {
        MergeFault::Char(side) => ("char", side as i64),
        MergeFault::UnknownPart(side) => ("unknown-part", side as i64),
        MergeFault::UnknownMerged => ("unknown-merged", -1),
        MergeFault::MadeBy(j) => ("made-by", j as i64),
        MergeFault::IdOrder(id) => ("id-order", id as i64),
    };
    ("merge", k, kind, detail).into_pyobject(py)
}
