//! Certificates: the fewest facts a campaign's bounds rest on, each proven again by another
//! path, with a ledger of those checks.
//!
//! A bound of the root ("f >= t" or "f <= t", f the value less the stores) rests on facts in
//! one of three ways, which [`Certificate::of`] weighs recursively over the proof tree:
//!
//! ```text
//!   f(node) >= t  <-  t is no more than the seeds allow (nothing to prove)
//!                 |   a fact about node's board with lower >= t
//!                 |   one move with bound >= t           (node split)
//!   f(node) <= t  <-  t is no less than the seeds allow
//!                 |   a fact about node's board with upper <= t
//!                 |   every move with bound <= t         (node split)
//!   a move's bound: game over: its gain; extra turn: gain + f(child) (same side);
//!                   pass: gain - f(child), so ">= t" asks "f(child) <= gain - t"
//! ```
//!
//! Each fact costs the nodes that proved it (a check by another path costs about as much), a
//! fact already checked nothing, a fact found wrong more than any other: the support chosen is
//! the cheapest the recursion finds (a fact shared by two subtrees counts in each, so it is the
//! cheapest up to that). A bound whose every support holds a fact found wrong is *falsified*,
//! and those facts are named.
//!
//! **Checks** are JSON lines in files of their own, appended and synced as ledgers are
//! ([`crate::prove::ledger::LedgerWriter`]), one a fact checked:
//!
//! ```json
//! {"check":1,"digest":"9c0f...","position":"<6,...>","rules":"standard","lower":2,"upper":68,
//!  "by":"lower-levels","levels":{"top":30,"rules":"standard"},"holds":true,"why":null,
//!  "nodes":81234567,"cpu_s":41.2,"kalah":"0.1.0","fact_at":"k66.jsonl:12","mac":"5e1d..."}
//! ```
//!
//! `digest` names the fact checked: the XXH3-128 of its line as [`Fact::to_line`] writes it,
//! so a fact whose text changes is unchecked again. `mac` is the mark of the installation
//! that wrote it ([`crate::prove::key`]): a check counts only if this installation's key
//! verifies its mark (over the check and the whole line of its fact), or if it is one of the
//! checks shipped with kalah, of that very fact ([`crate::prove::shipped`]); any other check
//! (unmarked, made elsewhere, forged) is a claim, which certifies nothing and finds nothing
//! wrong. A check counts only if it says what its fact says (position, rules, bounds), and
//! certifies its fact only when it took another path than the
//! fact: other levels (or none), or plain alpha-beta. Every number of a check line is
//! bounded when it is read (nodes, seconds, levels that cannot have held its position).

use std::collections::HashMap;
use std::fmt;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::board::Board;
use crate::fast_hash::FastMap;
use crate::lanes::Lanes;
use crate::position::{Move, Position};
use crate::prove::fact::{Bounds, Fact, MAX_CPU_S, MAX_LINE, MAX_NODES};
use crate::prove::key::{self, Key};
use crate::prove::ledger::{Ledger, LedgerError, MAX_LEDGER_BYTES, read_lines, within};
use crate::prove::tree::{EdgeKind, Tree};
use crate::prove::{MAX_TREE, ProveError};
use crate::rules::Rules;

/// The format version of a check line.
pub const CHECK_FORMAT: u64 = 1;

/// The digest that names `fact` in a check: XXH3-128 of its canonical line, in hex.
pub fn digest<L: Lanes>(fact: &Fact<L>) -> String {
    digest_of_line(&fact.to_line())
}

/// The digest of a fact whose line ([`Fact::to_line`]) is `line`.
pub fn digest_of_line(line: &str) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(line.as_bytes()))
}

/// This installation's mark on a check (see [`crate::prove::key`]): the check's text it was
/// taken over, and the MAC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The check's JSON object without its mark, keys sorted ([`key::canonical`]).
    text: String,
    /// HMAC-SHA256 of that text and of the fact's line, under the key.
    mac: [u8; 32],
}

