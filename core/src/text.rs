//! Text from outside the program: lines read with a bound on their length, and input shown
//! back in an error message safely.
//!
//! Every reader of lines (positions on stdin, game records, learner files, a human's moves,
//! the game protocols) goes through [`read_line`], which never holds more than its bound in
//! memory however long the line is (a stream of zeros is one line, read in bounded pieces and
//! reported as too long), and reports a line that is not UTF-8 as such, so that the reader can
//! report that one line and go on. A reader that stops at the first bad line (a protocol whose
//! peer never sends one) uses [`read_line_cut`], which gives up on a long line at once. Every
//! error message that repeats what the user typed goes through [`quote`]: control characters
//! escaped (a terminal never sees a raw escape sequence), at most [`QUOTE_CHARS`] characters
//! shown; [`escape`] does the same without the quotes, where the context delimits the text.

use std::fmt::Write as _;
use std::io::{self, BufRead};

/// The longest line the line readers of this crate take by default (bytes, line break
/// excluded): far above any position, move or record line, far below what hurts.
pub const MAX_LINE: usize = 16 * 1024;

/// The most bytes [`read_line`] reads of one over-long line, looking for its end: past it the
/// input is taken for something other than lines of text (`/dev/zero` has no line break), and
/// the reader stops with an [`io::ErrorKind::InvalidData`] error instead of reading for ever.
pub const MAX_SKIP: u64 = 64 << 20;

/// Characters an error message shows of an input at most, escapes included (the rest is cut,
/// and says so).
pub const QUOTE_CHARS: usize = 80;

/// One line read by [`read_line`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Line {
    /// The line, its line break (`\n` or `\r\n`) removed.
    Text(String),
    /// The line was longer than the bound: its length in bytes (nothing of it was kept).
    TooLong(u64),
    /// The line is not UTF-8: its bytes (at most the bound).
    NotUtf8(Vec<u8>),
}

impl Line {
    /// The line as text, or why it is not one (a message for the user, input quoted).
    pub fn into_text(self, max: usize) -> Result<String, String> {
        match self {
            Line::Text(text) => Ok(text),
            Line::TooLong(n) => Err(format!("line too long ({n} bytes, at most {max})")),
            Line::NotUtf8(bytes) => Err(format!(
                "not UTF-8 text: {}",
                quote(&String::from_utf8_lossy(&bytes))
            )),
        }
    }
}

/// Reads one line of at most `max` bytes (line break excluded) from `reader`; `None` at the
/// end of the stream (a last line without a line break still counts). A longer line is read
/// to its end, in pieces, and reported as [`Line::TooLong`]; memory stays within `max`. A line
/// with no end within [`MAX_SKIP`] bytes is an [`io::ErrorKind::InvalidData`] error: the
/// input is not lines of text, and reading it to its end could take for ever.
pub fn read_line(reader: &mut impl BufRead, max: usize) -> io::Result<Option<Line>> {
    read(reader, max, true)
}

/// Reads one line as [`read_line`] does, except that a line longer than `max` is given up as
/// soon as that is known: [`Line::TooLong`] then holds the bytes read so far (more than `max`,
/// not the line's length) and the rest of the line is left unread. For a reader that stops at
/// the first bad line: an endless line (`/dev/zero`) ends it at once instead of being read
/// for ever.
pub fn read_line_cut(reader: &mut impl BufRead, max: usize) -> io::Result<Option<Line>> {
    read(reader, max, false)
}

/// [`read_line`] (`whole`: an over-long line is read to its end) or [`read_line_cut`].
fn read(reader: &mut impl BufRead, max: usize, whole: bool) -> io::Result<Option<Line>> {
    // One byte more than the bound, for a `\r` before the `\n`.
    let keep = (max as u64).saturating_add(1);
    let mut line = Vec::new();
    let mut length = 0u64;
    let mut any = false;
    let mut last = 0u8;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(any.then(|| finish(line, length, last, max)));
        }
        any = true;
        let (mut chunk, mut used, mut done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if !whole && length.saturating_add(chunk.len() as u64) > keep {
            // Past the bound (and its `\r`): take one byte more than that and stop.
            let take = (keep + 1 - length) as usize;
            (chunk, used, done) = (&chunk[..take], take, true);
        }
        length = length.saturating_add(chunk.len() as u64);
        if whole && !done && length > MAX_SKIP.max(keep) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "no line break in the first {} MiB of a line: not lines of text",
                    MAX_SKIP >> 20
                ),
            ));
        }
        if let Some(&b) = chunk.last() {
            last = b;
        }
        if length <= keep {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if done {
            return Ok(Some(finish(line, length, last, max)));
        }
    }
}

/// The line read: `length` bytes up to the line break, the last of them `last`, the first
/// `max + 1` of them in `line`.
fn finish(mut line: Vec<u8>, mut length: u64, last: u8, max: usize) -> Line {
    if length > 0 && last == b'\r' {
        line.truncate((length - 1).min(line.len() as u64) as usize);
        length -= 1;
    }
    if length > max as u64 {
        return Line::TooLong(length);
    }
    match String::from_utf8(line) {
        Ok(text) => Line::Text(text),
        Err(e) => Line::NotUtf8(e.into_bytes()),
    }
}

