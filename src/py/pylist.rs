//! Python lists of ids without a new int object per id: a tokenizer keeps
//! one Python int per id (made on first use, `n_vocab` objects: about 4 MB
//! for a 100k vocabulary), and a list of ids takes a new reference to each
//! instead of allocating (and later freeing) an int per element.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::OnceLock;

/// Largest vocabulary given a table (ids above it are made one by one).
const MAX_TABLE: usize = 1 << 21;

/// The Python ints 0..n of one tokenizer, made once.
#[derive(Default)]
pub(crate) struct IntTable(OnceLock<Vec<Py<PyAny>>>);

impl IntTable {
    fn table(&self, py: Python<'_>, n: usize) -> &[Py<PyAny>] {
        self.0.get_or_init(|| {
            (0..n.min(MAX_TABLE) as u32).map(|i| i.into_pyobject(py).expect("ints convert").into_any().unbind()).collect()
        })
    }

    /// `ids` as a Python list; `n` is the number of ids of the vocabulary.
    /// The list is made at its length and filled in place (pyo3's
    /// `PyList::new` over an iterator checked each element and its count: a
    /// sixth of the time of a batch of 50-byte lines).
    pub(crate) fn list<'py>(&self, py: Python<'py>, n: usize, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let table = self.table(py, n);
        // SAFETY: `PyList_New(len)` gives a new list of `len` empty slots (or null with an error set); each
        // slot is set once, to a new reference (the table's int increfed, or a new int), which the list owns.
        unsafe {
            let list = ffi::PyList_New(ids.len() as ffi::Py_ssize_t);
            let list = Bound::from_owned_ptr_or_err(py, list)?;
            for (i, &id) in ids.iter().enumerate() {
                let item = match table.get(id as usize) {
                    Some(o) => o.clone_ref(py).into_ptr(),
                    None => id.into_pyobject(py).expect("ints convert").into_ptr(),
                };
                ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, item);
            }
            Ok(list.cast_into_unchecked())
        }
    }

    /// Each document's ids as a list, in a list. Python's cyclic garbage
    /// collector is paused meanwhile: these lists hold only ints (no cycle
    /// to find), and a batch of many short documents otherwise triggers a
    /// collection every few hundred lists (a third of the time of a batch
    /// of 50-byte lines).
    pub(crate) fn lists<'a, 'py>(
        &self, py: Python<'py>, n: usize, docs: impl Iterator<Item = &'a [u32]>,
    ) -> PyResult<Bound<'py, PyList>> {
        let gc = py.import("gc")?;
        let was_on = gc.call_method0("isenabled")?.is_truthy()?;
        if was_on {
            gc.call_method0("disable")?;
        }
        let inner: PyResult<Vec<Bound<'py, PyList>>> = docs.map(|d| self.list(py, n, d)).collect();
        let out = inner.and_then(|inner| PyList::new(py, inner));
        if was_on {
            gc.call_method0("enable")?;
        }
        out
    }
}
