//! The database home: the directory where databases live when no directory is named.
//!
//! ```text
//! $KALAH_DB                    if set (and not empty)
//! else $XDG_DATA_HOME/kalah    if XDG_DATA_HOME is an absolute path
//! else $HOME/.local/share/kalah
//! ```
//!
//! This follows the XDG base directory convention for user data: a relative `XDG_DATA_HOME`
//! is ignored, as that convention asks. One directory holds the levels of every variant (the
//! file names say houses, rules and level), so `kalah db build` can add to it and every reader
//! picks the levels of its own variant.

use std::ffi::OsString;
use std::path::PathBuf;

/// The environment variable that names the database home directly.
pub const HOME_VAR: &str = "KALAH_DB";

/// The database home from the process environment, or `None` when neither `KALAH_DB`,
/// `XDG_DATA_HOME` nor `HOME` says where it is.
pub fn home() -> Option<PathBuf> {
    home_from(|name| std::env::var_os(name))
}

/// The database home from the environment that `var` reads (see the module docs).
pub fn home_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    set(HOME_VAR).or_else(|| xdg_from(&var, "XDG_DATA_HOME", "share"))
}

/// The state directory of kalah (its logs) by the same convention: `$XDG_STATE_HOME/kalah`
/// if that is an absolute path, else `$HOME/.local/state/kalah`; `None` without either.
pub fn state_dir() -> Option<PathBuf> {
    xdg_from(
        &|name: &str| std::env::var_os(name),
        "XDG_STATE_HOME",
        "state",
    )
}

/// The XDG data home itself from the environment `var` reads: `$XDG_DATA_HOME` if that is an
/// absolute path, else `$HOME/.local/share`. The database home's parent when `KALAH_DB` is not
/// set; this installation's key lives there ([`crate::prove::key`]).
pub fn data_home_from(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    xdg_base(var, "XDG_DATA_HOME", "share")
}

/// kalah's directory of one XDG kind from the environment `var` reads: `$XDG_VAR/kalah` if
/// that is an absolute path, else `$HOME/.local/KIND/kalah` (a relative or empty value is
/// ignored, as the convention asks).
fn xdg_from(var: &dyn Fn(&str) -> Option<OsString>, xdg_var: &str, kind: &str) -> Option<PathBuf> {
    xdg_base(var, xdg_var, kind).map(|base| base.join("kalah"))
}

/// The base directory of one XDG kind: `$XDG_VAR` if that is an absolute path, else
/// `$HOME/.local/KIND`.
fn xdg_base(var: &dyn Fn(&str) -> Option<OsString>, xdg_var: &str, kind: &str) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(base) = set(xdg_var).filter(|p| p.is_absolute()) {
        return Some(base);
    }
    set("HOME").map(|home| home.join(".local").join(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn kalah_db_comes_first() {
        let e = env(&[("KALAH_DB", "dbs"), ("XDG_DATA_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(home_from(e), Some(PathBuf::from("dbs")));
    }

    #[test]
    fn then_xdg_data_home_if_absolute() {
        let e = env(&[("KALAH_DB", ""), ("XDG_DATA_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(home_from(e), Some(PathBuf::from("/x/kalah")));
        let relative = env(&[("XDG_DATA_HOME", "x"), ("HOME", "/h")]);
        assert_eq!(
            home_from(relative),
            Some(PathBuf::from("/h/.local/share/kalah"))
        );
    }

    #[test]
    fn then_home_else_none() {
        assert_eq!(
            home_from(env(&[("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/share/kalah"))
        );
        assert_eq!(home_from(env(&[])), None);
    }
}
