//! A minimal HTTP/1.1 server on `std::net`, just enough for a Connect REST fake.
//!
//! It is hand-rolled rather than built on `tiny_http` because the fault injection needs
//! control over the socket itself: closing a connection without an answer, and refusing
//! connections altogether while the worker is "down", then listening again on the same port.
//! One thread accepts; every connection gets its own thread, so concurrent clients (and a
//! deliberately slow request) never block each other. Keep-alive is supported.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

/// A parsed request.
pub(crate) struct HttpRequest {
    pub method: String,
    /// Request target as sent: path plus `?query`, still percent-encoded.
    pub target: String,
    pub body: Vec<u8>,
    /// The `Authorization` header, as received.
    pub authorization: Option<String>,
    /// Every header as received, its name lowercased, in order (the MSK Connect stand-in
    /// checks the SigV4 signature over them).
    pub headers: Vec<(String, String)>,
}

/// What to do with a request.
pub(crate) enum Reply {
    /// Answer with a status, an optional JSON (or text) body and extra headers.
    Respond {
        status: u16,
        body: Option<String>,
        headers: Vec<(String, String)>,
    },
    /// Close the connection without answering.
    Drop,
}

pub(crate) type Handler = Arc<dyn Fn(HttpRequest) -> Reply + Send + Sync>;

struct Shared {
    handler: Handler,
    conns: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
}

struct Acceptor {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

/// The running server. Stops (closes the port and every connection) on drop.
pub(crate) struct HttpServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Mutex<Option<Acceptor>>,
}

impl HttpServer {
    pub fn start(handler: Handler) -> io::Result<HttpServer> {
        Self::start_on("127.0.0.1:0", handler)
    }

    /// Listens on `addr` (`127.0.0.1:8095`; port 0 for any free one).
    pub fn start_on(addr: &str, handler: Handler) -> io::Result<HttpServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            handler,
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
        });
        let acceptor = spawn_acceptor(listener, shared.clone());
        Ok(HttpServer {
            addr,
            shared,
            acceptor: Mutex::new(Some(acceptor)),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop listening (new connections are refused) and close open connections.
    pub fn go_down(&self) {
        if let Some(acceptor) = self.acceptor.lock().unwrap().take() {
            acceptor.stop.store(true, Ordering::SeqCst);
            // Wake the blocking accept; the acceptor sees the flag and drops the listener.
            let _ = TcpStream::connect(self.addr);
            let _ = acceptor.thread.join();
        }
        for (_, conn) in self.shared.conns.lock().unwrap().drain() {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }

    /// Listen again on the same port. Panics if the port cannot be bound again.
    pub fn go_up(&self) {
        let mut slot = self.acceptor.lock().unwrap();
        if slot.is_none() {
            let listener = TcpListener::bind(self.addr).unwrap_or_else(|e| {
                panic!("fake Connect: cannot listen again on {}: {e}", self.addr)
            });
            *slot = Some(spawn_acceptor(listener, self.shared.clone()));
        }
    }

    pub fn is_up(&self) -> bool {
        self.acceptor.lock().unwrap().is_some()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.go_down();
    }
}

fn spawn_acceptor(listener: TcpListener, shared: Arc<Shared>) -> Acceptor {
    let stop = Arc::new(AtomicBool::new(false));
    let stop_flag = stop.clone();
    let thread = thread::Builder::new()
        .name("fake-connect-accept".into())
        .spawn(move || {
            for stream in listener.incoming() {
                if stop_flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let id = shared.next_conn.fetch_add(1, Ordering::SeqCst);
                if let Ok(clone) = stream.try_clone() {
                    shared.conns.lock().unwrap().insert(id, clone);
                }
                let shared = shared.clone();
                let _ = thread::Builder::new()
                    .name("fake-connect-conn".into())
                    .spawn(move || {
                        serve_connection(stream, &shared);
                        shared.conns.lock().unwrap().remove(&id);
                    });
            }
        })
        .expect("spawn accept thread");
    Acceptor { stop, thread }
}

fn serve_connection(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut writer = write_half;
    loop {
        let (request, close) = match read_request(&mut reader, &mut writer) {
            Ok(Some(parsed)) => parsed,
            Ok(None) => return,
            Err(_) => {
                let _ = write_response(&mut writer, 400, Some("bad request".into()), &[], true);
                return;
            }
        };
        match (shared.handler)(request) {
            Reply::Drop => {
                let _ = writer.shutdown(Shutdown::Both);
                return;
            }
            Reply::Respond {
                status,
                body,
                headers,
            } => {
                if write_response(&mut writer, status, body, &headers, close).is_err() || close {
                    return;
                }
            }
        }
    }
}

/// Reads one request; `Ok(None)` at a clean end of stream. Returns whether the client asked
/// to close the connection afterwards. A client that sends `Expect: 100-continue` (curl does
/// for large bodies) is told to go on at once, as Connect's Jetty does, instead of waiting.
fn read_request(
    reader: &mut impl BufRead,
    writer: &mut impl Write,
) -> io::Result<Option<(HttpRequest, bool)>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "request line"));
    };
    let (method, target) = (method.to_string(), target.to_string());
    let mut content_length = 0usize;
    let mut chunked = false;
    let mut close = false;
    let mut expect_continue = false;
    let mut authorization = None;
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        headers.push((name.trim().to_ascii_lowercase(), value.to_string()));
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                content_length = value
                    .parse()
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "content-length"))?
            }
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "connection" => close = value.eq_ignore_ascii_case("close"),
            "expect" => expect_continue = value.eq_ignore_ascii_case("100-continue"),
            "authorization" => authorization = Some(value.to_string()),
            _ => {}
        }
    }
    if expect_continue {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    let body = if chunked {
        read_chunked(reader)?
    } else {
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body)?;
        body
    };
    Ok(Some((
        HttpRequest {
            method,
            target,
            body,
            authorization,
            headers,
        },
        close,
    )))
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line)?;
        let size_hex = size_line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "chunk size"))?;
        if size == 0 {
            // Trailers, then the final empty line.
            loop {
                let mut trailer = String::new();
                if reader.read_line(&mut trailer)? == 0 || trailer.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf)?;
    }
}

fn write_response(
    writer: &mut TcpStream,
    status: u16,
    body: Option<String>,
    headers: &[(String, String)],
    close: bool,
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if status != 204 {
        let len = body.as_ref().map_or(0, String::len);
        head.push_str("Content-Type: application/json\r\n");
        head.push_str(&format!("Content-Length: {len}\r\n"));
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    if status != 204 {
        out.extend(body.unwrap_or_default().into_bytes());
    }
    writer.write_all(&out)?;
    writer.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        401 => "Unauthorized",
        403 => "Forbidden",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