/// One fact checked again.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The fact's digest ([`digest`]).
    pub digest: String,
    /// The fact's position and bounds (for people; the digest is what counts).
    pub position: String,
    /// The fact's rules.
    pub rules: Rules,
    /// The fact's bounds.
    pub lower: i32,
    /// The fact's bounds.
    pub upper: i32,
    /// The path: `lower-levels`, `no-db`, `serial` or `alphabeta`.
    pub by: String,
    /// The top level the check read, if any.
    pub top: Option<u32>,
    /// Whether the fact's bounds held.
    pub holds: bool,
    /// Why not, if they did not.
    pub why: Option<String>,
    /// Search nodes and CPU seconds the check took.
    pub nodes: u64,
    /// CPU seconds.
    pub cpu_s: f64,
    /// Where the fact was read when it was checked (information only).
    pub fact_at: String,
    /// The mark of the installation that wrote it, if the line has one (`"mac"`): only a
    /// mark this installation's key verifies makes the check count ([`Checks::verdict`]).
    pub mark: Option<Mark>,
}

impl Check {
    /// The JSON line (without its newline), unmarked: what [`Check::marked`] marks. A check
    /// written without its mark counts nowhere (it reads as a claim).
    pub fn to_line(&self) -> String {
        self.object().to_string()
    }

    /// This check marked by `key` as a check of the fact whose line ([`Fact::to_line`]) is
    /// `fact_line`, and its JSON line (without its newline) with the mark in `"mac"`: what
    /// this installation writes.
    pub fn marked(mut self, key: &Key, fact_line: &str) -> (Check, String) {
        let mut object = self.object();
        let text = key::canonical(&object);
        let mac = key.mark(&text, fact_line);
        object["mac"] = json!(key::hex(&mac));
        self.mark = Some(Mark { text, mac });
        let line = object.to_string();
        (self, line)
    }

    /// The check as a JSON object, without a mark.
    fn object(&self) -> Value {
        json!({
            "check": CHECK_FORMAT,
            "digest": self.digest,
            "position": self.position,
            "rules": self.rules.as_str(),
            "lower": self.lower,
            "upper": self.upper,
            "by": self.by,
            "levels": {"top": self.top, "rules": self.rules.as_str()},
            "holds": self.holds,
            "why": self.why,
            "nodes": self.nodes,
            "cpu_s": (self.cpu_s * 1000.0).round() / 1000.0,
            "kalah": env!("CARGO_PKG_VERSION"),
            "fact_at": self.fact_at,
        })
    }

