//! Keeping only the tail of a stream: the last N characters of a script's stdout or stderr, in
//! bounded memory however much the script prints, with secrets (a BMC password, in every form
//! `scrub` knows) scrubbed from the whole stream *before* it is cut, so no cut leaves a fragment
//! of one.

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::scrub::Scrubber;

/// The most recent bytes of a stream, scrubbed, enough to hold its last `limit` characters.
#[derive(Debug)]
pub(crate) struct Tail {
    limit: usize,
    /// Bytes kept: `limit` characters of up to 4 bytes each, plus one split character.
    keep: usize,
    buf: Vec<u8>,
    scrubber: Scrubber,
}

impl Tail {
    /// A tail of `limit` characters with every form of each of `secrets` replaced by `****`.
    pub(crate) fn new(limit: usize, secrets: &[String]) -> Self {
        Tail { limit, keep: limit * 4 + 4, buf: Vec::new(), scrubber: Scrubber::new(secrets) }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let buf = &mut self.buf;
        self.scrubber.push(bytes, &mut |b| buf.extend_from_slice(b));
        // Trim in batches so a chatty script costs amortised O(1) per byte.
        if self.buf.len() > self.keep * 2 {
            let excess = self.buf.len() - self.keep;
            self.buf.drain(..excess);
        }
    }

    /// The last `limit` characters of the scrubbed stream (invalid UTF-8 replaced).
    pub(crate) fn finish(&mut self) -> String {
        let buf = &mut self.buf;
        self.scrubber.finish(&mut |b| buf.extend_from_slice(b));
        last_chars(&String::from_utf8_lossy(&self.buf), self.limit)
    }
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
        let mut tail = Tail::new(5, &[]);
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
        let mut tail = Tail::new(10, &secrets);
        tail.push(b"login root:hunter2 ok");
        assert_eq!(tail.finish(), "ot:**** ok");
        let mut tail = Tail::new(3, &secrets);
        tail.push(b"xxhunter2");
        assert_eq!(tail.finish(), "***");
    }

    /// The property the issue asks for: for every secret form, every place the tail is cut and
    /// every way the stream is split into reads, no 4-character run of the secret or of the form
    /// the script printed survives in the kept tail.
    #[test]
    fn no_fragment_of_a_secret_survives_any_cut() {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        for secret in ["Zq7#pW2!xR9$kL4m", "pass word/%&=+?", "ÄÖÜ-sécret-ß"] {
            let printed = [
                secret.to_string(),
                crate::scrub::forms(secret).into_iter().find(|f| f.contains('%')).unwrap(),
                format!("Authorization: Basic {}", b64(&format!("admin:{secret}"))),
                format!("Authorization: Basic {}", b64(&format!("root:{secret}"))),
                b64(secret),
            ];
            for form in &printed {
                // Filler shares no character with the secrets or base64 ('*' aside).
                let stream = format!("{form}\n\u{2500}\u{2500}{form}\u{2500}\n{form}");
                // The secret's own characters, and those of each encoding of it the stream holds
                // (in a Basic header, the characters that encode the secret's bytes).
                let mut texts = vec![secret.to_string()];
                texts.extend(crate::scrub::forms(secret).into_iter().filter(|f| form.contains(f.as_str())));
                let runs = |t: &str| -> Vec<String> {
                    let mut runs = Vec::new();
                    for text in &texts {
                        let c: Vec<char> = text.chars().collect();
                        runs.extend(c.windows(4).map(|w| w.iter().collect::<String>()));
                    }
                    runs.into_iter().filter(|r| t.contains(r.as_str())).collect()
                };
                assert!(texts.len() >= 2 || form == secret, "{form:?}: an encoding of the secret is recognised");
                let chars = stream.chars().count();
                for limit in 0..=chars {
                    for split in [0, 1, 3, 7, stream.len() / 2, stream.len()] {
                        // Reads split anywhere, mid-character too.
                        let split = split.min(stream.len());
                        let mut tail = Tail::new(limit, &[secret.to_string()]);
                        tail.push(&stream.as_bytes()[..split]);
                        tail.push(&stream.as_bytes()[split..]);
                        let kept = tail.finish();
                        let left = runs(&kept);
                        assert!(left.is_empty(), "{form:?} cut to {limit}, split at {split}: {kept:?} keeps {left:?}");
                    }
                }
            }
        }
    }
}
