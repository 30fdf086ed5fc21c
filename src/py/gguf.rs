//! The string arrays of a GGUF file's metadata (a vocabulary's tokens and
//! merges: hundreds of thousands of strings), read from the file at an
//! offset without a Python object per length field. Anything irregular (a
//! length past the end of the file, text that is not UTF-8) gives `None`,
//! and the Python reader, which names the key, element and byte offset,
//! runs instead.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

/// The `count` strings (each a little-endian u64 length and its UTF-8
/// bytes) that start at byte `offset` of the file at `path`, and the offset
/// just past them; None when one is truncated or not UTF-8.
#[pyfunction]
pub(crate) fn gguf_strings<'py>(
    py: Python<'py>,
    path: &str,
    offset: u64,
    count: u64,
) -> PyResult<Option<(Bound<'py, PyList>, u64)>> {
    let irregular = |_| None;
    let read = py.detach(|| -> std::io::Result<Option<(Vec<u8>, Vec<usize>, u64)>> {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        // every string takes 8 bytes at least: a count the file cannot hold is irregular before any allocation
        if count > size.saturating_sub(offset) / 8 {
            return Ok(None);
        }
        let mut reader = BufReader::with_capacity(1 << 20, file);
        reader.seek(SeekFrom::Start(offset))?;
        let (mut text, mut ends) = (Vec::new(), Vec::with_capacity(count as usize));
        let mut pos = offset;
        let mut length = [0u8; 8];
        for _ in 0..count {
            reader.read_exact(&mut length)?;
            let n = u64::from_le_bytes(length);
            pos += 8;
            if n > size - pos {
                return Ok(None);
            }
            let start = text.len();
            text.resize(start + n as usize, 0);
            reader.read_exact(&mut text[start..])?;
            pos += n;
            ends.push(text.len());
        }
        Ok(Some((text, ends, pos)))
    });
    let Some((text, ends, end)) = read.map_or_else(irregular, |r| r) else {
        return Ok(None);
    };
    let mut strings = Vec::with_capacity(ends.len());
    let mut start = 0;
    for &stop in &ends {
        let Ok(s) = std::str::from_utf8(&text[start..stop]) else {
            return Ok(None);
        };
        strings.push(PyString::new(py, s));
        start = stop;
    }
    Ok(Some((PyList::new(py, strings)?, end)))
}
