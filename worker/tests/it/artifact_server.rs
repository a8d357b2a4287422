//! The artifact server over real HTTP: a URL minted by the activity side fetches the file (from
//! this worker and from another sharing the site key); a changed path, changed expiry, bad or
//! malformed MAC, expired link, another site key, the old unsigned routes and `..` are refused.

use std::time::Duration;

use hostfw_activities::artifact_url::{now_unix, ArtifactUrls};
use hostfw_store::SiteKey;
use hostfw_worker::serve_artifacts;

struct Server {
    _dir: tempfile::TempDir,
    base: String,
}

/// A server over a firmware directory holding `fw/bmc.bin` and a Scout directory holding
/// `dell/r760/bmc/upgrade.sh`, checking URLs with `key`.
async fn server(key: &SiteKey) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let (fw, scout) = (dir.path().join("firmware"), dir.path().join("scout"));
    std::fs::create_dir_all(fw.join("fw")).unwrap();
    std::fs::create_dir_all(scout.join("dell/r760/bmc")).unwrap();
    std::fs::write(fw.join("fw/bmc.bin"), b"IMAGE-BYTES").unwrap();
    std::fs::write(scout.join("dell/r760/bmc/upgrade.sh"), b"#!/bin/sh\nexit 0\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), b"outside").unwrap();
    let urls = ArtifactUrls::new(Some(key), "http://unused", Duration::from_secs(60));
    let (addr, _task) = serve_artifacts(fw, scout, "127.0.0.1:0", urls).await.unwrap();
    Server { _dir: dir, base: format!("http://{addr}") }
}