    /// Reads one line of a checks file; the error says what is wrong with it.
    pub fn from_line(line: &str) -> Result<Check, String> {
        if line.len() > MAX_LINE {
            return Err(format!(
                "a line of {} bytes (at most {MAX_LINE})",
                line.len()
            ));
        }
        let mut v: Value =
            serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
        if !v.is_object() {
            return Err("not a JSON object".into());
        }
        let mark = match v.as_object_mut().and_then(|o| o.remove("mac")) {
            None => None,
            Some(mac) => {
                let mac = mac
                    .as_str()
                    .and_then(key::unhex::<32>)
                    .ok_or("\"mac\" is not 64 hex digits")?;
                Some(Mark {
                    text: key::canonical(&v),
                    mac,
                })
            }
        };
        if v["check"].as_u64() != Some(CHECK_FORMAT) {
            return Err(format!("not a check (no \"check\":{CHECK_FORMAT})"));
        }
        let text = |k: &str| {
            v[k].as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("no \"{k}\" text"))
        };
        let int = |k: &str| {
            v[k].as_i64()
                .and_then(|x| i32::try_from(x).ok())
                .ok_or_else(|| format!("no \"{k}\" number"))
        };
        let digest = text("digest")?;
        if digest.len() != 32 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("\"digest\" is not 32 hex digits".into());
        }
        let rules: Rules = text("rules")?
            .parse()
            .map_err(|_| "unknown \"rules\"".to_owned())?;
        let position = text("position")?;
        let seeds = seeds_of(&position, rules)?;
        let (lower, upper) = (int("lower")?, int("upper")?);
        if lower.unsigned_abs() > crate::rules::MAX_SEEDS
            || upper.unsigned_abs() > crate::rules::MAX_SEEDS
            || lower > upper
        {
            return Err(format!(
                "\"lower\" {lower} and \"upper\" {upper} are not bounds of a value"
            ));
        }
        match v["levels"].get("rules") {
            None | Some(Value::Null) => {}
            Some(r) if r.as_str() == Some(rules.as_str()) => {}
            Some(_) => return Err(format!("\"levels\".\"rules\" is not {rules}")),
        }
        let top = match &v["levels"]["top"] {
            Value::Null => None,
            t => Some(
                t.as_u64()
                    .and_then(|t| u32::try_from(t).ok())
                    .filter(|&t| t <= crate::db::MAX_LEVEL)
                    .ok_or("\"levels\".\"top\" is not a level")?,
            ),
        };
        let by = text("by")?;
        if !["lower-levels", "no-db", "serial", "alphabeta"].contains(&by.as_str()) {
            return Err(format!("unknown path \"{by}\""));
        }
        // A check by the lower levels reads two below the position's seeds at most (so that
        // its position is searched, never looked up); the other paths read none.
        match top {
            Some(t) if by != "lower-levels" => {
                return Err(format!("a check by {by} read no levels, not 0..{t}"));
            }
            Some(t) if t + 2 > seeds => {
                return Err(format!(
                    "levels 0..{t} hold its position of {seeds} seeds: a lookup, not a check"
                ));
            }
            _ => {}
        }
        let holds = v["holds"].as_bool().ok_or("no \"holds\" true or false")?;
        // Any check searched its position at least (a count bounded as a fact's).
        let nodes = crate::prove::fact::nodes_of(&v["nodes"])
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("no \"nodes\" count from 1 to {MAX_NODES}"))?;
        let cpu_s = crate::prove::fact::cpu_s_of(&v["cpu_s"])
            .ok_or_else(|| format!("no \"cpu_s\" number of seconds from 0 to {MAX_CPU_S:e}"))?;
        Ok(Check {
            digest,
            position,
            rules,
            lower,
            upper,
            by,
            top,
            holds,
            why: v["why"].as_str().map(str::to_owned),
            nodes,
            cpu_s,
            fact_at: v["fact_at"].as_str().unwrap_or("").to_owned(),
            mark,
        })
    }

    /// Whether this check took another path than `fact` did ([`another_path`]).
    pub fn is_another_path<L: Lanes>(&self, fact: &Fact<L>) -> bool {
        another_path(&self.by, self.top, fact)
    }
}

/// The seeds on the board of the position `literal` under `rules`, if it is one.
fn seeds_of(literal: &str, rules: Rules) -> Result<u32, String> {
    let setup: crate::position::Setup =
        literal.parse().map_err(|e| format!("\"position\": {e}"))?;
    let position = Position::<crate::lanes::Wide>::from_setup(&setup, rules)
        .map_err(|e| format!("\"position\": {e}"))?;
    Ok(position.seeds_on_board())
}

/// The fewest nodes a check of `position` counts when its search starts from a table that
/// has not decided the position (the levels it reads hold fewer seeds, so the position is
/// searched): the position, and a position after one of its moves, unless every move ends
/// the game. A check with fewer is implausible: it counts for nothing ([`Checks::verdict`]).
pub fn least_check_nodes<L: Lanes>(position: &Position<L>) -> u64 {
    let searched_below = position
        .legal_moves()
        .into_iter()
        .any(|mv| !position.play_unchecked(mv).0.is_finished());
    if searched_below { 2 } else { 1 }
}

/// Whether a check by the path `by`, reading the levels `0..=top` (`None`: none), searches
/// `fact` another way than the campaign did: alpha-beta, other levels, or one thread where the
/// fact's search had more.
pub fn another_path<L: Lanes>(by: &str, top: Option<u32>, fact: &Fact<L>) -> bool {
    by == "alphabeta" || top != fact.top || (by == "serial" && fact.threads.is_some_and(|t| t > 1))
}

