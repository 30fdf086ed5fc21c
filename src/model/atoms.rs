//! Multi-byte characters that byte-level BPE provably makes whole before
//! anything touches their bytes ("atoms"), so that a piece's merges may start
//! from them instead of from their 2 or 3 bytes, and the places where a piece
//! of such characters can be cut into parts merged on their own. On CJK text
//! a missed piece then has about a third of the symbols, in short parts.
//!
//! A character `c` (a token of exactly one character) is an atom when
//! 1. BPE of `c`'s bytes alone gives `[c]`, and
//! 2. every merge with `c` as an operand ranks after every merge that BPE of
//!    `c` alone applies;
//!
//! and one occurrence of it may start whole when also
//! 3. no token occurs across either of its ends there while covering only part
//!    of it: the bytes before it do not complete a token ending inside it (a
//!    *head*), nor the bytes after it one starting inside it (a *tail*).
//!
//! Then no merge crosses `c`'s ends before `c` is whole (its product would be
//! such a token, by 3), so `c`'s own merges involve only its own bytes and
//! commute with every other merge; and no merge with `c` as an operand can be
//! chosen before `c` would be whole anyway (by 2: `c`'s pending merges rank
//! lower). The merges chosen, hence the ids, are the same.
//!
//! **Cuts.** Between two adjacent characters that both start whole, a merged
//! symbol covering the boundary would cover both whole (by 3), so it would be
//! a token holding the two characters in a row. When no token does (`bigrams`),
//! no symbol ever crosses there: the parts on either side merge alone, each as
//! BPE of its own bytes (no whole-piece lookup: that rule is the piece's).
//! The same reading as fastokens' `CharAtoms`; written here from the argument.

use super::NONE;
use rustc_hash::{FxHashMap, FxHashSet};

/// Characters with more fragments than this around them are not atoms (their
/// check would cost more than the bytes' merges).
const MAX_FRAGMENTS: usize = 48;

/// Code points below this (the Basic Multilingual Plane) can be atoms; four-byte
/// characters stay bytes.
const BMP: usize = 0x1_0000;

/// Longest piece merged from its atoms: its symbols are all made at once (8 bytes per byte of the
/// piece), where the bytes' merging of a longer piece makes them a window at a time.
pub(crate) const MAX_ATOMS_PIECE: usize = 1 << 16;

/// The tokens that could cover part of a character across one of its ends.
#[derive(Default, Clone, PartialEq, Eq, Hash, Debug)]
struct Rule {
    /// Bytes that, right before the character, complete a token ending inside it.
    heads: Vec<Box<[u8]>>,
    /// Bytes that, right after it, complete a token starting inside it.
    tails: Vec<Box<[u8]>>,
}

/// A vocabulary's atoms (see the module's doc); empty when it has none.
#[derive(Debug, Clone, Default)]
pub(crate) struct Atoms {
    /// Code point -> the atom's symbol (`NONE`: not an atom); empty: no atoms.
    symbol: Box<[u32]>,
    /// Code point -> its rule in `rules` (0: none, it may start whole anywhere).
    rule: Box<[u16]>,
    rules: Vec<Rule>,
    /// `first << 21 | second` for every two atoms in a row inside some token.
    bigrams: FxHashSet<u64>,
}

