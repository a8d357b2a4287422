//! Starting and stopping a fleet: bind every listener, make the CA and certificates of a
//! `tls = true` fleet, spawn one server per BMC, and the [`RunningFleet`] handle tests and the
//! binary use ([`SimHost`], versions, stats, CA PEM, shutdown).
//! Runtime faults and state probes are `fleet::controls`. No request handling here.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hostfw_model::Secret;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::faults::inject::replace_faults;
use crate::fleet::error::SimError;
use crate::fleet::server::serve;
use crate::fleet::state::{FleetShared, Host};
use crate::fleet::stats::{FleetCounters, SimStats};
use crate::fleet::tls::SimCa;
use crate::http::router::router;
use crate::profile::routes as profile_routes;
use hostfw_fleet::FleetSpec;
use hostfw_fleet::Profile;

/// Connect timeout for SimpleUpdate image fetches.
const FETCH_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Whole-fetch timeout for SimpleUpdate images (large images over loopback are fast).
const FETCH_TIMEOUT: Duration = Duration::from_secs(600);

/// How to reach one simulated BMC. The password is a [`Secret`]: `Debug` redacts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimHost {
    pub id: String,
    pub addr: SocketAddr,
    /// `http://ip:port` (`https://ip:port` for a TLS fleet), no trailing slash.
    pub base_url: String,
    pub username: String,
    pub password: Secret,
    pub vendor: String,
    pub model: String,
}

/// A started fleet. Dropping it also stops every BMC (without waiting); prefer [`RunningFleet::shutdown`].
pub struct RunningFleet {
    hosts: Vec<Arc<Host>>,
    /// PEM of the CA that signed every BMC's certificate (TLS fleets only).
    ca_pem: Option<String>,
    shared: Arc<FleetShared>,
    shutdown: watch::Sender<bool>,
    servers: Vec<JoinHandle<()>>,
}

/// Reads the fleet's statistics; cheap to clone.
#[derive(Clone)]
pub struct StatsReader {
    hosts: Vec<Arc<Host>>,
    shared: Arc<FleetShared>,
}

impl StatsReader {
    /// The fleet-wide counters and every host's own.
    pub fn read(&self) -> SimStats {
        let mut stats = self.shared.counters.snapshot();
        for h in &self.hosts {
            stats.per_host.insert(h.spec.id.clone(), h.data().stats.clone());
        }
        stats
    }
}

/// Start every BMC of `spec`. All listeners are bound when this returns.
pub async fn start(spec: FleetSpec) -> Result<RunningFleet, SimError> {
    spec.validate()?;
    let http = reqwest::Client::builder()
        .connect_timeout(FETCH_CONNECT_TIMEOUT)
        .timeout(FETCH_TIMEOUT)
        .build()
        .map_err(|source| SimError::HttpClient { source })?;
    let shared = Arc::new(FleetShared { counters: FleetCounters::default(), http });

    let tls = spec.tls;
    let mut bound = Vec::with_capacity(spec.hosts.len());
    for h in spec.hosts {
        let bind_err = |source| SimError::Bind { host: h.id.clone(), addr: h.bmc_address, source };
        let listener = TcpListener::bind(h.bmc_address).await.map_err(bind_err)?;
        let addr = listener.local_addr().map_err(bind_err)?;
        bound.push((h, listener, addr));
    }

    let ca = if tls { Some(SimCa::generate()?) } else { None };
    let (shutdown, shutdown_rx) = watch::channel(false);
    let mut hosts = Vec::with_capacity(bound.len());
    let mut servers = Vec::with_capacity(bound.len());
    for (h, listener, addr) in bound {
        let acceptor = match &ca {
            Some(ca) => Some(ca.acceptor_for(addr.ip())?),
            None => None,
        };
        let (down_tx, down_rx) = mpsc::unbounded_channel();
        let faults = h.faults.clone();
        let profile = match &h.profile {
            Some(dir) => Some(Profile::load(dir)?),
            None => None,
        };
        let host = Arc::new(Host::new(h, addr, shared.clone(), down_tx, acceptor, profile));
        replace_faults(&host, faults, Duration::ZERO);
        let app = match host.profile.clone() {
            Some(profile) => profile_routes::router(host.clone(), profile),
            None => router(host.clone()),
        };
        servers.push(tokio::spawn(serve(host.clone(), listener, app, down_rx, shutdown_rx.clone())));
        hosts.push(host);
    }
    Ok(RunningFleet { hosts, ca_pem: ca.map(|ca| ca.pem()), shared, shutdown, servers })
}

impl RunningFleet {
    /// Every BMC, in fleet-file order.
    pub fn hosts(&self) -> Vec<SimHost> {
        self.hosts.iter().map(sim_host).collect()
    }

    pub fn host(&self, id: &str) -> Option<SimHost> {
        self.find(id).map(sim_host)
    }

    /// `(member id, running version)` of every inventory member; empty for an unknown host.
    pub fn versions(&self, host_id: &str) -> Vec<(String, String)> {
        self.find(host_id)
            .map(|h| h.data().members.iter().map(|m| (m.id.clone(), m.version.clone())).collect())
            .unwrap_or_default()
    }

    /// `(member id, staged version)` of members waiting for a reset; empty for an unknown host.
    pub fn staged_versions(&self, host_id: &str) -> Vec<(String, String)> {
        self.find(host_id)
            .map(|h| {
                h.data()
                    .members
                    .iter()
                    .filter_map(|m| Some((m.id.clone(), m.staged.as_ref()?.version.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn stats(&self) -> SimStats {
        self.stats_reader().read()
    }

    /// A handle that reads [`RunningFleet::stats`] without holding the fleet (for a control
    /// endpoint that outlives a request).
    pub fn stats_reader(&self) -> StatsReader {
        StatsReader { hosts: self.hosts.clone(), shared: self.shared.clone() }
    }

    /// The PEM certificate of the CA generated at start that signed every BMC's certificate;
    /// `None` for a plain-HTTP fleet. Clients trust it as an extra root (a CA bundle).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// Uploads whose task has not finished, fleet-wide, right now.
    pub fn uploads_in_flight(&self) -> u64 {
        self.shared.counters.in_flight()
    }

    /// Stop every BMC and wait until all listeners and connections are closed.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        for s in self.servers {
            let _ = s.await;
        }
    }

    pub(crate) fn find(&self, id: &str) -> Option<&Arc<Host>> {
        self.hosts.iter().find(|h| h.spec.id == id)
    }
}

fn sim_host(h: &Arc<Host>) -> SimHost {
    SimHost {
        id: h.spec.id.clone(),
        addr: h.addr,
        base_url: h.base_url(),
        username: h.spec.username.clone(),
        password: h.spec.password.clone(),
        vendor: h.spec.vendor.clone(),
        model: h.spec.model.clone(),
    }
}
