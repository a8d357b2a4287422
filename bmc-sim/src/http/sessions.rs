//! The SessionService: log in (`POST Sessions` → 201 + `X-Auth-Token` + `Location`), list,
//! read and log out (`DELETE`). Owns the session store of a BMC; authorization checks are `auth`.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::fleet::state::{Host, Session};
use crate::http::error::RedfishError;
use crate::http::json::{collection, json_response, link, ok};
use crate::resources::uris;
use crate::update::params::parse_object;

/// Sessions kept per BMC; logging in beyond this drops the oldest session.
const MAX_SESSIONS: usize = 64;
/// Largest login body read.
const MAX_LOGIN_BODY: usize = 16 << 10;

pub async fn session_service(State(_host): State<Arc<Host>>) -> Response {
    ok(json!({
        "@odata.type": "#SessionService.v1_1_8.SessionService",
        "@odata.id": uris::SESSION_SERVICE,
        "Id": "SessionService",
        "Name": "Session Service",
        "ServiceEnabled": true,
        "SessionTimeout": 1800,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Sessions": link(uris::SESSIONS),
    }))
}

pub async fn list_sessions(State(host): State<Arc<Host>>) -> Response {
    let members = host.data().sessions.keys().map(|id| uris::session(*id)).collect();
    ok(collection("#SessionCollection.SessionCollection", uris::SESSIONS, "Session Collection", members))
}

/// `POST /redfish/v1/SessionService/Sessions` `{"UserName","Password"}`.
pub async fn login(State(host): State<Arc<Host>>, req: Request) -> Response {
    let Ok(bytes) = axum::body::to_bytes(req.into_body(), MAX_LOGIN_BODY).await else {
        return RedfishError::bad_request("GeneralError", "Unreadable or oversized request body.").into_response();
    };
    let body = match parse_object(&bytes) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let (Some(user), Some(pass)) =
        (body.get("UserName").and_then(Value::as_str), body.get("Password").and_then(Value::as_str))
    else {
        return RedfishError::bad_request("PropertyMissing", "UserName and Password are required.").into_response();
    };
    if user != host.spec.username || pass != host.spec.password.expose() {
        return RedfishError::unauthorized().into_response();
    }
    let session = {
        let mut d = host.data();
        let id = d.next_session_id;
        d.next_session_id += 1;
        let s = Session { id, token: uuid::Uuid::new_v4().simple().to_string(), user: user.to_string() };
        d.sessions.insert(id, s.clone());
        while d.sessions.len() > MAX_SESSIONS {
            d.sessions.pop_first();
        }
        s
    };
    let mut resp = json_response(StatusCode::CREATED, session_json(&session));
    let h = resp.headers_mut();
    if let (Ok(token), Ok(location)) =
        (HeaderValue::from_str(&session.token), HeaderValue::from_str(&uris::session(session.id)))
    {
        h.insert("X-Auth-Token", token);
        h.insert(header::LOCATION, location);
    }
    resp
}

pub async fn get_session(State(host): State<Arc<Host>>, Path(id): Path<String>, uri: Uri) -> Response {
    let found = id.parse::<u64>().ok().and_then(|id| host.data().sessions.get(&id).map(session_json));
    match found {
        Some(body) => ok(body),
        None => RedfishError::not_found(uri.path()).into_response(),
    }
}

/// Log out.
pub async fn delete_session(State(host): State<Arc<Host>>, Path(id): Path<String>, uri: Uri) -> Response {
    let removed = id.parse::<u64>().ok().and_then(|id| host.data().sessions.remove(&id));
    match removed {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => RedfishError::not_found(uri.path()).into_response(),
    }
}

fn session_json(s: &Session) -> Value {
    json!({
        "@odata.type": "#Session.v1_7_0.Session",
        "@odata.id": uris::session(s.id),
        "Id": s.id.to_string(),
        "Name": "User Session",
        "UserName": s.user,
    })
}
