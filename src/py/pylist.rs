//! Python lists of ids without a new int object per id: a tokenizer keeps
//! one Python int per id (made on first use, `n_vocab` objects: about 4 MB
//! for a 100k vocabulary), and a list of ids takes a new reference to each
//! instead of allocating (and later freeing) an int per element.

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
    pub(crate) fn list<'py>(&self, py: Python<'py>, n: usize, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let table = self.table(py, n);
        PyList::new(
            py,
            ids.iter().map(|&id| match table.get(id as usize) {
                Some(o) => o.bind(py).clone(),
                None => id.into_pyobject(py).expect("ints convert").into_any(),
            }),
        )
    }

    /// Each document's ids as a list, in a list. Python's cyclic garbage
    /// collector is paused meanwhile: these lists hold only ints (no cycle
    /// to find), and a batch of many short documents otherwise triggers a
    /// collection every few hundred lists (a third of the time of a batch
    /// of 50-byte lines).
    pub(crate) fn lists<'py>(&self, py: Python<'py>, n: usize, docs: &[Vec<u32>]) -> PyResult<Bound<'py, PyList>> {
        let gc = py.import("gc")?;
        let was_on = gc.call_method0("isenabled")?.is_truthy()?;
        if was_on {
            gc.call_method0("disable")?;
        }
        let inner: PyResult<Vec<Bound<'py, PyList>>> = docs.iter().map(|d| self.list(py, n, d)).collect();
        let out = inner.and_then(|inner| PyList::new(py, inner));
        if was_on {
            gc.call_method0("enable")?;
        }
        out
    }
}