async fn get(url: &str) -> (u16, String) {
    let resp = reqwest::get(url).await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

/// `minted` re-rooted on `base` (the minting side's base URL is not the test server's).
fn on(base: &str, minted: &str) -> String {
    format!("{base}{}", &minted[minted.find("/a/").expect("a signed URL")..])
}

#[tokio::test]
async fn minted_urls_fetch_and_tampered_ones_are_refused() {
    let key = SiteKey::from_bytes([5; 32]);
    let s = server(&key).await;
    let urls = ArtifactUrls::new(Some(&key), "http://bmc-facing:8089/", Duration::from_secs(600));

    let minted = urls.artifact("fw/bmc.bin");
    assert!(minted.starts_with("http://bmc-facing:8089/a/"), "{minted}");
    assert_eq!(get(&on(&s.base, &minted)).await, (200, "IMAGE-BYTES".into()));
    let script = urls.scout_script("dell/r760/bmc/upgrade.sh");
    assert_eq!(get(&on(&s.base, &script)).await.0, 200);

    // A worker sharing the site key accepts the other's URLs.
    let peer = server(&key).await;
    assert_eq!(get(&on(&peer.base, &minted)).await.0, 200);

    let good = on(&s.base, &minted);
    let changed_path = good.replace("fw/bmc.bin", "fw/bmc.bix");
    assert_eq!(get(&changed_path).await, (403, "bad signature".into()));
    let as_script = good.replace("/artifacts/", "/scout-scripts/");
    assert_eq!(get(&as_script).await.0, 403);

    let parts: Vec<&str> = good.split('/').collect(); // http: "" host a expiry mac artifacts ...
    let (expiry, mac) = (parts[4], parts[5]);
    let later: u64 = expiry.parse::<u64>().unwrap() + 3600;
    assert_eq!(get(&good.replace(&format!("/{expiry}/"), &format!("/{later}/"))).await.0, 403);
    let mut flipped = mac.to_string();
    flipped.replace_range(0..1, if mac.starts_with('0') { "1" } else { "0" });
    assert_eq!(get(&good.replace(mac, &flipped)).await, (403, "bad signature".into()));
    assert_eq!(get(&good.replace(mac, "zz")).await, (403, "malformed signed URL".into()));

    // Expired: a correctly signed URL whose expiry has passed.
    let expired = urls.url("artifacts/fw/bmc.bin", now_unix() - 1);
    let (status, body) = get(&on(&s.base, &expired)).await;
    assert_eq!(status, 410, "{body}");
    assert!(body.contains("expired"), "{body}");

    // Another site's key.
    let foreign = ArtifactUrls::new(Some(&SiteKey::from_bytes([6; 32])), "http://x", Duration::from_secs(60));
    assert_eq!(get(&on(&s.base, &foreign.artifact("fw/bmc.bin"))).await.0, 403);

    // The unsigned routes of earlier versions are gone.
    assert_eq!(get(&format!("{}/artifacts/fw/bmc.bin", s.base)).await.0, 404);
    assert_eq!(get(&format!("{}/scout-scripts/dell/r760/bmc/upgrade.sh", s.base)).await.0, 404);

    // A signed `..` still does not leave the directory (`%2F` keeps the client from normalising it).
    let escape = urls.url("artifacts/../secret.txt", now_unix() + 60);
    let raw = on(&s.base, &escape).replace("/../", "/..%2F");
    let (status, body) = get(&raw).await;
    assert_eq!(status, 400, "{raw}: {body}");
    assert!(!body.contains("outside"), "{body}");
}

/// The process's peak resident memory so far (`VmHWM`), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/self/status");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// Set in the child process that runs [`a_large_image_is_streamed_with_its_length_and_digest`]
/// alone.
const ISOLATED: &str = "HOSTFW_ARTIFACT_STREAM_ISOLATED";

/// A 128 MiB image (sparse: a marker at both ends, zeros between) is served whole, with its
/// length (GET and HEAD) and digest, and streamed: the process's peak memory grows by far less
/// than the file (read whole, it would grow by at least its size). Peak memory is per process,
/// and the other tests of this binary run in threads beside it: the measurement runs in a child
/// process of this test binary that runs this test alone.
#[tokio::test]
async fn a_large_image_is_streamed_with_its_length_and_digest() {
    if std::env::var_os(ISOLATED).is_some() {
        return streamed_in_this_process().await;
    }
    let name = "artifact_server::a_large_image_is_streamed_with_its_length_and_digest";
    let out = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env(ISOLATED, "1")
        .output()
        .await
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "the isolated run failed:\n{text}");
}

async fn streamed_in_this_process() {
    use sha2::{Digest, Sha256};
    const SIZE: u64 = 128 * 1024 * 1024;
    let key = SiteKey::from_bytes([5; 32]);
    let s = server(&key).await;
    let path = s._dir.path().join("firmware/fw/big.bin");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(b"HEAD-MARKER").unwrap();
        f.seek(SeekFrom::Start(SIZE - 11)).unwrap();
        f.write_all(b"TAIL-MARKER").unwrap();
    }
    let want = {
        let mut h = Sha256::new();
        let mut f = std::fs::File::open(&path).unwrap();
        std::io::copy(&mut f, &mut h).unwrap();
        hex::encode(h.finalize())
    };
    let urls = ArtifactUrls::new(Some(&key), "http://unused", Duration::from_secs(600));
    let url = on(&s.base, &urls.artifact("fw/big.bin"));

    let before = peak_rss();
    let mut resp = reqwest::get(&url).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.content_length(), Some(SIZE));
    let (mut h, mut n) = (Sha256::new(), 0u64);
    while let Some(chunk) = resp.chunk().await.unwrap() {
        n += chunk.len() as u64;
        h.update(&chunk);
    }
    assert_eq!(n, SIZE);
    assert_eq!(hex::encode(h.finalize()), want);
    let grew = peak_rss().saturating_sub(before);
    assert!(grew < SIZE / 2, "peak memory grew by {grew} bytes serving a {SIZE}-byte file: it was read whole");
    let head = reqwest::Client::new().head(&url).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-length"], SIZE.to_string().as_str());
}
