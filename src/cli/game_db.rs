//! The endgame databases a game reads (`play`, `match`, `replay`): the files chosen, or the
//! small levels built in memory for a player or a judge that searches.

use std::sync::Arc;

use kalah::db::Tablebase;
use kalah::play::GameRules;

use super::CliError;
use super::books::BookArg;
use super::db_choice::DbChoice;

/// The databases for `rules` (see [`DbChoice`]: --db, else the database home; Kalah rules
/// only), named in a line on stderr. Without files, when the solver will search Kalah boards
/// of up to `search_seeds` seeds (for `who`: a perfect player, the replay's judge), the small
/// levels worth building for such boards ([`kalah::search::auto_memory_db`]: from 40 seeds)
/// are built in memory now on `threads` threads, as `solve` builds them (see its
/// `--memory-db`), with a line on stderr.
pub fn open_db(
    choice: &DbChoice,
    rules: GameRules,
    search_seeds: Option<u32>,
    who: &str,
    threads: usize,
) -> Result<Option<Arc<Tablebase>>, CliError> {
    let Some(kalah_rules) = rules.rules.kalah() else {
        if choice.db.is_some() || choice.max_level.is_some() {
            return Err(CliError::input(format!(
                "--db: the endgame databases are for Kalah rules, not {}",
                rules.rules
            )));
        }
        return Ok(None);
    };
    if let Some(db) = choice.open(rules.houses, kalah_rules)? {
        eprintln!("{}", super::db_choice::files_line(&db));
        return Ok(Some(db));
    }
    let (Some(seeds), false) = (search_seeds, choice.no_db) else {
        return Ok(None);
    };
    let Some(top) = kalah::search::auto_memory_db(rules.houses, seeds) else {
        return Ok(None);
    };
    let (db, time) = super::search::build_in_memory(rules.houses, kalah_rules, top, threads)?;
    eprintln!(
        "endgame levels 0..={top} built in memory for {who} in {:.2} s ({})",
        time.as_secs_f64(),
        choice.none_found(rules.houses, kalah_rules)
    );
    Ok(Some(db))
}

/// [`open_db`] for a game in which a perfect player may take part (`perfect`): it searches
/// the whole game.
pub fn open_db_for_perfect(
    choice: &DbChoice,
    rules: GameRules,
    perfect: bool,
    threads: usize,
) -> Result<Option<Arc<Tablebase>>, CliError> {
    let seeds = perfect.then(|| rules.seeds_in_play());
    open_db(choice, rules, seeds, "the perfect player", threads)
}

/// The opening books a perfect player answers from before it searches (`perfect` among the
/// players, Kalah rules, no --no-book): the shipped ones of this game and the ledgers of the
/// database directory (see [`BookArg`]).
pub fn open_book_for_perfect(
    book: &BookArg,
    choice: &DbChoice,
    rules: GameRules,
    perfect: bool,
) -> Result<Option<Arc<kalah::book::Book>>, CliError> {
    let Some(kalah_rules) = rules.rules.kalah().filter(|_| perfect && !book.no_book) else {
        return Ok(None);
    };
    let game = (rules.houses, kalah_rules, rules.seeds_in_play());
    Ok(Some(Arc::new(book.open(choice, Some(game))?)))
}
