//! The time plan: how long the ManKalah agent thinks on each reply.
//!
//! The engine gives an agent one hour for all its replies in a game, but a game watched by a
//! person should not stall for minutes on one move. So each reply gets the smaller of:
//!
//! - its share of the budget: what is left above a reserve (1/40 of the budget, at most 30 s),
//!   divided by the replies expected before the engine solves the endgame at once (half the
//!   seeds above 16 on the board, 3 to 40), twice that for South's first move (seven positions
//!   are searched) and 1.5 times for North's answer to it (swap or move); never more than a
//!   third of what is above the reserve, so the budget cannot run out;
//! - the cap on a reply ([`TimePlan::max_move`], by default [`DEFAULT_MAX_MOVE_TIME`]).
//!
//! With the default hour the cap always decides: 5 s a reply at most, about 40 replies a game,
//! a few minutes of the hour. A small budget is spread over the game by the share. A reply
//! often takes less than its allotment: one legal move is answered at once, and a position the
//! exact solver (or the endgame databases) settles is answered as soon as it is solved.

use std::time::Duration;

/// The engine's time limit for one agent's whole game: one hour.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(3600);
/// The longest thinking time for one reply by default. Kept well under 10 s, so that the
/// rare overrun (an exact solve finishes only when it is done; a busy machine) still answers
/// within 10 s.
pub const DEFAULT_MAX_MOVE_TIME: Duration = Duration::from_secs(5);
/// The largest reserve kept: 30 s.
pub const MAX_RESERVE: Duration = Duration::from_secs(30);

/// What the agent is asked to decide.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Task {
    /// South's first move under the pie rule (every first move is searched).
    Opening,
    /// North's answer to South's first move: swap or move.
    PieAnswer,
    /// Any other move.
    Move,
}

impl Task {
    /// How many ordinary replies' shares this task gets.
    fn weight(self) -> f64 {
        match self {
            Task::Opening => 2.0,
            Task::PieAnswer => 1.5,
            Task::Move => 1.0,
        }
    }
}

/// A game's time: the budget for all replies and the cap on one (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TimePlan {
    /// Thinking time for the whole game.
    pub budget: Duration,
    /// The longest thinking time for one reply.
    pub max_move: Duration,
}

impl Default for TimePlan {
    /// The engine's hour, at most [`DEFAULT_MAX_MOVE_TIME`] a reply.
    fn default() -> TimePlan {
        TimePlan {
            budget: DEFAULT_BUDGET,
            max_move: DEFAULT_MAX_MOVE_TIME,
        }
    }
}

impl TimePlan {
    /// The time never planned for: 1/40 of the budget, at most [`MAX_RESERVE`].
    pub fn reserve(&self) -> Duration {
        (self.budget / 40).min(MAX_RESERVE)
    }

    /// Our replies expected before the endgame that the engine solves at once, with
    /// `seeds_on_board` seeds on the board: half the seeds above 16, 3 to 40 (a reply sows,
    /// and about two seeds a reply reach the stores).
    pub fn expected_replies(seeds_on_board: u32) -> u32 {
        (seeds_on_board.saturating_sub(16) / 2).clamp(3, 40)
    }

