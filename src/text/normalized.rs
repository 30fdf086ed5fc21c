//! A string being normalized, with the original byte range of every byte
//! (Hugging Face's `NormalizedString`): offsets reported to the user point
//! into the original text whatever the normalizers did. Alignment tracking
//! is optional (`track`): plain encoding skips it.

pub(crate) type Align = (usize, usize);

#[derive(Debug, Clone)]
pub struct NStr {
    pub s: String,
    /// per byte of `s`: the original byte range it comes from (empty when not tracking)
    pub(crate) align: Vec<Align>,
    pub(crate) track: bool,
    /// original byte offset of this piece's start (for text inserted at its very start)
    pub(crate) shift: usize,
}

impl NStr {
    pub fn new(s: &str, shift: usize, track: bool) -> NStr {
        let mut align = Vec::new();
        if track {
            align.reserve(s.len());
            for (i, c) in s.char_indices() {
                let r = (shift + i, shift + i + c.len_utf8());
                align.extend(std::iter::repeat(r).take(c.len_utf8()));
            }
        }
        NStr { s: s.to_string(), align, track, shift }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.s.is_empty()
    }

    /// The original range of the bytes `start..end` of `s`.
    pub(crate) fn original(&self, start: usize, end: usize) -> Align {
        if !self.track || self.align.is_empty() {
            return (self.shift, self.shift);
        }
        // a BPE model's byte-fallback tokens of an end_of_word_suffix lie past the piece (as in HF): clamped
        let end = end.min(self.align.len());
        if start >= end {
            let p = if start < self.align.len() { self.align[start].0 } else { self.align[self.align.len() - 1].1 };
            return (p, p);
        }
        (self.align[start].0, self.align[end - 1].1)
    }

    pub(crate) fn original_start(&self) -> usize {
        if self.track && !self.align.is_empty() { self.align[0].0 } else { self.shift }
    }

    /// The piece `start..end` (byte range of `s`, on char boundaries).
    pub(crate) fn slice(&self, start: usize, end: usize) -> NStr {
        let shift = if self.track && start < self.align.len() {
            self.align[start].0
        } else if start == 0 {
            self.shift
        } else {
            self.shift + start
        };
        NStr {
            s: self.s[start..end].to_string(),
            align: if self.track { self.align[start..end].to_vec() } else { Vec::new() },
            track: self.track,
            shift,
        }
    }

    /// Hugging Face's `transform_range` over the whole string: `dest` gives each
    /// new char with its change (0 replaces a char, +1 inserts one, -n replaces
    /// a char and removes the n following), after `initial_offset` chars removed.
    pub(crate) fn transform<I: IntoIterator<Item = (char, isize)>>(&mut self, dest: I, initial_offset: usize) {
        self.transform_range(0, self.s.len(), dest, initial_offset)
    }

    pub(crate) fn transform_range<I: IntoIterator<Item = (char, isize)>>(
        &mut self,
        start: usize,
        end: usize,
        dest: I,
        initial_offset: usize,
    ) {
        let old = std::mem::take(&mut self.s);
        let mut replaced = old[start..end].chars();
        let initial_removed: usize = (&mut replaced).take(initial_offset).map(|c| c.len_utf8()).sum();
        let mut offset = start + initial_removed;
        let mut new = String::with_capacity(old.len());
        new.push_str(&old[..start]);
        let mut aligns: Vec<Align> = Vec::new();
        for (c, changes) in dest {
            if self.track {
                let a = if changes > 0 {
                    if offset < 1 { (self.shift, self.shift) } else { self.align[offset - 1] }
                } else if offset < self.align.len() {
                    self.align[offset]
                } else if offset >= 1 {
                    self.align[offset - 1]
                } else {
                    (self.shift, self.shift)
                };
                aligns.extend(std::iter::repeat(a).take(c.len_utf8()));
            }
            if changes <= 0 {
                if let Some(r) = replaced.next() {
                    offset += r.len_utf8();
                }
            }
            if changes < 0 {
                let removed: usize = (&mut replaced).take((-changes) as usize).map(|c| c.len_utf8()).sum();
                offset += removed;
            }
            new.push(c);
        }
        new.push_str(&old[end..]);
        if self.track {
            self.align.splice(start..end, aligns);
        }
        self.s = new;
    }

    pub(crate) fn prepend(&mut self, p: &str) {
        if let Some(first) = self.s.chars().next() {
            let dest: Vec<(char, isize)> = p
                .chars()
                .enumerate()
                .map(|(i, c)| (c, isize::from(i != 0)))
                .chain(std::iter::once((first, 1)))
                .collect();
            self.transform_range(0, first.len_utf8(), dest, 0);
        }
    }

    /// Replace the given (sorted, disjoint) byte ranges by `content`, as
    /// Hugging Face's `replace` does: the new chars take the alignment of the
    /// last byte of the replaced range (or the byte before an empty one).
    pub(crate) fn replace_ranges(&mut self, ranges: &[(usize, usize)], content: &str) {
        if ranges.is_empty() {
            return;
        }
        let mut new = String::with_capacity(self.s.len());
        let mut aligns: Vec<Align> = Vec::new();
        let mut last = 0;
        for &(a, b) in ranges {
            new.push_str(&self.s[last..a]);
            if self.track {
                aligns.extend_from_slice(&self.align[last..a]);
                let al = if b > 0 { self.align[b - 1] } else { (self.shift, self.shift) };
                aligns.extend(std::iter::repeat(al).take(content.len()));
            }
            new.push_str(content);
            last = b;
        }
        new.push_str(&self.s[last..]);
        if self.track {
            aligns.extend_from_slice(&self.align[last..]);
            self.align = aligns;
        }
        self.s = new;
    }

    /// Keep the chars for which `keep` holds (Hugging Face's `filter`).
    pub(crate) fn filter(&mut self, keep: impl Fn(char) -> bool) {
        let mut removed: isize = 0;
        let mut removed_start = 0usize;
        let mut transforms = Vec::with_capacity(self.s.len());
        let mut last_c: Option<char> = None;
        for c in self.s.chars() {
            if keep(c) {
                match last_c {
                    Some(lc) => transforms.push((lc, -removed)),
                    None => removed_start = removed as usize,
                }
                last_c = Some(c);
                removed = 0;
            } else {
                removed += 1;
            }
        }
        if let Some(lc) = last_c {
            transforms.push((lc, -removed));
        }
        self.transform(transforms, removed_start);
    }

    /// Map each char to several (Hugging Face's `map`/`lowercase` shape: the
    /// first new char replaces, the others are inserted).
    pub(crate) fn flat_map_chars<F, I>(&mut self, f: F)
    where
        F: Fn(char) -> I,
        I: Iterator<Item = char>,
    {
        let mut dest = Vec::with_capacity(self.s.len());
        for c in self.s.chars() {
            for (i, n) in f(c).enumerate() {
                dest.push((n, isize::from(i > 0)));
            }
        }
        self.transform(dest, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn original_clamps_a_range_past_the_piece() {
        // a BPE model's byte-fallback tokens of an end_of_word_suffix lie past the piece's bytes
        let n = NStr::new("ab", 10, true);
        assert_eq!(n.original(0, 5), (10, 12));
        assert_eq!(n.original(3, 5), (12, 12));
        assert_eq!(n.original(1, 2), (11, 12));
    }
}
