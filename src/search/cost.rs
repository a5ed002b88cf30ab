//! The cost model: about how many nodes an exact solve of a board takes, from its houses, its
//! seeds and the endgame levels it reads, to tell minutes from days before a search starts.
//!
//! ```text
//!   log10 nodes ~ base(seeds', no levels) - log10 1.42 * max(0, top - 16)
//!   seeds' = seeds * width(houses)          (a 4-house board of 48 seeds is as hard as a
//!                                            6-house board of about 38, a 9-house board of
//!                                            36 as one of about 59)
//!   base: log-linear between 6-house boards without levels, 36 seeds 3 M, 48 seeds 60 M
//!         (Kalah(6,3) and (6,4), measured), 60 seeds 10 G, 72 seeds 10 T (set so that the
//!         levels 0..32 give 3.6e10 for Kalah(6,6), the low end of the extrapolation in
//!         docs/cluster.md; its campaign spent 81 G nodes without an answer)
//! ```
//!
//! Each level of 17 seeds or more that the search reads cuts the nodes by about 1.42 (Kalah(6,4)
//! on the levels 0..20: 18.5 M nodes; 0..24: 4.5 M; Kalah(6,5) on 0..32: 6-7 s on two threads;
//! docs/cluster.md fits 1.53 a seed above the deepest level on Kalah(6,6) subtrees). It is a
//! rough model: off by a factor of ten either way on a given board, and meant for one thing,
//! saying whether a search takes seconds, hours or longer.

/// Measured solves: (seeds of a 6-house board, log10 of the nodes without levels).
const ANCHORS: [(f64, f64); 4] = [(36.0, 6.48), (48.0, 7.78), (60.0, 10.0), (72.0, 13.0)];

/// How hard a board of `houses` houses is beside a 6-house board of as many seeds. From 7
/// houses on, fitted to the solves of the starts of Kalah(7,1..3), (8,1..2), (9,1..2), (10,1)
/// and (11,1) (data/values/big-starts.jsonl, every first move valued): within a factor of
/// six of each but (7,2) on the levels 0..16, which it puts 12 times over. A wide board of few
/// seeds a house has many moves and long turns: each seed weighs more as the houses grow.
fn width(houses: usize) -> f64 {
    match houses {
        0..=3 => 0.6,
        4 => 0.8,
        5 => 0.98,
        6 => 1.0,
        7 => 1.25,
        8 => 1.45,
        9 => 1.65,
        10 => 1.85,
        11 => 2.1,
        _ => 2.3,
    }
}

/// About how many nodes the exact solve (value only) of a board of `houses` houses a side and
/// `seeds` seeds takes, reading the endgame levels `0..=top` (none: `None`).
pub fn estimated_nodes(houses: usize, seeds: u32, top: Option<u32>) -> f64 {
    let s = f64::from(seeds) * width(houses);
    let log = match ANCHORS.iter().position(|&(x, _)| s <= x) {
        Some(0) => {
            // Below the first anchor: its slope, never below 10 nodes.
            let ((x0, y0), (x1, y1)) = (ANCHORS[0], ANCHORS[1]);
            (y0 + (s - x0) * (y1 - y0) / (x1 - x0)).max(1.0)
        }
        Some(i) => {
            let ((x0, y0), (x1, y1)) = (ANCHORS[i - 1], ANCHORS[i]);
            y0 + (s - x0) * (y1 - y0) / (x1 - x0)
        }
        None => {
            let ((x0, y0), (x1, y1)) = (ANCHORS[2], ANCHORS[3]);
            y1 + (s - x1) * (y1 - y0) / (x1 - x0)
        }
    };
    let cut = match top {
        Some(t) if t >= seeds => return 1.0,
        Some(t) => f64::from(t.saturating_sub(16)) * 1.42f64.log10(),
        None => 0.0,
    };
    10f64.powf((log - cut).max(0.0))
}

/// About how many seconds `nodes` nodes take on `threads` threads (2.9 M nodes a second a
/// thread, measured on a 2-core AMD EPYC, 85% of that for each thread beyond the first).
pub fn estimated_seconds(nodes: f64, threads: usize) -> f64 {
    let rate = 2.9e6 * (1.0 + 0.85 * (threads.max(1) - 1) as f64);
    nodes / rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_tells_seconds_from_hours() {
        // Kalah(6,4) on the levels 0..20: 18.5 M nodes measured.
        let n = estimated_nodes(6, 48, Some(20));
        assert!((18.5e6 / 4.0..18.5e6 * 4.0).contains(&n), "{n}");
        // Kalah(6,5) on 0..32: seconds; Kalah(6,6) on 0..32: hours and more.
        assert!(estimated_seconds(estimated_nodes(6, 60, Some(32)), 2) < 60.0);
        assert!(estimated_seconds(estimated_nodes(6, 72, Some(32)), 2) > 3600.0);
        // Small boards: well under a second; a board the levels hold: nothing to search.
        assert!(estimated_seconds(estimated_nodes(4, 24, None), 2) < 1.0);
        assert_eq!(estimated_nodes(6, 30, Some(32)), 1.0);
        // Wide boards, against the solves of data/values/big-starts.jsonl (nodes measured,
        // houses, seeds, levels): within a factor of twelve.
        for (nodes, houses, seeds, top) in [
            (655e6, 7, 42, Some(12)),
            (305e6, 7, 42, Some(16)),
            (204e6, 8, 32, Some(10)),
            (1.33e9, 9, 36, None),
            (8.6e6, 10, 20, None),
            (204e6, 11, 22, None),
        ] {
            let n = estimated_nodes(houses, seeds, top);
            assert!(
                (nodes / 12.0..nodes * 12.0).contains(&n),
                "{houses} {seeds}: {n}"
            );
        }
        // More levels never cost more.
        for top in 0..40 {
            assert!(estimated_nodes(6, 72, Some(top + 1)) <= estimated_nodes(6, 72, Some(top)));
        }
    }
}
