//! The one-update-at-a-time lock of a BMC, and the fleet-wide "uploads in flight" count that
//! goes with it. An upload holds the slot from its accepted POST until its task finishes.
//! Does not create tasks or answer HTTP.

use std::sync::Arc;

use crate::fleet::state::{Host, HostData};

/// Holding this means "this BMC is busy with an update". Dropping it releases the slot.
pub(crate) struct UpdateSlot {
    host: Arc<Host>,
    released: bool,
}

impl UpdateSlot {
    /// Take the slot, or `None` if another update holds it.
    pub fn try_claim(host: &Arc<Host>) -> Option<Self> {
        {
            let mut d = host.data();
            d.stats.update_requests += 1;
            if d.update_busy {
                return None;
            }
            d.update_busy = true;
        }
        host.fleet.counters.upload_in_flight();
        Some(UpdateSlot { host: host.clone(), released: false })
    }

    pub fn host(&self) -> &Arc<Host> {
        &self.host
    }

    /// Release the slot and, under the same lock, record the outcome (e.g. finish the task),
    /// so a client that sees the task finished can start the next update at once.
    pub fn release_with(mut self, f: impl FnOnce(&mut HostData)) {
        self.released = true;
        // Count down before the slot frees: a new claim must never see a stale in-flight count.
        self.host.fleet.counters.upload_done();
        let mut d = self.host.data();
        f(&mut d);
        d.update_busy = false;
    }
}

impl Drop for UpdateSlot {
    fn drop(&mut self) {
        if !self.released {
            self.host.fleet.counters.upload_done();
            self.host.data().update_busy = false;
        }
    }
}
