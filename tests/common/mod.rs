//! Helpers shared by the test files: the deliberately naive exact solver.

use std::collections::HashMap;

use kalah::Side;
use kalah::reference::RefPosition;

/// The naive solver's memo: whole positions (pits and side) to values.
pub type Memo = HashMap<(Vec<u32>, Side), i32>;

/// The naive solver: final store difference for the side to move, by plain minimax over the
/// reference implementation, memoised on the whole position (pits and side) so that small
/// variants finish.
pub fn naive_value(pos: &RefPosition, memo: &mut Memo) -> i32 {
    let me = pos.to_move;
    if pos.is_over() {
        let m = pos.m;
        let south = pos.pits[m] as i32 + pos.pits[..m].iter().sum::<u32>() as i32;
        let north =
            pos.pits[2 * m + 1] as i32 + pos.pits[m + 1..2 * m + 1].iter().sum::<u32>() as i32;
        return if me == Side::South {
            south - north
        } else {
            north - south
        };
    }
    let key = (pos.pits.clone(), me);
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let best = pos
        .moves()
        .into_iter()
        .map(|h| {
            let mut child = pos.clone();
            child.play(h);
            let v = naive_value(&child, memo);
            if child.to_move == me || child.is_over() && child_value_is_for(&child, me) {
                v
            } else {
                -v
            }
        })
        .max()
        .unwrap();
    memo.insert(key, best);
    best
}

/// A finished child keeps the mover's `to_move`, so its value is already from the mover's view.
fn child_value_is_for(child: &RefPosition, me: Side) -> bool {
    child.to_move == me
}
