//! `kubectl ksm run`: the Flux adapter controller, the I/O edge around
//! [`crate::core::adapter::plan`].
//!
//! Watch caches ([`caches`]) hold the ServiceSets (each a [`cached::CachedSet`]), the
//! provider's SMP, the ServiceTemplates and every HelmRelease and Kustomization ([`cache`]),
//! with what they keep rarely read packed ([`compact`]). Any change to one of them queues
//! the ServiceSets it concerns: one function per trigger stream below. A reconcile
//! ([`reconcile`]) gathers its inputs from the caches ([`gather`]), asks the pure core for a
//! plan, and hands it to a small writer ([`apply`]): finalizer, status, server-side applies,
//! deletions, finalizer removal; what reconciles share is in [`context`]. The replies of its
//! writes stand in for a lagging cache ([`written`]). This file wires it together: start-up,
//! leader election ([`leader`]), the HTTP endpoints ([`http`]), metrics ([`metrics`]) and
//! shutdown.

mod apply;
mod cache;
mod cached;
mod caches;
mod claims;
mod compact;
mod context;
mod gather;
mod http;
mod leader;
mod memo;
mod metrics;
mod reconcile;
#[cfg(test)]
mod tests;
mod watch;
mod written;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tracing::{debug, error, info};

use crate::api::kinds;
use crate::api::selector::Selector;
use crate::cluster::{self, ConnectOptions};
use cache::TextObject;
use cached::CachedSet;
use caches::{Caches, Events};
use claims::SetKey;
use context::{Ctx, Kinds, ReconcileError};
use reconcile::{error_policy, reconcile};
use written::Written;

pub use metrics::Metrics;

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The StateManagementProvider served.
    pub provider: String,
    pub leader_elect: bool,
    pub lease_namespace: Option<String>,
    pub lease_name: Option<String>,
    /// `/metrics`, `/healthz`, `/readyz`.
    pub bind: SocketAddr,
    pub source_timeout: Duration,
    /// Reconcile every ServiceSet at least this often (0: only on changes).
    pub resync: Duration,
    pub concurrency: u16,
    /// How long a failed reconcile waits before it is tried again.
    pub retry: RetryDelays,
    /// JSON logs (else human-readable lines).
    pub json_logs: bool,
    /// The shard: only the ServiceSets whose labels match are reconciled (Flux's
    /// `--watch-label-selector`, with the `sharding.fluxcd.io/key` label). Every ServiceSet is
    /// still cached, so that decisions across ServiceSets see them all.
    pub shard: Option<Shard>,
    /// The timeoutSeconds of every watch request: the API server ends each watch after this
    /// long, and the watch resumes from the version it reached.
    pub watch_timeout: Duration,
}

/// The retries of a ServiceSet whose reconcile failed (Flux's `--min-retry-delay` and
/// `--max-retry-delay`): exponential from `min`, doubling with each consecutive failure, up
/// to `max`. A conflict (someone else wrote in between) is retried sooner for its first few
/// times: reading again is all it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryDelays {
    pub min: Duration,
    pub max: Duration,
}

impl Default for RetryDelays {
    fn default() -> Self {
        RetryDelays {
            min: Duration::from_millis(100),
            max: Duration::from_secs(300),
        }
    }
}

impl RetryDelays {
    /// The wait before the retry that follows the `failures`-th consecutive failure (from 1).
    pub fn delay(&self, failures: u32, conflict: bool) -> Duration {
        let n = failures.max(1);
        let d = if conflict && n <= 3 {
            self.min.saturating_mul(n)
        } else {
            self.min.saturating_mul(1u32 << (n - 1).min(20))
        };
        d.min(self.max)
    }
}

/// A shard of the ServiceSets: a label selector, as text and parsed.
#[derive(Debug, Clone)]
pub struct Shard {
    pub text: String,
    pub selector: Selector,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard, String> {
        let selector = Selector::parse_string(text)
            .map_err(|e| format!("invalid --watch-label-selector: {e}"))?;
        Ok(Shard {
            text: text.to_string(),
            selector,
        })
    }
}

