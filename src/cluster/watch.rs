//! Watching what doctor reads (`wait`): one watch per kind of doctor's plan (a list, then
//! its changes, resumed after a failure as kube's watcher does), kept as the current objects
//! and handed out as a snapshot after each batch of changes. What doctor reads besides those
//! lists (label-selected lists, Secret names, the StateManagementProviders' references) is
//! read once, when every kind has been listed.

use std::collections::BTreeMap;
use std::time::Instant;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::Value;
use tokio::sync::mpsc;

use super::{Cluster, ClusterError, DoctorPlan, Snapshot, explain, unreadable, with_type};
use crate::api::Object;
use crate::api::kinds::{self, Kind};
use crate::api::listing::ProviderApi;

/// What one kind's watch reports.
type Report = (usize, Result<Event<DynamicObject>, watcher::Error>);

/// The watches of doctor's kinds and what they have seen.
pub struct Watch {
    plan: DoctorPlan,
    kinds: Vec<Watched>,
    events: mpsc::UnboundedReceiver<Report>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// What doctor reads besides the watched kinds, once they are all listed.
    rest: Option<Rest>,
    unread: Vec<(&'static Kind, String)>,
}

struct Rest {
    objects: Vec<Value>,
    secrets_listed: bool,
}

struct Watched {
    kind: &'static Kind,
    ar: ApiResource,
    /// The current objects by (namespace, name).
    objects: BTreeMap<(String, String), Value>,
    /// A list in progress (after `Init`), swapped in at `InitDone`.
    listing: Option<BTreeMap<(String, String), Value>>,
    /// Listed at least once (or refused to this user: then never).
    ready: bool,
}

impl Drop for Watch {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Cluster {
    /// Starts a watch of every kind doctor lists (in `namespace`, or all).
    /// With `events`, the core Events of the namespace (or all) too.
    pub fn watch_doctor(
        &mut self,
        namespace: Option<&str>,
        providers: &[&'static ProviderApi],
        events: bool,
    ) -> Result<Watch, ClusterError> {
        let mut plan = self.doctor_plan(namespace, providers)?;
        if events {
            // The core group is served everywhere: its resource from the table when the
            // discovery of kcm's groups did not look at it.
            let (ar, caps) = self
                .resource(kinds::EVENT.group, kinds::EVENT.kind)
                .unwrap_or_else(|| {
                    let caps = ApiCapabilities {
                        scope: Scope::Namespaced,
                        subresources: Vec::new(),
                        operations: Vec::new(),
                    };
                    (super::api_resource(&kinds::EVENT), caps)
                });
            plan.wanted
                .push((&kinds::EVENT, ar, caps, namespace.map(str::to_string)));
        }
        let (tx, reports) = mpsc::unbounded_channel();
        let mut kinds = Vec::new();
        let mut tasks = Vec::new();
        for (i, (kind, ar, caps, ns)) in plan.wanted.iter().enumerate() {
            let api: Api<DynamicObject> = match (caps.scope.clone(), ns) {
                (Scope::Namespaced, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, ar),
                _ => Api::all_with(self.client.clone(), ar),
            };
            let tx = tx.clone();
            // kube's watcher, with its default backoff between failed attempts.
            let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
            tasks.push(self.runtime.spawn(async move {
                let mut stream = std::pin::pin!(stream);
                while let Some(event) = stream.next().await {
                    if tx.send((i, event)).is_err() {
                        return;
                    }
                }
            }));
            kinds.push(Watched {
                kind,
                ar: ar.clone(),
                objects: BTreeMap::new(),
                listing: None,
                ready: false,
            });
        }
        Ok(Watch {
            plan,
            kinds,
            events: reports,
            tasks,
            rest: None,
            unread: Vec::new(),
        })
    }

    /// The next snapshot: the first once every kind is listed, then one after each batch of
    /// changes. None when `deadline` passes first.
    pub fn next_snapshot(
        &mut self,
        watch: &mut Watch,
        deadline: Option<Instant>,
    ) -> Result<Option<Snapshot>, ClusterError> {
        let first = watch.rest.is_none();
        loop {
            let Some(report) = self.receive(watch, deadline)? else {
                return Ok(None);
            };
            let mut changed = watch.apply(report, &self.server)?;
            // Everything already queued joins this batch.
            while let Ok(report) = watch.events.try_recv() {
                changed |= watch.apply(report, &self.server)?;
            }
            if !watch.kinds.iter().all(|k| k.ready) {
                continue;
            }
            if first {
                let mut objects = watch.current();
                let watched = objects.len();
                let mut unread = std::mem::take(&mut watch.unread);
                let secrets_listed =
                    self.doctor_rest(&mut watch.plan, &mut objects, &mut unread)?;
                watch.rest = Some(Rest {
                    objects: objects.split_off(watched),
                    secrets_listed,
                });
                watch.unread = unread;
                return Ok(Some(watch.snapshot()));
            }
            if changed {
                return Ok(Some(watch.snapshot()));
            }
        }
    }

    /// One report of a watch, or None at the deadline.
    fn receive(
        &self,
        watch: &mut Watch,
        deadline: Option<Instant>,
    ) -> Result<Option<Report>, ClusterError> {
        let next = watch.events.recv();
        let report = match deadline {
            None => self.runtime.block_on(next),
            Some(d) => {
                let d = tokio::time::Instant::from_std(d);
                match self
                    .runtime
                    .block_on(async { tokio::time::timeout_at(d, next).await })
                {
                    Ok(r) => r,
                    Err(_) => return Ok(None),
                }
            }
        };
        report
            .map(Some)
            .ok_or_else(|| ClusterError::new("the watches stopped".to_string()))
    }
}

impl Watch {
    /// Applies one report; whether the objects changed. A kind refused before its first list
    /// (403) is left out as doctor's snapshot leaves it out; any other failure before then
    /// stops the watch, as it stops a snapshot. Later failures are retried by the watcher.
    fn apply(&mut self, (i, report): Report, server: &str) -> Result<bool, ClusterError> {
        let w = &mut self.kinds[i];
        let event = match report {
            Ok(e) => e,
            Err(e) if !w.ready => {
                let error = match e {
                    watcher::Error::InitialListFailed(e) | watcher::Error::WatchStartFailed(e) => {
                        explain(server, &format!("list {}", w.ar.plural), e)
                    }
                    other => ClusterError::new(format!("watch {}: {other}", w.ar.plural)),
                };
                let (note, why) = unreadable(w.kind, error)?;
                if w.kind == &kinds::EVENT {
                    // Not a link of any chain: the timeline goes on without them.
                    self.plan
                        .notes
                        .push(format!("{note}: the timeline has no Events"));
                } else {
                    self.plan.notes.push(format!("{note}: not followed"));
                    self.unread.push((w.kind, why));
                }
                w.ready = true;
                return Ok(true);
            }
            // Refused once listed: the user may list but not watch (wait needs both).
            Err(watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e))
                if is_forbidden(&e) =>
            {
                return Err(ClusterError::new(format!(
                    "cannot watch {} ({e}): wait watches every kind doctor lists; grant watch as deploy/doctor/clusterrole.yaml does",
                    w.ar.plural
                )));
            }
            Err(watcher::Error::WatchError(e)) if e.code == 403 => {
                return Err(ClusterError::new(format!(
                    "cannot watch {} ({}): wait watches every kind doctor lists; grant watch as deploy/doctor/clusterrole.yaml does",
                    w.ar.plural, e.message
                )));
            }
            // Anything else is retried by the watcher, after its backoff.
            Err(_) => return Ok(false),
        };
        let key = |o: &DynamicObject| {
            (
                o.metadata.namespace.clone().unwrap_or_default(),
                o.metadata.name.clone().unwrap_or_default(),
            )
        };
        match event {
            Event::Init => w.listing = Some(BTreeMap::new()),
            Event::InitApply(o) => {
                let v = with_type(&o, &w.ar);
                w.listing.get_or_insert_default().insert(key(&o), v);
            }
            Event::InitDone => {
                w.objects = w.listing.take().unwrap_or_default();
                w.ready = true;
                return Ok(true);
            }
            Event::Apply(o) => {
                let v = with_type(&o, &w.ar);
                let old = w.objects.insert(key(&o), v);
                // A resync of an unchanged object is no change.
                return Ok(old.is_none_or(|old| {
                    Object(&old).resource_version()
                        != o.metadata.resource_version.as_deref().unwrap_or("")
                }));
            }
            Event::Delete(o) => return Ok(w.objects.remove(&key(&o)).is_some()),
        }
        Ok(false)
    }

    /// The watched kinds' objects.
    fn current(&self) -> Vec<Value> {
        self.kinds
            .iter()
            .flat_map(|k| k.objects.values().cloned())
            .collect()
    }

    /// The current objects and what doctor reads besides; the notes gathered since the last
    /// snapshot (each is said once).
    fn snapshot(&mut self) -> Snapshot {
        let mut objects = self.current();
        let rest = self.rest.as_ref();
        objects.extend(rest.map(|r| r.objects.clone()).unwrap_or_default());
        Snapshot {
            objects,
            secrets_listed: rest.is_some_and(|r| r.secrets_listed),
            unread: self.unread.clone(),
            notes: std::mem::take(&mut self.plan.notes),
        }
    }
}

fn is_forbidden(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 403)
}
