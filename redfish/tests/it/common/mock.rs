//! A scripted HTTP/1.1 BMC for edge cases bmc-sim does not produce: each (method, path) has a
//! queue of canned answers (the last one repeats), every request is logged; a query string no
//! route names is ignored (the resource is served as a static mockup server serves it). One request per
//! connection (`Connection: close`). Paths under a prefix can be answered slowly (`slow`), and
//! the mock counts how many of those requests it holds at once (`max_slow_in_flight`), so a test
//! can see the client's concurrency from the server's side. Helpers only: no assertions live here.
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One canned answer.
#[derive(Clone, Debug)]
pub enum Canned {
    Reply {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Close the connection without answering (a BMC rebooting mid-request).
    Drop,
    /// A 200 JSON-typed answer whose body is `chunk` repeated: `times` times (with a matching
    /// `Content-Length`), or without end and without a length when `times` is `None` (a BMC
    /// that keeps streaming). Writing stops when the client hangs up.
    Stream {
        chunk: String,
        times: Option<usize>,
    },
}

/// A body of `chunk` repeated `times` times, or endless (see `Canned::Stream`).
pub fn stream(chunk: &str, times: Option<usize>) -> Canned {
    Canned::Stream { chunk: chunk.to_string(), times }
}

/// A JSON answer.
pub fn json(status: u16, body: serde_json::Value) -> Canned {
    Canned::Reply { status, headers: vec![("Content-Type".into(), "application/json".into())], body: body.to_string() }
}

/// A JSON answer with extra headers.
pub fn json_h(status: u16, headers: &[(&str, &str)], body: serde_json::Value) -> Canned {
    let mut h: Vec<(String, String)> = headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    h.push(("Content-Type".into(), "application/json".into()));
    Canned::Reply { status, headers: h, body: body.to_string() }
}

/// An answer without a body.
pub fn empty(status: u16, headers: &[(&str, &str)]) -> Canned {
    Canned::Reply {
        status,
        headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        body: String::new(),
    }
}

/// A logged request.
#[derive(Clone, Debug)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

type Routes = Arc<Mutex<HashMap<(String, String), VecDeque<Canned>>>>;

/// Requests under `prefix` wait `delay` before their answer; `in_flight` counts those held now,
/// `max_in_flight` the most held at once.
#[derive(Default)]
struct Slow {
    prefix: Option<(String, Duration)>,
    in_flight: usize,
    max_in_flight: usize,
}

pub struct MockBmc {
    /// `ip:port` of the (plain-http) listener.
    pub address: String,
    routes: Routes,
    log: Arc<Mutex<Vec<Logged>>>,
    slow: Arc<Mutex<Slow>>,
    handle: JoinHandle<()>,
}

impl Drop for MockBmc {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

impl MockBmc {
    pub async fn start() -> MockBmc {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind mock");
        let address = listener.local_addr().expect("addr").to_string();
        let routes: Routes = Arc::default();
        let log: Arc<Mutex<Vec<Logged>>> = Arc::default();
        let slow: Arc<Mutex<Slow>> = Arc::default();
        let (r, l, sl) = (routes.clone(), log.clone(), slow.clone());
        let handle = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(handle_conn(stream, r.clone(), l.clone(), sl.clone()));
            }
        });
        MockBmc { address, routes, log, slow, handle }
    }

    /// Every request whose path starts with `prefix` waits `delay` before it is answered (a BMC
    /// that is slow to serve those resources).
    pub fn slow(&self, prefix: &str, delay: Duration) {
        self.slow.lock().unwrap().prefix = Some((prefix.to_string(), delay));
    }

    /// The most requests under the `slow` prefix the mock held at the same time.
    pub fn max_slow_in_flight(&self) -> usize {
        self.slow.lock().unwrap().max_in_flight
    }

    /// The mock's BMC address: plain http, written explicitly.
    pub fn bmc(&self) -> hostfw_model::BmcAddress {
        format!("http://{}", self.address).parse().expect("mock address")
    }

    /// Queues answers for `METHOD path` (the last one repeats forever).
    pub fn on(&self, method: &str, path: &str, answers: Vec<Canned>) {
        self.routes.lock().unwrap().insert((method.to_string(), path.to_string()), answers.into());
    }

    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().unwrap().clone()
    }

    /// How many requests hit `METHOD path`.
    pub fn hits(&self, method: &str, path: &str) -> usize {
        self.log().iter().filter(|l| l.method == method && l.path == path).count()
    }
}

fn header_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

async fn handle_conn(mut stream: TcpStream, routes: Routes, log: Arc<Mutex<Vec<Logged>>>, slow: Arc<Mutex<Slow>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_len = loop {
        if let Some(end) = header_end(&buf) {
            break end;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_len]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize =
        headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_len..].to_vec();
    while body.len() < length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    log.lock().unwrap().push(Logged { method: method.clone(), path: path.clone(), headers, body });
    let answer = {
        let mut routes = routes.lock().unwrap();
        // Like a static mockup server, a query no route names is ignored: the resource is served.
        let bare = path.split_once('?').map_or(path.as_str(), |(p, _)| p).to_string();
        let key = if routes.contains_key(&(method.clone(), path.clone())) { path.clone() } else { bare };
        match routes.get_mut(&(method.clone(), key)) {
            Some(queue) if queue.len() > 1 => queue.pop_front(),
            Some(queue) => queue.front().cloned(),
            None => None,
        }
    };
    let delay = {
        let mut slow = slow.lock().unwrap();
        let delay = match &slow.prefix {
            Some((prefix, delay)) if path.starts_with(prefix.as_str()) => Some(*delay),
            _ => None,
        };
        if delay.is_some() {
            slow.in_flight += 1;
            slow.max_in_flight = slow.max_in_flight.max(slow.in_flight);
        }
        delay
    };
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
        slow.lock().unwrap().in_flight -= 1;
    }
    let answer = answer.unwrap_or_else(|| {
        json(404, serde_json::json!({"error": {"message": format!("mock: no route for {method} {path}")}}))
    });
    match answer {
        Canned::Drop => {}
        Canned::Stream { chunk, times } => {
            let mut out = String::from("HTTP/1.1 200 X\r\nConnection: close\r\nContent-Type: application/json\r\n");
            if let Some(n) = times {
                out.push_str(&format!("Content-Length: {}\r\n", chunk.len() * n));
            }
            out.push_str("\r\n");
            if stream.write_all(out.as_bytes()).await.is_err() {
                return;
            }
            let mut left = times;
            while left != Some(0) {
                if stream.write_all(chunk.as_bytes()).await.is_err() {
                    return;
                }
                left = left.map(|n| n - 1);
            }
            let _ = stream.shutdown().await;
        }
        Canned::Reply { status, headers, body } => {
            let mut out = format!("HTTP/1.1 {status} X\r\nConnection: close\r\n");
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            if status != 204 {
                out.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            out.push_str("\r\n");
            out.push_str(&body);
            let _ = stream.write_all(out.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    }
}
