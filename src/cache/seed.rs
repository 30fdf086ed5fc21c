//! A model's most frequent whole-word tokens, put into a thread's front table
//! the first time that thread encodes with the model: a thread starts with a
//! cold table (each worker of a batch, each new process), and a token met for
//! the first time missed it and looked the vocabulary up, a cache miss of its
//! own (nine in ten of English's words are tokens of Llama 3's or cl100k's
//! vocabulary). Seeding writes each token's slot once, up to half the table,
//! into empty slots only (another model's entries stay), the most frequent
//! first; nothing on the encoding loop changes.
//!
//! Only tokens that the model encodes to themselves are seeds: every token of
//! the byte model (a piece is looked up whole first) and of a byte-level
//! pipeline with `ignore_merges`; without it (DeepSeek V3, Qwen 2), the
//! tokens whose own merges make them alone, checked when the model is made.

use super::{FrontKey, PieceCache, FRONT_PIECE};

/// Most tokens a model keeps as seeds (half the default front table).
const MOST_SEEDS: usize = 1 << 15;

/// Owners a thread's cache remembers having seeded (past that, the list starts again: seeding twice is harmless).
const MOST_SEEDED: usize = 64;

/// The seeds of one model: its tokens of up to `FRONT_PIECE` bytes with the lowest ids (the earliest merges,
/// the most frequent tokens in text), lowest first.
#[derive(Debug, Default)]
pub(crate) struct FrontSeed {
    keys: Box<[(FrontKey, u32)]>,
}

impl FrontSeed {
    /// From `tokens` (bytes, id): the lowest ids of up to `FRONT_PIECE` bytes, those of them for which
    /// `is_own(bytes, id)` (the model encodes these bytes to this token alone), checked in parallel.
    pub(crate) fn new<'a>(tokens: impl Iterator<Item = (&'a [u8], u32)>, is_own: impl Fn(&[u8], u32) -> bool + Sync) -> FrontSeed {
        let mut fitting: Vec<(&[u8], u32)> = tokens.filter(|(t, _)| (1..=FRONT_PIECE).contains(&t.len())).collect();
        fitting.sort_unstable_by_key(|&(_, id)| id);
        fitting.truncate(MOST_SEEDS);
        let own = crate::parallel::map_chunks(&fitting, 4096, |_, share| {
            share.iter().filter(|&&(t, id)| is_own(t, id)).map(|&(t, id)| (FrontKey::of(t), id)).collect::<Vec<_>>()
        });
        FrontSeed { keys: own.concat().into() }
    }
}

impl PieceCache {
    /// Puts `seed`'s tokens under `owner` in the empty slots of the front table (at most half of it), once
    /// per owner.
    pub(crate) fn seed(&mut self, owner: u32, seed: &FrontSeed) {
        if self.front.is_empty() || self.slots.is_empty() || self.seeded.contains(&owner) {
            return;
        }
        if self.seeded.len() == MOST_SEEDED {
            self.seeded.clear();
        }
        self.seeded.push(owner);
        for &(key, id) in seed.keys.iter().take(self.front.len() / 2) {
            let slot = &mut self.front[key.home(owner, self.front_shift)];
            if slot.is_empty() {
                Self::write_front(slot, key, owner, &[id]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_table_answers_the_seeds_once_per_owner_and_keeps_other_entries() {
        let words: Vec<Vec<u8>> = (0..3000u32).map(|i| format!(" w{i}").into_bytes()).collect();
        let mut tokens: Vec<(&[u8], u32)> = words.iter().enumerate().map(|(i, w)| (w.as_slice(), 3000 - i as u32)).collect();
        let long = b"sixteen bytes!!!".to_vec();
        tokens.push((&long, 0)); // too long for the front: never a seed
        let seed = FrontSeed::new(tokens.iter().copied(), |_, id| id != 5);
        assert_eq!(seed.keys.len(), words.len() - 1); // one token is not its own encoding: no seed
        assert!(!seed.keys.iter().any(|&(_, id)| id == 5));
        assert!(seed.keys.windows(2).all(|w| w[0].1 < w[1].1));
        let mut cache = PieceCache::with_bytes(256 << 10); // 4,096 front slots: 2,048 seeds at most
        let other = FrontKey::of(b" w7");
        cache.put_front_key(other, 5, &[1, 2]); // another owner's entry, where a seed may go
        cache.seed(9, &seed);
        let (front, shift) = cache.front_table();
        let held = |key: FrontKey, owner: u32| {
            let s = &front[key.home(owner, shift)];
            s.holds(key, owner).then(|| s.ids()[..s.len()].to_vec())
        };
        assert_eq!(held(other, 5), Some(vec![1, 2]));
        let mut found = 0;
        for &(t, id) in &tokens {
            if let Some(ids) = held(FrontKey::of(&t[..t.len().min(FRONT_PIECE)]), 9) {
                assert_eq!(ids, [id]);
                assert!(id <= 2048, "only the lowest ids are seeds"); // half the table's worth
                found += 1;
            }
        }
        assert!(found > 1000, "{found}");
        // once per owner: a seed put out by a later word is not put back
        let first = seed.keys[0].0;
        cache.put_front_key(first, 9, &[77]);
        cache.seed(9, &seed);
        let (front, shift) = cache.front_table();
        assert_eq!(front[first.home(9, shift)].ids()[0], 77);
        // an emptied cache seeds again
        cache.clear();
        cache.seed(9, &seed);
        let (front, shift) = cache.front_table();
        assert!(front[first.home(9, shift)].holds(first, 9));
    }
}
