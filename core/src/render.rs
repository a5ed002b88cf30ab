//! An ASCII drawing of a position, read at a glance.
//!
//! ```text
//!             6   5   4   3   2   1    North's house numbers, from North's view
//!       +---+---+---+---+---+---+---+---+
//! North |   | 4 | 4 | 4 | 4 | 4 | 4 |   |
//!       | 0 +---+---+---+---+---+---+ 0 |  North's store left, South's store right
//! South |   | 4 | 4 | 4 | 4 | 4 | 4 |   |  <- to move
//!       +---+---+---+---+---+---+---+---+
//!             1   2   3   4   5   6        South's house numbers
//! ```

use std::fmt::Write as _;

use crate::lanes::Lanes;
use crate::position::Position;
use crate::rules::Side;

/// Draws `pos` as a multi-line string (see the module docs), ending with a status line.
pub fn render<L: Lanes>(pos: &Position<L>) -> String {
    let m = pos.houses_per_side();
    let north = pos.houses(Side::North);
    let south = pos.houses(Side::South);
    let widest = north
        .iter()
        .chain(&south)
        .chain([&pos.store(Side::North), &pos.store(Side::South)])
        .chain([&(m as u32)])
        .map(|v| v.to_string().len())
        .max()
        .unwrap_or(1);
    let cell = widest + 2;
    let pad = "      ";
    let label = |side: Side| format!("{:<6}", side.to_string());
    let marker = |side: Side| {
        if pos.to_move() == Some(side) {
            "  <- to move"
        } else {
            ""
        }
    };
    let num = |v: u32| format!("{v:^cell$}");
    let border = format!("+{}+", vec!["-".repeat(cell); m + 2].join("+"));
    let inner_border = format!("+{}+", vec!["-".repeat(cell); m].join("+"));
    let blank = " ".repeat(cell);

    let mut out = String::new();
    let numbers = |order: &mut dyn Iterator<Item = usize>| {
        let cells: String = order.map(|h| format!(" {}", num(h as u32))).collect();
        format!("{pad} {blank}{cells}").trim_end().to_owned()
    };
    let _ = writeln!(out, "{}", numbers(&mut (1..=m).rev()));
    let _ = writeln!(out, "{pad}{border}");
    let row: String = north
        .iter()
        .rev()
        .map(|&v| format!("{}|", num(v)))
        .collect();
    let _ = writeln!(
        out,
        "{}|{blank}|{row}{blank}|{}",
        label(Side::North),
        marker(Side::North)
    );
    let _ = writeln!(
        out,
        "{pad}|{}{inner_border}{}|",
        num(pos.store(Side::North)),
        num(pos.store(Side::South))
    );
    let row: String = south.iter().map(|&v| format!("{}|", num(v))).collect();
    let _ = writeln!(
        out,
        "{}|{blank}|{row}{blank}|{}",
        label(Side::South),
        marker(Side::South)
    );
    let _ = writeln!(out, "{pad}{border}");
    let _ = writeln!(out, "{}", numbers(&mut (1..=m)));
    match pos.outcome() {
        None => {
            let side = pos
                .to_move()
                .expect("a game that is not over has a side to move");
            let _ = write!(
                out,
                "{side} to move; stores South {} North {}; {} seeds on the board",
                pos.store(Side::South),
                pos.store(Side::North),
                pos.seeds_on_board()
            );
        }
        Some(outcome) => {
            let result = match outcome.winner() {
                Some(side) => format!("{side} wins by {}", outcome.margin(side)),
                None => "draw".to_owned(),
            };
            let _ = write!(
                out,
                "game over: South {} North {} after the sweep; {result}",
                outcome.stores[0], outcome.stores[1]
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Rules, Variant};

    #[test]
    fn draws_the_start() {
        let pos =
            Position::<crate::Narrow>::start(Variant::new(6, 4, Rules::Standard).unwrap()).unwrap();
        let text = render(&pos);
        let expected = [
            "            6   5   4   3   2   1",
            "      +---+---+---+---+---+---+---+---+",
            "North |   | 4 | 4 | 4 | 4 | 4 | 4 |   |",
            "      | 0 +---+---+---+---+---+---+ 0 |",
            "South |   | 4 | 4 | 4 | 4 | 4 | 4 |   |  <- to move",
            "      +---+---+---+---+---+---+---+---+",
            "            1   2   3   4   5   6",
            "South to move; stores South 0 North 0; 48 seeds on the board",
        ]
        .join("\n");
        assert_eq!(text, expected);
    }
}
