//! Every timeout, interval and bound (including the reply-size bound) of the Redfish client, each with the reason for its value.
//!
//! Owns constants only. It must not contain logic beyond trivial arithmetic on them; callers
//! (activities, the CLI) override the public defaults through `ClientOptions` and `WaitOptions`.

use std::time::Duration;

/// Default per-request timeout. BMCs are slow embedded web servers (an iDRAC inventory member can
/// take several seconds under load); 30 s tolerates that while still noticing a hung BMC.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Upper bound on establishing a TCP/TLS connection. A BMC that does not accept within 10 s is
/// down or rebooting; failing fast lets the task/reachability loops retry sooner.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Minimum timeout of a firmware upload request. Uploads stream tens to hundreds of megabytes to
/// a slow BMC that may also verify the image before answering (DMTF `rf_update.py` uses 120 s).
pub const UPLOAD_MIN_TIMEOUT: Duration = Duration::from_secs(120);

/// Additional upload time allowed per MiB of image: 2 s/MiB (DMTF `rf_update.py`'s rule for large
/// files), i.e. a floor of ~0.5 MiB/s, slower than any BMC link we know of.
pub const UPLOAD_PER_MIB: Duration = Duration::from_secs(2);

/// Default interval between task monitor polls when the BMC sends no `Retry-After`. Firmware tasks
/// take minutes; 2 s is responsive without hammering the BMC.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Default overall bound on waiting for a firmware task. BIOS/CPLD flashes with verification take
/// up to ~30 min on real hardware; one hour leaves margin. The workflow has its own, outer bound.
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(3600);

/// Default bound on following the Task a host reset answers with. A captured DGX reset Task
/// took 24 s from start to end (Exception); five minutes covers a slow power sequence while a
/// Task that never ends still fails the attempt well inside the activation activity's 15 min.
pub const DEFAULT_RESET_TASK_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Largest `Retry-After` honoured as-is. A BMC asking for longer is re-polled after this anyway,
/// so a bogus far-future HTTP-date cannot park the poller for hours.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// First interval of the reachability poll after a reset; our simulator comes back in well under
/// a second and real BMCs in 1-5 minutes, so start short and back off.
pub const REACHABLE_FIRST_INTERVAL: Duration = Duration::from_millis(100);

/// Largest interval of the reachability poll: polling a rebooting BMC every 5 s is cheap and
/// notices its return within seconds.
pub const REACHABLE_MAX_INTERVAL: Duration = Duration::from_secs(5);

/// Interval of the "has the BMC gone down yet" poll after a Manager.Reset: short, because the
/// window between accepting the reset and going down can be well under a second.
pub const UNREACHABLE_POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Most pages followed in one paginated collection (`Members@odata.nextLink`). Guards against a
/// BMC whose next links loop; 1000 pages is far beyond any real inventory.
pub const MAX_COLLECTION_PAGES: usize = 1000;

/// Default number of FirmwareInventory members read at once: real BMCs throttle (an embedded web
/// server serves a handful of connections), and 4 cuts a 111-member Supermicro crawl to a
/// quarter of its sequential time without crowding the BMC. Site config: `[redfish]
/// inventory_concurrency`.
pub const DEFAULT_INVENTORY_CONCURRENCY: usize = 4;

/// Default bound on one reply body: 32 MiB. The largest document we read is an `$expand`ed
/// FirmwareInventory (~110 members on a Supermicro, a few KiB each: well under 1 MiB); 32 MiB
/// leaves a wide margin while a BMC that streams without end is cut off long before it hurts
/// (one took a worker to ~945 MB). Site config: `[redfish] max_response_bytes`.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 32 * 1024 * 1024;

/// Most BMCs a `LinkCache` remembers a FirmwareInventory link for (one entry each, a few hundred
/// bytes). A site's fleet is bounded by its machines table; 100,000 is beyond any site we know
/// of while keeping a worker's cache under a few tens of MiB. A BMC past the bound only pays one
/// UpdateService read per crawl.
pub const MAX_LINK_CACHE_ENTRIES: usize = 100_000;

/// Most bytes of a non-JSON error body quoted in an error message.
pub const MAX_ERROR_BODY_QUOTE: usize = 300;

/// Timeout for an upload of `size` bytes: the request timeout, but at least `UPLOAD_MIN_TIMEOUT`
/// and at least `UPLOAD_PER_MIB` per MiB.
pub fn upload_timeout(request_timeout: Duration, size: u64) -> Duration {
    let mib = size.div_ceil(1024 * 1024);
    let per_size = UPLOAD_PER_MIB.saturating_mul(u32::try_from(mib).unwrap_or(u32::MAX));
    request_timeout.max(UPLOAD_MIN_TIMEOUT).max(per_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_timeout_scales_with_size() {
        assert_eq!(upload_timeout(Duration::from_secs(30), 10), UPLOAD_MIN_TIMEOUT);
        assert_eq!(upload_timeout(Duration::from_secs(30), 200 * 1024 * 1024), Duration::from_secs(400));
        assert_eq!(upload_timeout(Duration::from_secs(600), 1), Duration::from_secs(600));
    }
}
