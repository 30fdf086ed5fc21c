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
    /// of 50-byte lines). Many ids in all are filled in on every thread (`fill_in_parallel`).
    pub(crate) fn lists<'a, 'py>(
        &self, py: Python<'py>, n: usize, docs: impl Iterator<Item = &'a [u32]>,
    ) -> PyResult<Bound<'py, PyList>> {
        let gc = py.import("gc")?;
        let was_on = gc.call_method0("isenabled")?.is_truthy()?;
        if was_on {
            gc.call_method0("disable")?;
        }
        let docs: Vec<&[u32]> = docs.collect();
        let total: usize = docs.iter().map(|d| d.len()).sum();
        let inner: PyResult<Vec<Bound<'py, PyList>>> = if total >= PARALLEL_FILL && crate::parallel::threads() > 1 {
            self.fill_in_parallel(py, n, &docs, total)
        } else {
            docs.iter().map(|d| self.list(py, n, d)).collect()
        };
        let out = inner.and_then(|inner| PyList::new(py, inner));
        if was_on {
            gc.call_method0("enable")?;
        }
        out
    }

    /// `lists`' lists, made here and filled by tasks on every thread, as fastokens fills them: each task
    /// writes the table's ints into its documents' slots and counts the references it made per id; the
    /// references are then taken here, id by id (a reference count is never changed from two threads, and
    /// one int's increments in a row touch memory once). This thread holds the GIL throughout, so no Python code runs
    /// while the slots are being filled; the table keeps every int alive meanwhile.
    /// `total`: the documents' ids in all.
    fn fill_in_parallel<'py>(&self, py: Python<'py>, n: usize, docs: &[&[u32]], total: usize) -> PyResult<Vec<Bound<'py, PyList>>> {
        let table = self.table(py, n);
        let mut lists = Vec::with_capacity(docs.len());
        let mut slots = Vec::with_capacity(docs.len());
        for d in docs {
            // SAFETY: a new list of `d.len()` empty slots (or null with an error set)
            let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(d.len() as ffi::Py_ssize_t))? };
            // SAFETY: `list` is a list (made above); its item array holds `d.len()` slots
            slots.push(Slots(unsafe { (*list.as_ptr().cast::<ffi::PyListObject>()).ob_item }));
            lists.push(list.cast_into::<PyList>()?);
        }
        // the documents in runs of about equal ids, a few per thread
        let per = total.div_ceil(crate::parallel::threads() * 4).max(1);
        let runs = crate::batch::runs_of(docs.iter().map(|d| d.len()), per);
        let slots = &slots;
        let parts = crate::parallel::map(&runs, |run| {
            COUNTS.with(|counts| {
                let (counts, touched) = &mut *counts.borrow_mut();
                counts.resize(counts.len().max(table.len()), 0);
                let mut missing = Vec::new();
                for k in run.clone() {
                    for (i, &id) in docs[k].iter().enumerate() {
                        match table.get(id as usize) {
                            Some(int) => {
                                // SAFETY: slot `i` of document `k`'s list (of `docs[k].len()` slots), written by
                                // this task alone; the reference it stands for is counted below (reading the
                                // int's address touches no reference count)
                                unsafe { *slots[k].0.add(i) = int.as_ptr() };
                                if counts[id as usize] == 0 {
                                    touched.push(id);
                                }
                                counts[id as usize] += 1;
                            }
                            None => missing.push((k, i)),
                        }
                    }
                }
                let made: Vec<(u32, u32)> = touched.iter().map(|&id| (id, std::mem::take(&mut counts[id as usize]))).collect();
                touched.clear();
                (made, missing)
            })
        });
        for (made, missing) in parts {
            for (id, count) in made {
                let int = table[id as usize].as_ptr();
                for _ in 0..count {
                    // SAFETY: the GIL is held; the int is alive (the table holds it) and `count` slots refer to
                    // it (one object, in the processor's cache after the first: the ids' misses are gone)
                    unsafe { ffi::Py_INCREF(int) };
                }
            }
            for (k, i) in missing {
                let int = docs[k][i].into_pyobject(py).expect("ints convert").into_ptr();
                // SAFETY: an empty slot of document `k`'s list, given a new reference
                unsafe { *slots[k].0.add(i) = int };
            }
        }
        Ok(lists)
    }
}

/// Below this many ids in all, `lists` fills the lists on this thread.
const PARALLEL_FILL: usize = 1 << 16;

/// A list's item array, written by one task (`IntTable::fill_in_parallel`).
struct Slots(*mut *mut ffi::PyObject);
// SAFETY: each list's slots are written by one task only, and read by nothing until every task is done
unsafe impl Sync for Slots {}
unsafe impl Send for Slots {}

thread_local! {
    /// A task's references per id, and the ids it counted (`IntTable::fill_in_parallel`).
    static COUNTS: std::cell::RefCell<(Vec<u32>, Vec<u32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}
