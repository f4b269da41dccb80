//! RFC 9001 §6.6's usage limits for the standalone [`Sealer`](super::Sealer)
//! and [`Opener`](super::Opener): an opt-in count of packets sealed (refused
//! past the confidentiality limit, when a key update is overdue) and of
//! failed opens (refused once the integrity limit is reached, when the
//! connection must close). Through rustls, quinn counts for itself from the
//! limits the packet key reports.

use core::sync::atomic::{AtomicU64, Ordering};

/// A count against a limit, shared by every thread using the key.
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicU64,
    /// `None`: counted but never refused.
    limit: Option<u64>,
}

impl Budget {
    pub(crate) const fn unlimited() -> Self {
        Self {
            used: AtomicU64::new(0),
            limit: None,
        }
    }

    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = Some(limit);
    }

    /// How many have been taken.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// Whether the limit is set and reached.
    pub(crate) fn exhausted(&self) -> bool {
        self.limit.is_some_and(|limit| self.used() >= limit)
    }

    /// Takes `n`, or refuses (taking nothing) if that would pass the limit.
    pub(crate) fn take(&self, n: u64) -> Result<(), ()> {
        let Some(limit) = self.limit else {
            self.used.fetch_add(n, Ordering::AcqRel);
            return Ok(());
        };
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|&total| total <= limit)
            })
            .map(drop)
            .map_err(drop)
    }

    /// Counts one without checking the limit (a failure that happened).
    pub(crate) fn count_one(&self) {
        self.used.fetch_add(1, Ordering::AcqRel);
    }

    /// Gives back `n` taken by a call that was then refused.
    pub(crate) fn give_back(&self, n: u64) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::Budget;

    #[test]
    fn refuses_past_the_limit_and_takes_nothing() {
        let mut b = Budget::unlimited();
        b.set_limit(3);
        assert_eq!(b.take(2), Ok(()));
        assert_eq!(b.take(2), Err(()));
        assert_eq!(b.used(), 2);
        assert!(!b.exhausted());
        assert_eq!(b.take(1), Ok(()));
        assert!(b.exhausted());
        assert_eq!(b.take(1), Err(()));
        b.give_back(1);
        assert_eq!(b.used(), 2);
        let unlimited = Budget::unlimited();
        assert_eq!(unlimited.take(u64::MAX / 2), Ok(()));
        assert!(!unlimited.exhausted());
    }
}
