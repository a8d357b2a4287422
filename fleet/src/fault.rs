//! The fault set of one simulated BMC: [`Fault`] / [`HttpErrors`], as written in the fleet file
//! (`faults = {...}`, `[host.faults]`, `[defaults.faults]`), sent to `PUT /sim/faults` and to
//! `RunningFleet::set_fault`. Pure data and its validation; applying faults is `fault_inject`.

use serde::{Deserialize, Serialize};

/// Upper bound for any fault duration (a day): larger values are typos.
const MAX_FAULT_SECONDS: f64 = 86_400.0;

/// Faults to inject into one BMC. Every key is optional; `Fault::default()` injects nothing.
/// Counters (`fail_next_tasks`, `http_errors.count`) go down as they are consumed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Fault {
    /// The next N update tasks run their course, then end `Exception` / `Critical` with an
    /// `Update.1.0.ApplyFailed` message "injected failure"; nothing is installed.
    pub fail_next_tasks: u32,
    /// Update tasks complete OK but no version is applied or staged.
    pub version_never_changes: bool,
    /// Seconds every response (outside `/sim`) is held back; the request itself is handled
    /// at once. 0 = none.
    pub slow_response_secs: f64,
    /// Close the listener and drop every connection now, and listen again after this many
    /// seconds (sessions, tasks and power survive: the network is gone, not the BMC). Reset to
    /// 0 when the BMC is back. 0 = none.
    pub unreachable_for_secs: f64,
    /// Firmware inventory member ids left out of the FirmwareInventory collection (their own
    /// URI answers 404 too).
    pub hide_members: Vec<String>,
    /// The next N GET requests outside `/sim` answer 200 with a body that is not JSON (a BMC
    /// web server cut short or serving garbage).
    pub malformed_json_next: u32,
    /// The next N reset actions (`ComputerSystem.Reset`, `Manager.Reset`) answer 400
    /// `ActionNotSupported` and change nothing (a BMC refusing a reset in its current state).
    pub refuse_resets: u32,
    /// The next N PATCH requests answer 400 `PropertyNotWritable` and change nothing (a BMC
    /// refusing a settings change, e.g. lockdown or a boot override, in its current state).
    pub refuse_patches: u32,
    /// The next `count` requests outside `/sim` answer `status` with a Redfish error body.
    /// Absent once the count is used up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_errors: Option<HttpErrors>,
    /// Actions the BMC advertises but fails to carry out: every POST whose path ends with
    /// `/<name>` (e.g. `Chassis.Reset`) answers 500 with a Redfish error body, and changes nothing.
    pub failing_actions: Vec<String>,
    /// A BMC whose links name another host: every Redfish link it writes (JSON string values
    /// that are `/redfish/...` paths, and the `Location` header) names `origin` instead, in
    /// `spelling`; with spelling `redirect`, every request outside `/sim` is answered 307 to the
    /// same path on `origin`. A client must send nothing to `origin` (credentials stay with the
    /// BMC they belong to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreign_links: Option<ForeignLinks>,
}

/// Where and how `Fault::foreign_links` points a BMC's links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForeignLinks {
    /// `host:port` of the other listener.
    pub origin: String,
    pub spelling: LinkSpelling,
}

/// The spellings of a link to another host that a URL parser accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkSpelling {
    /// `//host:port/redfish/v1/...`
    SchemeRelative,
    /// `\\\\host:port/redfish/v1/...`
    Backslash,
    /// `/\\host:port/redfish/v1/...`
    SlashBackslash,
    /// `/<TAB>/host:port/redfish/v1/...` (parsers drop the tab)
    Tab,
    /// `http://host:port/redfish/v1/...`
    Absolute,
    /// `http://bmc@host:port/redfish/v1/...`
    UserInfo,
    /// No rewritten links: a 307 to `http://host:port/<same path>`.
    Redirect,
}

impl LinkSpelling {
    /// Every spelling, for tests that try them all.
    pub const ALL: [LinkSpelling; 7] = [
        LinkSpelling::SchemeRelative,
        LinkSpelling::Backslash,
        LinkSpelling::SlashBackslash,
        LinkSpelling::Tab,
        LinkSpelling::Absolute,
        LinkSpelling::UserInfo,
        LinkSpelling::Redirect,
    ];
}

