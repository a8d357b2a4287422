//! A loopback HTTP server that plays a BMC for the `redfish_replies` target.
//!
//! Owns serving, over real HTTP/1.1 on 127.0.0.1, either a *script* (the fuzz input: one reply
//! per request, in order, then 404s) or a captured *tree* (`<dir>/<path>/index.json`, the layout
//! of `../shared/redfish`), and recording what it served: each reply's status, body and the bytes
//! it actually wrote before the client hung up (so the target can check the client's body limit).
//! A tree session can be written out as a script (`script_of`): that is how the Redfish seed
//! corpus is built from the captured trees. It must not know Redfish semantics (the client under
//! test does) and must never be reachable from anything but loopback.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use crate::input::SEPARATOR;

/// Largest streamed body a script may ask for (`stream:<MiB>`): well past the client limit the
/// target sets plus the loopback socket buffers, so a client that ignored its limit is caught.
pub const MAX_STREAM_MIB: u64 = 64;
/// Most replies one script holds; later requests get 404.
pub const MAX_REPLIES: usize = 64;

/// How a reply's body goes on the wire.
#[derive(Debug, Clone)]
pub enum Body {
    /// With a correct `Content-Length`.
    Bytes(Vec<u8>),
    /// Chunked, `mib` MiB of JSON-ish filler, no length: a BMC streaming without end.
    Stream { mib: u64 },
    /// `Content-Length: declared`, then the bytes (fewer or more than declared), then close.
    Declared { declared: u64, bytes: Vec<u8> },
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Reply {
    /// Parses one script part: an optional first line `@<status> [Name:value]...` (pseudo-headers
    /// `stream:<MiB>` and `length:<bytes>` choose the body's framing), then the body.
    pub fn parse(part: &[u8]) -> Reply {
        let mut reply = Reply { status: 200, headers: Vec::new(), body: Body::Bytes(part.to_vec()) };
        let Some(rest) = part.strip_prefix(b"@") else { return reply };
        let (line, body) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        let line = String::from_utf8_lossy(line);
        let mut words = line.split(' ').filter(|w| !w.is_empty());
        reply.status =
            words.next().and_then(|s| s.parse::<u16>().ok()).filter(|s| (100..=599).contains(s)).unwrap_or(200);
        // 1xx answers are interim in HTTP/1.1; the client never sees them as a reply.
        if reply.status < 200 {
            reply.status = 200;
        }
        reply.body = Body::Bytes(body.to_vec());
        for word in words {
            let Some((name, value)) = word.split_once(':') else { continue };
            match name.to_ascii_lowercase().as_str() {
                "stream" => reply.body = Body::Stream { mib: value.parse::<u64>().unwrap_or(1).min(MAX_STREAM_MIB) },
                "length" => {
                    reply.body = Body::Declared { declared: value.parse().unwrap_or(u64::MAX), bytes: body.to_vec() }
                }
                _ if is_token(name) && value.bytes().all(|b| b.is_ascii_graphic()) => {
                    reply.headers.push((name.to_string(), value.to_string()))
                }
                _ => {}
            }
        }
        reply
    }

    /// The script part that `parse` reads back as this reply (headers and body only).
    pub fn render(&self) -> Vec<u8> {
        let mut out = format!("@{}", self.status).into_bytes();
        for (name, value) in &self.headers {
            out.extend_from_slice(format!(" {name}:{value}").as_bytes());
        }
        out.push(b'\n');
        if let Body::Bytes(bytes) = &self.body {
            out.extend_from_slice(bytes);
        }
        out
    }
}

fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Splits a script (the target's input after its selector bytes) into replies.
pub fn parse_script(script: &[u8]) -> VecDeque<Reply> {
    let sep = SEPARATOR.as_bytes();
    let mut replies = VecDeque::new();
    let mut rest = script;
    while replies.len() < MAX_REPLIES {
        match rest.windows(sep.len()).position(|w| w == sep) {
            Some(i) => {
                replies.push_back(Reply::parse(&rest[..i]));
                rest = &rest[i + sep.len()..];
            }
            None => {
                replies.push_back(Reply::parse(rest));
                break;
            }
        }
    }
    replies
}

/// Where replies come from in one session.
#[derive(Debug, Clone)]
pub enum Source {
    Script(VecDeque<Reply>),
    /// A captured tree: the folder that holds the ServiceRoot's `index.json`.
    Tree(PathBuf),
}

/// One request and what was written back.
#[derive(Debug, Clone)]
pub struct Served {
    pub method: String,
    pub path: String,
    pub reply: Reply,
    /// The body's size as the reply framed it (streamed: the whole stream).
    pub body_len: u64,
    /// Body bytes actually written before the client stopped reading or hung up.
    pub body_written: u64,
}

#[derive(Default)]
struct State {
    source: Option<Source>,
    served: Vec<Served>,
}

/// The one server of the process (libFuzzer calls a target millions of times).
pub struct ScriptedBmc {
    port: u16,
    state: Arc<Mutex<State>>,
    runtime: tokio::runtime::Runtime,
    /// One session at a time (the replay test runs targets on several threads).
    session: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The process's server, started on first use.
pub fn bmc() -> &'static ScriptedBmc {
    static BMC: OnceLock<ScriptedBmc> = OnceLock::new();
    BMC.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime for the scripted BMC");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local address").port();
        let state = Arc::new(Mutex::new(State::default()));
        let accept_state = state.clone();
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                // Small replies go out at once (no Nagle wait for the client's delayed ACK).
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_connection(stream, accept_state.clone()));
            }
        });
        ScriptedBmc { port, state, runtime, session: Mutex::new(()) }
    })
}

