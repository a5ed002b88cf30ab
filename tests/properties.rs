//! Property tests on random positions and random games: the packed board against the plain
//! reference implementation, seeds conserved, notation round-trips, keys independent of stores.

use kalah::reference::RefPosition;
use kalah::{AnyPosition, Lanes, Narrow, Position, Rng, Rules, Setup, Side, Wide, with_position};

/// A random valid setup with `m` houses a side and at most `max_seeds` seeds in play.
fn random_setup(rng: &mut Rng, m: usize, max_seeds: u64) -> Setup {
    let seeds = rng.below(max_seeds + 1);
    let mut row = vec![0u64; 2 * m];
    let mut stores = [0u64; 2];
    // Throw each seed into a random pit; a third of the time make the board sparse.
    let sparse = rng.below(3) == 0;
    for _ in 0..seeds {
        let pit = rng.below(2 * m as u64 + 2) as usize;
        if pit >= 2 * m {
            stores[pit - 2 * m] += 1;
        } else if sparse && rng.below(2) == 0 {
            stores[pit % 2] += 1;
        } else {
            row[pit] += 1;
        }
    }
    let finished = row[..m].iter().all(|&s| s == 0) || row[m..].iter().all(|&s| s == 0);
    let to_move = match (finished, rng.below(3)) {
        (true, _) => None,
        (false, 0) => None,
        (false, 1) => Some(Side::South),
        (false, _) => Some(Side::North),
    };
    Setup {
        houses: m,
        stores,
        south: row[..m].to_vec(),
        north: row[m..].to_vec(),
        to_move,
    }
}

fn random_rules(rng: &mut Rng) -> Rules {
    Rules::ALL[rng.below(2) as usize]
}

/// Plays random games from random setups in packing `L` and in the reference side by side,
/// comparing the whole position and what each sowing did after every sowing. Returns the
/// number of sowings checked.
fn packed_equals_reference<L: Lanes>(seed: u64, m: usize, max_seeds: u64, sowings: u64) -> u64 {
    let mut rng = Rng::new(seed);
    let mut done = 0;
    while done < sowings {
        let setup = random_setup(&mut rng, m, max_seeds);
        let rules = random_rules(&mut rng);
        let mut pos = Position::<L>::from_setup(&setup, rules).expect("valid random setup");
        let mut reference = RefPosition::from_setup(&setup, rules);
        assert_eq!(pos.to_setup(), reference.to_setup(), "{setup}");
        while !pos.is_finished() {
            let moves = pos.legal_moves();
            let ref_moves = reference.moves();
            assert_eq!(
                moves.iter().map(|m| m.house()).collect::<Vec<_>>(),
                ref_moves,
                "legal moves of {pos}"
            );
            let mv = moves[rng.below(moves.len() as u64) as usize];
            let before = pos;
            let (next, sowing) = pos.play(mv).unwrap();
            let effect = reference.play(mv.house());
            assert_eq!(
                next.to_setup(),
                reference.to_setup(),
                "{before} {} house {mv}",
                rules
            );
            assert_eq!(sowing.extra_turn, effect.extra_turn, "{before} house {mv}");
            assert_eq!(sowing.captured, effect.captured, "{before} house {mv}");
            assert_eq!(sowing.game_over, effect.game_over, "{before} house {mv}");
            assert_eq!(next.is_finished(), reference.is_over());
            pos = next;
            done += 1;
        }
        assert!(reference.moves().is_empty());
    }
    done
}

#[test]
fn narrow_board_equals_reference_on_random_sowings() {
    let mut total = 0;
    for m in 1..=8 {
        // Up to the narrow limit of 255 seeds on the board; small boards see many laps.
        total += packed_equals_reference::<Narrow>(m as u64, m, 255, 150_000);
    }
    assert!(total >= 1_000_000);
}

#[test]
fn wide_board_equals_reference_on_random_sowings() {
    let mut total = 0;
    for m in 1..=12 {
        // Kalah(12,12) has 288 seeds; go beyond, up to 700, to exercise laps of big houses.
        total += packed_equals_reference::<Wide>(100 + m as u64, m, 700, 90_000);
    }
    assert!(total >= 1_000_000);
}

#[test]
fn seeds_are_conserved_and_stores_never_shrink() {
    let mut rng = Rng::new(7);
    for _ in 0..20_000 {
        let m = 1 + rng.below(12) as usize;
        let setup = random_setup(&mut rng, m, 300);
        let rules = random_rules(&mut rng);
        let total: u64 = setup
            .stores
            .iter()
            .chain(&setup.south)
            .chain(&setup.north)
            .sum();
        let pos = AnyPosition::from_setup(&setup, rules).unwrap();
        with_position!(pos, p => {
            for mv in p.legal_moves() {
                let (child, _) = p.play_unchecked(mv);
                let s = child.to_setup();
                let after: u64 = s.stores.iter().chain(&s.south).chain(&s.north).sum();
                assert_eq!(after, total, "{p} house {mv}");
                assert!(s.stores[0] >= setup.stores[0] && s.stores[1] >= setup.stores[1]);
                assert!(child.seeds_on_board() <= p.seeds_on_board());
            }
        });
    }
}

#[test]
fn notation_round_trips() {
    let mut rng = Rng::new(11);
    for _ in 0..20_000 {
        let m = 1 + rng.below(12) as usize;
        let setup = random_setup(&mut rng, m, 400);
        let rules = random_rules(&mut rng);
        let text = setup.to_string();
        let parsed: Setup = text.parse().unwrap();
        let a = AnyPosition::from_setup(&setup, rules).unwrap();
        let b = AnyPosition::from_setup(&parsed, rules).unwrap();
        assert_eq!(a.to_string(), b.to_string());
        let again: Setup = a.to_string().parse().unwrap();
        assert_eq!(AnyPosition::from_setup(&again, rules).unwrap(), a, "{text}");
    }
}

#[test]
fn key_is_independent_of_stores_and_normalised_to_the_mover() {
    let mut rng = Rng::new(13);
    for _ in 0..20_000 {
        let m = 1 + rng.below(8) as usize;
        let mut setup = random_setup(&mut rng, m, 100);
        if setup.to_move.is_none() {
            continue;
        }
        let rules = random_rules(&mut rng);
        let key = Position::<Narrow>::from_setup(&setup, rules)
            .unwrap()
            .board()
            .key();
        setup.stores = [rng.below(50), rng.below(50)];
        let restored = Position::<Narrow>::from_setup(&setup, rules).unwrap();
        assert_eq!(restored.board().key(), key);
        // The same houses with the sides and the side to move exchanged give the same key.
        std::mem::swap(&mut setup.south, &mut setup.north);
        setup.to_move = setup.to_move.map(Side::other);
        let mirrored = Position::<Narrow>::from_setup(&setup, rules).unwrap();
        assert_eq!(mirrored.board().key(), key);
    }
}

#[test]
fn narrow_and_wide_agree_where_both_fit() {
    let mut rng = Rng::new(17);
    for _ in 0..20_000 {
        let m = 1 + rng.below(8) as usize;
        let setup = random_setup(&mut rng, m, 255);
        let rules = random_rules(&mut rng);
        let n = Position::<Narrow>::from_setup(&setup, rules).unwrap();
        let w = Position::<Wide>::from_setup(&setup, rules).unwrap();
        for (a, b) in n.legal_moves().into_iter().zip(w.legal_moves()) {
            assert_eq!(
                n.play(a).unwrap().0.to_setup(),
                w.play(b).unwrap().0.to_setup()
            );
        }
        assert_eq!(kalah::perft(&n, 3), kalah::perft(&w, 3));
    }
}