/// The checks of one or more files, by digest (a fact checked twice: a check that failed wins,
/// then one by another path). Only the checks this installation wrote count: those its key
/// marked ([`crate::prove::key`]), and those shipped with kalah ([`crate::prove::shipped`]);
/// any other is a claim.
#[derive(Default)]
pub struct Checks {
    files: Vec<PathBuf>,
    by_digest: HashMap<String, Vec<Check>>,
    lines: usize,
    /// The key that verifies marks, once known.
    key: Option<Key>,
    /// Whether `key` is settled: given, or this installation's read (at the first marked line).
    key_read: bool,
}

impl Checks {
    /// No checks. Marks are verified with this installation's key ([`Key::of_installation`]),
    /// read when the first marked check is read.
    pub fn new() -> Checks {
        Checks::default()
    }

    /// No checks; marks are verified with `key` (none: no mark verifies).
    pub fn with_key(key: Option<Key>) -> Checks {
        Checks {
            key,
            key_read: true,
            ..Checks::default()
        }
    }

    /// Reads `path` (a file that is not there holds no check yet), as ledgers are read
    /// ([`read_lines`]): a torn last line is left unread; any other line that is not a check is
    /// an error naming the file and the line.
    pub fn add_file(&mut self, path: &Path) -> Result<(), LedgerError> {
        let io = |error| LedgerError::Io {
            file: path.to_path_buf(),
            error,
        };
        let file = match crate::files::open_regular(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.files.push(path.to_path_buf());
                return Ok(());
            }
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().map_err(io)?.len();
        within(
            path,
            len,
            MAX_LEDGER_BYTES,
            &format!("the {} GiB a checks file may be", MAX_LEDGER_BYTES >> 30),
        )?;
        let mut marked = false;
        read_lines(BufReader::new(file), path, 0, |text, at| {
            if !text.trim().is_empty() {
                let check =
                    Check::from_line(text).map_err(|why| LedgerError::Garbled { at, why })?;
                if check.mark.is_some() && !marked {
                    marked = true;
                    self.read_key(path)?;
                }
                self.add(check);
            }
            Ok(())
        })?;
        self.files.push(path.to_path_buf());
        Ok(())
    }

