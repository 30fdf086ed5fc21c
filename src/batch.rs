//! Encoding many documents in one parallel pass.
//!
//! Documents are grouped into runs of consecutive documents of about equal
//! bytes (not equal counts: one long document and ten thousand short lines
//! cost what their bytes cost), and each run is one rayon task. A task
//! encodes its documents one after another into one reused buffer, so a
//! short document costs no allocation beyond its result: one exact-size
//! `Vec` per document (`encode_lists`), or nothing at all (`count`, and
//! `encode_flat`, whose ids of every document are one buffer per run: the
//! bindings make a flat array or each document's Python list from it). In a process
//! forked after rayon started, everything runs on the calling thread (see
//! `parallel`).

use crate::error::Result;
use crate::parallel;
use rayon::prelude::*;

/// Smallest run of documents worth a task of its own, in bytes.
const MIN_RUN_BYTES: usize = 16 * 1024;

/// Runs of consecutive documents, as index ranges, of about
/// `total / (threads * 8)` bytes each (at least `MIN_RUN_BYTES`).
pub(crate) fn runs<T: AsRef<str>>(docs: &[T]) -> Vec<std::ops::Range<usize>> {
    let total: usize = docs.iter().map(|d| d.as_ref().len() + 1).sum();
    let target = (total / (parallel::threads() * 8).max(1)).max(MIN_RUN_BYTES);
    runs_of(docs.iter().map(|d| d.as_ref().len() + 1), target)
}

/// Runs of consecutive items, as index ranges, each closed once its items' `sizes` reach `target` (the last
/// may be smaller).
pub(crate) fn runs_of(sizes: impl Iterator<Item = usize>, target: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut size, mut len) = (0, 0, 0);
    for (i, item) in sizes.enumerate() {
        len = i + 1;
        size += item;
        if size >= target {
            out.push(start..i + 1);
            start = i + 1;
            size = 0;
        }
    }
    if start < len {
        out.push(start..len);
    }
    out
}

/// Calls `task` on each run of `docs` (see `runs`), in parallel when it is
/// safe; results in document order.
fn over_runs<T: AsRef<str> + Sync, R: Send>(docs: &[T], task: impl Fn(&[T]) -> R + Sync + Send) -> Vec<R> {
    let runs = runs(docs);
    parallel::map(&runs, |r| task(&docs[r.clone()]))
}

/// The ids of every document, one exact-size `Vec` each. `encode(text,
/// out)` appends a document's ids to `out`. The first error (in document
/// order) is returned.
pub fn encode_lists<T, F>(docs: &[T], encode: F) -> Result<Vec<Vec<u32>>>
where
    T: AsRef<str> + Sync,
    F: Fn(&str, &mut Vec<u32>) -> Result<()> + Sync + Send,
{
    let parts = over_runs(docs, |run| -> Result<Vec<Vec<u32>>> {
        let mut buf = Vec::new();
        let mut out = Vec::with_capacity(run.len());
        for d in run {
            buf.clear();
            encode(d.as_ref(), &mut buf)?;
            out.push(buf.as_slice().to_vec());
        }
        Ok(out)
    });
    let mut all = Vec::with_capacity(docs.len());
    for p in parts {
        all.extend(p?);
    }
    Ok(all)
}

/// The number of ids of every document (no ids kept).
pub fn count<T, F>(docs: &[T], encode: F) -> Result<Vec<usize>>
where
    T: AsRef<str> + Sync,
    F: Fn(&str, &mut Vec<u32>) -> Result<()> + Sync + Send,
{
    let parts = over_runs(docs, |run| -> Result<Vec<usize>> {
        let mut buf = Vec::new();
        run.iter()
            .map(|d| {
                buf.clear();
                encode(d.as_ref(), &mut buf).map(|()| buf.len())
            })
            .collect()
    });
    let mut all = Vec::with_capacity(docs.len());
    for p in parts {
        all.extend(p?);
    }
    Ok(all)
}

/// Every document's ids in one array, run by run: (ids of each run,
/// document ends within its run). `flat_into` then copies them into one
/// buffer.
pub struct Flat {
    parts: Vec<(Vec<u32>, Vec<usize>)>,
    total: usize,
}