impl ForeignLinks {
    /// `path` (a `/redfish/...` path) as a link to `origin` in this spelling.
    pub fn spell(&self, path: &str) -> String {
        let o = &self.origin;
        match self.spelling {
            LinkSpelling::SchemeRelative => format!("//{o}{path}"),
            LinkSpelling::Backslash => format!("\\\\{o}{path}"),
            LinkSpelling::SlashBackslash => format!("/\\{o}{path}"),
            LinkSpelling::Tab => format!("/\t/{o}{path}"),
            LinkSpelling::Absolute | LinkSpelling::Redirect => format!("http://{o}{path}"),
            LinkSpelling::UserInfo => format!("http://bmc@{o}{path}"),
        }
    }
}

/// Answer the next `count` requests with HTTP `status` (default 503).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpErrors {
    pub count: u32,
    #[serde(default = "default_error_status")]
    pub status: u16,
}

impl Fault {
    /// Whether this set injects nothing.
    pub fn is_empty(&self) -> bool {
        *self == Fault::default()
    }

    /// Check the values against the host's inventory member ids; the error is `(key, message)`
    /// with the key relative to the fault set (e.g. `http_errors.status`).
    pub fn check<'a>(&self, member_ids: impl IntoIterator<Item = &'a str> + Clone) -> Result<(), (String, String)> {
        for (key, v) in
            [("slow_response_secs", self.slow_response_secs), ("unreachable_for_secs", self.unreachable_for_secs)]
        {
            if !v.is_finite() || !(0.0..=MAX_FAULT_SECONDS).contains(&v) {
                return Err((key.into(), format!("{v} is not a number of seconds between 0 and {MAX_FAULT_SECONDS}")));
            }
        }
        if let Some(e) = &self.http_errors {
            if !(400..=599).contains(&e.status) {
                return Err((
                    "http_errors.status".into(),
                    format!("{} is not an HTTP error status (400-599)", e.status),
                ));
            }
        }
        if let Some(f) = &self.foreign_links {
            if f.origin.parse::<std::net::SocketAddr>().is_err() {
                return Err(("foreign_links.origin".into(), format!("{:?} is not an ip:port", f.origin)));
            }
        }
        for (i, id) in self.hide_members.iter().enumerate() {
            if !member_ids.clone().into_iter().any(|m| m == id) {
                return Err((
                    format!("hide_members[{i}]"),
                    format!("{id:?} is not a firmware inventory member of this host"),
                ));
            }
        }
        Ok(())
    }
}

fn default_error_status() -> u16 {
    503
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_partial_json() {
        let f: Fault = serde_json::from_str("{}").unwrap();
        assert!(f.is_empty());
        let f: Fault = serde_json::from_str(r#"{"fail_next_tasks":2,"http_errors":{"count":3}}"#).unwrap();
        assert_eq!(f.fail_next_tasks, 2);
        assert_eq!(f.http_errors, Some(HttpErrors { count: 3, status: 503 }));
        assert!(serde_json::from_str::<Fault>(r#"{"fail_next_task":1}"#).is_err());
        assert!(serde_json::from_str::<Fault>(r#"{"http_errors":{"count":1,"code":1}}"#).is_err());
    }

    #[test]
    fn checks_values_and_members() {
        let members = ["BMC", "BIOS"];
        let ok = Fault { hide_members: vec!["BIOS".into()], slow_response_secs: 0.5, ..Fault::default() };
        assert!(ok.check(members).is_ok());
        let bad = Fault { hide_members: vec!["CPLD".into()], ..Fault::default() };
        assert_eq!(bad.check(members).unwrap_err().0, "hide_members[0]");
        let bad = Fault { http_errors: Some(HttpErrors { count: 1, status: 200 }), ..Fault::default() };
        assert_eq!(bad.check(members).unwrap_err().0, "http_errors.status");
        let bad = Fault { unreachable_for_secs: f64::NAN, ..Fault::default() };
        assert_eq!(bad.check(members).unwrap_err().0, "unreachable_for_secs");
    }
}