    /// Reads the checks of `text`, named `name` (a checks file built into kalah): each line
    /// a check, blank lines skipped; any other line is an error naming it.
    pub fn add_text(&mut self, name: &Path, text: &str) -> Result<(), LedgerError> {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let check = Check::from_line(line).map_err(|why| LedgerError::Garbled {
                at: crate::prove::ledger::Origin {
                    file: name.to_path_buf(),
                    line: i + 1,
                },
                why,
            })?;
            self.add(check);
        }
        Ok(())
    }

    /// Reads this installation's key if it is not settled yet, for the marked checks of the
    /// file `checks`: an error if it is there but unsafe, or if it lies in the directory of
    /// `checks` ([`Key::check_apart_from`]).
    fn read_key(&mut self, checks: &Path) -> Result<(), LedgerError> {
        let error = |e: key::KeyError| LedgerError::Io {
            file: e.file.clone(),
            error: std::io::Error::other(e.message()),
        };
        if !self.key_read {
            self.key = Key::of_installation().map_err(error)?;
            self.key_read = true;
        }
        if let Some(key) = &self.key {
            key.check_apart_from(checks).map_err(error)?;
        }
        Ok(())
    }

    /// Whether this installation wrote `check`, a check of the fact whose line is
    /// `fact_line`: its mark verifies with this installation's key, or it is a shipped check
    /// of that very fact. Any other check is a claim.
    fn is_ours(&self, check: &Check, fact_line: &str) -> bool {
        match &check.mark {
            // A shipped check made on another installation is marked with that one's key: it
            // counts as shipped, field for field.
            Some(mark) => {
                self.key
                    .as_ref()
                    .is_some_and(|k| k.verifies(&mark.text, fact_line, &mark.mac))
                    || crate::prove::shipped::vouches(check, fact_line)
            }
            None => crate::prove::shipped::vouches(check, fact_line),
        }
    }

    /// Reads every file read so far again, from its start (checks are few beside facts).
    pub fn reread(&mut self) -> Result<(), LedgerError> {
        let files = std::mem::take(&mut self.files);
        self.by_digest.clear();
        self.lines = 0;
        for f in &files {
            self.add_file(f)?;
        }
        Ok(())
    }

    /// Adds one check.
    pub fn add(&mut self, check: Check) {
        self.lines += 1;
        self.by_digest
            .entry(check.digest.clone())
            .or_default()
            .push(check);
    }

    /// Checks read.
    pub fn len(&self) -> usize {
        self.lines
    }

    /// Whether none were read.
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// How many times its facts' own nodes the checks of `ledger`'s facts took, over all the
    /// facts checked (`None` before the first check of a fact that counted its nodes). A
    /// campaign proves a fact with a table that earlier tests filled, a check from a colder one
    /// and with fewer levels: on Kalah(8,3) the checks took about 11 times their facts' nodes,
    /// and one fact proven alone, from an empty table, about 50 times (see docs/proofs.md).
    pub fn cost_ratio<L: Lanes>(&self, ledger: &Ledger<L>) -> Option<f64> {
        let (mut facts, mut checks) = (0u64, 0u64);
        let mut seen = std::collections::HashSet::new();
        for (fact, _) in ledger.facts() {
            let first = match self.verdict(fact) {
                Verdict::Holds(c) | Verdict::Wrong(c) => Some(c),
                Verdict::Unchecked => None,
            };
            if let Some(c) = first.filter(|_| seen.insert(digest(fact))) {
                facts = facts.saturating_add(fact.nodes);
                checks = checks.saturating_add(c.nodes);
            }
        }
        (facts > 0).then(|| checks as f64 / facts as f64)
    }

    /// What this installation's checks say of `fact`: found wrong by one, else certified by
    /// one that took another path, else (checked by the same path only, by checks this
    /// installation did not write, or never) unchecked. Checks it did not write
    /// ([`Checks::claimed`]) count neither way.
    pub fn verdict<L: Lanes>(&self, fact: &Fact<L>) -> Verdict<'_> {
        let line = fact.to_line();
        let Some(checks) = self.by_digest.get(&digest_of_line(&line)) else {
            return Verdict::Unchecked;
        };
        let position = fact.position.to_string();
        // A check counts only if it says what its fact says (position, rules and bounds),
        // this installation wrote it, and its count of nodes is one a search of the position
        // takes (a shipped check, re-proven by the test suite, may have found its position in
        // a table an earlier check filled).
        let least = least_check_nodes(&fact.position);
        let ours = |c: &&Check| {
            c.position == position
                && c.rules == fact.position.rules()
                && (c.lower, c.upper) == (fact.lower, fact.upper)
                && self.is_ours(c, &line)
                && (c.nodes >= least || crate::prove::shipped::vouches(c, &line))
        };
        let ours: Vec<&Check> = checks.iter().filter(ours).collect();
        if let Some(c) = ours.iter().find(|c| !c.holds) {
            return Verdict::Wrong(c);
        }
        match ours.iter().find(|c| c.is_another_path(fact)) {
            Some(c) => Verdict::Holds(c),
            None => Verdict::Unchecked,
        }
    }

    /// Whether checks of `fact` were read that this installation did not write (made on
    /// another machine, before checks were marked, or forged): claims, to be proven again
    /// here (`kalah prove --certify` or `--check --all` does).
    pub fn claimed<L: Lanes>(&self, fact: &Fact<L>) -> bool {
        let line = fact.to_line();
        self.by_digest
            .get(&digest_of_line(&line))
            .is_some_and(|checks| checks.iter().any(|c| !self.is_ours(c, &line)))
    }
}

