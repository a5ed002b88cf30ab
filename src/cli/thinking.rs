//! What an engine or a player is thinking, in one line for the progress indicator.

use kalah::play::anytime::Thought;
use kalah::play::{Action, Thinking};

use super::human::human_count;

/// One line on what the anytime engine thinks: `depth 14, best house 3 (+2), 1.23M nodes`.
pub fn thought_text(t: &Thought) -> String {
    let action = match t.action {
        Action::Sow(mv) => format!("house {mv}"),
        Action::Swap => "swap".to_owned(),
    };
    let nodes = human_count(t.nodes);
    match t.exact {
        true => format!("solved: {action} ({:+}), {nodes} nodes", t.value),
        false => format!(
            "depth {}, best {action} ({:+}), {nodes} nodes",
            t.depth, t.value
        ),
    }
}

/// One line on what a player is thinking (see [`Thinking`]).
pub fn thinking_text(t: &Thinking) -> String {
    match t {
        Thinking::Searched(thought) => thought_text(thought),
        Thinking::Solving {
            depth,
            lower,
            upper,
            nodes,
        } => {
            let depth = depth.map_or("exactly".to_owned(), |d| format!("to depth {d}"));
            format!(
                "solving {depth}: value in [{lower:+}, {upper:+}], {} nodes",
                human_count(*nodes)
            )
        }
    }
}