/// Width of the UTF-8 sequence that `lead` starts (0: not a lead byte of one).
#[inline]
fn width(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

#[inline]
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The code point of the two- or three-byte character at `b[i..]`, with its width;
/// None for ASCII, four-byte characters and anything that is not a shortest,
/// valid encoding (a byte string is then never read as an atom it is not).
#[inline]
fn bmp_char_at(b: &[u8], i: usize) -> Option<(u32, usize)> {
    let lead = b[i];
    match width(lead) {
        2 if i + 1 < b.len() && is_continuation(b[i + 1]) => Some(((lead as u32 & 0x1F) << 6 | (b[i + 1] as u32 & 0x3F), 2)),
        3 if i + 2 < b.len() && is_continuation(b[i + 1]) && is_continuation(b[i + 2]) => {
            let cp = (lead as u32 & 0x0F) << 12 | (b[i + 1] as u32 & 0x3F) << 6 | (b[i + 2] as u32 & 0x3F);
            (cp >= 0x800 && !(0xD800..0xE000).contains(&cp)).then_some((cp, 3))
        }
        _ => None,
    }
}

/// BPE of `syms` alone by `merged` (a pair's rank; the lowest first, the leftmost of equal ones),
/// `result` giving a rank's merged symbol: the symbols left and the highest rank applied.
fn merge_alone(mut syms: Vec<u32>, merged: &impl Fn(u32, u32) -> u32, result: &impl Fn(u32) -> u32) -> (Vec<u32>, u32) {
    let mut highest = 0;
    loop {
        let best = (0..syms.len().saturating_sub(1)).map(|k| (merged(syms[k], syms[k + 1]), k)).min();
        match best {
            Some((rank, k)) if rank != NONE => {
                highest = highest.max(rank);
                syms[k] = result(rank);
                syms.remove(k + 1);
            }
            _ => return (syms, highest),
        }
    }
}

impl Atoms {
    /// The atoms of a byte-level vocabulary: `tokens` every token's bytes and
    /// symbol (the one its bytes look up), `byte_sym` each byte's symbol,
    /// `merged` a pair's rank (`NONE`: none) with `result` giving a rank's merged
    /// symbol, `each_pair` calling its argument on every (left, right, rank) of the
    /// pair table. Tokens longer than `pair_max_len` are not in that table: their
    /// characters are not atoms. Empty when some byte has no symbol.
    pub(crate) fn build(
        tokens: &[(&[u8], u32)],
        byte_sym: &[u32; 256],
        merged: impl Fn(u32, u32) -> u32,
        result: impl Fn(u32) -> u32,
        each_pair: impl FnOnce(&mut dyn FnMut(u32, u32, u32)),
        pair_max_len: usize,
    ) -> Atoms {
        // no byte without a token, and some token of one two- or three-byte character (else no tables are made)
        let one_char = |t: &[u8]| bmp_char_at(t, 0).is_some_and(|(_, w)| w == t.len());
        if byte_sym.contains(&NONE) || !tokens.iter().any(|&(t, _)| !t.is_empty() && one_char(t)) {
            return Atoms::default();
        }
        // the lowest rank of a merge with each symbol as an operand
        let bound = tokens.iter().map(|&(_, s)| s as usize + 1).max().unwrap_or(0);
        let mut lowest = vec![NONE; bound];
        each_pair(&mut |a, b, rank| {
            for s in [a, b] {
                if let Some(l) = lowest.get_mut(s as usize) {
                    *l = (*l).min(rank);
                }
            }
        });
        let mut symbol = vec![NONE; BMP];
        let mut excluded = vec![false; BMP];
        let mut candidates: Vec<u32> = Vec::new();
        // heads by the prefix of a character they end with; tails by the suffix they start with
        let mut heads: FxHashMap<&[u8], Vec<&[u8]>> = FxHashMap::default();
        let mut tails: FxHashMap<&[u8], Vec<&[u8]>> = FxHashMap::default();
        for &(t, sym) in tokens {
            if t.is_empty() {
                continue;
            }
            if t.len() > pair_max_len {
                // merges into it are not in `ranks`: none of its characters is an atom
                for (i, _) in t.iter().enumerate() {
                    if let Some((cp, _)) = bmp_char_at(t, i) {
                        excluded[cp as usize] = true;
                    }
                }
                continue;
            }
            if let Some((cp, _)) = bmp_char_at(t, 0).filter(|&(_, w)| w == t.len()) {
                let (made, highest) = merge_alone(t.iter().map(|&b| byte_sym[b as usize]).collect(), &merged, &result);
                if made == [sym] && lowest.get(sym as usize).is_none_or(|&l| l == NONE || l > highest) {
                    symbol[cp as usize] = sym;
                    candidates.push(cp);
                }
                continue;
            }
            // a tail: one to three continuation bytes (the end of a character), then more
            let lead_run = t.iter().take(3).take_while(|&&b| is_continuation(b)).count();
            for k in 1..=lead_run.min(t.len() - 1) {
                tails.entry(&t[..k]).or_default().push(&t[k..]);
            }
            // a head: more, then the start of a character that the token ends inside
            if let Some(p) = (t.len().saturating_sub(3)..t.len()).rev().find(|&p| !is_continuation(t[p])) {
                if p > 0 && width(t[p]) > t.len() - p {
                    heads.entry(&t[p..]).or_default().push(&t[..p]);
                }
            }
        }
        for (cp, x) in excluded.iter().enumerate() {
            if *x {
                symbol[cp] = NONE;
            }
        }
        // each atom's rule: the heads of its proper prefixes, the tails of its proper suffixes
        let mut rules = vec![Rule::default()];
        let mut rule_of: FxHashMap<Rule, u16> = FxHashMap::default();
        rule_of.insert(Rule::default(), 0);
        let mut rule = vec![0u16; BMP];
        let mut any = false;
        let mut buf = [0u8; 4];
        candidates.sort_unstable();
        candidates.dedup();
        for cp in candidates {
            if symbol[cp as usize] == NONE {
                continue;
            }
            let Some(c) = char::from_u32(cp) else { continue };
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            let around = |i: usize| heads.get(&bytes[..i]).map_or(0, Vec::len) + tails.get(&bytes[i..]).map_or(0, Vec::len);
            if (1..bytes.len()).map(around).sum::<usize>() > MAX_FRAGMENTS || rules.len() > u16::MAX as usize {
                symbol[cp as usize] = NONE;
                continue;
            }
            let mut r = Rule::default();
            for i in 1..bytes.len() {
                r.heads.extend(heads.get(&bytes[..i]).into_iter().flatten().map(|h| Box::<[u8]>::from(*h)));
                r.tails.extend(tails.get(&bytes[i..]).into_iter().flatten().map(|q| Box::<[u8]>::from(*q)));
            }
            r.heads.sort_unstable();
            r.tails.sort_unstable();
            rule[cp as usize] = *rule_of.entry(r.clone()).or_insert_with(|| {
                rules.push(r);
                (rules.len() - 1) as u16
            });
            any = true;
        }
        if !any {
            return Atoms::default();
        }
        // two atoms in a row inside some token: no cut between them
        let mut bigrams = FxHashSet::default();
        for &(t, _) in tokens {
            for chunk in t.utf8_chunks() {
                let mut prev: Option<u32> = None;
                for c in chunk.valid().chars() {
                    let cp = c as u32;
                    let atom = (cp as usize) < BMP && symbol[cp as usize] != NONE;
                    if let (Some(p), true) = (prev, atom) {
                        bigrams.insert((p as u64) << 21 | cp as u64);
                    }
                    prev = atom.then_some(cp);
                }
            }
        }
        Atoms { symbol: symbol.into(), rule: rule.into(), rules, bigrams }
    }

    /// Whether the vocabulary has atoms.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.symbol.is_empty()
    }

    /// Whether the atom `cp` at `piece[i..i + w]` may start whole there (condition 3).
    #[inline]
    fn whole_here(&self, cp: u32, piece: &[u8], i: usize, w: usize) -> bool {
        let r = self.rule[cp as usize];
        if r == 0 {
            return true;
        }
        let rule = &self.rules[r as usize];
        !rule.heads.iter().any(|h| piece[..i].ends_with(h)) && !rule.tails.iter().any(|q| piece[i + w..].starts_with(q))
    }

    /// The symbols (symbol, byte length) that `piece`'s merges may start from, in
    /// `syms`, and where it may be cut: `each(bytes, symbols)` for every part in
    /// order. False (nothing called) when no character of the piece starts whole, or the
    /// piece is longer than `MAX_ATOMS_PIECE`. `byte_sym`: each byte's symbol.
    pub(crate) fn parts(
        &self,
        piece: &[u8],
        byte_sym: &[u32; 256],
        syms: &mut Vec<(u32, u32)>,
        mut each: impl FnMut(&[u8], &mut [(u32, u32)]),
    ) -> bool {
        if self.is_empty() || piece.len() > MAX_ATOMS_PIECE {
            return false;
        }
        syms.clear();
        // (symbol index, byte offset) where each part starts
        let mut cuts: Vec<(usize, usize)> = vec![(0, 0)];
        let mut prev_atom: Option<u32> = None;
        let mut atoms = 0;
        let mut i = 0;
        while i < piece.len() {
            if piece[i] >= 0x80 {
                if let Some((cp, w)) = bmp_char_at(piece, i) {
                    let sym = self.symbol[cp as usize];
                    if sym != NONE && self.whole_here(cp, piece, i, w) {
                        if let Some(p) = prev_atom {
                            if !self.bigrams.contains(&((p as u64) << 21 | cp as u64)) {
                                cuts.push((syms.len(), i));
                            }
                        }
                        syms.push((sym, w as u32));
                        prev_atom = Some(cp);
                        atoms += 1;
                        i += w;
                        continue;
                    }
                }
            }
            syms.push((byte_sym[piece[i] as usize], 1));
            prev_atom = None;
            i += 1;
        }
        if atoms == 0 {
            return false;
        }
        cuts.push((syms.len(), piece.len()));
        for w in cuts.windows(2) {
            let ((s0, b0), (s1, b1)) = (w[0], w[1]);
            each(&piece[b0..b1], &mut syms[s0..s1]);
        }
        true
    }
}
