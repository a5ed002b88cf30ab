//! One test per rule of RULES.md. Each board is drawn as a player sees it: North's houses on top
//! (house 1 on the right), South's below (house 1 on the left), North's store left, South's right.
//! Every case is played by both packings and by the plain reference implementation.

use kalah::reference::RefPosition;
use kalah::{Lanes, Move, Narrow, Position, Rules, Setup, Wide};

struct Expect {
    after: &'static str,
    extra_turn: bool,
    captured: u32,
    game_over: bool,
}

fn check_in<L: Lanes>(rules: Rules, before: &str, house: usize, expect: &Expect) {
    let setup: Setup = before.parse().unwrap();
    let pos = Position::<L>::from_setup(&setup, rules).unwrap();
    let (next, sowing) = pos.play(Move::new(house).unwrap()).unwrap();
    let what = format!("{before} ({rules}, {}) house {house}", L::NAME);
    assert_eq!(next.to_string(), expect.after, "{what}");
    assert_eq!(sowing.extra_turn, expect.extra_turn, "extra turn: {what}");
    assert_eq!(sowing.captured, expect.captured, "captured: {what}");
    assert_eq!(sowing.game_over, expect.game_over, "game over: {what}");
    assert_eq!(next.is_finished(), expect.game_over, "{what}");

    let mut reference = RefPosition::from_setup(&setup, rules);
    let effect = reference.play(house);
    assert_eq!(
        reference.to_setup().to_string(),
        expect.after,
        "reference: {what}"
    );
    assert_eq!(effect.extra_turn, expect.extra_turn, "reference: {what}");
    assert_eq!(effect.captured, expect.captured, "reference: {what}");
}

fn check(rules: Rules, before: &str, house: usize, expect: Expect) {
    check_in::<Narrow>(rules, before, house, &expect);
    check_in::<Wide>(rules, before, house, &expect);
}

#[test]
fn sowing_drops_one_seed_per_house_counter_clockwise() {
    //     4  4  4  4  4  4            4  4  4  4  4  4
    //  0                    0  -> 0                    0     North to move
    //     4  4  4  4  4  4            0  5  5  5  5  4
    //    *1
    check(
        Rules::Standard,
        "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>",
        1,
        Expect {
            after: "<6,0,0,0,5,5,5,5,4,4,4,4,4,4,4> north",
            extra_turn: false,
            captured: 0,
            game_over: false,
        },
    );
}

#[test]
fn extra_turn_keeps_side() {
    // South's house 3 holds 4: houses 4, 5, 6 and the store. South moves again.
    //     4  4  4  4  4  4            4  4  4  4  4  4
    //  0                    0  -> 0                    1     South to move
    //     4  4  4  4  4  4            4  4  0  5  5  5
    //          *3
    check(
        Rules::Standard,
        "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>",
        3,
        Expect {
            after: "<6,1,0,4,4,0,5,5,5,4,4,4,4,4,4>",
            extra_turn: true,
            captured: 0,
            game_over: false,
        },
    );
}

#[test]
fn sowing_skips_the_opponent_store() {
    // South's house 2 holds 6: store, North 1, North 2, (North's store skipped), South 1,
    // South 2, store: the last seed lands in South's store.
    //     1  1            2  2
    //  0        0  -> 0        2      South to move
    //     0  6            1  1
    //       *2
    check(
        Rules::Standard,
        "<2,0,0,0,6,1,1>",
        2,
        Expect {
            after: "<2,2,0,1,1,2,2>",
            extra_turn: true,
            captured: 0,
            game_over: false,
        },
    );
}

#[test]
fn a_lap_sows_into_the_emptied_house_and_can_capture() {
    // 13 seeds in Kalah(6): one seed in every pit but North's store, the 13th back in house 1,
    // which was emptied, so it captures North's house 6 (2 + 1 seeds) with it.
    //     2  0  0  0  0  0            0  1  1  1  1  1
    //  0                    0  -> 0                    5     North to move
    //    13  1  0  0  0  0            0  2  1  1  1  1
    //    *1
    check(
        Rules::Standard,
        "<6,0,0,13,1,0,0,0,0,0,0,0,0,0,2>",
        1,
        Expect {
            after: "<6,5,0,0,2,1,1,1,1,1,1,1,1,1,0> north",
            extra_turn: false,
            captured: 4,
            game_over: false,
        },
    );
}

#[test]
fn capture_takes_the_opposite_house_and_the_last_seed() {
    // South's house 1 (1 seed) ends in empty house 2, which faces North's house 2 (4 seeds).
    //     5  4  3            5  0  3
    //  0           0  -> 0           5     North to move
    //     1  0  2            0  0  2
    //    *1
    check(
        Rules::Standard,
        "<3,0,0,1,0,2,3,4,5>",
        1,
        Expect {
            after: "<3,5,0,0,0,2,3,0,5> north",
            extra_turn: false,
            captured: 5,
            game_over: false,
        },
    );
}

#[test]
fn capture_requires_nonempty_opposite() {
    // Standard rules: the opposite house (North's 2) is empty, so the seed stays.
    //     5  0  3            5  0  3
    //  0           0  -> 0           0     North to move
    //     1  0  2            0  1  2
    //    *1
    check(
        Rules::Standard,
        "<3,0,0,1,0,2,3,0,5>",
        1,
        Expect {
            after: "<3,0,0,0,1,2,3,0,5> north",
            extra_turn: false,
            captured: 0,
            game_over: false,
        },
    );
}

