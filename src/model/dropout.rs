//! BPE-dropout: the seeded draws that skip candidate merges (both models).

/// BPE-dropout (Provilkov et al.): each candidate merge is skipped with
/// probability `p`. Draws come from splitmix64 seeded once per call, so a
/// seed gives the same segmentation everywhere (the reference uses the
/// same generator and draw order).
#[derive(Debug, Clone)]
pub struct Dropout {
    p: f64,
    state: u64,
}

impl Dropout {
    /// Drops each candidate with probability `p`; draws seeded by `seed`.
    pub fn new(p: f64, seed: u64) -> Self {
        Dropout { p, state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True when this candidate merge is dropped.
    pub(crate) fn drop_merge(&mut self) -> bool {
        ((self.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_splitmix64() {
        // the first outputs of splitmix64 seeded with 0 (Vigna's reference
        // implementation), which python/bytepair/reference.py draws too
        let mut d = Dropout::new(0.5, 0);
        assert_eq!(d.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(d.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(d.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn probability_zero_keeps_and_one_drops_every_merge() {
        for seed in [0, 1, u64::MAX] {
            let (mut keep, mut drop) = (Dropout::new(0.0, seed), Dropout::new(1.0, seed));
            assert!((0..1000).all(|_| !keep.drop_merge() && drop.drop_merge()));
        }
        // a seed fixes the draws; about p of them drop
        let draws = |seed| {
            let mut d = Dropout::new(0.3, seed);
            (0..10_000).map(|_| d.drop_merge()).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        let dropped = draws(7).iter().filter(|&&d| d).count();
        assert!((2700..3300).contains(&dropped), "{dropped}");
    }
}
