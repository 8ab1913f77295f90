//! Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
//! a lease is free when it has no holder or when its record has not changed for
//! `leaseDurationSeconds` of local time (not the holder's clock); the leader renews every
//! retry period and gives up when it could not renew within the renew deadline; on a graceful
//! stop it releases the lease so that a successor takes over at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::api::lease::Lease;
use chrono::Utc;
use kube::Client;
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::json;
use tokio::sync::watch;
use tracing::{error, info, warn};

use super::metrics::Metrics;

const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// The Lease's writes name the adapter as their field manager.
fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(crate::api::naming::FIELD_MANAGER.into()),
        ..PostParams::default()
    }
}

pub struct Elector {
    api: Api<DynamicObject>,
    ar: ApiResource,
    name: String,
    identity: String,
    metrics: Arc<Metrics>,
    /// The last lease record seen (holder, renewTime) and when it was first seen locally.
    observed: Option<(String, Instant)>,
}

fn micro_time() -> String {
    Utc::now().format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

impl Elector {
    pub fn new(client: Client, namespace: &str, name: &str, metrics: Arc<Metrics>) -> Elector {
        let ar = crate::cluster::api_resource(&crate::api::kinds::LEASE);
        let host = std::env::var("POD_NAME")
            .ok()
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| "kubectl-ksm".into());
        // Unique per process, like client-go's `<hostname>_<uuid>`.
        let nonce = format!(
            "{:x}{:x}",
            std::process::id(),
            Utc::now().timestamp_subsec_nanos()
        );
        Elector {
            api: Api::namespaced_with(client, namespace, &ar),
            ar,
            name: name.into(),
            identity: format!("{host}_{nonce}"),
            metrics,
            observed: None,
        }
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// One attempt to take or renew the lease; Ok(true) when we hold it afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = micro_time();
        let duration = LEASE_DURATION.as_secs() as i64;
        let Some(current) = self.api.get_opt(&self.name).await? else {
            let lease = json!({
                "apiVersion": self.ar.api_version, "kind": self.ar.kind,
                "metadata": {"name": self.name},
                "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": duration,
                    "acquireTime": now, "renewTime": now, "leaseTransitions": 0}});
            let obj: DynamicObject =
                serde_json::from_value(lease).map_err(kube::Error::SerdeError)?;
            self.metrics.write("lease");
            return match self.api.create(&post_params(), &obj).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
                Err(e) => Err(e),
            };
        };
        let value = serde_json::to_value(&current).map_err(kube::Error::SerdeError)?;
        let lease = Lease(&value);
        let holder = lease.holder_identity().to_string();
        let record = format!("{holder}@{}", lease.renew_time());
        let seen_at = match &self.observed {
            Some((r, at)) if *r == record => *at,
            _ => {
                let at = Instant::now();
                self.observed = Some((record.clone(), at));
                at
            }
        };
        let their_duration = lease.lease_duration_seconds().unwrap_or(duration).max(1) as u64;
        if !holder.is_empty()
            && holder != self.identity
            && seen_at.elapsed() < Duration::from_secs(their_duration)
        {
            return Ok(false);
        }
        let lease = lease.taken_by(&self.identity, duration, &now);
        let obj: DynamicObject = serde_json::from_value(lease).map_err(kube::Error::SerdeError)?;
        self.metrics.write("lease");
        match self.api.replace(&self.name, &post_params(), &obj).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Waits until the lease is ours (true) or a stop is requested (false).
    pub async fn acquire(&mut self, mut stop: watch::Receiver<bool>) -> bool {
        loop {
            let stop_now = *stop.borrow();
            if stop_now {
                return false;
            }
            match self.try_acquire_or_renew().await {
                Ok(true) => return true,
                Ok(false) => {}
                Err(e) => warn!(error = %e, "leader election: cannot read or write the lease"),
            }
            tokio::select! {
                _ = tokio::time::sleep(RETRY_PERIOD) => {}
                _ = stopped(&mut stop) => return false,
            }
        }
    }

    /// Renews the lease until a stop is requested (then releases it and returns false) or
    /// until it cannot be renewed within the deadline (then requests the stop and returns
    /// true: leadership lost).
    pub async fn hold(
        mut self,
        mut stop: watch::Receiver<bool>,
        stop_tx: watch::Sender<bool>,
    ) -> bool {
        let mut renewed = Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(RETRY_PERIOD) => {}
                _ = stopped(&mut stop) => {
                    self.release().await;
                    return false;
                }
            }
            match self.try_acquire_or_renew().await {
                Ok(true) => renewed = Instant::now(),
                Ok(false) => {
                    error!("leader election: the lease was taken by another replica");
                    let _ = stop_tx.send(true);
                    return true;
                }
                Err(e) => warn!(error = %e, "leader election: renewal failed"),
            }
            if renewed.elapsed() > RENEW_DEADLINE {
                error!("leader election: could not renew the lease within {RENEW_DEADLINE:?}");
                let _ = stop_tx.send(true);
                return true;
            }
        }
    }

    /// Gives the lease up (holder cleared), as client-go does with ReleaseOnCancel.
    async fn release(&mut self) {
        let Ok(Some(current)) = self.api.get_opt(&self.name).await else {
            return;
        };
        let Ok(value) = serde_json::to_value(&current) else {
            return;
        };
        if Lease(&value).holder_identity() != self.identity {
            return;
        }
        let lease = Lease(&value).released(&micro_time());
        let Ok(obj) = serde_json::from_value::<DynamicObject>(lease) else {
            return;
        };
        self.metrics.write("lease");
        match self.api.replace(&self.name, &post_params(), &obj).await {
            Ok(_) => info!("leader election: lease released"),
            Err(e) => warn!(error = %e, "leader election: cannot release the lease"),
        }
    }
}

/// Resolves once the flag is true (a stop requested, caches synced); the guard `wait_for`
/// returns is not `Send`, hence this wrapper.
pub async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