impl ScriptedBmc {
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Runs `session` (given the port) against `source` and returns its result and what was served.
    pub fn session<F, T>(&self, source: Source, session: impl FnOnce(u16) -> F) -> (T, Vec<Served>)
    where
        F: std::future::Future<Output = T>,
    {
        let _one = lock(&self.session);
        {
            let mut state = lock(&self.state);
            state.source = Some(source);
            state.served.clear();
        }
        let out = self.runtime.block_on(session(self.port));
        let mut state = lock(&self.state);
        state.source = None;
        (out, std::mem::take(&mut state.served))
    }
}

/// A script that replays `served` (the first `selector` bytes are the target's own).
pub fn script_of(selector: &[u8], served: &[Served]) -> Vec<u8> {
    let mut out = selector.to_vec();
    for (i, s) in served.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(SEPARATOR.as_bytes());
        }
        out.extend_from_slice(&s.reply.render());
    }
    out
}

struct Request {
    method: String,
    target: String,
    keep_alive: bool,
}

async fn serve_connection(stream: TcpStream, state: Arc<Mutex<State>>) {
    let mut stream = BufReader::new(stream);
    loop {
        let Some(request) = read_request(&mut stream).await else { return };
        let reply = next_reply(&state, &request);
        let (written, body_len, keep) = write_reply(stream.get_mut(), &reply).await;
        lock(&state).served.push(Served {
            method: request.method,
            path: request.target,
            reply,
            body_len,
            body_written: written.unwrap_or_else(|w| w),
        });
        if written.is_err() || !keep || !request.keep_alive {
            return;
        }
    }
}

