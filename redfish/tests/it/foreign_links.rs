//! Credentials go only to the BMC's own origin: a bmc-sim BMC whose links name another listener
//! (`foreign_links`, in every spelling a URL parser accepts, and a 307 redirect) must never make
//! the client connect there, in Basic or session mode, for a crawl, an upload or a reset.
//! Spellings that are unambiguous absolute URLs are rebased onto the BMC (and so work); the
//! others are refused with `ForeignLink`, naming the link. Must not synchronise with sleeps: the
//! listener's count is read after every client call has returned.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::*;
use hostfw_bmc_sim::{Fault, ForeignLinks, LinkSpelling};
use hostfw_redfish::{AuthMode, RedfishError, UploadRequest};
use tokio::net::TcpListener;

/// A listener that only counts the connections it is offered (and drops them).
async fn counting_listener() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let handle = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (addr, seen, handle)
}

fn refused(spelling: LinkSpelling) -> bool {
    !matches!(spelling, LinkSpelling::Absolute | LinkSpelling::UserInfo)
}

#[tokio::test]
async fn no_request_reaches_a_host_the_bmc_names() {
    let (elsewhere, seen, listener) = counting_listener().await;
    let (fleet, host) = one_host("upload_style = \"multipart\"").await;
    let dir = tempfile::tempdir().unwrap();
    let image = write_image(&dir, "bios.bin", &image_bytes("BIOS_0", "2.0", 100));
    for spelling in LinkSpelling::ALL {
        fleet
            .set_fault(
                "h1",
                Fault { foreign_links: Some(ForeignLinks { origin: elsewhere.clone(), spelling }), ..Fault::default() },
            )
            .expect("fault");
        for auth in [AuthMode::Basic, AuthMode::Session] {
            let client = client(&host, auth);
            let explored = client.explore().await;
            let uploaded = client.upload(&UploadRequest { file: image.clone(), ..Default::default() }).await;
            let reset = client.reset_system(&["ForceRestart"]).await;
            if refused(spelling) {
                for (what, e) in [("explore", explored.err()), ("upload", uploaded.err()), ("reset", reset.err())] {
                    match e {
                        Some(RedfishError::ForeignLink { link, .. }) => {
                            assert!(link.contains(&elsewhere), "{spelling:?} {auth:?} {what}: names the link: {link}")
                        }
                        other => panic!("{spelling:?} {auth:?} {what}: must be refused as a foreign link: {other:?}"),
                    }
                }
            } else {
                // Rebased onto the BMC: the crawl, the upload and the reset work.
                assert_eq!(explored.expect("rebased explore").members.len(), 2, "{spelling:?} {auth:?}");
                let task = uploaded.expect("rebased upload").task.expect("a task");
                let outcome = client.wait_task(&task, wait_opts(), |_| {}).await.expect("rebased task monitor");
                assert!(outcome.succeeded(), "{outcome:?}");
                reset.expect("rebased reset");
            }
            assert_eq!(seen.load(Ordering::SeqCst), 0, "{spelling:?} {auth:?}: nothing may reach the other host");
        }
    }
    fleet.set_fault("h1", Fault::default()).unwrap();
    client(&host, AuthMode::Basic).explore().await.expect("the BMC itself still works");
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    listener.abort();
    fleet.shutdown().await;
}

#[tokio::test]
async fn the_refusal_names_the_bmc_the_link_and_why() {
    let (elsewhere, seen, listener) = counting_listener().await;
    let (fleet, host) = one_host("").await;
    fleet
        .set_fault(
            "h1",
            Fault {
                foreign_links: Some(ForeignLinks { origin: elsewhere.clone(), spelling: LinkSpelling::SchemeRelative }),
                ..Fault::default()
            },
        )
        .unwrap();
    let e = client(&host, AuthMode::Basic).explore().await.expect_err("refused");
    let text = e.to_string();
    assert!(text.contains(&host.base_url), "names the BMC: {text}");
    assert!(text.contains(&format!("//{elsewhere}/redfish/v1/")), "names the link: {text}");
    assert!(text.contains("network-path reference"), "says why: {text}");
    assert!(!e.is_transient(), "the same BMC answers the same link again");
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    listener.abort();
    fleet.shutdown().await;
}