/// What the checks say of one fact.
#[derive(Clone, Copy, Debug)]
pub enum Verdict<'a> {
    /// Proven again by another path.
    Holds(&'a Check),
    /// Found wrong.
    Wrong(&'a Check),
    /// Not yet proven again by another path.
    Unchecked,
}

/// Which side of a bound.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Side {
    /// value >= t.
    Lower,
    /// value <= t.
    Upper,
}

impl Side {
    fn flip(self) -> Side {
        match self {
            Side::Lower => Side::Upper,
            Side::Upper => Side::Lower,
        }
    }
}

/// One bound of the root, or of one of its first moves, and the facts it rests on.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The first move, or none for the root.
    pub mv: Option<Move>,
    /// Which side ...
    pub side: Side,
    /// ... of which value (stores included, for the root's side to move).
    pub value: i32,
    /// The facts it rests on (indices into [`Ledger::facts`]), cheapest support first found.
    pub facts: Vec<usize>,
    /// Of those, the ones found wrong: the bound is falsified unless this is empty.
    pub wrong: Vec<usize>,
    /// Of those, the ones not yet certified.
    pub unchecked: Vec<usize>,
    /// The paths of the checks that certified the others, each once, in the order met.
    pub by: Vec<String>,
}

impl Claim {
    /// Certified: every fact it rests on proven again by another path (none found wrong).
    pub fn is_certified(&self) -> bool {
        self.wrong.is_empty() && self.unchecked.is_empty()
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let of = self
            .mv
            .map_or("value".to_owned(), |m| format!("move {}", m.house()));
        let rel = if self.side == Side::Lower { ">=" } else { "<=" };
        write!(f, "{of} {rel} {:+}", self.value)
    }
}

/// The bounds of a root (and of each first move) with the facts each rests on.
#[derive(Clone, Debug)]
pub struct Certificate {
    /// Each bound that rests on facts (not on the sowings and seeds alone): the root's first,
    /// then its moves', lower before upper.
    pub claims: Vec<Claim>,
}

/// The cost of a support that holds a fact found wrong: more than any other.
const WRONG: u64 = u64::MAX / 4;

#[derive(Clone, Copy, Debug)]
enum Choice {
    Free,
    Fact(usize),
    Edge(usize),
    AllEdges,
}

/// The search for the cheapest supports.
struct Support<'a, L: Lanes> {
    tree: &'a Tree<L>,
    ledger: &'a Ledger<L>,
    checks: &'a Checks,
    by_board: FastMap<(Rules, Board<L>), Vec<usize>>,
    memo: HashMap<(usize, Side, i32), Option<(u64, Choice)>>,
}

