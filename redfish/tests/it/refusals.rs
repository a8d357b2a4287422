//! Uploads the client must refuse before sending anything, and failures the BMC reports:
//! empty image, image over MaxImageSizeBytes, SimpleUpdate-only BMC without an image URI, a
//! forced route that is not advertised, and a task that ends in Exception with the BMC's message.
//! Must not test successful uploads (`upload_matrix.rs`) nor synchronise with fixed sleeps.

use crate::common;

use common::*;
use hostfw_redfish::{AuthMode, RedfishError, TaskFinal, UploadRequest, UploadRoute};

#[tokio::test]
async fn empty_image_is_refused_without_uploading() {
    let (fleet, host) = one_host("upload_style = \"multipart\"").await;
    let client = client(&host, AuthMode::Basic);
    let dir = tempfile::tempdir().unwrap();
    let path = write_image(&dir, "empty.bin", b"");
    let e = client
        .upload(&UploadRequest { file: path.clone(), ..Default::default() })
        .await
        .expect_err("empty image refused");
    assert!(matches!(e, RedfishError::EmptyImage { .. }), "{e:?}");
    assert!(e.to_string().contains("empty.bin"), "{e}");
    assert!(e.to_string().contains(&host.addr.to_string()), "{e}");
    assert!(!e.is_transient());
    assert_eq!(fleet.stats().per_host["h1"].uploads, 0);

    let missing = dir.path().join("missing.bin");
    let e =
        client.upload(&UploadRequest { file: missing, ..Default::default() }).await.expect_err("missing image refused");
    assert!(matches!(e, RedfishError::File { .. }), "{e:?}");
    fleet.shutdown().await;
}

#[tokio::test]
async fn image_over_max_size_is_refused_before_upload() {
    let (fleet, host) = one_host("upload_style = \"httppush\"").await;
    let client = client(&host, AuthMode::Basic);
    let max = client.update_service().await.unwrap().max_image_size.expect("the sim advertises MaxImageSizeBytes");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.bin");
    // Sparse: takes no disk space, and is never read because the check comes first.
    std::fs::File::create(&path).unwrap().set_len(max + 1).unwrap();
    let e = client.upload(&UploadRequest { file: path, ..Default::default() }).await.expect_err("too large");
    match &e {
        RedfishError::ImageTooLarge { size, max: m, .. } => {
            assert_eq!(*size, max + 1);
            assert_eq!(*m, max);
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(text.contains("huge.bin") && text.contains(&max.to_string()), "{text}");
    assert_eq!(fleet.stats().per_host["h1"].uploads, 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn simple_update_only_bmc_without_image_uri_is_refused() {
    let (fleet, host) = one_host("upload_style = \"simpleupdate\"").await;
    let client = client(&host, AuthMode::Basic);
    let info = client.update_service().await.unwrap();
    assert_eq!(info.multipart_uri, None);
    assert_eq!(info.http_push_uri, None);
    assert!(info.simple_update_target.is_some());
    let dir = tempfile::tempdir().unwrap();
    let path = write_image(&dir, "bmc.bin", &image_bytes("BMC_0", "2.0", 10));
    let e = client.upload(&UploadRequest { file: path, ..Default::default() }).await.expect_err("no image URI");
    assert!(matches!(e, RedfishError::Unsupported { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains(&host.addr.to_string()), "names the BMC: {text}");
    assert!(text.contains("SimpleUpdate"), "{text}");
    assert!(!e.is_transient());
    assert_eq!(fleet.stats().per_host["h1"].uploads, 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn forced_route_must_be_advertised() {
    let (fleet, host) = one_host("upload_style = \"httppush\"").await;
    let client = client(&host, AuthMode::Basic);
    let info = client.update_service().await.unwrap();
    assert_eq!(info.http_push_uri.as_deref(), Some("/redfish/v1/UpdateService/push"));
    let dir = tempfile::tempdir().unwrap();
    let path = write_image(&dir, "bmc.bin", &image_bytes("BMC_0", "2.0", 10));
    let e = client
        .upload(&UploadRequest { file: path, force_route: Some(UploadRoute::Multipart), ..Default::default() })
        .await
        .expect_err("multipart not advertised");
    assert!(e.to_string().contains("MultipartHttpPushUri"), "{e}");
    fleet.shutdown().await;
}

#[tokio::test]
async fn exception_outcome_carries_the_bmc_message() {
    for task_style in ["spec", "bmcweb", "dell", "sushy"] {
        let (fleet, host) = one_host(&format!("upload_style = \"multipart\"\ntask_style = \"{task_style}\"")).await;
        let client = client(&host, AuthMode::Basic);
        let dir = tempfile::tempdir().unwrap();
        // Applies to no member: the BMC accepts the upload, then the task fails.
        let path = write_image(&dir, "nic.bin", &image_bytes("^NIC_9$", "9.9", 10));
        let accepted =
            client.upload(&UploadRequest { file: path, ..Default::default() }).await.expect("upload accepted");
        let outcome =
            client.wait_task(&accepted.task.expect("task"), wait_opts(), |_| {}).await.expect("task followed");
        assert_eq!(outcome.state, TaskFinal::Exception, "{task_style}: {outcome:?}");
        assert!(!outcome.succeeded());
        assert_eq!(outcome.status.as_deref(), Some("Critical"));
        assert!(
            outcome.messages.iter().any(|m| m.starts_with("Update.1.0.ApplyFailed: ") && m.contains("NIC_9")),
            "{task_style}: {:?}",
            outcome.messages
        );
        assert_eq!(sim_version(&fleet, "h1", "BMC_0").as_deref(), Some("1.0"));
        fleet.shutdown().await;
    }
}