impl Options {
    /// Whether the ServiceSet with these labels is in this replica's shard.
    pub fn in_shard(&self, labels: Option<&std::collections::BTreeMap<String, String>>) -> bool {
        self.shard.as_ref().is_none_or(|s| match labels {
            Some(l) => s.selector.matches_map(l),
            None => s.selector.matches_map(&Default::default()),
        })
    }

    /// The Lease of this replica's leader election: one per provider and shard (as Flux
    /// derives its leader election ID from the label selector), so that each shard has its
    /// own leader.
    pub fn lease_name(&self) -> String {
        if let Some(name) = &self.lease_name {
            return name.clone();
        }
        let base = format!("kubectl-ksm-{}", self.provider);
        match &self.shard {
            None => base,
            Some(s) => {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(s.text.as_bytes());
                let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
                format!("{base}-{hex}")
            }
        }
    }
}

/// Runs the controller until SIGTERM/SIGINT (graceful) or a fatal error.
pub fn run(cluster_args: &ConnectOptions, opts: Options) -> Result<(), String> {
    init_logs(opts.json_logs);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the I/O runtime: {e}"))?;
    runtime.block_on(run_async(cluster_args, opts))
}

fn init_logs(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KSM_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(
            "info,kube_client=warn,kube_runtime=warn,hyper=warn,tower=warn",
        )
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = if json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.with_ansi(false).try_init()
    };
}

async fn run_async(cluster_args: &ConnectOptions, opts: Options) -> Result<(), String> {
    let metrics = Arc::new(Metrics::default());
    let health = Arc::new(http::Health::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);

    let listener = tokio::net::TcpListener::bind(opts.bind)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.bind))?;
    info!(address = %listener.local_addr().map(|a| a.to_string()).unwrap_or_default(), "serving /metrics, /healthz, /readyz");
    let http = tokio::spawn(http::serve(
        listener,
        metrics.clone(),
        health.clone(),
        stop_rx.clone(),
    ));

    // SIGTERM / SIGINT: stop taking work, finish what runs, release the lease.
    {
        let stop_tx = stop_tx.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            info!("shutdown requested");
            let _ = stop_tx.send(true);
        });
    }

    let config = cluster::load_config(cluster_args)
        .await
        .map_err(|e| e.message)?;
    let server = config.cluster_url.to_string();
    let namespace_default = config.default_namespace.clone();
    let client = Client::try_from(config)
        .map_err(|e| format!("cannot create a client for {server}: {e}"))?;
    // The process has what it needs to work: from now on it is alive (/healthz); it is ready
    // (/readyz) once connected and, when leading, with its caches filled.
    health.live.store(true, Ordering::Relaxed);
    let kinds = Kinds::new();
    if !connect(&client, &server, &kinds, stop_rx.clone()).await? {
        let _ = http.await;
        return Ok(());
    }

    let elector = if opts.leader_elect {
        let ns = opts
            .lease_namespace
            .clone()
            .or_else(|| {
                std::env::var("POD_NAMESPACE")
                    .ok()
                    .filter(|s| !s.is_empty())
            })
            .unwrap_or(namespace_default);
        let lease = opts.lease_name();
        let mut elector = leader::Elector::new(client.clone(), &ns, &lease, metrics.clone());
        health.ready.store(true, Ordering::Relaxed); // a standby replica is healthy
        info!(lease = %format!("{ns}/{lease}"), identity = %elector.identity(), "waiting for leadership");
        if !elector.acquire(stop_rx.clone()).await {
            let _ = stop_tx.send(true);
            let _ = http.await;
            return Ok(());
        }
        health.ready.store(false, Ordering::Relaxed);
        info!(lease = %format!("{ns}/{lease}"), "leading");
        Some(elector)
    } else {
        None
    };
    metrics.leader.set(1);

    let lost = match elector {
        Some(e) => {
            let stop_tx = stop_tx.clone();
            let stop_rx = stop_rx.clone();
            Some(tokio::spawn(async move { e.hold(stop_rx, stop_tx).await }))
        }
        None => None,
    };

    let result = control(
        client,
        kinds,
        opts,
        metrics.clone(),
        health.clone(),
        stop_rx.clone(),
    )
    .await;
    let _ = stop_tx.send(true);
    let lost = match lost {
        Some(h) => h.await.unwrap_or(false),
        None => false,
    };
    metrics.leader.set(0);
    let _ = http.await;
    result?;
    if lost {
        return Err("lost the leader lease; exiting so that another replica takes over".into());
    }
    info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// How long to wait before the next attempt to reach the API server at start-up: exponential
