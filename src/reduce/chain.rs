//! The chain of accepted candidates of one reduction, from the start to the smallest, kept so
//! that a smallest result that does not verify N of N can fall back to the smallest accepted
//! candidate that does. Memory-bounded: when the texts together pass a cap, every second
//! middle entry is dropped (the start and the newest are always kept), so the chain stays
//! spread over the whole run at a fraction of the cost. Pure: no I/O.

/// Accepted candidates, oldest (largest) first.
#[derive(Debug, Default)]
pub(super) struct Chain {
    texts: Vec<Vec<u8>>,
    total: usize,
    cap: usize,
}

/// The cap of [`Chain::new`]: every accepted text is kept while they fit in this.
pub(super) const DEFAULT_CAP: usize = 64 << 20;

impl Chain {
    /// A chain holding `start`, keeping at most about `cap` bytes of texts.
    pub fn new(start: &[u8], cap: usize) -> Self {
        Chain {
            texts: vec![start.to_vec()],
            total: start.len(),
            cap,
        }
    }

    /// Adds a newly accepted text; thins the middle when over the cap.
    pub fn push(&mut self, text: &[u8]) {
        self.total += text.len();
        self.texts.push(text.to_vec());
        while self.total > self.cap && self.texts.len() > 2 {
            self.thin();
        }
    }

    /// Drops every second entry strictly between the first and the last.
    fn thin(&mut self) {
        let last = self.texts.len() - 1;
        let mut i = 0;
        let mut total = 0;
        self.texts.retain(|t| {
            let keep = i == 0 || i == last || i % 2 == 0;
            i += 1;
            if keep {
                total += t.len();
            }
            keep
        });
        self.total = total;
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn texts(&self) -> &[Vec<u8>] {
        &self.texts
    }
}

/// The back-off choice: the newest (smallest) entry of `chain`, other than those in `skip`
/// (already known to fail), for which `verifies` says yes, trying newest first. `None` when
/// none does. `verifies` is called once per tried entry, in that order.
pub(super) fn back_off<'a>(
    chain: &'a [Vec<u8>],
    skip: &dyn Fn(&[u8]) -> bool,
    verifies: &mut dyn FnMut(&[u8]) -> bool,
) -> Option<&'a [u8]> {
    chain
        .iter()
        .rev()
        .map(|t| t.as_slice())
        .filter(|t| !skip(t))
        .find(|t| verifies(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_the_cap_every_accepted_text_is_kept() {
        let mut c = Chain::new(&[0; 100], 1000);
        for n in (10..100).step_by(10).rev() {
            c.push(&vec![1; n]);
        }
        assert_eq!(c.len(), 10);
        assert_eq!(c.texts()[0].len(), 100);
        assert_eq!(c.texts()[9].len(), 10);
    }

    #[test]
    fn over_the_cap_the_middle_is_thinned_and_the_ends_kept() {
        let mut c = Chain::new(&[0; 500], 1000);
        let sizes: Vec<usize> = (1..=60).rev().map(|k| k * 5).collect(); // 300, 295, … 5
        for &n in &sizes {
            c.push(&vec![1; n]);
            assert!(
                c.total <= 1000 || c.len() <= 2,
                "{} in {}",
                c.total,
                c.len()
            );
            assert_eq!(c.total, c.texts().iter().map(Vec::len).sum::<usize>());
        }
        // The start and the newest survive; sizes still decrease along the chain.
        assert_eq!(c.texts()[0].len(), 500);
        assert_eq!(c.texts().last().unwrap().len(), 5);
        assert!(c.texts().windows(2).all(|w| w[0].len() > w[1].len()));
        // Thinned, but still spread over the run, not just its two ends.
        assert!(c.len() > 4 && c.len() < 61, "{}", c.len());
    }

    #[test]
    fn a_start_bigger_than_the_cap_keeps_the_ends_only() {
        let mut c = Chain::new(&[0; 5000], 1000);
        c.push(&[1; 400]);
        c.push(&[1; 300]);
        assert_eq!(c.len(), 2);
        assert_eq!(c.texts()[1].len(), 300);
    }

    #[test]
    fn back_off_picks_the_smallest_that_verifies_trying_newest_first() {
        let chain: Vec<Vec<u8>> = vec![vec![0; 50], vec![0; 40], vec![0; 30], vec![0; 20]];
        let mut tried = Vec::new();
        // 20 and 30 are flaky; 40 verifies.
        let got = back_off(&chain, &|_| false, &mut |t| {
            tried.push(t.len());
            t.len() >= 40
        });
        assert_eq!(got.map(<[u8]>::len), Some(40));
        assert_eq!(tried, [20, 30, 40]);
    }

    #[test]
    fn back_off_skips_known_failures_and_may_find_nothing() {
        let chain: Vec<Vec<u8>> = vec![vec![0; 50], vec![0; 20]];
        let mut tried = Vec::new();
        let got = back_off(&chain, &|t| t.len() == 20, &mut |t| {
            tried.push(t.len());
            false
        });
        assert_eq!(got, None);
        assert_eq!(tried, [50]);
    }
}
