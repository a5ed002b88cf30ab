//! The cost model: about how many nodes an exact solve of a board takes, from its houses, its
//! seeds, its capture rule and the endgame levels it reads, to tell minutes from days before a
//! search starts.
//!
//! ```text
//!   log10 nodes ~ a + b*m + c*S + k*S²/100          m houses a side, S seeds on the board
//!               + [empty-capture] (d*m + e*S)        the rule that ends turns sooner
//!               - g * max(0, top - h*S)              each level read above 31% of S
//!               - v                                  the value only (no move's own value):
//!                                                    every move valued costs 10^v times more
//!   a = 0.261  b = 0.525  c = 0.074  k = 0.086  d = -0.169  e = 0.012
//!   g = 0.197  h = 0.31   v = 0.503
//! ```
//!
//! `scripts/cost-fit.py` fits it by least squares to the solves recorded in
//! `data/values/starts.jsonl` (4 to 6 houses) and `data/values/big-starts.jsonl` (7 to 12
//! houses, both rules), most of which value every first move, and to value-only solves of
//! 6-house starts (Kalah(6,3) and (6,4) with no levels, (6,4) on the levels 0..20 and 0..24,
//! (6,5) on 0..32) and, as a floor, Kalah(6,6) on 0..32 at 2e11 nodes for the value (its
//! campaign's ledger holds 108 G nodes and no value). It is within a factor of 4.6 of each
//! of them but the start of Kalah(4,6) on the levels 0..18 (9.6 times over).
//!
//! What it says: each level read above about a third of the board's seeds cuts the search by
//! 10^0.197 = 1.57 (docs/cluster.md fits 1.53 a seed above the deepest level on Kalah(6,6)
//! subtrees); a house more costs 10^0.525 = 3.3 times at equal seeds (more moves, longer
//! turns); the empty-capture rule is about as dear as the standard one on 6 houses and 50
//! times cheaper on Kalah(12,1) (measured: 420). It is a rough model, meant for one thing:
//! saying whether a search takes seconds, hours or longer.

use crate::Rules;

/// The fitted parameters, in the order of the formula above.
const A: f64 = 0.261;
const B: f64 = 0.525;
const C: f64 = 0.074;
const K: f64 = 0.086;
const D: f64 = -0.169;
const E: f64 = 0.012;
const G: f64 = 0.197;
const H: f64 = 0.31;
const V: f64 = 0.503;

/// About how many nodes the exact solve of a board of `houses` houses a side, `seeds` seeds
/// and capture rule `rules` takes, reading the endgame levels `0..=top` (none: `None`): of its
/// value alone, or with `every_move` of every move's value too (`solve --all-moves`,
/// `analyze`, `query`), 10^v times that. A board the levels hold takes 1.
pub fn estimated_nodes(
    houses: usize,
    seeds: u32,
    top: Option<u32>,
    rules: Rules,
    every_move: bool,
) -> f64 {
    let (m, s) = (houses as f64, f64::from(seeds));
    let mut log = A + B * m + C * s + K * s * s / 100.0 - V;
    if rules == Rules::EmptyCapture {
        log += D * m + E * s;
    }
    match top {
        Some(t) if t >= seeds => return 1.0,
        Some(t) => log -= G * (f64::from(t) - H * s).max(0.0),
        None => {}
    }
    // The value's nodes, never below 1; a search of more than one node costs 10^v times
    // that for every move's value.
    let value = log.max(0.0);
    10f64.powf(if every_move && value > 0.0 {
        value + V
    } else {
        value
    })
}

/// About how many seconds `nodes` nodes take on `threads` threads (2.9 M nodes a second a
/// thread, measured on a 2-core AMD EPYC, 85% of that for each thread beyond the first).
pub fn estimated_seconds(nodes: f64, threads: usize) -> f64 {
    let rate = 2.9e6 * (1.0 + 0.85 * (threads.max(1) - 1) as f64);
    nodes / rate
}

