//! Rule variants, sides and the limits of what the crate represents.

use std::fmt;
use std::str::FromStr;

/// Fewest houses a side.
pub const MIN_HOUSES: usize = 1;
/// Most houses a side (KGP tournament boards go up to 12).
pub const MAX_HOUSES: usize = 12;
/// Most seeds in a game, stores included (16-bit lanes of [`crate::Wide`]).
pub const MAX_SEEDS: u32 = 0xFFFF;

/// The two players. South moves first; its houses are the bottom row of a drawing.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Side {
    /// First player.
    South,
    /// Second player.
    North,
}

impl Side {
    /// The other side.
    #[inline]
    pub fn other(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }

    /// 0 for South, 1 for North.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// `"south"` or `"north"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::South => "south",
            Side::North => "north",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::South => "South",
            Side::North => "North",
        })
    }
}

/// Error for a side name that is neither South nor North.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseSideError(pub String);

impl fmt::Display for ParseSideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown side {} (expected south, north, s or n)",
            crate::text::quote(&self.0)
        )
    }
}

impl std::error::Error for ParseSideError {}

impl FromStr for Side {
    type Err = ParseSideError;

    /// `south`, `north`, `s`, `n`, in any case.
    fn from_str(s: &str) -> Result<Side, ParseSideError> {
        match s.to_ascii_lowercase().as_str() {
            "south" | "s" => Ok(Side::South),
            "north" | "n" => Ok(Side::North),
            _ => Err(ParseSideError(s.to_owned())),
        }
    }
}

/// The capture rule (see `RULES.md`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub enum Rules {
    /// A last seed in an own empty house captures only if the opposite house is non-empty.
    #[default]
    Standard,
    /// A last seed in an own empty house always goes to the store, with the opposite house.
    EmptyCapture,
}

impl Rules {
    /// Every rule set, in the order the CLI lists them.
    pub const ALL: [Rules; 2] = [Rules::Standard, Rules::EmptyCapture];

    /// The option that names the rule set in a kalah command: nothing for the default
    /// standard rules, ` --rules empty-capture` otherwise (for the commands messages suggest).
    pub fn option(self) -> &'static str {
        match self {
            Rules::Standard => "",
            Rules::EmptyCapture => " --rules empty-capture",
        }
    }

    /// The byte that stands for the rule set in the files (database levels, table files).
    pub fn code(self) -> u8 {
        match self {
            Rules::Standard => 0,
            Rules::EmptyCapture => 1,
        }
    }

    /// The rule set of a file's byte ([`Rules::code`]); `None` for an unknown one.
    pub fn from_code(code: u8) -> Option<Rules> {
        Rules::ALL.into_iter().find(|r| r.code() == code)
    }

    /// The name used on the command line and in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Rules::Standard => "standard",
            Rules::EmptyCapture => "empty-capture",
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for an unknown rule-set name.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseRulesError(pub String);

impl fmt::Display for ParseRulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown rules {} (expected standard or empty-capture)",
            crate::text::quote(&self.0)
        )
    }
}

impl std::error::Error for ParseRulesError {}

impl FromStr for Rules {
    type Err = ParseRulesError;

    fn from_str(s: &str) -> Result<Rules, ParseRulesError> {
        Rules::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseRulesError(s.to_owned()))
    }
}

/// Kalah(m, n) under a capture rule: `m` houses a side, `n` seeds in each at the start.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Variant {
    houses: usize,
    seeds: u32,
    rules: Rules,
}

/// Why a [`Variant`] cannot be represented.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum VariantError {
    /// `m` is outside `MIN_HOUSES..=MAX_HOUSES`.
    HousesOutOfRange(usize),
    /// No seeds at all: the game would be over before it starts.
    NoSeeds,
    /// `2·m·n` exceeds [`MAX_SEEDS`].
    TooManySeeds {
        /// Houses a side.
        houses: usize,
        /// Seeds a house.
        seeds: u64,
    },
}

impl fmt::Display for VariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariantError::HousesOutOfRange(m) => write!(
                f,
                "{m} houses a side is out of range (supported: {MIN_HOUSES} to {MAX_HOUSES})"
            ),
            VariantError::NoSeeds => write!(f, "0 seeds a house leaves nothing to play"),
            VariantError::TooManySeeds { houses, seeds } => write!(
                f,
                "Kalah({houses},{seeds}) has {} seeds, more than the supported {MAX_SEEDS}",
                // In 128 bits: a huge count must not wrap round to a small one.
                2 * (*houses as u128) * u128::from(*seeds)
            ),
        }
    }
}

impl std::error::Error for VariantError {}

impl Variant {
    /// Kalah(`houses`, `seeds`) under `rules`, or why it is out of the supported range.
    pub fn new(houses: usize, seeds: u64, rules: Rules) -> Result<Variant, VariantError> {
        if !(MIN_HOUSES..=MAX_HOUSES).contains(&houses) {
            return Err(VariantError::HousesOutOfRange(houses));
        }
        if seeds == 0 {
            return Err(VariantError::NoSeeds);
        }
        // Checked: a huge seed count must not wrap round to a small one.
        let total = (2 * houses as u64).checked_mul(seeds);
        if total.is_none_or(|total| total > u64::from(MAX_SEEDS)) {
            return Err(VariantError::TooManySeeds { houses, seeds });
        }
        Ok(Variant {
            houses,
            seeds: seeds as u32,
            rules,
        })
    }

    /// Houses a side (m).
    pub fn houses(self) -> usize {
        self.houses
    }

    /// Seeds a house at the start (n).
    pub fn seeds(self) -> u32 {
        self.seeds
    }

    /// The capture rule.
    pub fn rules(self) -> Rules {
        self.rules
    }

    /// Seeds in the whole game.
    pub fn total_seeds(self) -> u32 {
        2 * self.houses as u32 * self.seeds
    }
}

impl fmt::Display for Variant {
    /// `Kalah(6,4) standard`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kalah({},{}) {}", self.houses, self.seeds, self.rules)
    }
}