/// `input` as an error message may show it: in single quotes, control characters and quotes
/// escaped as Rust escapes them (`\u{1b}`, `\n`, `\'`), cut after [`QUOTE_CHARS`] characters
/// shown (an escape counts as the characters it takes) with the number of characters of
/// `input` left out.
pub fn quote(input: &str) -> String {
    shown(input, true, QUOTE_CHARS)
}

/// `input` as [`quote`] shows it, without the quotes (and with `'` as it is): for text whose
/// place in the message already delimits it (the rest of a line, a version number).
pub fn escape(input: &str) -> String {
    shown(input, false, QUOTE_CHARS)
}

/// `text` as [`escape`] shows it, cut after `limit` characters shown instead of
/// [`QUOTE_CHARS`]: for a whole message that holds input somewhere in it.
pub fn escape_within(text: &str, limit: usize) -> String {
    shown(text, false, limit)
}

fn shown(input: &str, quoted: bool, limit: usize) -> String {
    let quote = if quoted { "'" } else { "" };
    let mut out = String::from(quote);
    let mut shown = 0;
    for (taken, c) in input.chars().enumerate() {
        let escaped = c.is_control() || (quoted && c == '\'') || c == '\\' || is_invisible(c);
        let width = if escaped {
            c.escape_default().count()
        } else {
            1
        };
        if shown + width > limit {
            let rest = input.chars().count() - taken;
            let _ = write!(out, "{quote}... ({rest} more characters)");
            return out;
        }
        shown += width;
        if escaped {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push_str(quote);
    out
}

/// Characters that are not control characters but change or hide what a terminal shows:
/// bidirectional overrides and zero-width marks.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        // A tiny buffer: lines arrive in many pieces.
        let mut reader = io::BufReader::with_capacity(3, input);
        std::iter::from_fn(|| read_line(&mut reader, max).unwrap()).collect()
    }

    #[test]
    fn lines_are_bounded_and_the_reader_goes_on_after_a_bad_one() {
        let text = |s: &str| Line::Text(s.to_owned());
        assert_eq!(
            lines(b"ab\r\n\nabcdefgh\n\xff\xfe\nlast", 5),
            vec![
                text("ab"),
                text(""),
                Line::TooLong(8),
                Line::NotUtf8(vec![0xff, 0xfe]),
                text("last"),
            ]
        );
        // Exactly the bound, with and without a carriage return.
        assert_eq!(
            lines(b"abcde\r\nabcde", 5),
            vec![text("abcde"), text("abcde")]
        );
        assert_eq!(lines(b"abcdef\r\n", 5), vec![Line::TooLong(6)]);
        assert!(lines(b"", 5).is_empty());
    }

    #[test]
    fn an_endless_line_is_read_in_bounded_memory() {
        let mut zeros = io::BufReader::new(io::Read::take(io::repeat(0), 50 << 20));
        assert_eq!(
            read_line(&mut zeros, MAX_LINE).unwrap(),
            Some(Line::TooLong(50 << 20))
        );
        // No end in sight: given up after MAX_SKIP bytes, not read for ever.
        let mut endless = io::BufReader::new(io::repeat(0));
        let e = read_line(&mut endless, MAX_LINE).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn a_cut_line_is_given_up_at_the_bound_and_the_rest_left_unread() {
        let mut reader = io::BufReader::with_capacity(3, &b"abcde\r\nabcdefgh\nnext"[..]);
        let mut next = || read_line_cut(&mut reader, 5).unwrap();
        assert_eq!(next(), Some(Line::Text("abcde".into())));
        // Given up after 7 bytes (the bound, a `\r` and one more): the rest stays unread.
        assert_eq!(next(), Some(Line::TooLong(7)));
        assert_eq!(next(), Some(Line::Text("h".into())));
        assert_eq!(next(), Some(Line::Text("next".into())));
        assert_eq!(next(), None);
        let mut zeros = io::BufReader::new(io::repeat(0));
        assert!(matches!(
            read_line_cut(&mut zeros, MAX_LINE).unwrap(),
            Some(Line::TooLong(n)) if n == MAX_LINE as u64 + 2
        ));
    }

    #[test]
    fn quoted_input_is_escaped_and_cut() {
        assert_eq!(quote("<6,0,0>"), "'<6,0,0>'");
        assert_eq!(quote("a\u{1b}[31mb\n"), "'a\\u{1b}[31mb\\n'");
        assert_eq!(quote("it's"), "'it\\'s'");
        assert_eq!(quote("\u{202e}x"), "'\\u{202e}x'");
        let long = "x".repeat(1000);
        assert_eq!(
            quote(&long),
            format!("'{}'... (920 more characters)", "x".repeat(80))
        );
        assert_eq!(escape("it's a\u{1b}\\"), "it's a\\u{1b}\\\\");
        // Escapes count as what they take: 13 of 6 characters fit in 80.
        let escapes = "\u{1b}".repeat(1000);
        assert_eq!(
            quote(&escapes),
            format!("'{}'... (987 more characters)", "\\u{1b}".repeat(13))
        );
        assert_eq!(
            escape(&long),
            format!("{}... (920 more characters)", "x".repeat(80))
        );
    }
}