/// from 1 s up to 30 s (an unreachable server at start is often one that is starting too).
fn connect_backoff(attempt: u32) -> Duration {
    Duration::from_secs(1u64 << attempt.min(5)).min(Duration::from_secs(30))
}

/// Whether an error at start-up may go away by itself (the server unreachable, overloaded or
/// restarting), rather than needing someone to act (no such kind, no permission).
fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Reaches the API server and checks the kinds, retrying transient errors with a backoff
/// until `stop`; false when stopped first.
async fn connect(
    client: &Client,
    server: &str,
    kinds: &Kinds,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<bool, String> {
    let mut attempt = 0u32;
    loop {
        match check_kinds(client, server, kinds).await {
            Ok(()) => return Ok(true),
            Err(KindsError::Fatal(e)) => return Err(e),
            Err(KindsError::Transient(e)) => {
                let wait = connect_backoff(attempt);
                attempt = attempt.saturating_add(1);
                error!(attempt, retry_in_ms = wait.as_millis() as u64, "{e}");
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop.wait_for(|s| *s) => return Ok(false),
                }
            }
        }
    }
}

enum KindsError {
    Transient(String),
    Fatal(String),
}

/// The kcm and Flux kinds must be served; one clear line otherwise.
async fn check_kinds(client: &Client, server: &str, kinds: &Kinds) -> Result<(), KindsError> {
    for (ar, what) in [
        (&kinds.service_set, "k0rdent (kcm) is not installed"),
        (&kinds.helm_release, "Flux helm-controller is not installed"),
        (
            &kinds.kustomization,
            "Flux kustomize-controller is not installed",
        ),
    ] {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), ar);
        match api.list_metadata(&ListParams::default().limit(1)).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {
                return Err(KindsError::Fatal(format!(
                    "{server}: {} ({}) is not served: {what}",
                    ar.plural, ar.api_version
                )));
            }
            Err(e) => {
                let transient = transient(&e);
                let msg = cluster::explain(server, &format!("list {}", ar.plural), e).message;
                return Err(if transient {
                    KindsError::Transient(msg)
                } else {
                    KindsError::Fatal(msg)
                });
            }
        }
    }
    Ok(())
}

/// How long a ServiceSet's reconcile waits for the events that follow one another (its
/// own status write, then its Flux objects appearing one by one in the caches) so that one
/// reconcile sees them all instead of one reconcile each (trailing edge: a reconcile runs at
/// most this long after the last event of a burst).
const RECONCILE_DEBOUNCE: Duration = Duration::from_secs(1);

