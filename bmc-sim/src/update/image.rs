//! What a simulated firmware image is: a first line
//! `HOSTFW-SIM-IMAGE applies_to=<regex on member Id> version=<version> [activation=<a>]`
//! followed by any padding. `activation` (`immediate|reset|ac_cycle|manager_reset`, see
//! `activation`) is optional; a bad value makes the image unrecognised. Owns building and
//! recognising images, streamed chunk by chunk; never touches host state.

use regex::Regex;

use crate::update::activation::Activation;

/// The magic first word of a simulator image.
pub const IMAGE_MAGIC: &str = "HOSTFW-SIM-IMAGE";
/// Largest image the UpdateService accepts (advertised as `MaxImageSizeBytes`; more → 413).
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;
/// The header line must end within this many bytes; longer first lines are "not recognised".
const MAX_HEADER_BYTES: usize = 4096;

/// Build an image the simulator recognises: header line plus `padding` filler bytes.
/// `applies_to` is a regex matched (unanchored) against inventory member Ids; no spaces.
pub fn firmware_image(applies_to: &str, version: &str, padding: usize) -> Vec<u8> {
    let mut out = format!("{IMAGE_MAGIC} applies_to={applies_to} version={version}\n").into_bytes();
    pad(&mut out, padding);
    out
}

/// Like [`firmware_image`], with an `activation=` requirement that overrides the apply time
/// for this image (e.g. [`Activation::AcCycle`]: staged until a Chassis PowerCycle).
pub fn firmware_image_with_activation(
    applies_to: &str,
    version: &str,
    activation: Activation,
    padding: usize,
) -> Vec<u8> {
    let mut out =
        format!("{IMAGE_MAGIC} applies_to={applies_to} version={version} activation={}\n", activation.as_str())
            .into_bytes();
    pad(&mut out, padding);
    out
}

fn pad(out: &mut Vec<u8>, padding: usize) {
    out.extend((0..padding).map(|i| b"0123456789abcdef"[i % 16]));
}

/// A recognised image header.
#[derive(Debug, Clone)]
pub struct ImageHeader {
    /// Matched against inventory member Ids (unanchored).
    pub applies_to: Regex,
    /// The version the image installs.
    pub version: String,
    /// The image's own activation requirement, when its header names one.
    pub activation: Option<Activation>,
}

/// Parse the first line; `None` means "image not recognised".
pub fn parse_header(first_line: &str) -> Option<ImageHeader> {
    let mut words = first_line.trim_end_matches(['\r', '\n']).split(' ').filter(|w| !w.is_empty());
    if words.next()? != IMAGE_MAGIC {
        return None;
    }
    let (mut applies_to, mut version, mut activation) = (None, None, None);
    for word in words {
        match word.split_once('=') {
            Some(("applies_to", v)) if !v.is_empty() => applies_to = Some(v),
            Some(("version", v)) if !v.is_empty() => version = Some(v),
            Some(("activation", v)) => activation = Some(Activation::parse(v)?),
            _ => {} // unknown keys are ignored: newer images stay readable
        }
    }
    Some(ImageHeader { applies_to: Regex::new(applies_to?).ok()?, version: version?.to_string(), activation })
}

/// The image grew past [`MAX_IMAGE_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageTooLarge;

/// Receives an image chunk by chunk, keeping only the first line and the size.
#[derive(Debug, Default)]
pub struct ImageSink {
    head: Vec<u8>,
    head_done: bool,
    size: u64,
}

/// What was received.
#[derive(Debug, Clone)]
pub struct ReceivedImage {
    pub header: Option<ImageHeader>,
    pub size: u64,
}

impl ImageSink {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add the next chunk of the image.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), ImageTooLarge> {
        self.size += chunk.len() as u64;
        if self.size > MAX_IMAGE_BYTES {
            return Err(ImageTooLarge);
        }
        if !self.head_done {
            let room = MAX_HEADER_BYTES + 1 - self.head.len();
            let take = &chunk[..chunk.len().min(room)];
            match take.iter().position(|&b| b == b'\n') {
                Some(nl) => {
                    self.head.extend_from_slice(&take[..nl]);
                    self.head_done = true;
                }
                None => {
                    self.head.extend_from_slice(take);
                    self.head_done = self.head.len() > MAX_HEADER_BYTES;
                }
            }
        }
        Ok(())
    }

    /// The image is complete.
    pub fn finish(self) -> ReceivedImage {
        let header = if self.head.len() > MAX_HEADER_BYTES {
            None
        } else {
            std::str::from_utf8(&self.head).ok().and_then(parse_header)
        };
        ReceivedImage { header, size: self.size }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receive(bytes: &[u8], chunk: usize) -> ReceivedImage {
        let mut sink = ImageSink::new();
        for c in bytes.chunks(chunk.max(1)) {
            sink.push(c).unwrap();
        }
        sink.finish()
    }

    #[test]
    fn built_images_are_recognised_in_any_chunking() {
        let img = firmware_image("BIOS", "2.2.0", 10_000);
        for chunk in [1, 7, 64, 100_000] {
            let r = receive(&img, chunk);
            let h = r.header.expect("recognised");
            assert_eq!(h.version, "2.2.0");
            assert!(h.applies_to.is_match("Installed-159-2.1.0__BIOS.Setup.1-1"));
            assert_eq!(r.size, img.len() as u64);
        }
    }

    #[test]
    fn junk_is_not_recognised() {
        assert!(receive(b"MZ\x90\x00 garbage", 4).header.is_none());
        assert!(receive(b"HOSTFW-SIM-IMAGE version=1\n", 4).header.is_none());
        assert!(receive(b"HOSTFW-SIM-IMAGE applies_to=( version=1\n", 4).header.is_none());
        assert!(receive(&vec![b'x'; 10_000], 512).header.is_none());
        assert!(receive(b"", 1).header.is_none());
    }

    #[test]
    fn header_without_newline_and_crlf() {
        assert!(receive(b"HOSTFW-SIM-IMAGE applies_to=BMC version=9", 3).header.is_some());
        let r = receive(b"HOSTFW-SIM-IMAGE applies_to=BMC version=9 extra=1\r\npad", 5);
        assert_eq!(r.header.unwrap().version, "9");
    }

    #[test]
    fn activation_key() {
        let h = receive(&firmware_image("BIOS", "1", 0), 8).header.unwrap();
        assert_eq!(h.activation, None);
        let img = firmware_image_with_activation("^CPLD", "2.0", Activation::AcCycle, 100);
        let h = receive(&img, 8).header.unwrap();
        assert_eq!(h.activation, Some(Activation::AcCycle));
        assert_eq!(h.version, "2.0");
        let h = receive(b"HOSTFW-SIM-IMAGE applies_to=^CPLD version=2.0 activation=manager_reset\n", 4).header.unwrap();
        assert_eq!(h.activation, Some(Activation::ManagerReset));
        assert!(
            receive(b"HOSTFW-SIM-IMAGE applies_to=X version=1 activation=later\n", 4).header.is_none(),
            "a bad activation value is not silently ignored"
        );
    }
}