    /// The thinking time for one reply, with `left` of the budget unspent and
    /// `seeds_on_board` seeds on the board: the smaller of the task's share of what is left
    /// above the reserve and the cap [`TimePlan::max_move`] (see the module docs). Zero once
    /// the reserve is reached (the engine still answers: its first iteration is never cut).
    pub fn allot(&self, left: Duration, seeds_on_board: u32, task: Task) -> Duration {
        let usable = left.saturating_sub(self.reserve());
        let replies = Self::expected_replies(seeds_on_board);
        let share = usable.mul_f64(task.weight() / f64::from(replies));
        share.min(usable / 3).min(self.max_move)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASKS: [Task; 3] = [Task::Opening, Task::PieAnswer, Task::Move];

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// Equal within a microsecond (the share is computed in floating point).
    fn assert_near(found: Duration, expected: Duration) {
        let gap = found.abs_diff(expected);
        assert!(
            gap < Duration::from_micros(1),
            "{found:?}, expected {expected:?}"
        );
    }

    #[test]
    fn default_plan_never_allots_more_than_the_cap() {
        let plan = TimePlan::default();
        for seeds in 0..=98 {
            for task in TASKS {
                for left in [3600.0, 1800.0, 600.0, 100.0, 31.0, 30.0, 1.0, 0.0] {
                    let t = plan.allot(secs(left), seeds, task);
                    assert!(t <= DEFAULT_MAX_MOVE_TIME, "{seeds} {task:?} {left}: {t:?}");
                }
            }
        }
        // A fresh hour: the cap decides every reply.
        for seeds in [98, 70, 40, 24, 5] {
            assert_eq!(
                plan.allot(DEFAULT_BUDGET, seeds, Task::Move),
                DEFAULT_MAX_MOVE_TIME
            );
        }
    }

    #[test]
    fn the_share_is_what_is_left_above_the_reserve_over_the_replies_expected() {
        let plan = TimePlan {
            budget: secs(40.0),
            max_move: secs(600.0),
        };
        assert_eq!(plan.reserve(), secs(1.0));
        // 98 seeds: 40 replies expected; 39 s usable.
        assert_near(plan.allot(secs(40.0), 98, Task::Move), secs(39.0 / 40.0));
        assert_near(
            plan.allot(secs(40.0), 98, Task::Opening),
            secs(2.0 * 39.0 / 40.0),
        );
        assert_near(
            plan.allot(secs(40.0), 98, Task::PieAnswer),
            secs(1.5 * 39.0 / 40.0),
        );
        // 36 seeds: 10 replies.
        assert_near(plan.allot(secs(21.0), 36, Task::Move), secs(2.0));
        // Few seeds: 3 replies expected, and never more than a third of what is usable.
        assert_near(plan.allot(secs(10.0), 10, Task::Move), secs(3.0));
        assert_near(plan.allot(secs(10.0), 10, Task::Opening), secs(3.0));
        // The reserve is never planned for.
        assert_near(plan.allot(secs(1.0), 50, Task::Move), Duration::ZERO);
        assert_near(plan.allot(Duration::ZERO, 50, Task::Move), Duration::ZERO);
    }

    #[test]
    fn the_reserve_is_a_fortieth_of_the_budget_at_most_30_s() {
        let plan = |budget| TimePlan {
            budget: secs(budget),
            max_move: DEFAULT_MAX_MOVE_TIME,
        };
        assert_eq!(plan(3600.0).reserve(), MAX_RESERVE);
        assert_eq!(plan(1200.0).reserve(), MAX_RESERVE);
        assert_eq!(plan(80.0).reserve(), secs(2.0));
    }

    #[test]
    fn expected_replies_fall_with_the_seeds() {
        assert_eq!(TimePlan::expected_replies(98), 40);
        assert_eq!(TimePlan::expected_replies(96), 40);
        assert_eq!(TimePlan::expected_replies(56), 20);
        assert_eq!(TimePlan::expected_replies(22), 3);
        assert_eq!(TimePlan::expected_replies(0), 3);
        for seeds in 1..=98 {
            assert!(TimePlan::expected_replies(seeds) >= TimePlan::expected_replies(seeds - 1));
        }
    }

    #[test]
    fn spending_every_allotment_never_touches_the_reserve() {
        for (budget, cap) in [(3600.0, 5.0), (3600.0, 600.0), (60.0, 5.0), (1.5, 5.0)] {
            let plan = TimePlan {
                budget: secs(budget),
                max_move: secs(cap),
            };
            // A short game that loses two seeds a reply, and a long one of 200 replies.
            for (replies, seeds_at) in [
                (49u32, (|r: u32| 98 - 2 * r) as fn(u32) -> u32),
                (200, |r| 98u32.saturating_sub(r / 2).max(1)),
            ] {
                let mut left = plan.budget;
                for reply in 0..replies {
                    let task = if reply == 0 {
                        Task::Opening
                    } else {
                        Task::Move
                    };
                    let t = plan.allot(left, seeds_at(reply), task);
                    assert!(t <= plan.max_move);
                    left -= t;
                }
                assert!(left >= plan.reserve(), "{budget} {cap}: {left:?}");
            }
        }
        // Without a cap, a game that loses two seeds a reply uses most of the budget.
        let plan = TimePlan {
            budget: DEFAULT_BUDGET,
            max_move: secs(3600.0),
        };
        let mut left = plan.budget;
        for reply in 0..49 {
            left -= plan.allot(left, 98 - 2 * reply, Task::Move);
        }
        assert!(left < secs(120.0), "{left:?}");
    }
}
