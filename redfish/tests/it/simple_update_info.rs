//! SimpleUpdate's `TransferProtocol` when the BMC lists its allowed values only through the
//! action's `@Redfish.ActionInfo` (the captured Supermicro tree does): the ActionInfo is read and
//! the ImageURI's scheme is sent as `TransferProtocol`. Skipped when `../shared` is absent.

use crate::common;

use common::mock::{empty, MockBmc};
use common::*;
use hostfw_redfish::{AuthMode, UploadRequest, UploadRoute};

#[tokio::test]
async fn transfer_protocol_comes_from_the_simple_update_action_info() {
    let Some(tree) = common::captured::tree("supermicro") else { return };
    let mock = MockBmc::start().await;
    tree.serve(
        &mock,
        &["/redfish/v1", "/redfish/v1/UpdateService", "/redfish/v1/UpdateService/SimpleUpdateActionInfo"],
    );
    let target = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate";
    mock.on("POST", target, vec![empty(202, &[("Location", "/redfish/v1/TaskService/Tasks/1")])]);
    let client = common::mock_client(&mock, options(AuthMode::Basic));
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_image(&dir, "fw.bin", b"firmware bytes");
    client
        .upload(&UploadRequest {
            file: path,
            image_uri: Some("http://127.0.0.1:1/fw.bin".into()),
            force_route: Some(UploadRoute::SimpleUpdate),
            ..Default::default()
        })
        .await
        .expect("simple update accepted");
    assert_eq!(mock.hits("GET", "/redfish/v1/UpdateService/SimpleUpdateActionInfo"), 1, "ActionInfo read");
    let sent = mock.log().into_iter().find(|l| l.method == "POST").expect("posted");
    let body: serde_json::Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body["TransferProtocol"], "HTTP", "{body}");
    assert_eq!(body["ImageURI"], "http://127.0.0.1:1/fw.bin");
}