/// About how many seconds plain alpha-beta (no table, no levels, one thread: the ladder's
/// `alphabeta`, the path of `prove --check --by alphabeta`) takes to solve a board: it keeps no
/// table, so its nodes grow as a power of MTD(f)'s, not a multiple. Measured on the starts of
/// Kalah(4,2), (4,3) and (5,2) standard, no levels, one thread (2-core AMD EPYC): 1.1 M,
/// 955 M and 2.99 G nodes against MTD(f)'s 844, 22.7 k and 15.5 k, powers 2.07 to 2.26 of
/// them, at 44 M nodes a second. So the model's MTD(f) nodes to the power 2.2, at 40 M a
/// second.
pub fn estimated_alphabeta_seconds(houses: usize, seeds: u32, rules: Rules) -> f64 {
    estimated_nodes(houses, seeds, None, rules, false).powf(2.2) / 4.0e7
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_alpha_beta_is_priced_as_measured() {
        // Measured: Kalah(5,2) standard 68 s, (4,3) 21 s, one thread, no levels.
        for (m, s, secs) in [(5, 20, 68.0), (4, 24, 21.0)] {
            let t = estimated_alphabeta_seconds(m, s, STD);
            assert!((secs / 10.0..secs * 10.0).contains(&t), "{m} houses: {t}");
        }
        // A 28-seed board of 7 houses ran past 36 minutes: far past an hour.
        assert!(estimated_alphabeta_seconds(7, 28, STD) > 3600.0);
    }

    const STD: Rules = Rules::Standard;
    const EC: Rules = Rules::EmptyCapture;

    #[test]
    fn the_model_tells_seconds_from_hours() {
        // Kalah(6,4) on the levels 0..20: 18.5 M nodes measured, value only.
        let n = estimated_nodes(6, 48, Some(20), STD, false);
        assert!((18.5e6 / 4.0..18.5e6 * 4.0).contains(&n), "{n}");
        // Kalah(6,5) on 0..32: seconds; Kalah(6,6) on 0..32: hours and more.
        assert!(estimated_seconds(estimated_nodes(6, 60, Some(32), STD, false), 2) < 60.0);
        assert!(estimated_seconds(estimated_nodes(6, 72, Some(32), STD, false), 2) > 3600.0);
        // Small boards: well under a second; a board the levels hold: nothing to search.
        assert!(estimated_seconds(estimated_nodes(4, 24, None, STD, false), 2) < 1.0);
        assert_eq!(estimated_nodes(6, 30, Some(32), STD, false), 1.0);
        // Wide boards, against the solves of data/values/big-starts.jsonl (every first move
        // valued: nodes measured, houses, seeds, levels, rules): within a factor of five.
        for (nodes, houses, seeds, top, rules) in [
            (655e6, 7, 42, Some(12), STD),
            (44e6, 7, 42, Some(16), EC),
            (19.2e6, 8, 32, Some(14), STD),
            (3.26e9, 8, 48, Some(14), EC),
            (1.33e9, 9, 36, None, STD),
            (24.6e6, 9, 36, None, EC),
            (8.6e6, 10, 20, None, STD),
            (517e6, 10, 40, None, EC),
            (204e6, 11, 22, None, STD),
            (2.59e9, 12, 24, None, STD),
            (6.1e6, 12, 24, None, EC),
        ] {
            let n = estimated_nodes(houses, seeds, top, rules, true);
            assert!(
                (nodes / 5.0..nodes * 5.0).contains(&n),
                "{houses} {seeds} {rules:?}: {n}"
            );
        }
        // More levels never cost more; the empty-capture rule never costs more than standard
        // from 6 houses on.
        for top in 0..40 {
            assert!(
                estimated_nodes(6, 72, Some(top + 1), STD, false)
                    <= estimated_nodes(6, 72, Some(top), STD, false)
            );
        }
        for houses in 6..=12 {
            let s = 4 * houses as u32;
            assert!(
                estimated_nodes(houses, s, None, EC, false)
                    <= estimated_nodes(houses, s, None, STD, false)
            );
        }
    }

    #[test]
    fn every_move_costs_ten_to_the_v_times_the_value() {
        let value = estimated_nodes(7, 56, Some(22), STD, false);
        let every = estimated_nodes(7, 56, Some(22), STD, true);
        assert!(
            (every / value - 10f64.powf(V)).abs() < 1e-9,
            "{value} {every}"
        );
        // A board the levels hold is a lookup either way.
        assert_eq!(estimated_nodes(6, 30, Some(32), STD, true), 1.0);
    }
}