/// The watches and the controller loop, until `stop`.
async fn control(
    client: Client,
    kinds: Kinds,
    opts: Options,
    metrics: Arc<Metrics>,
    health: Arc<http::Health>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(), String> {
    let (caches, streams) = Caches::watch(&client, &kinds, &opts);
    let written = Arc::new(Written::default());
    let (requeue, requeued) = tokio::sync::mpsc::unbounded_channel();
    let set_ar = kinds.service_set.clone();
    let config = controller::Config::default()
        .concurrency(opts.concurrency)
        .debounce(RECONCILE_DEBOUNCE);
    let set_events = set_events(streams.sets, &caches, &written, &opts, requeue);
    let flux = |events, kind: &kinds::Kind| flux_events(events, &caches, &written, kind.kind);
    let mut stop_taking = stop.clone();
    let controller = Controller::for_stream_with(set_events, caches.sets.clone(), set_ar.clone())
        .with_config(config)
        .reconcile_on(flux(streams.helm_releases, &kinds::HELM_RELEASE))
        .reconcile_on(flux(streams.kustomizations, &kinds::KUSTOMIZATION))
        .reconcile_on(template_events(streams.templates, &caches))
        .reconcile_on(smp_events(streams.smps, &caches))
        .reconcile_on(claim_requeues(requeued, set_ar))
        .graceful_shutdown_on(async move { leader::stopped(&mut stop_taking).await });
    let (synced_tx, synced) = tokio::sync::watch::channel(false);
    let ctx = Ctx::new(
        client,
        kinds,
        opts.clone(),
        &caches,
        written,
        synced,
        &metrics,
    );
    let reconciles = controller
        .run(reconcile, error_policy, Arc::new(ctx))
        .boxed();
    tokio::select! {
        _ = drive(reconciles, &caches, &opts, &metrics, &health, synced_tx) => {}
        _ = async { leader::stopped(&mut stop).await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            error!("reconciles did not finish 25 s after shutdown was requested; exiting");
        }
    }
    health.ready.store(false, Ordering::Relaxed);
    Ok(())
}

/// How long reconciles may take to finish once shutdown is requested.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(25);

/// How often the gauges of managed objects are updated.
const GAUGES_EVERY: Duration = Duration::from_secs(5);

type Reconciles<'a> = futures::stream::BoxStream<
    'a,
    Result<(ObjectRef<CachedSet>, Action), controller::Error<ReconcileError, watcher::Error>>,
>;

/// Runs the reconciles (whose trigger streams fill the caches) until they end: once the
/// caches are filled, reconciles may decide and the replica is ready; every few seconds, the
/// gauges.
async fn drive(
    mut reconciles: Reconciles<'_>,
    caches: &Caches,
    opts: &Options,
    metrics: &Metrics,
    health: &http::Health,
    synced: tokio::sync::watch::Sender<bool>,
) {
    let mut filled = std::pin::pin!(caches.ready());
    let mut ticker = tokio::time::interval(GAUGES_EVERY);
    loop {
        tokio::select! {
            item = reconciles.next() => match item {
                None => break,
                Some(Ok(_) | Err(controller::Error::ObjectNotFound(_))) => {}
                Some(Err(e)) => debug!(error = %e, "controller"),
            },
            _ = &mut filled, if !*synced.borrow() => {
                caches.synced();
                let _ = synced.send(true);
                health.ready.store(true, Ordering::Relaxed);
                info!("caches synced");
            }
            _ = ticker.tick() => gauges(caches, opts, metrics),
        }
    }
}

/// The gauges of the objects the adapter manages: the ServiceSets it serves in its shard
/// (another provider's are not managed), and the Flux objects that carry its label.
fn gauges(caches: &Caches, opts: &Options, metrics: &Metrics) {
    let gauge = |kind: &'static str, n: usize| {
        metrics
            .managed
            .get_or_create(&metrics::KindLabel { kind })
            .set(n as i64);
    };
    gauge("ServiceSet", caches.served_sets(opts));
    gauge("HelmRelease", caches.helm_releases.managed());
    gauge("Kustomization", caches.kustomizations.managed());
}

/// The ServiceSets' own events: those of this replica's shard start a reconcile of their own
/// (every ServiceSet is cached; the others may still be queued by a trigger, and the
/// reconcile skips them). They feed the claims index, whose changes requeue the ServiceSets
/// whose verdicts they may change.
fn set_events(
    events: Events<CachedSet>,
    caches: &Arc<Caches>,
    written: &Arc<Written>,
    opts: &Options,
    requeue: UnboundedSender<SetKey>,
) -> impl Stream<Item = Result<CachedSet, watcher::Error>> + Send + use<> {
    let (caches, opts) = (caches.clone(), opts.clone());
    let mut seen = observe(written, kinds::SERVICE_SET.kind);
    events
        .inspect(move |ev| {
            seen(ev);
            if let Ok(ev) = ev {
                for k in caches.set_event(ev) {
                    let _ = requeue.send(k);
                }
            }
        })
        .applied_objects()
        .filter(move |s| {
            std::future::ready(match s {
                Ok(s) => mine(&opts, s),
                Err(_) => true,
            })
        })
}