impl Flat {
    /// Number of ids of all documents.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Number of documents.
    pub fn docs(&self) -> usize {
        self.parts.iter().map(|p| p.1.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Writes all ids (native-endian u32) into `ids` (`len() * 4` bytes)
    /// and the document offsets (`n_docs + 1` native-endian u64: document
    /// k is `ids[offsets[k]..offsets[k + 1]]`) into `offsets`.
    pub fn write(&self, ids: &mut [u8], offsets: &mut [u8]) {
        assert_eq!(ids.len(), self.total * 4);
        let n_docs: usize = self.parts.iter().map(|p| p.1.len()).sum();
        assert_eq!(offsets.len(), (n_docs + 1) * 8);
        // split the output at each run's start, then copy runs in parallel
        let mut chunks: Vec<(&mut [u8], &[u32])> = Vec::with_capacity(self.parts.len());
        let mut rest = ids;
        for (run_ids, _) in &self.parts {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(run_ids.len() * 4);
            chunks.push((head, run_ids));
            rest = tail;
        }
        let copy = |(dst, src): &mut (&mut [u8], &[u32])| {
            for (d, s) in dst.chunks_exact_mut(4).zip(src.iter()) {
                d.copy_from_slice(&s.to_ne_bytes());
            }
        };
        if chunks.len() > 1 && parallel::threads() > 1 {
            chunks.par_iter_mut().for_each(copy);
        } else {
            chunks.iter_mut().for_each(copy);
        }
        let mut at = 0u64;
        let mut k = 0;
        offsets[..8].copy_from_slice(&0u64.to_ne_bytes());
        for (run_ids, ends) in &self.parts {
            for &e in ends {
                k += 1;
                offsets[k * 8..k * 8 + 8].copy_from_slice(&(at + e as u64).to_ne_bytes());
            }
            at += run_ids.len() as u64;
        }
    }

    /// Each document's ids, in document order.
    pub fn documents(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.parts.iter().flat_map(|(run_ids, ends)| {
            let starts = std::iter::once(0).chain(ends.iter().copied());
            starts.zip(ends.iter().copied()).map(move |(a, b)| &run_ids[a..b])
        })
    }

    /// (ids, offsets) as plain vectors.
    pub fn into_vecs(self) -> (Vec<u32>, Vec<u64>) {
        let mut ids = Vec::with_capacity(self.total);
        let mut offsets = vec![0u64];
        for (run_ids, ends) in self.parts {
            let base = ids.len() as u64;
            offsets.extend(ends.iter().map(|&e| base + e as u64));
            ids.extend_from_slice(&run_ids);
        }
        (ids, offsets)
    }
}

/// Every document's ids, for one flat array (see `Flat`).
pub fn encode_flat<T, F>(docs: &[T], encode: F) -> Result<Flat>
where
    T: AsRef<str> + Sync,
    F: Fn(&str, &mut Vec<u32>) -> Result<()> + Sync + Send,
{
    let parts = over_runs(docs, |run| -> Result<(Vec<u32>, Vec<usize>)> {
        let mut ids = Vec::new();
        let mut ends = Vec::with_capacity(run.len());
        for d in run {
            encode(d.as_ref(), &mut ids)?;
            ends.push(ids.len());
        }
        Ok((ids, ends))
    });
    let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
    let total = parts.iter().map(|p| p.0.len()).sum();
    Ok(Flat { parts, total })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn fake(text: &str, out: &mut Vec<u32>) -> Result<()> {
        if text.contains('!') {
            return Err(Error::Encode(format!("bad {text}")));
        }
        out.extend(text.bytes().map(u32::from));
        Ok(())
    }

    #[test]
    fn runs_cover_every_document_once_in_order() {
        for sizes in [vec![], vec![0], vec![5; 10_000], vec![100_000, 1, 1, 200_000, 3], (0..3000).map(|i| i % 97).collect()] {
            let docs: Vec<String> = sizes.iter().map(|&n| "x".repeat(n)).collect();
            let rs = runs(&docs);
            let mut next = 0;
            for r in &rs {
                assert_eq!(r.start, next);
                assert!(r.end > r.start);
                next = r.end;
            }
            assert_eq!(next, docs.len());
        }
    }

    #[test]
    fn lists_counts_and_flat_agree_with_one_by_one() {
        let docs: Vec<String> = (0..5000).map(|i| "ab c".repeat(i % 13) + &"é".repeat(i % 5)).collect();
        let want: Vec<Vec<u32>> = docs.iter().map(|d| {
            let mut v = Vec::new();
            fake(d, &mut v).unwrap();
            v
        }).collect();
        assert_eq!(encode_lists(&docs, fake).unwrap(), want);
        assert_eq!(count(&docs, fake).unwrap(), want.iter().map(Vec::len).collect::<Vec<_>>());
        let flat = encode_flat(&docs, fake).unwrap();
        let n = flat.len();
        let mut ids = vec![0u8; n * 4];
        let mut offs = vec![0u8; (docs.len() + 1) * 8];
        flat.write(&mut ids, &mut offs);
        assert_eq!(flat.documents().collect::<Vec<_>>(), want.iter().map(Vec::as_slice).collect::<Vec<_>>());
        assert_eq!(flat.docs(), docs.len());
        let (vi, vo) = flat.into_vecs();
        assert_eq!(vi, want.concat());
        let ids32: Vec<u32> = ids.chunks_exact(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        let offs64: Vec<u64> = offs.chunks_exact(8).map(|c| u64::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(ids32, vi);
        assert_eq!(offs64, vo);
        for (k, w) in want.iter().enumerate() {
            assert_eq!(&vi[vo[k] as usize..vo[k + 1] as usize], &w[..]);
        }
    }

    #[test]
    fn the_first_error_in_document_order_is_returned() {
        let mut docs: Vec<String> = (0..20_000).map(|i| format!("doc {i}")).collect();
        docs[12_345] = "first!".into();
        docs[19_000] = "second!".into();
        for e in [encode_lists(&docs, fake).err(), count(&docs, fake).err(), encode_flat(&docs, fake).err()] {
            assert!(matches!(e, Some(Error::Encode(m)) if m == "bad first!"));
        }
    }
}
