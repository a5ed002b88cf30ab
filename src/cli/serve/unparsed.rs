//! The answer to a request the HTTP layer could not read.
//!
//! hyper answers a request it cannot parse (a URL with a raw `<`, `>`, `"` or space, a broken
//! header) by itself, before any of the server's code runs: `400 Bad Request`, no body,
//! `connection: close`, and no access-log line, since the service never saw it. [`Unparsed`]
//! wraps a connection's stream and, when such an answer is written, writes in its place the
//! same status with a JSON body saying what is wrong, as every other error of the API, and
//! logs it (method and target `-`: there were none to read).
//!
//! ```text
//! client ──bytes──► Unparsed ──► hyper ──► service (api.rs) ──► response ──► Unparsed ──► client
//!                                  └──► its own 4xx, empty, "connection: close" ──► rewritten
//! ```

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::Log;

/// A connection's stream whose empty error answers from hyper are given a JSON body.
pub struct Unparsed<S> {
    inner: S,
    peer: SocketAddr,
    log: Log,
    /// A rewritten answer and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
}

impl<S> Unparsed<S> {
    pub fn new(inner: S, peer: SocketAddr, log: Log) -> Unparsed<S> {
        Unparsed {
            inner,
            peer,
            log,
            pending: None,
        }
    }
}

/// The most bytes of an answer with no body that hyper writes (a status line and three short
/// headers).
const MAX_EMPTY_ANSWER: usize = 512;

/// The status of `head` if it is one of hyper's own error answers: an HTTP/1.1 status of 400
/// or more, `connection: close`, no body and no content type (every answer of the service
/// has one).
fn hyper_error_status(head: &[u8]) -> Option<u16> {
    // Every other write (each answer of the service) leaves here at once.
    let error = head.starts_with(b"HTTP/1.1 4") || head.starts_with(b"HTTP/1.1 5");
    if !error || head.len() > MAX_EMPTY_ANSWER {
        return None;
    }
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.strip_prefix("HTTP/1.1 ")?;
    let status: u16 = rest.get(..3)?.parse().ok()?;
    let lower = text.to_ascii_lowercase();
    (status >= 400
        && lower.ends_with("\r\n\r\n")
        && lower.contains("\r\nconnection: close\r\n")
        && lower.contains("\r\ncontent-length: 0\r\n")
        && !lower.contains("\r\ncontent-type:"))
    .then_some(status)
}

/// The answer written in place of hyper's empty one.
fn rewritten(status: u16) -> Vec<u8> {
    let (reason, error) = match status {
        400 => (
            "Bad Request",
            "the request is not valid HTTP/1.1: a URL must percent-encode the characters \
             < > \" { } | \\ ^ ` and spaces (%3C %3E %22 %7B %7D %7C %5C %5E %60 %20), \
             e.g. /api/v1/position?position=%3C6,0,0,4,4,4,4,4,4,4,4,4,4,4,4%3E",
        ),
        431 => (
            "Request Header Fields Too Large",
            "the request's header is too large",
        ),
        405 => (
            "Method Not Allowed",
            "only GET and HEAD are answered: the API and the explorer are read-only",
        ),
        _ => ("Error", "the request could not be read"),
    };
    let allow = if status == 405 {
        "allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let body = json!({ "error": error }).to_string();
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n{allow}\
         access-control-allow-origin: *\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl<S: AsyncWrite + Unpin> Unparsed<S> {
    /// Writes what is left of the rewritten answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = &mut self.pending {
            if *done == bytes.len() {
                self.pending = None;
                break;
            }
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *done += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Unparsed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Unparsed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.pending.is_none() {
            match hyper_error_status(buf) {
                Some(status) => {
                    this.log.request(this.peer, None, status, None, None);
                    this.pending = Some((rewritten(status), 0));
                }
                None => return Pin::new(&mut this.inner).poll_write(cx, buf),
            }
        }
        // hyper's answer counts as written once its replacement is.
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(buf.len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_shutdown(cx),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_own_empty_error_answers_are_rewritten() {
        let hyper_400 = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\
                          date: Wed, 25 Nov 2026 22:05:03 GMT\r\n\r\n";
        assert_eq!(hyper_error_status(hyper_400), Some(400));
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n\
                     connection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(hyper_error_status(ours), None);
        let fine = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(hyper_error_status(fine), None);
        let kept_alive = b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(hyper_error_status(kept_alive), None);
        // A body in the same write: not an empty answer.
        let body = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\nx";
        assert_eq!(hyper_error_status(body), None);
    }

    #[test]
    fn the_rewritten_answer_is_json_of_its_length() {
        let bytes = rewritten(400);
        let text = String::from_utf8(bytes).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(json["error"].as_str().unwrap().contains("%3C"), "{json}");
    }
}
