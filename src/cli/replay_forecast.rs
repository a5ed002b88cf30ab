//! How long `kalah replay` has still to work: a forecast from the seeds of the sowings still to
//! value, calibrated by the time the sowings valued so far took.
//!
//! A sowing costs nothing when the databases or the books hold its position; an exact search
//! costs about [`GROWTH`] times more for each seed more above the database's top level (the
//! search's tree grows so, measured on Kalah(6,4) and (6,5)); an estimate (a search a fixed
//! number of sowings deep) costs about the same whatever the seeds. So each kind has one
//! unknown, its cost at one seed above the top level (or one estimate), taken as the ratio of
//! the time spent on that kind to the weight valued of it. The forecast is the sum, over the
//! sowings still to value, of their weight times that cost; it is `None` until a sowing of
//! each kind still ahead has been timed, and it is never shown before a second has gone.

use std::time::Duration;

/// The growth of a search's time with each seed on the board above the database's top level.
pub const GROWTH: f64 = 1.9;

/// What valuing a sowing with so many seeds on the board will be.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// Read from the databases: free.
    Lookup,
    /// An exact search, of this weight (`GROWTH` to the power of the seeds above the top).
    Search(f64),
    /// An estimate.
    Estimate,
}

/// The time spent and the weight valued, of one kind of work.
#[derive(Clone, Copy, Default, Debug)]
struct Spent {
    seconds: f64,
    weight: f64,
}

impl Spent {
    fn cost(&self) -> Option<f64> {
        (self.weight > 0.0).then(|| self.seconds / self.weight)
    }
}

/// The forecast of a replay's remaining time.
#[derive(Debug)]
pub struct Forecast {
    /// The top level of the databases (0: none).
    top: u32,
    /// Boards of more seeds are estimated (or left alone, without estimates).
    solve_seeds: u32,
    estimates: bool,
    search: Spent,
    estimate: Spent,
}

impl Forecast {
    /// A forecast for a replay that searches boards of at most `solve_seeds` seeds, looks up
    /// those of at most `top` (0: no databases), and estimates the others if `estimates`.
    pub fn new(top: Option<u32>, solve_seeds: u32, estimates: bool) -> Forecast {
        Forecast {
            top: top.unwrap_or(0),
            solve_seeds,
            estimates,
            search: Spent::default(),
            estimate: Spent::default(),
        }
    }

    fn kind(&self, seeds: u32) -> Option<Kind> {
        if seeds <= self.top {
            Some(Kind::Lookup)
        } else if seeds <= self.solve_seeds {
            Some(Kind::Search(GROWTH.powi((seeds - self.top) as i32)))
        } else if self.estimates {
            Some(Kind::Estimate)
        } else {
            None
        }
    }

    /// Records that valuing a sowing of `seeds` seeds on the board took `took`, by `source`
    /// (as [`super::replay`]'s valuations name it: only `"search"` and `"estimate"` count; a
    /// position the books held says nothing of the search's cost).
    pub fn record(&mut self, seeds: u32, source: &str, took: Duration) {
        let spent = match (self.kind(seeds), source) {
            (Some(Kind::Search(weight)), "search") => Some((&mut self.search, weight)),
            (Some(Kind::Estimate), "estimate") => Some((&mut self.estimate, 1.0)),
            _ => None,
        };
        if let Some((spent, weight)) = spent {
            spent.seconds += took.as_secs_f64();
            spent.weight += weight;
        }
    }

    /// The time the sowings of `seeds_ahead` seeds on the board will take, if each kind among
    /// them has been timed.
    pub fn remaining(&self, seeds_ahead: impl IntoIterator<Item = u32>) -> Option<Duration> {
        let mut seconds = 0.0;
        for seeds in seeds_ahead {
            seconds += match self.kind(seeds) {
                None | Some(Kind::Lookup) => 0.0,
                Some(Kind::Search(weight)) => weight * self.search.cost()?,
                Some(Kind::Estimate) => self.estimate.cost()?,
            };
        }
        Duration::try_from_secs_f64(seconds).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_forecast_before_a_sowing_of_each_kind_ahead_is_timed() {
        let mut f = Forecast::new(Some(24), 36, true);
        assert_eq!(f.remaining([30, 20]), None);
        // Lookups alone cost nothing, timed or not.
        assert_eq!(f.remaining([20, 10]), Some(Duration::ZERO));
        f.record(26, "search", Duration::from_secs(2));
        assert!(f.remaining([30, 20]).is_some());
        // An estimate ahead, none timed yet.
        assert_eq!(f.remaining([40, 30]), None);
    }

    #[test]
    fn a_search_costs_more_with_every_seed_above_the_top_level() {
        let mut f = Forecast::new(Some(24), 36, false);
        f.record(25, "search", Duration::from_secs_f64(GROWTH));
        // One second a unit of weight: a board 3 seeds above costs GROWTH^3.
        let left = f.remaining([27]).unwrap().as_secs_f64();
        assert!((left - GROWTH.powi(3)).abs() < 1e-9, "{left}");
        // Beyond the search, without estimates: nothing to do.
        assert_eq!(f.remaining([40]), Some(Duration::ZERO));
    }

    #[test]
    fn book_answers_do_not_count_as_searches() {
        let mut f = Forecast::new(Some(24), 36, true);
        f.record(30, "ledger", Duration::from_millis(1));
        f.record(30, "database", Duration::from_millis(1));
        assert_eq!(f.remaining([30]), None);
        f.record(40, "estimate", Duration::from_secs(3));
        f.record(40, "estimate", Duration::from_secs(1));
        assert_eq!(f.remaining([41, 42]), Some(Duration::from_secs(4)));
    }
}
