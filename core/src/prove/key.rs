//! This installation's key: the secret that marks the checks it writes, so that a check read
//! back counts only if this installation wrote it.
//!
//! A check ([`crate::prove::certificate`]) names the fact it proved again by a digest anyone
//! can compute: with nothing more, whoever can write a checks file (a ledger handed over, a
//! shared database directory) can write a check of any fact, true or not. So every check this
//! installation writes carries a **mark**, `"mac"`: HMAC-SHA256, under a key only this
//! installation reads, of the check's line (less its mark) and of the line of the fact it
//! checked:
//!
//! ```text
//!   mac = HMAC-SHA256(key, "kalah check mark 1\n" || check text || "\n" || fact line)
//!   check text: the check's JSON object without "mac", keys sorted, no spaces
//!   fact line:  the fact as Fact::to_line writes it (what the digest is taken of)
//! ```
//!
//! HMAC-SHA256 is a MAC: without the key, no one can make a mark that verifies, even having
//! seen any number of marked checks (checks files are published beside the ledgers). It binds
//! the check to the whole text of its fact, so a fact made to have the digest of another
//! (XXH3 is no cryptographic hash) finds no check. Checks without a valid mark (written before
//! marks, on another machine, or forged) are claims: never a certification.
//!
//! **Where the key lives** ([`key_path`]):
//!
//! ```text
//! $KALAH_KEY                          if set (and not empty): the key file itself
//! else $XDG_DATA_HOME/kalah.key       if XDG_DATA_HOME is an absolute path
//! else $HOME/.local/share/kalah.key
//! ```
//!
//! beside the database home (`.../kalah`, [`crate::db::home`]), never in it: whoever can write
//! the directory a checks file is read from must not be able to put a key of their own there.
//! It is made once, by the first command that writes a check: 32 random bytes (from
//! `/dev/urandom`) as 64 hex digits and a newline, mode 0600. It is read only if it is a
//! regular file (not a symbolic link) of the user running kalah that no one else may read or
//! write; anything else is an error naming it, never a key. Machines that should trust each
//! other's checks share the same key file (copy it, mode 0600).

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use hmac::{KeyInit, Mac};

/// The environment variable that names the key file directly.
pub const KEY_VAR: &str = "KALAH_KEY";

/// The key file's name in the data home.
pub const KEY_FILE: &str = "kalah.key";

/// The key's length in bytes.
const KEY_BYTES: usize = 32;

/// What a mark is taken over starts with this, so that no other use of the key could ever
/// make a valid mark.
const DOMAIN: &[u8] = b"kalah check mark 1\n";

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The key file from the process environment (see the module docs), or `None` when neither
/// `KALAH_KEY`, `XDG_DATA_HOME` nor `HOME` says where it is.
pub fn key_path() -> Option<PathBuf> {
    key_path_from(|name| std::env::var_os(name))
}

/// The key file from the environment that `var` reads (see the module docs).
pub fn key_path_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(path) = var(KEY_VAR).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    crate::db::home::data_home_from(&var).map(|dir| dir.join(KEY_FILE))
}

/// Why this installation's key cannot be read or made.
#[derive(Debug)]
pub struct KeyError {
    /// The key file.
    pub file: PathBuf,
    /// What is wrong, for people.
    pub why: String,
}

impl KeyError {
    /// What is wrong, without the file's name.
    pub fn message(&self) -> String {
        format!(
            "this installation's key for marking checks {} (the key is a file of 64 hex \
             digits, mode 0600, of the user running kalah; remove it to make a new one, and \
             the checks marked with the old one become claims to prove again; {KEY_VAR} names \
             another)",
            self.why
        )
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message())
    }
}

impl std::error::Error for KeyError {}

/// A secret key of this installation (see the module docs).
#[derive(Clone)]
pub struct Key {
    bytes: [u8; KEY_BYTES],
    /// Where it was read, if from a file.
    path: Option<PathBuf>,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the bytes.
        f.debug_struct("Key").field("path", &self.path).finish()
    }
}

impl Key {
    /// A key of the given bytes, held in memory only (tests, and programs that keep their key
    /// elsewhere).
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> Key {
        Key { bytes, path: None }
    }

