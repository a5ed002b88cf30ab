//! The clock of deadlines and elapsed times: [`std::time::Instant`] wherever std has a clock.
//!
//! WebAssembly in a browser (`wasm32-unknown-unknown`) has none: std's `Instant::now` panics
//! there. On that target [`Instant`] counts the milliseconds of the page's monotonic clock
//! (`performance.now()`), which the page lends the module as its import `kalah.now_ms` (see
//! web/, the static explorer). Only the operations the crate uses are there: `now`, `elapsed`,
//! `duration_since` and its saturating form, adding a duration, and comparing.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use std::time::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use page::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod page {
    use std::time::Duration;

    /// A moment of the page's clock, in milliseconds since the page's time origin.
    #[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
    pub struct Instant(f64);

    impl Eq for Instant {}

    impl Ord for Instant {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.0.total_cmp(&other.0)
        }
    }

    impl std::hash::Hash for Instant {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            self.0.to_bits().hash(state);
        }
    }

    impl Instant {
        /// Now.
        pub fn now() -> Instant {
            Instant(crate::memory::page_clock_ms())
        }

        /// The time since `earlier` (zero if `earlier` is later).
        pub fn duration_since(&self, earlier: Instant) -> Duration {
            self.saturating_duration_since(earlier)
        }

        /// The time since `earlier`, zero if `earlier` is later.
        pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
            Duration::from_secs_f64(((self.0 - earlier.0) / 1000.0).max(0.0))
        }

        /// The time since `earlier`, `None` if `earlier` is later.
        pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
            (self.0 >= earlier.0).then(|| self.saturating_duration_since(earlier))
        }

        /// The time since this moment.
        pub fn elapsed(&self) -> Duration {
            Instant::now().saturating_duration_since(*self)
        }

        /// This moment plus `d`.
        pub fn checked_add(&self, d: Duration) -> Option<Instant> {
            Some(*self + d)
        }
    }

    impl std::ops::Add<Duration> for Instant {
        type Output = Instant;

        fn add(self, d: Duration) -> Instant {
            Instant(self.0 + d.as_secs_f64() * 1000.0)
        }
    }

    impl std::ops::AddAssign<Duration> for Instant {
        fn add_assign(&mut self, d: Duration) {
            *self = *self + d;
        }
    }

    impl std::ops::Sub<Duration> for Instant {
        type Output = Instant;

        fn sub(self, d: Duration) -> Instant {
            Instant(self.0 - d.as_secs_f64() * 1000.0)
        }
    }

    impl std::ops::Sub<Instant> for Instant {
        type Output = Duration;

        fn sub(self, earlier: Instant) -> Duration {
            self.saturating_duration_since(earlier)
        }
    }
}