/// Whether a ServiceSet is in this replica's shard.
fn mine(opts: &Options, s: &CachedSet) -> bool {
    let mine = opts.in_shard(s.metadata.labels.as_ref());
    let (ns, name) = s.key();
    let who = format!("{ns}/{name}");
    let rv = s.metadata.resource_version.as_deref().unwrap_or("");
    if mine {
        tracing::trace!(serviceset = %who, resource_version = %rv, "ServiceSet event");
    } else {
        debug!(serviceset = %who, resource_version = %rv, "not in this replica's shard: no reconcile of its own");
    }
    mine
}

/// A Flux object's events: the ServiceSet that controls it.
fn flux_events(
    events: Events<TextObject>,
    caches: &Arc<Caches>,
    written: &Arc<Written>,
    kind: &'static str,
) -> impl Stream<Item = ObjectRef<CachedSet>> + Send + use<> {
    let caches = caches.clone();
    events
        .inspect(observe(written, kind))
        .touched_objects()
        .filter_map(move |o| std::future::ready(o.ok().and_then(|o| caches.owner_of(&o))))
}

/// A template's events: the ServiceSets that use it, and those whose verdicts that changes.
fn template_events(
    events: Events<DynamicObject>,
    caches: &Arc<Caches>,
) -> impl Stream<Item = ObjectRef<CachedSet>> + Send + use<> {
    let caches = caches.clone();
    events.flat_map(move |ev| {
        let keys = ev.map(|ev| caches.on_template(&ev)).unwrap_or_default();
        futures::stream::iter(keys.iter().map(|k| caches.set_ref(k)).collect::<Vec<_>>())
    })
}

/// The SMP's events: every ServiceSet (its selector, readiness or suspension decides them).
fn smp_events(
    events: Events<DynamicObject>,
    caches: &Arc<Caches>,
) -> impl Stream<Item = ObjectRef<CachedSet>> + Send + use<> {
    let caches = caches.clone();
    events
        .touched_objects()
        .filter_map(|o| std::future::ready(o.ok()))
        .flat_map(move |_| futures::stream::iter(caches.all_sets()))
}

/// The ServiceSets the claims index requeues.
fn claim_requeues(
    requeued: UnboundedReceiver<SetKey>,
    set_ar: ApiResource,
) -> impl Stream<Item = ObjectRef<CachedSet>> + Send + use<> {
    futures::stream::unfold(requeued, |mut rx| async move {
        rx.recv().await.map(|k| (k, rx))
    })
    .map(move |(ns, name)| ObjectRef::new_with(&name, set_ar.clone()).within(&ns))
}

/// A watch's timeoutSeconds: whole seconds, at least one (zero would ask the server for its
/// own, much longer, timeout).
fn watch_timeout_seconds(d: Duration) -> u32 {
    u32::try_from(d.as_secs()).unwrap_or(u32::MAX).max(1)
}

/// Drops the kept replies of the writes that a watch event shows have reached the cache.
fn observe<K: Resource>(
    written: &Arc<Written>,
    kind: &'static str,
) -> impl FnMut(&Result<watcher::Event<K>, watcher::Error>) + use<K> {
    let written = written.clone();
    move |ev| {
        if let Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) = ev {
            let m = o.meta();
            written.observed(
                kind,
                m.namespace.as_deref().unwrap_or(""),
                m.name.as_deref().unwrap_or(""),
                m.uid.as_deref().unwrap_or(""),
                m.resource_version.as_deref().unwrap_or(""),
            );
        }
    }
}