impl<L: Lanes> Support<'_, L> {
    fn fact_cost(&self, i: usize) -> u64 {
        let fact = &self.ledger.facts()[i].0;
        match self.checks.verdict(fact) {
            Verdict::Holds(_) => 0,
            Verdict::Wrong(_) => WRONG,
            Verdict::Unchecked => fact.nodes.saturating_add(1),
        }
    }

    /// The cheapest support of "f(node) >= t" (Lower) or "f(node) <= t" (Upper), if any.
    fn node(&mut self, node: usize, side: Side, t: i32) -> Option<u64> {
        if let Some(&m) = self.memo.get(&(node, side, t)) {
            return m.map(|(c, _)| c);
        }
        let n = &self.tree.nodes()[node];
        let board = n.board();
        let rules = n.position.rules();
        let widest = Bounds::widest(board.seeds(), rules);
        let free = match side {
            Side::Lower => t <= widest.lower,
            Side::Upper => t >= widest.upper,
        };
        let mut best: Option<(u64, Choice)> = free.then_some((0, Choice::Free));
        if best.is_none() {
            if let Some(facts) = self.by_board.get(&(rules, board)) {
                for &i in facts {
                    let f = self.ledger.facts()[i].0.f_bounds();
                    let ok = match side {
                        Side::Lower => f.lower >= t,
                        Side::Upper => f.upper <= t,
                    };
                    let c = self.fact_cost(i);
                    if ok && best.is_none_or(|(b, _)| c < b) {
                        best = Some((c, Choice::Fact(i)));
                    }
                }
            }
            if n.is_split() {
                let moves = n.moves.len();
                match side {
                    Side::Lower => {
                        for k in 0..moves {
                            if let Some(c) = self.edge(node, k, side, t)
                                && best.is_none_or(|(b, _)| c < b)
                            {
                                best = Some((c, Choice::Edge(k)));
                            }
                        }
                    }
                    Side::Upper => {
                        let mut sum = Some(0u64);
                        for k in 0..moves {
                            sum = match (sum, self.edge(node, k, side, t)) {
                                (Some(s), Some(c)) => Some(s.saturating_add(c)),
                                _ => None,
                            };
                            if sum.is_none() {
                                break;
                            }
                        }
                        if let Some(c) = sum
                            && best.is_none_or(|(b, _)| c < b)
                        {
                            best = Some((c, Choice::AllEdges));
                        }
                    }
                }
            }
        }
        self.memo.insert((node, side, t), best);
        best.map(|(c, _)| c)
    }

    /// The cheapest support of "the move's bound >= t" (Lower) or "<= t" (Upper), for the mover
    /// of `node` (stores excluded).
    fn edge(&mut self, node: usize, k: usize, side: Side, t: i32) -> Option<u64> {
        let e = self.tree.nodes()[node].moves[k];
        match (e.kind, e.child) {
            (EdgeKind::ExtraTurn, Some(c)) => self.node(c, side, t - e.gain),
            (EdgeKind::Pass, Some(c)) => self.node(c, side.flip(), e.gain - t),
            _ => match side {
                Side::Lower => (e.gain >= t).then_some(0),
                Side::Upper => (e.gain <= t).then_some(0),
            },
        }
    }

    /// The facts of the support chosen for (node, side, t), added to `out`.
    fn collect(&self, node: usize, side: Side, t: i32, out: &mut Vec<usize>) {
        let Some(Some((_, choice))) = self.memo.get(&(node, side, t)) else {
            return;
        };
        match *choice {
            Choice::Free => {}
            Choice::Fact(i) => out.push(i),
            Choice::Edge(k) => self.collect_edge(node, k, side, t, out),
            Choice::AllEdges => {
                for k in 0..self.tree.nodes()[node].moves.len() {
                    self.collect_edge(node, k, side, t, out);
                }
            }
        }
    }

    fn collect_edge(&self, node: usize, k: usize, side: Side, t: i32, out: &mut Vec<usize>) {
        let e = self.tree.nodes()[node].moves[k];
        match (e.kind, e.child) {
            (EdgeKind::ExtraTurn, Some(c)) => self.collect(c, side, t - e.gain, out),
            (EdgeKind::Pass, Some(c)) => self.collect(c, side.flip(), e.gain - t, out),
            _ => {}
        }
    }
}

impl Certificate {
    /// The certificate of `root`'s bounds by `ledger`, as far as `checks` has checked it: the
    /// root's bounds and each first move's, each with the cheapest set of facts it rests on.
    pub fn of<L: Lanes>(
        root: Position<L>,
        ledger: &Ledger<L>,
        checks: &Checks,
    ) -> Result<Self, ProveError> {
        crate::prove::check_root(&root)?;
        let tree = Tree::grow(root, ledger, MAX_TREE)?;
        Ok(Certificate::of_tree(&tree, ledger, checks))
    }

