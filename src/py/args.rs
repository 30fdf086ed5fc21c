//! The arguments of the per-text calls, read as Python's own checks would
//! read them, so the Python layer can call the core directly: a frame of
//! Python per call costs a tenth of encoding a 50-byte line.

use pyo3::exceptions::{PyTypeError, PyUnicodeEncodeError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::borrow::Cow;

/// Texts shorter than this are encoded without releasing the GIL: letting
/// it go and taking it back costs about a tenth of encoding a 50-byte line,
/// and other threads gain nothing from so short a pause.
const DETACH_BYTES: usize = 4096;

/// `f()`, with the GIL released when the text is `bytes` long or longer.
pub(super) fn detach_for<T: Send>(py: Python<'_>, bytes: usize, f: impl FnOnce() -> T + Send) -> T {
    if bytes < DETACH_BYTES {
        f()
    } else {
        py.detach(f)
    }
}

/// The ids that `encode` appends for one text (`detach_for` its length), in a vector sized for the text.
pub(super) fn text_ids(py: Python<'_>, text: &str, encode: impl FnOnce(&mut Vec<u32>) -> crate::Result<()> + Send) -> crate::Result<Vec<u32>> {
    detach_for(py, text.len(), || {
        let mut ids = Vec::with_capacity(text.len() / 3 + 4);
        encode(&mut ids).map(|()| ids)
    })
}

/// A text argument as UTF-8: a `str` as it is, or with its lone surrogates
/// replaced by `bytepair.limits.replace_surrogates` (tiktoken's rule: each
/// becomes U+FFFD); anything else is the TypeError of `limits.check_text`.
pub(super) fn text_arg<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    let py = text.py();
    let Ok(s) = text.cast::<PyString>() else {
        return Err(PyTypeError::new_err(format!("expected str, got {}", text.get_type().name()?)));
    };
    match s.to_cow() {
        Ok(utf8) => Ok(utf8),
        Err(e) if e.is_instance_of::<PyUnicodeEncodeError>(py) => {
            let replaced = py.import("bytepair.limits")?.getattr("replace_surrogates")?.call1((s,))?;
            Ok(Cow::Owned(replaced.extract::<String>()?))
        }
        Err(e) => Err(e),
    }
}
