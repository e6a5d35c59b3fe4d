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
        let mut close = parsed.version == Some(0);
        let mut length = None;
        let mut chunked = false;
        let mut expect_continue = false;
        for header in parsed.headers.iter() {
            let value = String::from_utf8_lossy(header.value).trim().to_ascii_lowercase();
            if header.name.eq_ignore_ascii_case("content-length") {
                let n: usize = value.parse().map_err(|_| invalid("a malformed Content-Length"))?;
                length = Some(n);
            } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.split(',').any(|v| v.trim() == "chunked");
            } else if header.name.eq_ignore_ascii_case("connection") {
                close = value.split(',').any(|v| v.trim() == "close");
            } else if header.name.eq_ignore_ascii_case("expect") {
                expect_continue = value == "100-continue";
            }
        }
        if expect_continue {
            self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        }
        let body = tokio::time::timeout(READ, self.body(chunked, length))
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
        Ok(Some(Request { method, path, body, close }))
    }

    async fn body(&mut self, chunked: bool, length: Option<usize>) -> io::Result<Vec<u8>> {
        if !chunked {
            let n = length.unwrap_or(0);
            if n > MAX_BODY {
                return Err(invalid("the request body is too large"));
            }
            return self.take(n).await;
        }
        let mut body = Vec::new();
        loop {
            let line = self.line().await?;
            let size = String::from_utf8_lossy(&line);
            let size = size.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| invalid("a malformed chunk size"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !self.line().await?.is_empty() {}
                return Ok(body);
            }
            if size > MAX_BODY - body.len() {
                return Err(invalid("the request body is too large"));
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
        self.stream.write_all(&out).await?;
        self.stream.flush().await
    }

    /// Closes the write side (TLS close_notify).
    pub async fn shutdown(&mut self) -> io::Result<()> {
        self.stream.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt as _;

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