    /// The file it was read from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// This installation's key ([`key_path`]), if it has one yet: `None` when the file is not
    /// there (or nothing says where it is), an error when it is there but not a safe key.
    pub fn of_installation() -> Result<Option<Key>, KeyError> {
        match key_path() {
            Some(path) => Key::read(&path),
            None => Ok(None),
        }
    }

    /// This installation's key, made now if it has none yet (see the module docs).
    pub fn of_installation_or_make() -> Result<Key, KeyError> {
        let path = key_path().ok_or_else(|| KeyError {
            file: PathBuf::from(KEY_FILE),
            why: format!("has no place: set {KEY_VAR}, XDG_DATA_HOME (an absolute path) or HOME"),
        })?;
        Key::read_or_make(&path)
    }

    /// The key of the file `path`, made there now if it is not there.
    pub fn read_or_make(path: &Path) -> Result<Key, KeyError> {
        if let Some(key) = Key::read(path)? {
            return Ok(key);
        }
        let error = |why: String| KeyError {
            file: path.to_path_buf(),
            why,
        };
        let mut bytes = [0u8; KEY_BYTES];
        random_bytes(&mut bytes).map_err(|e| error(format!("cannot be made: {e}")))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| error(format!("cannot be made: {}: {e}", dir.display())))?;
        }
        // Written whole to a file of its own, then linked into place: another process making
        // the key at the same moment either finds it whole or makes the one that stays.
        let tmp = crate::files::temporary(path);
        let written = write_private(&tmp, format!("{}\n", hex(&bytes)).as_bytes())
            .and_then(|()| std::fs::hard_link(&tmp, path));
        let _ = std::fs::remove_file(&tmp);
        match written {
            Ok(()) => {
                let _ = crate::files::sync_parent(path);
                Ok(Key {
                    bytes,
                    path: Some(path.to_path_buf()),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Key::read(path)?
                .ok_or_else(|| error("was made and removed at once by another process".into())),
            Err(e) => Err(error(format!("cannot be made: {e}"))),
        }
    }

    /// The key of the file `path`, if it is there (see the module docs for what is refused).
    pub fn read(path: &Path) -> Result<Option<Key>, KeyError> {
        let error = |why: &str| KeyError {
            file: path.to_path_buf(),
            why: why.to_owned(),
        };
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(error(&format!("cannot be read: {e}"))),
        };
        if meta.file_type().is_symlink() {
            return Err(error("is a symbolic link: not followed"));
        }
        if !meta.file_type().is_file() {
            return Err(error("is not a regular file"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if crate::memory::user_id().is_some_and(|me| me != meta.uid()) {
                return Err(error(&format!(
                    "belongs to another user (uid {}): not this user's key",
                    meta.uid()
                )));
            }
            if meta.mode() & 0o077 != 0 {
                return Err(error(&format!(
                    "may be read or written by others (mode {:o}): not a secret (chmod 600 it if \
                     no one else has read it)",
                    meta.mode() & 0o777
                )));
            }
        }
        let mut text = String::new();
        crate::files::open_regular(path)
            .and_then(|f| f.take(2 * KEY_BYTES as u64 + 2).read_to_string(&mut text))
            .map_err(|e| error(&format!("cannot be read: {e}")))?;
        let digits = text.strip_suffix('\n').unwrap_or(&text);
        let bytes = unhex::<KEY_BYTES>(digits)
            .ok_or_else(|| error("is not 64 hex digits and a newline (damaged?)"))?;
        Ok(Some(Key {
            bytes,
            path: Some(path.to_path_buf()),
        }))
    }

    /// An error if this key's file lies in the directory of the checks file `checks`:
    /// whoever may write checks there could put a key of their own in its place, and the
    /// checks they forge would then verify.
    pub fn check_apart_from(&self, checks: &Path) -> Result<(), KeyError> {
        let dir_of = |p: &Path| {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            dir.unwrap_or(Path::new(".")).canonicalize().ok()
        };
        match &self.path {
            Some(file) if dir_of(file).is_some_and(|d| Some(d) == dir_of(checks)) => {
                Err(KeyError {
                    file: file.clone(),
                    why: format!(
                        "lies in the directory of the checks file {}: whoever may write checks \
                         there could write a key there too (keep the key apart: {KEY_VAR}, or \
                         the checks in another directory)",
                        checks.display()
                    ),
                })
            }
            _ => Ok(()),
        }
    }

    /// The mark of a check whose text (its JSON object without the mark, [`canonical`]) is
    /// `check`, made of the fact whose line is `fact`.
    pub fn mark(&self, check: &str, fact: &str) -> [u8; 32] {
        self.mac(check, fact).finalize().into_bytes().into()
    }

    /// Whether `mark` is this key's mark of `check` and `fact` ([`Key::mark`]), compared in
    /// constant time.
    pub fn verifies(&self, check: &str, fact: &str, mark: &[u8; 32]) -> bool {
        self.mac(check, fact).verify_slice(mark).is_ok()
    }

    fn mac(&self, check: &str, fact: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        mac.update(DOMAIN);
        mac.update(check.as_bytes());
        mac.update(b"\n");
        mac.update(fact.as_bytes());
        mac
    }
}

/// Makes `path` (it must not be there) readable and writable by its owner only, writes
/// `bytes` and syncs them.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Fills `bytes` from the operating system's source of random bytes.
fn random_bytes(bytes: &mut [u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open("/dev/urandom")?.read_exact(bytes)
    }
    #[cfg(not(unix))]
    {
        let _ = bytes;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "no source of random bytes on this system",
        ))
    }
}

