//! Keeping only the tail of a stream: the last N characters of a script's stdout or stderr, in
//! bounded memory however much the script prints, with secrets (a BMC password) scrubbed.

use tokio::io::{AsyncRead, AsyncReadExt};

/// The most recent bytes of a stream, enough to hold its last `limit` characters.
#[derive(Debug)]
pub(crate) struct Tail {
    limit: usize,
    /// Bytes kept: `limit` characters of up to 4 bytes each, plus one split character.
    keep: usize,
    buf: Vec<u8>,
}

impl Tail {
    pub(crate) fn new(limit: usize) -> Self {
        Tail { limit, keep: limit * 4 + 4, buf: Vec::new() }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        // Trim in batches so a chatty script costs amortised O(1) per byte.
        if self.buf.len() > self.keep * 2 {
            let excess = self.buf.len() - self.keep;
            self.buf.drain(..excess);
        }
    }

    /// A tail that can give `limit` characters after `secrets` are scrubbed: it keeps enough
    /// more that a secret cut at the start of the kept text is still whole, or not there at all.
    pub(crate) fn for_secrets(limit: usize, secrets: &[String]) -> Self {
        let longest = secrets.iter().map(|s| s.chars().count()).max().unwrap_or(0);
        Tail::new(limit + longest)
    }

    /// The last `limit` characters (invalid UTF-8 replaced).
    pub(crate) fn finish(&self) -> String {
        last_chars(&String::from_utf8_lossy(&self.buf), self.limit)
    }

    /// The last `limit` characters after `secrets` are replaced by `****`.
    pub(crate) fn finish_scrubbed(&self, limit: usize, secrets: &[String]) -> String {
        last_chars(&scrub(&self.finish(), secrets), limit)
    }
}

/// `text` with every (non-empty) secret replaced by `****`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_string();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        text = text.replace(secret.as_str(), "****");
    }
    text
}

/// The last `limit` characters of `text`.
pub fn last_chars(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text.to_string();
    }
    let start = text.char_indices().nth(count - limit).map_or(text.len(), |(i, _)| i);
    text[start..].to_string()
}

/// Read `stream` to its end into `tail`; a read error ends it like EOF.
pub(crate) async fn pump(mut stream: impl AsyncRead + Unpin, tail: &mut Tail) {
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => tail.push(&chunk[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_characters() {
        assert_eq!(last_chars("hello", 10), "hello");
        assert_eq!(last_chars("hello", 3), "llo");
        assert_eq!(last_chars("héllo wörld", 4), "örld");
    }

    #[test]
    fn bounded_buffer_keeps_the_tail_of_multibyte_text() {
        let mut tail = Tail::new(5);
        for _ in 0..1000 {
            tail.push("ü€x".as_bytes());
        }
        tail.push(b"END");
        assert!(tail.buf.len() <= tail.keep * 2);
        assert_eq!(tail.finish(), "€xEND");
    }

    #[test]
    fn secrets_are_scrubbed_even_at_the_cut() {
        let secrets = vec!["hunter2".to_string()];
        let mut tail = Tail::for_secrets(10, &secrets);
        tail.push(b"login root:hunter2 ok");
        assert_eq!(tail.finish_scrubbed(10, &secrets), "ot:**** ok");
        let mut tail = Tail::for_secrets(3, &secrets);
        tail.push(b"xxhunter2");
        assert_eq!(tail.finish_scrubbed(3, &secrets), "***");
    }
}
