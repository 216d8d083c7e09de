//! One HTTP/1.1 request read within bounds, and its answer written: the
//! request line and headers within [`MAX_HEAD`] bytes and a time
//! ([`HEAD_TIME`] in service); the body only once the caller has looked
//! at the headers (the token, the endpoint's body limit), within its
//! limit and a time that grows with its length. One request per
//! connection: every answer closes it.

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use crate::error::ApiError;

/// The most bytes a request line and its headers take (431 beyond).
pub const MAX_HEAD: usize = 16 << 10;

/// The most headers a request carries (431 beyond).
const MAX_HEADERS: usize = 32;

/// The longest a client may take to send its request line and headers,
/// however it spaces its bytes (408 beyond).
pub const HEAD_TIME: Duration = Duration::from_secs(10);

/// The body's time: this, plus [`BODY_TIME_PER_MIB`] for each MiB it has.
pub const BODY_TIME: Duration = Duration::from_secs(10);
const BODY_TIME_PER_MIB: Duration = Duration::from_secs(1);

/// The longest a read waits before it looks at whether the server stops.
const READ_SLICE: Duration = Duration::from_millis(200);

/// A byte stream to one client.
pub trait Conn: Read + Write + Send {
    /// Bounds each read (`None`: none).
    fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()>;
}

impl Conn for std::net::TcpStream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        std::net::TcpStream::set_read_timeout(self, timeout)
    }
}

impl Conn for std::os::unix::net::UnixStream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        std::os::unix::net::UnixStream::set_read_timeout(self, timeout)
    }
}

/// A request line and headers, read.
#[derive(Debug)]
pub struct Head {
    pub method: String,
    /// The request target, as sent (path and query).
    pub target: String,
    headers: Vec<(String, String)>,
    /// Bytes read past the headers: the start of the body.
    rest: Vec<u8>,
}

impl Head {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Why a request could not be read: answered with the status (`None`:
/// the client went away or the server stops; nothing to answer).
pub type Failed = Option<ApiError>;

/// Reads into `buf` until `deadline` or until `stop` says so.
fn read_some(conn: &mut dyn Conn, buf: &mut [u8], deadline: Instant, stop: &dyn Fn() -> bool, what: &str) -> Result<usize, Failed> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Some(ApiError { status: 408, message: format!("the {what} did not arrive in time") }));
        }
        if stop() {
            return Err(None);
        }
        conn.set_read_timeout(Some(left.min(READ_SLICE))).map_err(|_| None)?;
        match conn.read(buf) {
            Ok(0) => return Err(None),
            Ok(n) => return Ok(n),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return Err(None),
        }
    }
}

/// Reads a request line and headers within [`MAX_HEAD`] bytes and `patience`.
pub fn read_head(conn: &mut dyn Conn, patience: Duration, stop: &dyn Fn() -> bool) -> Result<Head, Failed> {
    let deadline = Instant::now() + patience;
    let mut buf = vec![0u8; MAX_HEAD];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            return Err(Some(ApiError { status: 431, message: format!("the request line and headers are over {MAX_HEAD} bytes") }));
        }
        filled += read_some(conn, &mut buf[filled..], deadline, stop, "request's headers")?;
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf[..filled]) {
            Ok(httparse::Status::Partial) => continue,
            Ok(httparse::Status::Complete(n)) => {
                let headers = request.headers.iter().map(|h| (h.name.to_owned(), String::from_utf8_lossy(h.value).into_owned())).collect();
                return Ok(Head { method: request.method.unwrap_or_default().to_owned(), target: request.path.unwrap_or_default().to_owned(), headers, rest: buf[n..filled].to_vec() });
            }
            Err(httparse::Error::TooManyHeaders) => return Err(Some(ApiError { status: 431, message: format!("the request has over {MAX_HEADERS} headers") })),
            Err(e) => return Err(Some(ApiError::bad(format!("not an HTTP/1.1 request: {e}")))),
        }
    }
}