    /// [`Certificate::of`] the root of `tree`, grown from `ledger` (and bounded by it as it
    /// is now): for a caller that grew the tree already (the answer to a position, which reads
    /// its bounds from the same tree).
    pub fn of_tree<L: Lanes>(tree: &Tree<L>, ledger: &Ledger<L>, checks: &Checks) -> Self {
        let mut by_board: FastMap<(Rules, Board<L>), Vec<usize>> = FastMap::default();
        for (i, (fact, _)) in ledger.facts().iter().enumerate() {
            if fact.is_informative() {
                by_board
                    .entry((fact.position.rules(), fact.board()))
                    .or_default()
                    .push(i);
            }
        }
        let mut s = Support {
            tree,
            ledger,
            checks,
            by_board,
            memo: HashMap::new(),
        };
        let root = &tree.root().position;
        let stores = root.store_difference();
        let widest = Bounds::widest(root.board().seeds(), root.rules());
        let mut claims = Vec::new();
        // (move index or none, side, bound on f)
        let mut wanted: Vec<(Option<usize>, Side, i32)> = Vec::new();
        let b = tree.root().bounds;
        if b.lower > widest.lower {
            wanted.push((None, Side::Lower, b.lower));
        }
        if b.upper < widest.upper {
            wanted.push((None, Side::Upper, b.upper));
        }
        for (k, e) in tree.root().moves.iter().enumerate() {
            let Some(c) = e.child else {
                continue; // a game-ending move: its value is its gain, nothing to prove
            };
            // The move's bounds when its child's are the widest its seeds allow.
            let child = &tree.nodes()[c];
            let w = Bounds::widest(child.board().seeds(), child.position.rules());
            let (lo, hi) = match e.kind {
                EdgeKind::ExtraTurn => (e.gain + w.lower, e.gain + w.upper),
                _ => (e.gain - w.upper, e.gain - w.lower),
            };
            let eb = tree.edge_bounds(e);
            if eb.lower > lo {
                wanted.push((Some(k), Side::Lower, eb.lower));
            }
            if eb.upper < hi {
                wanted.push((Some(k), Side::Upper, eb.upper));
            }
        }
        for (k, side, t) in wanted {
            let found = match k {
                None => s.node(0, side, t),
                Some(k) => s.edge(0, k, side, t),
            };
            let mut facts = Vec::new();
            if found.is_some() {
                match k {
                    None => s.collect(0, side, t, &mut facts),
                    Some(k) => s.collect_edge(0, k, side, t, &mut facts),
                }
            }
            facts.sort_unstable();
            facts.dedup();
            if found.is_some() && facts.is_empty() {
                // The sowings alone prove it (a move's gain, the seeds left): nothing to check.
                continue;
            }
            let (mut wrong, mut unchecked, mut by) = (Vec::new(), Vec::new(), Vec::<String>::new());
            for &i in &facts {
                match checks.verdict(&ledger.facts()[i].0) {
                    Verdict::Wrong(_) => wrong.push(i),
                    Verdict::Unchecked => unchecked.push(i),
                    Verdict::Holds(c) => {
                        if !by.contains(&c.by) {
                            by.push(c.by.clone());
                        }
                    }
                }
            }
            claims.push(Claim {
                mv: k.map(|k| tree.root().moves[k].mv),
                side,
                value: t + stores,
                facts,
                wrong,
                unchecked,
                by,
            });
        }
        Certificate { claims }
    }

    /// The facts not yet certified that the claims rest on (those of `side` only, if given:
    /// the lower bounds, or the upper ones), each once, cheapest first.
    pub fn to_check<L: Lanes>(&self, ledger: &Ledger<L>, side: Option<Side>) -> Vec<usize> {
        let mut all = self.union(|c| {
            if side.is_none_or(|s| s == c.side) {
                &c.unchecked
            } else {
                &[]
            }
        });
        all.sort_by_key(|&i| (ledger.facts()[i].0.nodes, i));
        all
    }

    /// The facts found wrong that some claim rests on, each once.
    pub fn wrong(&self) -> Vec<usize> {
        self.union(|c| &c.wrong)
    }

    /// The facts of `part` of every claim, each once, in ledger order.
    fn union(&self, part: impl Fn(&Claim) -> &[usize]) -> Vec<usize> {
        let mut all: Vec<usize> = self
            .claims
            .iter()
            .flat_map(|c| part(c).iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// The checks file that goes with ledger `path` by default: `X.jsonl` -> `X.checks.jsonl`.
pub fn checks_path(ledger: &Path) -> PathBuf {
    let name = ledger
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    ledger.with_file_name(format!("{stem}.checks.jsonl"))
}
