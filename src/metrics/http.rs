//! The metrics server: a thread on `std::net` answering `GET /metrics` (the
//! exposition), `GET /` (the live page) and `GET /api/live` (the page's
//! data); any other path is 404, any other method 405. Each connection is
//! served on a short-lived thread of its own (at most [`MAX_CLIENTS`] at
//! once, with timeouts), so a slow client delays nobody, the run least of
//! all: the run's threads never wait for the server.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use super::Live;
use super::expo::Format;

/// Connections served at once; more are answered 503 at once.
const MAX_CLIENTS: usize = 8;
/// The longest request head read.
const MAX_HEAD: usize = 16 << 10;
const TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `live` on `listener` from a background thread for the rest of the process.
pub fn serve(listener: TcpListener, live: Live) {
    let busy = Arc::new(AtomicUsize::new(0));
    let spawned = std::thread::Builder::new()
        .name("dbio-metrics".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                if busy.fetch_add(1, SeqCst) >= MAX_CLIENTS {
                    busy.fetch_sub(1, SeqCst);
                    let _ = respond(&conn, "503 Service Unavailable", "text/plain", b"busy\n");
                    continue;
                }
                let (live, busy) = (live.clone(), busy.clone());
                // No thread to serve it: the connection is dropped.
                let _ = std::thread::Builder::new()
                    .name("dbio-metrics-conn".into())
                    .spawn(move || {
                        handle(conn, &live);
                        busy.fetch_sub(1, SeqCst);
                    });
            }
        });
    if let Err(e) = spawned {
        eprintln!("warning: live metrics are not served: cannot start their thread: {e}");
    }
}

/// A request's method, path and Accept header.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub accept: Option<String>,
}

/// Parses a request head (up to the blank line), or `None` if it is not HTTP.
pub fn parse(head: &str) -> Option<Request> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?;
    first.next()?.starts_with("HTTP/").then_some(())?;
    let path = target.split(['?', '#']).next().unwrap_or("").to_string();
    let accept = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.trim().to_string());
    Some(Request {
        method,
        path,
        accept,
    })
}

fn read_head(conn: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_HEAD {
            return None;
        }
    }
    String::from_utf8(buf).ok()
}

fn handle(mut conn: TcpStream, live: &Live) {
    let _ = conn.set_read_timeout(Some(TIMEOUT));
    let _ = conn.set_write_timeout(Some(TIMEOUT));
    let Some(req) = read_head(&mut conn).as_deref().and_then(parse) else {
        let _ = respond(&conn, "400 Bad Request", "text/plain", b"bad request\n");
        return;
    };
    let (status, kind, body): (&str, &str, Vec<u8>) = match (req.method.as_str(), req.path.as_str())
    {
        ("GET", "/metrics") => {
            let format = Format::from_accept(req.accept.as_deref());
            (
                "200 OK",
                format.content_type(),
                live.exposition(format).into_bytes(),
            )
        }
        ("GET", "/") => (
            "200 OK",
            "text/html; charset=utf-8",
            super::page::HTML.as_bytes().to_vec(),
        ),
        ("GET", "/api/live") => ("200 OK", "application/json", live.json().into_bytes()),
        ("GET", _) => (
            "404 Not Found",
            "text/plain",
            b"not found: dbio serves /metrics, / and /api/live\n".to_vec(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            b"only GET\n".to_vec(),
        ),
    };
    let _ = respond(&conn, status, kind, &body);
}

fn respond(mut conn: &TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())?;
    conn.write_all(body)?;
    conn.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_head_gives_method_path_and_accept() {
        let head = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\naccept: application/openmetrics-text;version=1.0.0\r\n\r\n";
        let r = parse(head).unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/metrics"));
        assert_eq!(
            r.accept.as_deref(),
            Some("application/openmetrics-text;version=1.0.0")
        );
        assert_eq!(parse("hello\r\n\r\n"), None);
        assert_eq!(parse("GET / FTP\r\n\r\n"), None);
    }
}