/// `bytes` as lowercase hex digits.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` bytes from exactly `2 * N` hex digits, if they are.
pub fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The text a mark is taken over: `value` as JSON with every object's keys sorted and no
/// spaces, whatever order the line had them in.
pub fn canonical(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn the_key_lives_beside_the_database_home_never_in_it() {
        let e = env(&[("KALAH_DB", "/db"), ("XDG_DATA_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(key_path_from(e), Some(PathBuf::from("/x/kalah.key")));
        let e = env(&[("HOME", "/h")]);
        assert_eq!(
            key_path_from(e),
            Some(PathBuf::from("/h/.local/share/kalah.key"))
        );
        let e = env(&[("KALAH_KEY", "/k/key"), ("HOME", "/h")]);
        assert_eq!(key_path_from(e), Some(PathBuf::from("/k/key")));
        assert_eq!(key_path_from(env(&[])), None);
    }

    #[test]
    fn a_mark_verifies_only_with_its_key_check_and_fact() {
        let key = Key::from_bytes([7; 32]);
        let other = Key::from_bytes([8; 32]);
        let mark = key.mark("{\"check\":1}", "{\"fact\":1}");
        assert!(key.verifies("{\"check\":1}", "{\"fact\":1}", &mark));
        assert!(!other.verifies("{\"check\":1}", "{\"fact\":1}", &mark));
        assert!(!key.verifies("{\"check\":2}", "{\"fact\":1}", &mark));
        assert!(!key.verifies("{\"check\":1}", "{\"fact\":2}", &mark));
        // The check and the fact are kept apart: moving text from one to the other changes it.
        assert!(!key.verifies("{\"check\":1}\n", "\"fact\":1}", &mark));
    }

    #[test]
    fn canonical_text_sorts_keys_at_every_depth() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"b":1,"a":{"z":null,"y":[1,{"d":2,"c":3}]},"c":"x"}"#)
                .unwrap();
        assert_eq!(
            canonical(&v),
            r#"{"a":{"y":[1,{"c":3,"d":2}],"z":null},"b":1,"c":"x"}"#
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_key_is_made_once_private_and_refused_when_others_may_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("kalah-key-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub").join("kalah.key");
        assert!(Key::read(&path).unwrap().is_none());
        let made = Key::read_or_make(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = Key::read_or_make(&path).unwrap();
        assert_eq!(made.bytes, again.bytes, "made once");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Key::read(&path).unwrap_err();
        assert!(e.to_string().contains("read or written by others"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, "not a key\n").unwrap();
        assert!(Key::read(&path).is_err());
        let link = dir.join("link.key");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(
            Key::read(&link)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
