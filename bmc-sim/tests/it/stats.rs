//! `RunningFleet::stats`: the fleet-wide high-water mark of uploads in flight, the way a
//! site-wide upload limit is asserted.

use crate::common;

use common::*;
use hostfw_bmc_sim::{firmware_image, Fault};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn concurrent_uploads_raise_the_high_water_mark() {
    let hosts: Vec<_> = (1..=3)
        .map(|i| {
            let mut h = host(&format!("host-00{i}"));
            h.task_seconds = 2.0;
            h
        })
        .collect();
    let fleet = start_fleet(hosts).await;
    let clients: Vec<_> = fleet.hosts().iter().map(Client::new).collect();
    let accepted = futures::future::join_all(
        clients.iter().map(|c| c.push_multipart(firmware_image("BIOS", "2.2.0", 1000), json!({}))),
    )
    .await;
    assert_eq!(fleet.uploads_in_flight(), 3);
    for (c, r) in clients.iter().zip(&accepted) {
        assert_eq!(c.wait_task(r).await["TaskState"], "Completed");
    }
    let stats = fleet.stats();
    assert_eq!(stats.uploads_started, 3);
    assert_eq!(stats.max_concurrent_uploads, 3);
    assert_eq!(fleet.uploads_in_flight(), 0);
    for id in ["host-001", "host-002", "host-003"] {
        assert_eq!(stats.per_host[id].uploads, 1);
    }
    fleet.shutdown().await;
}

#[tokio::test]
async fn sequential_uploads_keep_the_mark_at_one() {
    let fleet = start_fleet(vec![host("host-001"), host("host-002")]).await;
    for h in fleet.hosts() {
        let c = Client::new(&h);
        for version in ["2.2.0", "2.3.0"] {
            let r = c.push_multipart(firmware_image("BIOS", version, 100), json!({})).await;
            assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
        }
    }
    let stats = fleet.stats();
    assert_eq!(stats.uploads_started, 4);
    assert_eq!(stats.max_concurrent_uploads, 1);
    assert_eq!(stats.per_host["host-002"].uploads, 2);
    fleet.shutdown().await;
}

/// Four slow GETs to four BMCs at once: all four are busy together, so the mark reaches 4; the
/// sequential GETs before them never raised it above 1.
#[tokio::test]
async fn busy_bmcs_mark_counts_bmcs_serving_at_the_same_moment() {
    let fleet = start_fleet((1..=4).map(|i| host(&format!("host-00{i}"))).collect()).await;
    let clients: Vec<_> = fleet.hosts().iter().map(Client::new).collect();
    for c in &clients {
        assert_eq!(c.get(SYSTEM).await.status, StatusCode::OK);
        assert_eq!(c.get(SYSTEM).await.status, StatusCode::OK);
    }
    assert_eq!(fleet.stats().max_busy_bmcs, 1, "one BMC at a time so far");
    for h in fleet.hosts() {
        let slow = Fault { slow_response_secs: 0.5, ..Fault::default() };
        fleet.set_fault(&h.id, slow).unwrap();
    }
    let replies = futures::future::join_all(clients.iter().map(|c| c.get(SYSTEM))).await;
    assert!(replies.iter().all(|r| r.status == StatusCode::OK));
    assert_eq!(fleet.stats().max_busy_bmcs, 4);
    fleet.shutdown().await;
}

/// Many requests to ONE BMC at once still make one busy BMC.
#[tokio::test]
async fn parallel_requests_to_one_bmc_are_one_busy_bmc() {
    let fleet = start_fleet(vec![host("host-001"), host("host-002")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    fleet.set_fault("host-001", Fault { slow_response_secs: 0.3, ..Fault::default() }).unwrap();
    let replies = futures::future::join_all((0..5).map(|_| c.get(SYSTEM))).await;
    assert!(replies.iter().all(|r| r.status == StatusCode::OK));
    assert_eq!(fleet.stats().max_busy_bmcs, 1);
    fleet.shutdown().await;
}
