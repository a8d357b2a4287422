//! Scrubbing secrets out of a script's output *as it streams*, before any of it is cut to a
//! tail: [`Scrubber`] replaces every form of every secret by `****` and holds back only the
//! bytes that could still be the start of one. Because the kept tail is cut from text that is
//! already scrubbed, no cut can leave a fragment of a secret behind.
//!
//! The forms of a secret ([`forms`]) are the ones a script prints without meaning to: the secret
//! itself (`set -x`, `echo`), percent-encoded (a URL, `curl --data-urlencode`), and base64 at
//! each of the three alignments it can have inside a longer base64 text (curl `-v` prints
//! `Authorization: Basic base64(user:password)`; the password sits at some offset in it). For
//! base64, only the characters that depend on the secret's bytes alone are matched, so the form
//! is found whatever comes before and after it.
//!
//! Owns no I/O: [`crate::tail`] keeps the scrubbed bytes, [`crate::run`] feeds both.

use base64::Engine;

/// What a secret is replaced by.
pub(crate) const MASK: &[u8] = b"****";

/// Shortest derived form (percent-encoded, base64) that is matched: shorter ones would mask
/// ordinary text. The secret itself is matched at any length.
const MIN_DERIVED_LEN: usize = 4;

/// Every form of `secret` a script may print (see the module doc), longest first, no duplicates.
pub fn forms(secret: &str) -> Vec<String> {
    if secret.is_empty() {
        return Vec::new();
    }
    let mut out = vec![secret.to_string()];
    let mut derived = vec![percent_encode(secret, false), percent_encode(secret, true)];
    let bytes = secret.as_bytes();
    for offset in 0..3usize {
        let mut padded = vec![0u8; offset];
        padded.extend_from_slice(bytes);
        for engine in [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::URL_SAFE] {
            let encoded = engine.encode(&padded);
            // Character i covers bits [6i, 6i + 6) of the padded bytes: it depends on the secret
            // alone from the first one past the padding up to the last one whole inside it.
            let start = (8 * offset).div_ceil(6);
            let end = (8 * (offset + bytes.len())) / 6;
            if end > start {
                derived.push(encoded[start..end].to_string());
            }
        }
    }
    out.extend(derived.into_iter().filter(|d| d.len() >= MIN_DERIVED_LEN));
    out.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    out.dedup();
    out
}

/// `text` percent-encoded (every byte but RFC 3986's unreserved ones), in lower or upper hex.
fn percent_encode(text: &str, lower: bool) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else if lower {
            out.push_str(&format!("%{b:02x}"));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A streaming scrubber: bytes in, scrubbed bytes out, in order.
#[derive(Debug, Clone)]
pub(crate) struct Scrubber {
    /// Every form of every secret, longest first.
    patterns: Vec<Vec<u8>>,
    /// Input not yet decided: a proper prefix of some pattern at the end of what came so far.
    pending: Vec<u8>,
}

impl Scrubber {
    pub(crate) fn new(secrets: &[String]) -> Self {
        let mut patterns: Vec<Vec<u8>> = secrets.iter().flat_map(|s| forms(s)).map(String::into_bytes).collect();
        patterns.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        patterns.dedup();
        Scrubber { patterns, pending: Vec::new() }
    }

    /// Scrub `bytes` (the next part of the stream) and hand what is decided to `out`.
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut impl FnMut(&[u8])) {
        if self.patterns.is_empty() {
            out(bytes);
            return;
        }
        let mut data = std::mem::take(&mut self.pending);
        data.extend_from_slice(bytes);
        let mut emitted = 0;
        let mut i = 0;
        while i < data.len() {
            let rest = &data[i..];
            if let Some(p) = self.patterns.iter().find(|p| rest.starts_with(p)) {
                out(&data[emitted..i]);
                out(MASK);
                i += p.len();
                emitted = i;
                continue;
            }
            if self.patterns.iter().any(|p| p.len() > rest.len() && p.starts_with(rest)) {
                // Could still become a secret: decide when more arrives (or at the end).
                break;
            }
            i += 1;
        }
        out(&data[emitted..i]);
        self.pending = data[i..].to_vec();
    }

    /// The stream ended: what was held back is no secret (it never became one).
    pub(crate) fn finish(&mut self, out: &mut impl FnMut(&[u8])) {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            out(&pending);
        }
    }
}

/// `text` with every form of every (non-empty) secret replaced by `****`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut scrubber = Scrubber::new(secrets);
    let mut out = Vec::new();
    scrubber.push(text.as_bytes(), &mut |b| out.extend_from_slice(b));
    scrubber.finish(&mut |b| out.extend_from_slice(b));
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_cover_the_encodings_a_script_prints() {
        let f = forms("p@ss w0rd/16char");
        assert!(f.contains(&"p@ss w0rd/16char".to_string()));
        assert!(f.contains(&"p%40ss%20w0rd%2F16char".to_string()));
        assert!(f.contains(&"p%40ss%20w0rd%2f16char".to_string()));
        // curl -v: the Basic header of admin:<password> holds one of the base64 forms.
        let header = base64::engine::general_purpose::STANDARD.encode("admin:p@ss w0rd/16char");
        assert!(f.iter().any(|form| header.contains(form.as_str())), "{header} {f:?}");
        assert_eq!(
            scrub(&format!("Authorization: Basic {header}"), &["p@ss w0rd/16char".into()]).matches("****").count(),
            1
        );
        assert!(forms("").is_empty());
        // Longest first, so a longer form wins over the secret inside it.
        assert!(f.windows(2).all(|w| w[0].len() >= w[1].len()));
    }

    #[test]
    fn a_secret_split_across_pushes_is_still_scrubbed() {
        let secret = "hunter2hunter2".to_string();
        let text = format!("a {secret} b {secret}");
        for cut in 0..=text.len() {
            let mut s = Scrubber::new(std::slice::from_ref(&secret));
            let mut out = Vec::new();
            s.push(&text.as_bytes()[..cut], &mut |b| out.extend_from_slice(b));
            s.push(&text.as_bytes()[cut..], &mut |b| out.extend_from_slice(b));
            s.finish(&mut |b| out.extend_from_slice(b));
            assert_eq!(String::from_utf8(out).unwrap(), "a **** b ****", "cut at {cut}");
        }
    }

    #[test]
    fn a_prefix_that_never_completes_is_given_back() {
        assert_eq!(scrub("say hunt", &["hunter2".into()]), "say hunt");
        assert_eq!(scrub("hunthunter2", &["hunter2".into()]), "hunt****");
    }
}