/// Reads the body `head` announces, at most `limit` bytes (413 beyond,
/// before a byte of it is read), within `patience` and
/// [`BODY_TIME_PER_MIB`] for each MiB, as UTF-8 text.
pub fn read_body(conn: &mut dyn Conn, head: Head, limit: usize, patience: Duration, stop: &dyn Fn() -> bool) -> Result<String, Failed> {
    if head.header("Transfer-Encoding").is_some() {
        return Err(Some(ApiError { status: 411, message: "send the body with a Content-Length, not chunked".into() }));
    }
    let length = match head.header("Content-Length") {
        None => 0,
        Some(v) => v.trim().parse::<usize>().map_err(|_| Some(ApiError::bad(format!("Content-Length '{v}' is not a byte count"))))?,
    };
    if length > limit {
        return Err(Some(ApiError { status: 413, message: format!("the body is {length} bytes, over the {limit} this endpoint takes") }));
    }
    if length > 0 && head.header("Expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        conn.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").map_err(|_| None)?;
    }
    let mut body = head.rest;
    body.truncate(length);
    let deadline = Instant::now() + patience + BODY_TIME_PER_MIB * u32::try_from(length >> 20).unwrap_or(u32::MAX);
    let mut filled = body.len();
    body.resize(length, 0);
    while filled < length {
        filled += read_some(conn, &mut body[filled..], deadline, stop, "body")?;
    }
    String::from_utf8(body).map_err(|_| Some(ApiError::bad("the body is not UTF-8 text")))
}

/// Writes the answer and closes the exchange.
pub fn respond(conn: &mut dyn Conn, status: u16, content_type: &str, extra: &str, body: &str) {
    let head = format!("HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n", reason(status), body.len());
    let _ = conn.write_all(head.as_bytes()).and_then(|()| conn.write_all(body.as_bytes())).and_then(|()| conn.flush());
}

/// The reason phrase of the statuses the API answers with.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Whether `head` carries `token` as `Authorization: Bearer TOKEN` (the
/// scheme in any case), compared in time that depends on the token's
/// length only, never on how much of it a guess gets right or how long
/// the guess is.
pub fn authorised(head: &Head, token: &str) -> bool {
    let given = head.header("Authorization").and_then(|v| v.split_once(' ')).filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer")).map_or("", |(_, t)| t.trim_start());
    same_secret(given.as_bytes(), token.as_bytes())
}

