//! The HTTP/1.1 the API server speaks to webhooks: POSTs with a JSON body
//! (Content-Length or chunked), kept-alive connections, one response per
//! request. Headers are parsed with httparse.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// The largest request body accepted (a ConversionReview of a big list).
pub(crate) const MAX_BODY: usize = 64 * 1024 * 1024;
/// How long a kept-alive connection may wait for its next request: longer
/// than the API server's own idle timeout (Go's 90 s), so that the client
/// closes first and never sends a request on a connection this end is
/// closing.
const IDLE: Duration = Duration::from_secs(120);
/// How long reading a request, once begun, may take.
const READ: Duration = Duration::from_secs(30);
/// How long writing a response may take: a client that does not read its
/// answers (pipelining requests meanwhile) must not hold the connection,
/// and one of the server's connection slots, forever.
const WRITE: Duration = Duration::from_secs(30);

/// One request: method, path (with query), body.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub body: Vec<u8>,
    /// The client asked to close the connection after the response.
    pub close: bool,
}

/// One response.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// A request body over [`MAX_BODY`]: answered 413.
#[derive(Debug)]
struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request body is too large (over {MAX_BODY} bytes)")
    }
}

impl std::error::Error for TooLarge {}

fn too_large() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, TooLarge)
}

/// Whether `err` is a request body over [`MAX_BODY`].
pub(crate) fn is_too_large(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<TooLarge>())
}

/// `write` within [`WRITE`].
async fn in_time<T>(write: impl std::future::Future<Output = io::Result<T>>) -> io::Result<T> {
    tokio::time::timeout(WRITE, write).await.map_err(|_| io::Error::from(io::ErrorKind::TimedOut))?
}

/// A connection with its read buffer.
pub(crate) struct Connection<S> {
    stream: S,
    buf: Vec<u8>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    pub fn new(stream: S) -> Self {
        Connection { stream, buf: Vec::with_capacity(8 * 1024) }
    }

    /// Reads more bytes into the buffer; false at the end of the stream.
    async fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    async fn fill_or_eof(&mut self) -> io::Result<()> {
        if self.fill().await? { Ok(()) } else { Err(io::ErrorKind::UnexpectedEof.into()) }
    }

