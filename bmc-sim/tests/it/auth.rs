//! Authentication: open ServiceRoot, 401 + `WWW-Authenticate` without or with wrong
//! credentials, Basic auth, and session login / use / logout.

use crate::common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn protected_resources_need_credentials() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let h = fleet.hosts()[0].clone();
    let anon = Client::anonymous(&h);
    for path in ["/redfish/v1/Systems", "/redfish/v1/UpdateService", "/redfish/v1/SessionService/Sessions"] {
        let r = anon.get(path).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(r.header("WWW-Authenticate"), Some("Basic realm=\"bmc-sim\""));
        assert!(r.body["error"]["@Message.ExtendedInfo"].is_array(), "{}", r.raw);
    }
    let mut wrong = Client::new(&h);
    wrong.pass = "nope".into();
    assert_eq!(wrong.get("/redfish/v1/Systems").await.status, StatusCode::UNAUTHORIZED);
    let r = anon.send(anon.request(Method::GET, "/redfish/v1/Systems").header("X-Auth-Token", "forged")).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(Client::new(&h).get("/redfish/v1/Systems").await.status, StatusCode::OK);
    fleet.shutdown().await;
}

#[tokio::test]
async fn session_login_use_and_logout() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let h = fleet.hosts()[0].clone();
    let mut c = Client::new(&h);
    let login = c.login().await;
    assert_eq!(login.status, StatusCode::CREATED, "{}", login.raw);
    let token = c.token.clone().expect("X-Auth-Token");
    let location = login.header("Location").unwrap().to_string();
    assert!(location.starts_with("/redfish/v1/SessionService/Sessions/"), "{location}");
    assert_eq!(login.body["UserName"], h.username.as_str());

    assert_eq!(c.get("/redfish/v1/Systems").await.status, StatusCode::OK);
    let list = c.resource("/redfish/v1/SessionService/Sessions").await;
    assert_eq!(list["Members"][0]["@odata.id"], location.as_str());
    assert_eq!(c.resource(&location).await["Id"], location.rsplit('/').next().unwrap());

    let out = c.send(c.request(Method::DELETE, &location)).await;
    assert_eq!(out.status, StatusCode::NO_CONTENT);
    let r = c.get("/redfish/v1/Systems").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "token {token} must be dead");
    fleet.shutdown().await;
}

#[tokio::test]
async fn bad_logins_are_refused() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let h = fleet.hosts()[0].clone();
    let anon = Client::anonymous(&h);
    let url = "/redfish/v1/SessionService/Sessions";
    let r = anon.post(url, json!({"UserName": h.username, "Password": "wrong"})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.header("X-Auth-Token").is_none());
    let r = anon.post(url, json!({"UserName": h.username})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = anon.send(anon.request(Method::POST, url).body("not json")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    fleet.shutdown().await;
}