#[test]
fn empty_capture_banks_the_lone_seed() {
    // Empty-capture rules: the same move banks the last seed although North's 2 is empty.
    //     5  0  3            5  0  3
    //  0           0  -> 0           1     North to move
    //     1  0  2            0  0  2
    //    *1
    check(
        Rules::EmptyCapture,
        "<3,0,0,1,0,2,3,0,5>",
        1,
        Expect {
            after: "<3,1,0,0,0,2,3,0,5> north",
            extra_turn: false,
            captured: 1,
            game_over: false,
        },
    );
}

#[test]
fn no_capture_in_an_opponent_house() {
    // The last seed lands in North's empty house 1: nothing is captured, under either rule.
    //     1  1  0            1  1  1
    //  0           0  -> 0           1     North to move
    //     1  0  2            1  0  0
    //          *3
    for rules in Rules::ALL {
        check(
            rules,
            "<3,0,0,1,0,2,0,1,1>",
            3,
            Expect {
                after: "<3,1,0,1,0,0,1,1,1> north",
                extra_turn: false,
                captured: 0,
                game_over: false,
            },
        );
    }
}

#[test]
fn no_capture_in_an_own_house_that_was_not_empty() {
    //     1  1  1            1  1  1
    //  0           0  -> 0           0     North to move
    //     1  1  0            0  2  0
    //    *1
    for rules in Rules::ALL {
        check(
            rules,
            "<3,0,0,1,1,0,1,1,1>",
            1,
            Expect {
                after: "<3,0,0,0,2,0,1,1,1> north",
                extra_turn: false,
                captured: 0,
                game_over: false,
            },
        );
    }
}

#[test]
fn game_ends_when_the_mover_runs_out_and_the_end_check_comes_before_the_extra_turn() {
    // South's last seed goes into its store (an extra turn), but South's side is now empty: the
    // game ends at once and North sweeps its 5 seeds into its own store.
    //     3  0  2            0  0  0
    //  5           4  -> 10          5     game over
    //     0  0  1            0  0  0
    //          *3
    check(
        Rules::Standard,
        "<3,4,5,0,0,1,2,0,3>",
        3,
        Expect {
            after: "<3,5,10,0,0,0,0,0,0>",
            extra_turn: false,
            captured: 0,
            game_over: true,
        },
    );
}

#[test]
fn game_ends_when_a_capture_empties_the_opponent() {
    // The capture takes North's last seeds; South sweeps its remaining seed.
    //     0  2  0            0  0  0
    //  0           0  -> 0           4     game over
    //     1  0  1            0  0  0
    //    *1
    check(
        Rules::Standard,
        "<3,0,0,1,0,1,0,2,0>",
        1,
        Expect {
            after: "<3,4,0,0,0,0,0,0,0>",
            extra_turn: false,
            captured: 3,
            game_over: true,
        },
    );
}

#[test]
fn north_sows_into_its_own_store_and_skips_south_store() {
    // North's house 2 holds 6: its store, South 1, South 2, (South's store skipped), North 1,
    // North 2, its store again: an extra turn for North.
    //     6  0            1  1
    //  0        0  -> 2        0     North to move
    //     1  1            2  2
    check(
        Rules::Standard,
        "<2,0,0,1,1,0,6> north",
        2,
        Expect {
            after: "<2,0,2,2,2,1,1> north",
            extra_turn: true,
            captured: 0,
            game_over: false,
        },
    );
}

#[test]
fn north_captures_facing_south_house() {
    // North's house 1 (1 seed) ends in its empty house 2, which faces South's house 2.
    //     4  0 *1            4  0  0
    //  0           0  -> 3           0     South to move
    //     1  2  3            1  0  3
    check(
        Rules::Standard,
        "<3,0,0,1,2,3,1,0,4> north",
        1,
        Expect {
            after: "<3,0,3,1,0,3,0,0,4>",
            extra_turn: false,
            captured: 3,
            game_over: false,
        },
    );
}

#[test]
fn a_finished_game_has_no_moves_and_no_side_to_move() {
    let setup: Setup = "<2,3,1,0,0,1,1>".parse().unwrap();
    let pos = Position::<Narrow>::from_setup(&setup, Rules::Standard).unwrap();
    assert!(pos.is_finished());
    assert_eq!(pos.to_move(), None);
    assert!(pos.legal_moves().is_empty());
    assert_eq!(kalah::perft(&pos, 0), 1);
    assert_eq!(kalah::perft(&pos, 3), 0);
    // The seeds left in the houses go to their owner's store: North ends with 1 + 2.
    assert_eq!(pos.outcome().unwrap().stores, [3, 3]);
    assert_eq!(pos.outcome().unwrap().winner(), None);
}

#[test]
fn a_turn_chains_sowings_only_after_extra_turns() {
    let start: Setup = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>".parse().unwrap();
    let pos = Position::<Narrow>::from_setup(&start, Rules::Standard).unwrap();
    let turn: kalah::Turn = "3-6".parse().unwrap();
    let after = pos.play_turn(&turn.0).unwrap();
    assert_eq!(after.to_string(), "<6,2,0,4,4,0,5,5,0,5,5,5,5,4,4> north");
    let bad: kalah::Turn = "1-2".parse().unwrap();
    assert_eq!(
        pos.play_turn(&bad.0),
        Err(kalah::IllegalMove::TurnAlreadyOver(2))
    );
    assert_eq!(
        pos.play(Move::new(7).unwrap()),
        Err(kalah::IllegalMove::NoSuchHouse {
            house: 7,
            houses: 6
        })
    );
}