    /// Takes `n` bytes from the front of the buffer, reading as needed.
    async fn take(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            self.fill_or_eof().await?;
        }
        let rest = self.buf.split_off(n);
        Ok(std::mem::replace(&mut self.buf, rest))
    }

    /// Takes one CRLF-terminated line (without the CRLF).
    async fn line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let mut line = self.take(end + 2).await?;
                line.truncate(end);
                return Ok(line);
            }
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("a line of a chunked body is too long"));
            }
            self.fill_or_eof().await?;
        }
    }

    /// Waits for the first byte of the next request: false when the client
    /// closed the connection or stayed idle for [`IDLE`] first.
    pub async fn wait_for_request(&mut self) -> io::Result<bool> {
        if !self.buf.is_empty() {
            return Ok(true);
        }
        tokio::time::timeout(IDLE, self.fill()).await.unwrap_or(Ok(false))
    }

    /// Reads the next request; `None` when the client closed the connection
    /// (or stayed idle too long) between requests.
    pub async fn next_request(&mut self) -> io::Result<Option<Request>> {
        // The head gets `READ` from its first byte in all, not per read: a
        // client sending a byte now and then cannot hold the connection.
        let mut deadline = None;
        // Where the search for the head's end resumes.
        let mut searched = 0;
        let head_end = loop {
            if let Some(end) = self.buf[searched..].windows(4).position(|w| w == b"\r\n\r\n") {
                break searched + end + 4;
            }
            searched = self.buf.len().saturating_sub(3);
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("the request head is too large"));
            }
            let wait = match deadline {
                None if self.buf.is_empty() => IDLE,
                None => {
                    deadline = Some(tokio::time::Instant::now() + READ);
                    READ
                }
                Some(at) => at.saturating_duration_since(tokio::time::Instant::now()),
            };
            match tokio::time::timeout(wait, self.fill()).await {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) | Err(_) if self.buf.is_empty() => return Ok(None),
                Ok(Ok(false)) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(io::ErrorKind::TimedOut.into()),
            }
        };
        let head = self.take(head_end).await?;
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(&head) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => return Err(invalid("incomplete request head")),
            Err(e) => return Err(invalid(format!("malformed request head: {e}"))),
        }
        let method = parsed.method.unwrap_or_default().to_owned();
        let path = parsed.path.unwrap_or_default().to_owned();
        let http10 = parsed.version == Some(0);
        let (mut close, mut keep_alive) = (false, false);
        let mut length = None;
        let mut codings = Vec::new();
        let mut expect_continue = false;
        // Framing as RFC 9112 asks of a server, so that no request can be
        // read two ways (by a proxy in front and by this end): Content-Length
        // digits only, several only if equal; Transfer-Encoding only
        // `chunked`, and not beside a Content-Length.
        for header in parsed.headers.iter() {
            let value = String::from_utf8_lossy(header.value).trim().to_ascii_lowercase();
            if header.name.eq_ignore_ascii_case("content-length") {
                let n = Some(value.as_str())
                    .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|v| v.parse::<usize>().ok())
                    .ok_or_else(|| invalid("a malformed Content-Length"))?;
                if length.is_some_and(|earlier| earlier != n) {
                    return Err(invalid("Content-Length headers that differ"));
                }
                length = Some(n);
            } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
                codings.extend(value.split(',').map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()));
            } else if header.name.eq_ignore_ascii_case("connection") {
                close |= value.split(',').any(|v| v.trim() == "close");
                keep_alive |= value.split(',').any(|v| v.trim() == "keep-alive");
            } else if header.name.eq_ignore_ascii_case("expect") {
                expect_continue = value == "100-continue";
            }
        }
        // HTTP/1.0 keeps a connection only when asked to.
        let close = close || (http10 && !keep_alive);
        let chunked = match codings.as_slice() {
            [] => false,
            [only] if only == "chunked" => true,
            _ => return Err(invalid(format!("an unsupported Transfer-Encoding: {}", codings.join(", ")))),
        };
        if chunked && length.is_some() {
            return Err(invalid("both Content-Length and Transfer-Encoding"));
        }
        if length.is_some_and(|n| n > MAX_BODY) {
            // Before any 100 Continue: the client need not send it.
            return Err(too_large());
        }
        if expect_continue {
            in_time(self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")).await?;
        }
        let body = tokio::time::timeout(READ, self.body(chunked, length))
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
        Ok(Some(Request { method, path, body, close }))
    }

    async fn body(&mut self, chunked: bool, length: Option<usize>) -> io::Result<Vec<u8>> {
        if !chunked {
            return self.take(length.unwrap_or(0)).await;
        }
        let mut body = Vec::new();
        loop {
            let line = self.line().await?;
            let size = String::from_utf8_lossy(&line);
            // Hex digits only (no sign), then any chunk extension.
            let size = size.split(';').next().unwrap_or_default().trim_end();
            let size = Some(size)
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|v| usize::from_str_radix(v, 16).ok())
                .ok_or_else(|| invalid("a malformed chunk size"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !self.line().await?.is_empty() {}
                return Ok(body);
            }
            if size > MAX_BODY - body.len() {
                return Err(too_large());
            }
            body.extend(self.take(size).await?);
            if !self.line().await?.is_empty() {
                return Err(invalid("a chunk without its CRLF"));
            }
        }
    }

    /// Writes a response.
    pub async fn respond(&mut self, response: &Response, close: bool) -> io::Result<()> {
        let reason = match response.status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            413 => "Payload Too Large",
            _ => "Internal Server Error",
        };
        let head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n",
            response.status,
            response.content_type,
            response.body.len(),
            if close { "Connection: close\r\n" } else { "" },
        );
        let mut out = head.into_bytes();
        out.extend_from_slice(&response.body);
        in_time(async {
            self.stream.write_all(&out).await?;
            self.stream.flush().await
        })
        .await
    }

    /// Closes the write side (TLS close_notify).
    pub async fn shutdown(&mut self) -> io::Result<()> {
        in_time(self.stream.shutdown()).await
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    #[tokio::test]
    async fn a_chunk_size_that_would_wrap_the_body_length_is_too_large() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let mut conn = Connection::new(server);
        let mut client = client;
        client
            .write_all(b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\nffffffffffffffff\r\n")
            .await
            .unwrap();
        let Err(err) = conn.next_request().await else { panic!("refused") };
        assert!(err.to_string().contains("too large"), "{err}");
    }

    /// What `head` (and what follows it) reads as: the request, or the
    /// error's message.
    async fn read(head: &str) -> Result<Request, String> {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let mut conn = Connection::new(server);
        let mut client = client;
        client.write_all(head.as_bytes()).await.unwrap();
        drop(client);
        match conn.next_request().await {
            Ok(Some(request)) => Ok(request),
            Ok(None) => Err("no request".into()),
            Err(err) => Err(err.to_string()),
        }
    }

    /// Framing that a proxy in front could read another way is refused
    /// (RFC 9112): Content-Length headers that differ or carry more than
    /// digits, Transfer-Encoding other than a lone `chunked` (also over
    /// several headers), both together, and chunk sizes with a sign.
    #[tokio::test]
    async fn ambiguous_framing_is_refused() {
        let refused = [
            ("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "differ"),
            ("POST /x HTTP/1.1\r\nContent-Length: +1\r\n\r\na", "Content-Length"),
            (
                "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n",
                "Transfer-Encoding",
            ),
            ("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "Transfer-Encoding"),
            ("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", "both"),
            ("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n+1\r\na\r\n0\r\n\r\n", "chunk size"),
        ];
        for (head, what) in refused {
            let err = read(head).await.expect_err(head);
            assert!(err.contains(what), "{head:?}: {err}");
        }
        // Equal Content-Lengths and a chunk extension are fine.
        let request = read("POST /x HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab").await.unwrap();
        assert_eq!(request.body, b"ab");
        let request =
            read("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nab\r\n0\r\n\r\n").await.unwrap();
        assert_eq!(request.body, b"ab");
    }

    /// `close` in any Connection header closes; HTTP/1.0 keeps the
    /// connection only with `keep-alive`.
    #[tokio::test]
    async fn connection_close_is_collected_over_all_headers() {
        let close = |head: &'static str| async move { read(head).await.unwrap().close };
        assert!(close("POST /x HTTP/1.1\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n").await);
        assert!(!close("POST /x HTTP/1.1\r\nConnection: keep-alive\r\n\r\n").await);
        assert!(close("POST /x HTTP/1.0\r\nConnection: TE\r\n\r\n").await);
        assert!(!close("POST /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").await);
    }

    /// A body declared over the limit is refused before any 100 Continue
    /// (the client need not send it), as a 413.
    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_before_continue() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let mut conn = Connection::new(server);
        let mut client = client;
        let head = format!("POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n", MAX_BODY + 1);
        client.write_all(head.as_bytes()).await.unwrap();
        let Err(err) = conn.next_request().await else { panic!("refused") };
        assert!(is_too_large(&err), "{err}");
        drop(conn);
        let mut answer = Vec::new();
        client.read_to_end(&mut answer).await.unwrap();
        assert!(answer.is_empty(), "{:?}", String::from_utf8_lossy(&answer));
    }

    /// A client that does not read its answers holds the connection for
    /// `WRITE` at most.
    #[tokio::test(start_paused = true)]
    async fn a_response_nobody_reads_times_out() {
        let (_client, server) = tokio::io::duplex(1024);
        let mut conn = Connection::new(server);
        let response = Response { status: 200, content_type: "application/json", body: vec![b' '; 64 * 1024] };
        let started = tokio::time::Instant::now();
        let err = conn.respond(&response, false).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), WRITE);
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_sent_a_byte_at_a_time_gets_one_deadline_in_all() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let mut conn = Connection::new(server);
        let trickle = tokio::spawn(async move {
            let mut client = client;
            for b in b"POST /x HTTP/1.1\r\nHost: a\r\n".iter() {
                if client.write_all(&[*b]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        });
        let started = tokio::time::Instant::now();
        let Err(err) = conn.next_request().await else { panic!("timed out") };
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // Every byte came within the per-read timeout; the whole head did not.
        assert!(started.elapsed() <= READ + Duration::from_secs(5), "{:?}", started.elapsed());
        trickle.abort();
    }
}
