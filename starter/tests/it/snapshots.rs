//! The human output of a few commands, pinned: `plan`, `compliance`, `managed-host show` and the
//! report `watch` prints, each on the same offline site (`site_with_unreported_versions`: m1 with a
//! version not reported, m2 drifted, m3 compliant), compared exactly with a checked-in file under
//! `tests/it/snapshots/<name>.txt`. `HOSTFW_BLESS=1 cargo test -p hostfw-starter --test it
//! snapshot` rewrites the files from the output (review the diff before committing it).
//!
//! Only what varies per run is normalised, and said where it is: the site's temporary directory
//! (`<site>`), times (`<time>`) and how long `watch` watched (`watched for <duration>`). The
//! site's Temporal address is port 1, where nothing listens, so `managed-host show` says the same
//! "unavailable" whatever runs on the machine.
//! Owns the pinning; the meaning of the output is asserted by the other modules.

use std::path::PathBuf;

use crate::common::{site_with_unreported_versions, Site};

/// `site_with_unreported_versions` with Temporal on port 1 (nothing listens there).
async fn site() -> Site {
    let site = site_with_unreported_versions().await;
    site.reconfigure(|toml| toml.temporal_port(1));
    site
}

/// `out` with what varies per run replaced by placeholders.
fn normalise(site: &Site, out: &str) -> String {
    let times = regex::Regex::new(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?").unwrap();
    let watched = regex::Regex::new(r"watched for \d+(\.\d+)?s").unwrap();
    let out = out.replace(site.dir.to_str().unwrap(), "<site>");
    let out = times.replace_all(&out, "<time>");
    watched.replace_all(&out, "watched for <duration>").into_owned()
}

/// Compare `actual` with `snapshots/<name>.txt`, or write it there with `HOSTFW_BLESS=1`.
fn assert_snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/snapshots").join(format!("{name}.txt"));
    if std::env::var("HOSTFW_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (HOSTFW_BLESS=1 writes it)", path.display()));
    assert!(
        expected == actual,
        "{name}: the output differs from {} (HOSTFW_BLESS=1 rewrites it)\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

#[tokio::test]
async fn snapshot_plan() {
    let site = site().await;
    let out = site.ok(&["plan"]).await;
    assert_snapshot("plan", &normalise(&site, &out));
}

#[tokio::test]
async fn snapshot_compliance() {
    let site = site().await;
    let out = site.ok(&["compliance"]).await;
    assert_snapshot("compliance", &normalise(&site, &out));
}

#[tokio::test]
async fn snapshot_managed_host_show() {
    let site = site().await;
    let out = site.ok(&["managed-host", "show", "m2"]).await;
    assert_snapshot("managed_host_show", &normalise(&site, &out));
}

/// The ceiling is 0 and m2 drifts: `watch` stops at once (nothing can change without an
/// operator), prints its report and fails saying so.
#[tokio::test]
async fn snapshot_watch_report() {
    let site = site().await;
    let (res, out) = site.run(&["watch", "--timeout-secs", "5"]).await;
    let err = res.expect_err("a watch stuck at a zero ceiling fails");
    assert_snapshot("watch_report", &normalise(&site, &format!("{out}--- error\n{err:#}\n")));
}