/// `given == secret`, every byte of `secret` looked at whatever `given` is.
fn same_secret(given: &[u8], secret: &[u8]) -> bool {
    let mut differ = u8::from(given.len() != secret.len());
    for (i, &s) in secret.iter().enumerate() {
        differ |= std::hint::black_box(given.get(i).copied().unwrap_or(!s) ^ s);
    }
    differ == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's bytes, served in the chunks given (an empty one: a pause
    /// of 20 ms with nothing to read); then the end.
    struct Scripted {
        chunks: std::collections::VecDeque<Vec<u8>>,
        written: Vec<u8>,
    }

    impl Read for Scripted {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some(mut chunk) = self.chunks.pop_front() else { return Ok(0) };
            if chunk.is_empty() {
                std::thread::sleep(Duration::from_millis(20));
                return Err(ErrorKind::WouldBlock.into());
            }
            let n = chunk.len().min(buf.len());
            buf[..n].copy_from_slice(&chunk[..n]);
            if n < chunk.len() {
                self.chunks.push_front(chunk.split_off(n));
            }
            Ok(n)
        }
    }

    impl Write for Scripted {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Conn for Scripted {
        fn set_read_timeout(&self, _: Option<Duration>) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn client(chunks: &[&[u8]]) -> Scripted {
        Scripted { chunks: chunks.iter().map(|c| c.to_vec()).collect(), written: Vec::new() }
    }

    fn refused<T: std::fmt::Debug>(r: Result<T, Failed>) -> u16 {
        r.expect_err("refused").expect("answered").status
    }

    #[test]
    fn a_request_in_pieces_is_read_whole() {
        let mut c = client(&[b"PUT /v1/flows/a/slo HT", b"TP/1.1\r\nContent-Length: 13\r\nauthorization: bearer sec", b"ret\r\n\r\n{\"slo_us\"", b": 5}"]);
        let head = read_head(&mut c, HEAD_TIME, &|| false).unwrap();
        assert_eq!((head.method.as_str(), head.target.as_str()), ("PUT", "/v1/flows/a/slo"));
        assert!(authorised(&head, "secret") && !authorised(&head, "secreT") && !authorised(&head, "secret2"));
        assert_eq!(read_body(&mut c, head, 100, BODY_TIME, &|| false).unwrap(), "{\"slo_us\": 5}");
    }

    #[test]
    fn limits_answer_before_the_body_is_read() {
        let big = vec![b'a'; MAX_HEAD];
        assert_eq!(refused(read_head(&mut client(&[b"GET / HTTP/1.1\r\nX: ", &big]), HEAD_TIME, &|| false)), 431);
        let mut c = client(&[b"POST /v1/flows HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\n"]);
        let head = read_head(&mut c, HEAD_TIME, &|| false).unwrap();
        assert_eq!(refused(read_body(&mut c, head, 1 << 20, BODY_TIME, &|| false)), 413);
        let mut c = client(&[b"POST /v1/flows HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"]);
        let head = read_head(&mut c, HEAD_TIME, &|| false).unwrap();
        assert_eq!(refused(read_body(&mut c, head, 1 << 20, BODY_TIME, &|| false)), 411);
        assert_eq!(refused(read_head(&mut client(&[b"\x16\x03\x01 not http\r\n\r\n"]), HEAD_TIME, &|| false)), 400);
    }

    #[test]
    fn a_slow_client_is_cut_at_its_deadline_however_it_spaces_its_bytes() {
        let mut drip: Vec<&[u8]> = Vec::new();
        for _ in 0..20 {
            drip.extend([&b"X"[..], b""]);
        }
        let mut c = client(&[&[&b"GET / HTTP/1.1\r\nX-Slow: "[..]], &drip[..]].concat());
        assert_eq!(refused(read_head(&mut c, Duration::from_millis(100), &|| false)), 408);
        assert!(!c.chunks.is_empty(), "cut at the deadline, before the client's end");
        let mut c = client(&[b"GET / HTTP/1.1\r\n", b""]);
        assert!(read_head(&mut c, HEAD_TIME, &|| true).expect_err("stopping").is_none());
    }

    #[test]
    fn a_client_that_goes_away_gets_no_answer() {
        let mut c = client(&[b"GET / HTTP/1.1\r\n"]);
        assert!(read_head(&mut c, HEAD_TIME, &|| false).expect_err("ended").is_none());
        let mut c = client(&[b"PUT / HTTP/1.1\r\nContent-Length: 10\r\nExpect: 100-Continue\r\n\r\n1234"]);
        let head = read_head(&mut c, HEAD_TIME, &|| false).unwrap();
        assert!(read_body(&mut c, head, 100, BODY_TIME, &|| false).expect_err("ended").is_none());
        assert_eq!(c.written, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn a_token_is_compared_whole() {
        assert!(same_secret(b"abc", b"abc"));
        for guess in [&b""[..], b"ab", b"abd", b"abcd", b"xbc"] {
            assert!(!same_secret(guess, b"abc"), "{guess:?}");
        }
        let head = |v: &str| Head { method: "GET".into(), target: "/".into(), headers: vec![("Authorization".into(), v.into())], rest: Vec::new() };
        assert!(authorised(&head("BEARER  tok"), "tok"));
        assert!(!authorised(&head("Basic tok"), "tok"));
        assert!(!authorised(&head("tok"), "tok"));
    }
}