/// Reads one request (head and body, `Content-Length` or chunked); `None` at EOF or on garbage.
async fn read_request(stream: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if stream.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?.to_string();
    let mut length = 0u64;
    let mut chunked = false;
    let mut keep_alive = true;
    let mut head = 0usize;
    loop {
        let mut h = String::new();
        let n = stream.read_line(&mut h).await.ok()?;
        head += n;
        if n == 0 || head > 64 * 1024 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().ok()?,
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "connection" => keep_alive = !value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    if chunked {
        loop {
            let mut size = String::new();
            stream.read_line(&mut size).await.ok()?;
            let size = u64::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            discard(stream, size + 2).await?;
            if size == 0 {
                break;
            }
        }
    } else {
        discard(stream, length).await?;
    }
    Some(Request { method, target, keep_alive })
}

async fn discard(stream: &mut BufReader<TcpStream>, n: u64) -> Option<()> {
    let copied = tokio::io::copy(&mut stream.take(n), &mut tokio::io::sink()).await.ok()?;
    (copied == n).then_some(())
}

fn next_reply(state: &Mutex<State>, request: &Request) -> Reply {
    let mut state = lock(state);
    match &mut state.source {
        Some(Source::Script(replies)) => replies.pop_front().unwrap_or_else(not_found),
        Some(Source::Tree(root)) => tree_reply(root, request),
        None => not_found(),
    }
}

fn not_found() -> Reply {
    Reply { status: 404, headers: Vec::new(), body: Body::Bytes(Vec::new()) }
}

/// The captured document at the request's path (`GET` only; anything else is 405).
fn tree_reply(root: &Path, request: &Request) -> Reply {
    if request.method != "GET" {
        return Reply { status: 405, headers: Vec::new(), body: Body::Bytes(Vec::new()) };
    }
    let path = request.target.split(['?', '#']).next().unwrap_or_default();
    let Some(rest) = path.strip_prefix("/redfish/v1") else { return not_found() };
    let mut file = root.to_path_buf();
    for segment in rest.split('/').filter(|s| !s.is_empty()) {
        if segment == ".." || segment == "." {
            return not_found();
        }
        file.push(segment);
    }
    file.push("index.json");
    match std::fs::read(&file) {
        Ok(bytes) => Reply { status: 200, headers: Vec::new(), body: Body::Bytes(bytes) },
        Err(_) => not_found(),
    }
}

/// Writes `reply`; returns `Ok(body bytes)` when all was written, `Err(written)` when the client
/// hung up first, the body's framed length, and whether the connection can be reused.
async fn write_reply(stream: &mut TcpStream, reply: &Reply) -> (Result<u64, u64>, u64, bool) {
    let reason = if reply.status < 300 { "OK" } else { "Status" };
    let mut head = format!("HTTP/1.1 {} {reason}\r\n", reply.status);
    for (name, value) in &reply.headers {
        if !name.eq_ignore_ascii_case("content-length") && !name.eq_ignore_ascii_case("transfer-encoding") {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    let (body_len, keep) = match &reply.body {
        Body::Bytes(b) => {
            head.push_str(&format!("Content-Length: {}\r\nContent-Type: application/json\r\n\r\n", b.len()));
            (b.len() as u64, true)
        }
        Body::Stream { mib } => {
            head.push_str("Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n");
            (mib * 1024 * 1024, false)
        }
        Body::Declared { declared, .. } => {
            head.push_str(&format!("Content-Length: {declared}\r\nConnection: close\r\n\r\n"));
            (*declared, false)
        }
    };
    let written = match &reply.body {
        // Head and body in one write: one segment for a small reply.
        Body::Bytes(b) | Body::Declared { bytes: b, .. } => {
            let mut all = head.into_bytes();
            all.extend_from_slice(b);
            match stream.write_all(&all).await {
                Ok(()) => Ok(b.len() as u64),
                Err(_) => Err(0),
            }
        }
        Body::Stream { mib } => match stream.write_all(head.as_bytes()).await {
            Ok(()) => write_stream(stream, *mib).await,
            Err(_) => Err(0),
        },
    };
    let _ = stream.flush().await;
    (written, body_len, keep)
}

async fn write_stream(stream: &mut TcpStream, mib: u64) -> Result<u64, u64> {
    const CHUNK: usize = 64 * 1024;
    let mut chunk = format!("{CHUNK:x}\r\n").into_bytes();
    chunk.push(b'[');
    chunk.extend(std::iter::repeat_n(b' ', CHUNK - 1));
    chunk.extend_from_slice(b"\r\n");
    let mut written = 0u64;
    while written < mib * 1024 * 1024 {
        if stream.write_all(&chunk).await.is_err() {
            return Err(written);
        }
        written += CHUNK as u64;
    }
    if stream.write_all(b"0\r\n\r\n").await.is_err() {
        return Err(written);
    }
    Ok(written)
}
