//! Cluster access, the live edge: kubeconfig and context like kubectl, discovery of the
//! kinds, lists (once per kind, paginated) and gets. Read-only: nothing here writes.
//!
//! Errors become one line each that says what to do (unreachable server, rejected
//! credentials, missing RBAC, k0rdent or Flux not installed); the CLI exits with 2.

use std::path::PathBuf;
use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::{ApiCapabilities, ApiGroup, ApiResource, Discovery, Scope};
use kube::{Client, Config};
use serde_json::Value;

use crate::api::kcm::StateManagementProvider;
use crate::api::listing::{self, Listed, ProviderApi};
use crate::api::{Kind, Object, kinds};

pub mod http;
mod watch;

pub use watch::Watch;

/// Page size of every list.
pub const PAGE_SIZE: u32 = 500;

/// How to reach the cluster: what kubectl's connection flags say (`cli::ConnectOptions`).
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// The kubeconfig file; None: KUBECONFIG, then ~/.kube/config, then in-cluster.
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    /// How long one request may take; None: [`DEFAULT_REQUEST_TIMEOUT`], zero: forever.
    pub request_timeout: Option<Duration>,
    /// The user and groups to impersonate.
    pub as_user: Option<String>,
    pub as_group: Vec<String>,
}

/// How long one request may take when --request-timeout is not given: the API server's own
/// limit for a get or a list (kube-apiserver `--request-timeout`, 1m by default), so no
/// answer the server would still give is cut short, and a server that accepts connections
/// and never answers is an error within a minute (kubectl would wait forever).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

impl ConnectOptions {
    /// The time one request may take; None waits forever (`--request-timeout 0`).
    pub fn timeout(&self) -> Option<Duration> {
        match self.request_timeout {
            None => Some(DEFAULT_REQUEST_TIMEOUT),
            Some(t) if t.is_zero() => None,
            Some(t) => Some(t),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ClusterError {
    /// One line that says what went wrong and what to do.
    pub message: String,
    /// The API server's status code, when it answered with one (403: not allowed).
    pub status: Option<u16>,
    /// The API server's own message, when it answered with one.
    pub api_message: Option<String>,
}

impl ClusterError {
    pub fn new(message: impl Into<String>) -> ClusterError {
        ClusterError {
            message: message.into(),
            status: None,
            api_message: None,
        }
    }

    /// Whether the API server refused the request to this user (RBAC).
    pub fn forbidden(&self) -> bool {
        self.status == Some(403)
    }
}

/// A connection to a cluster, with its own runtime (the CLI is synchronous).
pub struct Cluster {
    runtime: tokio::runtime::Runtime,
    client: Client,
    /// The namespace of the kubeconfig context (kubectl's default for `-n`).
    pub default_namespace: String,
    pub server: String,
    discovery: Option<Discovery>,
    /// The time one request (a get, a page of a list, a discovery) may take.
    timeout: Option<Duration>,
}

/// The API groups the live subcommands use.
pub const GROUPS: &[&str] = &[
    kinds::SECRET.group,
    kinds::DEPLOYMENT.group,
    kinds::CRD.group,
    kinds::KCM_GROUP,
    kinds::HELM_RELEASE.group,
    kinds::KUSTOMIZATION.group,
    kinds::HELM_CHART.group,
    kinds::PROFILE.group,
    kinds::SVELTOS_CLUSTER.group,
    kinds::CAPI_CLUSTER.group,
];

impl Cluster {
    pub fn connect(options: impl Into<ConnectOptions>) -> Result<Cluster, ClusterError> {
        let args = &options.into();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ClusterError::new(format!("cannot start the I/O runtime: {e}")))?;
        let mut config = runtime.block_on(load_config(args))?;
        // Each request is bounded as a whole (see `Cluster::wait`); connecting (TCP and TLS)
        // no longer than that either.
        let timeout = args.timeout();
        config.connect_timeout = match (config.connect_timeout, timeout) {
            (Some(c), Some(t)) => Some(c.min(t)),
            (c, t) => c.or(t),
        };
        if timeout.is_none() {
            config.connect_timeout = None;
            config.write_timeout = None;
        }
        let server = config.cluster_url.to_string();
        let default_namespace = args
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let client = {
            let _guard = runtime.enter();
            let builder = kube::client::ClientBuilder::try_from(config).map_err(|e| {
                ClusterError::new(format!("cannot create a client for {server}: {e}"))
            })?;
            builder
                .with_layer(&http::LogLayer {
                    server: server.clone(),
                })
                .build()
        };
        Ok(Cluster {
            runtime,
            client,
            default_namespace,
            server,
            discovery: None,
            timeout,
        })
    }

    /// Runs one request to completion within the timeout: a server that accepts and never
    /// answers is an error that says so.
    fn wait<T>(
        &self,
        what: &str,
        request: impl std::future::Future<Output = kube::Result<T>>,
    ) -> Result<T, ClusterError> {
        self.runtime.block_on(self.bounded(what, request))
    }

    /// One request, bounded by the request timeout, its failure in kubectl's words.
    async fn bounded<T>(
        &self,
        what: &str,
        request: impl std::future::Future<Output = kube::Result<T>>,
    ) -> Result<T, ClusterError> {
        let result = match self.timeout {
            None => request.await,
            Some(t) => tokio::time::timeout(t, request)
                .await
                .map_err(|_| timed_out(&self.server, what, t))?,
        };
        result.map_err(|e| explain(&self.server, what, e))
    }

    /// Discovers the groups the live subcommands use (one request per group version).
    pub fn discover(&mut self) -> Result<(), ClusterError> {
        let discovery = self.wait(
            "discover the API",
            Discovery::new(self.client.clone()).filter(GROUPS).run(),
        )?;
        self.discovery = Some(discovery);
        Ok(())
    }

    /// The resource of a kind in a group, if the cluster serves it: at the group's preferred
    /// version, else at the most stable version that serves the kind.
    pub fn resource(&self, group: &str, kind: &str) -> Option<(ApiResource, ApiCapabilities)> {
        by_preference(self.discovery.as_ref()?.get(group)?)
            .into_iter()
            .find(|(ar, _)| ar.kind == kind)
    }

    /// The resource of a kind at a given apiVersion (`group/version` or `version`), as kcm's
    /// REST mapper resolves a reference.
    pub fn resource_at(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Option<(ApiResource, ApiCapabilities)> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.discovery
            .as_ref()?
            .get(group)?
            .versioned_resources(version)
            .into_iter()
            .find(|(ar, _)| ar.kind == kind)
    }

    /// Discovers every group the cluster serves (for names given by the user).
    pub fn discover_all(&mut self) -> Result<(), ClusterError> {
        let discovery = self.wait(
            "discover the API",
            Discovery::new(self.client.clone()).run(),
        )?;
        self.discovery = Some(discovery);
        Ok(())
    }

    /// A resource named like kubectl names them: `Deployment`, `deployment`, `deployments`,
    /// a short name (`deploy`, `hr`, `smp`), optionally qualified with its group
    /// (`helmreleases.helm.toolkit.fluxcd.io`) or version and group (`deployments.v1.apps`).
    pub fn resolve(&self, name: &str) -> Option<(ApiResource, ApiCapabilities)> {
        let (resource, version, group) = kinds::split_resource_name(name);
        // A short name of the kinds table stands for its kind (in its group).
        let (resource, group) = match kinds::by_resource_name(resource, group) {
            Some(k)
                if k.short_names
                    .contains(&resource.to_ascii_lowercase().as_str()) =>
            {
                (k.kind, Some(k.group))
            }
            _ => (resource, group),
        };
        let lower = resource.to_ascii_lowercase();
        let discovery = self.discovery.as_ref()?;
        let mut groups: Vec<_> = discovery.groups().collect();
        // Core and built-in groups first, as kubectl prefers them for short names.
        groups.sort_by_key(|g| (g.name().contains('.'), g.name().to_string()));
        for g in groups {
            if group.is_some_and(|want| want != g.name()) {
                continue;
            }
            let resources = match version {
                Some(v) => g.versioned_resources(v),
                None => by_preference(g),
            };
            for (ar, caps) in resources {
                if ar.kind.to_ascii_lowercase() == lower || ar.plural == lower {
                    return Some((ar, caps));
                }
            }
        }
        None
    }

    /// Whether the cluster serves the group at all.
    pub fn has_group(&self, group: &str) -> bool {
        self.discovery.as_ref().is_some_and(|d| d.has_group(group))
    }

    /// Every object of a kind (in `namespace`, or all namespaces), one paginated list.
    pub fn list(
        &self,
        ar: &ApiResource,
        caps: &ApiCapabilities,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, ClusterError> {
        self.list_selected(ar, caps, namespace, None)
    }

    /// Every object of a kind whose labels match `selector` (kubectl's `-l` syntax), one
    /// paginated list; the API server does the matching.
    pub fn list_selected(
        &self,
        ar: &ApiResource,
        caps: &ApiCapabilities,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<Value>, ClusterError> {
        self.runtime
            .block_on(self.list_pages(ar, caps, namespace, selector))
    }

    /// `list_selected` as a future, so that lists of several kinds can be in flight at once.
    async fn list_pages(
        &self,
        ar: &ApiResource,
        caps: &ApiCapabilities,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<Value>, ClusterError> {
        let api: Api<DynamicObject> = match (caps.scope.clone(), namespace) {
            (Scope::Namespaced, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, ar),
            _ => Api::all_with(self.client.clone(), ar),
        };
        let selector = selector.filter(|s| !s.is_empty()).map(str::to_string);
        let items = self
            .pages(&format!("list {}", ar.plural), |lp| {
                let api = api.clone();
                let lp = match &selector {
                    Some(s) => lp.labels(s),
                    None => lp,
                };
                async move { api.list(&lp).await }
            })
            .await?;
        Ok(items.into_iter().map(|o| with_type(&o, ar)).collect())
    }

    /// Every page of a list (`limit` + `continue`), one request per page.
    fn paginate<T, F, Fut>(&self, what: &str, fetch: F) -> Result<Vec<T>, ClusterError>
    where
        T: Clone,
        F: Fn(ListParams) -> Fut,
        Fut: std::future::Future<Output = kube::Result<kube::core::ObjectList<T>>>,
    {
        self.runtime.block_on(self.pages(what, fetch))
    }

    /// The pages of a list, one request after the other, each bounded by the request timeout.
    async fn pages<T, F, Fut>(&self, what: &str, fetch: F) -> Result<Vec<T>, ClusterError>
    where
        T: Clone,
        F: Fn(ListParams) -> Fut,
        Fut: std::future::Future<Output = kube::Result<kube::core::ObjectList<T>>>,
    {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(PAGE_SIZE);
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let page = self.bounded(what, fetch(lp)).await?;
            out.extend(page.items);
            token = page.metadata.continue_.filter(|t| !t.is_empty());
            if token.is_none() {
                return Ok(out);
            }
        }
    }

    /// One object, or None if it does not exist.
    pub fn get(
        &self,
        ar: &ApiResource,
        caps: &ApiCapabilities,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ClusterError> {
        let api: Api<DynamicObject> = match caps.scope {
            Scope::Namespaced => Api::namespaced_with(self.client.clone(), namespace, ar),
            Scope::Cluster => Api::all_with(self.client.clone(), ar),
        };
        self.wait(&format!("get {} {name}", ar.plural), api.get_opt(name))
            .map(|o| o.map(|o| with_type(&o, ar)))
    }
}

/// The resources of a group in the order kubectl's REST mapper tries them for a name without
/// a version: the group's preferred version first, then its other versions, most stable
/// first. A kind the group serves only at a version it does not prefer (its other kinds
/// have a newer one) is found there, as kubectl finds it.
fn by_preference(g: &ApiGroup) -> Vec<(ApiResource, ApiCapabilities)> {
    let preferred = g.preferred_version_or_latest();
    let mut out = g.versioned_resources(preferred);
    for v in g.versions().filter(|v| *v != preferred) {
        out.extend(g.versioned_resources(v));
    }
    out
}

/// A get's result, where a refusal (403) becomes nothing and a note when `notes` is given.
fn refused_as_note(
    got: Result<Option<Value>, ClusterError>,
    notes: Option<&mut Vec<String>>,
    consequence: &str,
) -> Result<Option<Value>, ClusterError> {
    match (got, notes) {
        (Err(e), Some(notes)) if e.forbidden() => {
            notes.push(format!("{}: {consequence}", e.message));
            Ok(None)
        }
        (got, _) => got,
    }
}

/// The client's resource type of a kind of the api table.
pub fn api_resource(kind: &crate::api::Kind) -> ApiResource {
    ApiResource {
        group: kind.group.into(),
        version: kind.version.into(),
        api_version: kind.api_version.into(),
        kind: kind.kind.into(),
        plural: kind.plural.into(),
    }
}

/// An object as JSON, with the apiVersion and kind of its resource (lists leave them out).
pub fn with_type(o: &DynamicObject, ar: &ApiResource) -> Value {
    let mut v = serde_json::to_value(o).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), ar.api_version.clone().into());
        m.insert("kind".into(), ar.kind.clone().into());
    }
    v
}

/// The User-Agent of every request: the API server's audit log and its default field manager
/// (the agent's first word) name this tool, as kubectl's requests name kubectl.
pub fn user_agent() -> String {
    format!(
        "kubectl-ksm/{} ({}/{})",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

pub async fn load_config(args: &ConnectOptions) -> Result<Config, ClusterError> {
    let mut config = load_kubeconfig(args).await?;
    if let Ok(agent) = ::http::HeaderValue::from_str(&user_agent()) {
        config.headers.push((::http::header::USER_AGENT, agent));
    }
    if let Some(t) = args.request_timeout {
        let t = (!t.is_zero()).then_some(t);
        config.read_timeout = t;
        config.write_timeout = t;
        config.connect_timeout = t;
    }
    impersonate(&mut config, args)?;
    Ok(config)
}

/// `--as`/`--as-group`: the user and groups to impersonate, over the kubeconfig user's
/// `as`/`as-groups`; kube's client sends them as Impersonate-User and Impersonate-Group
/// headers, as kubectl does.
fn impersonate(config: &mut Config, args: &ConnectOptions) -> Result<(), ClusterError> {
    if let Some(user) = &args.as_user {
        config.auth_info.impersonate = Some(user.clone());
    }
    if !args.as_group.is_empty() {
        config.auth_info.impersonate_groups = Some(args.as_group.clone());
    }
    let user = config.auth_info.impersonate.as_deref().unwrap_or("");
    let groups = config
        .auth_info
        .impersonate_groups
        .as_deref()
        .unwrap_or(&[]);
    if user.is_empty() && !groups.is_empty() {
        return Err(ClusterError::new(
            "requesting groups without impersonating a user: give --as USER with --as-group",
        ));
    }
    for v in std::iter::once(user).chain(groups.iter().map(String::as_str)) {
        if ::http::HeaderValue::from_str(v).is_err() {
            return Err(ClusterError::new(format!(
                "cannot impersonate {v:?}: not a valid header value"
            )));
        }
    }
    Ok(())
}

async fn load_kubeconfig(args: &ConnectOptions) -> Result<Config, ClusterError> {
    let options = KubeConfigOptions {
        context: args.context.clone(),
        ..KubeConfigOptions::default()
    };
    if let Some(path) = &args.kubeconfig {
        let kc = Kubeconfig::read_from(path).map_err(|e| {
            ClusterError::new(format!(
                "{}: cannot read the kubeconfig: {e}",
                path.display()
            ))
        })?;
        return Config::from_custom_kubeconfig(kc, &options)
            .await
            .map_err(|e| ClusterError::new(format!("{}: {e}", path.display())));
    }
    match Config::from_kubeconfig(&options).await {
        Ok(c) => Ok(c),
        Err(kubeconfig_err) => {
            if args.context.is_some() {
                return Err(ClusterError::new(format!("kubeconfig: {kubeconfig_err}")));
            }
            // No kubeconfig: inside a pod, the service account.
            Config::incluster().map_err(|_| {
                ClusterError::new(format!(
                    "no cluster to talk to: {kubeconfig_err} (set KUBECONFIG or --kubeconfig, or run inside a pod)"
                ))
            })
        }
    }
}

/// One line that says what went wrong and what to do.
pub fn explain(server: &str, what: &str, e: kube::Error) -> ClusterError {
    let msg = match &e {
        kube::Error::Api(status) => match status.code {
            401 => format!(
                "the API server at {server} rejected the credentials while trying to {what} (expired token or certificate?): log in again, or check `kubectl config view --minify`"
            ),
            403 => format!(
                "forbidden to {what}: {} — grant get/list on it (kubectl auth can-i list {} -A)",
                status.message,
                what.split_whitespace().last().unwrap_or("")
            ),
            404 => format!(
                "the API server has no {what} (404): is k0rdent (kcm) or Flux installed? `kubectl api-resources` lists what it serves"
            ),
            _ => format!("cannot {what}: {} ({})", status.message, status.code),
        },
        _ if http::is_timeout(&e) => {
            format!(
                "cannot reach the API server at {server} to {what}: timed out while connecting — check the context (`kubectl config current-context`) and that the cluster is up"
            )
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => {
            match http::transport_failure(server, &e, None) {
                Some(m) => m,
                None => format!(
                    "cannot reach the API server at {server} to {what}: {e} — check the context (`kubectl config current-context`) and that the cluster is up"
                ),
            }
        }
        kube::Error::SerdeError(json) if json.to_string().contains("recursion limit") => {
            format!(
                "cannot {what} at {server}: an object in the answer nests more than 128 levels deep, which this client refuses to read"
            )
        }
        _ => format!("cannot {what} at {server}: {e}"),
    };
    let (status, api_message) = match &e {
        kube::Error::Api(s) => (Some(s.code), Some(s.message.clone())),
        _ => (None, None),
    };
    ClusterError {
        message: msg,
        status,
        api_message,
    }
}

/// A kind the user may not list (403) is left out, its refusal kept: `(note, why)`. Without
/// ServiceSets there is nothing to diagnose, and any other failure stops the run.
pub(crate) fn unreadable(kind: &Kind, e: ClusterError) -> Result<(String, String), ClusterError> {
    if e.forbidden() && kind.kind != kinds::SERVICE_SET.kind {
        let note = e.message.clone();
        Ok((note, e.api_message.unwrap_or(e.message)))
    } else {
        Err(e)
    }
}

/// A request that took longer than the timeout, worded as kubectl words it, with what was
/// being done.
fn timed_out(server: &str, what: &str, timeout: Duration) -> ClusterError {
    let e = std::io::Error::from(std::io::ErrorKind::TimedOut);
    let message = http::transport_failure(server, &e, Some(timeout))
        .unwrap_or_else(|| format!("Unable to connect to the server {server}: timed out"));
    ClusterError::new(format!("{message}; while trying to {what}"))
}

/// What a live snapshot holds and how it was taken.
pub struct Snapshot {
    pub objects: Vec<Value>,
    /// Secret names were listed (metadata only), so a missing kubeconfig Secret is real.
    pub secrets_listed: bool,
    /// Kinds the API server refused to list to this user (403), with its refusal: none of
    /// their objects is here.
    pub unread: Vec<(&'static Kind, String)>,
    /// Notes for stderr (a group the cluster does not serve, ...).
    pub notes: Vec<String>,
}

/// What doctor reads from a cluster, found by discovery: the kinds to list (each with the
/// namespace to list it in), the providers the cluster serves, and notes on what it lacks.
pub(crate) struct DoctorPlan {
    pub(crate) wanted: Vec<(&'static Kind, ApiResource, ApiCapabilities, Option<String>)>,
    served: Vec<&'static ProviderApi>,
    namespace: Option<String>,
    pub(crate) notes: Vec<String>,
}

impl Cluster {
    /// The objects `doctor` needs: one list per kind (paginated), Secrets by metadata only,
    /// and the objects and CRDs the StateManagementProviders reference, by name, as kcm gets
    /// them.
    pub fn doctor_snapshot(
        &mut self,
        namespace: Option<&str>,
        providers: &[&'static ProviderApi],
    ) -> Result<Snapshot, ClusterError> {
        let mut plan = self.doctor_plan(namespace, providers)?;
        let mut objects = Vec::new();
        let mut unread = Vec::new();
        // Every kind's list at once (each one list, its pages one after the other): the
        // server serves one while the client decodes another.
        let lists = self.runtime.block_on(futures::future::join_all(
            plan.wanted
                .iter()
                .map(|(_, ar, caps, ns)| self.list_pages(ar, caps, ns.as_deref(), None)),
        ));
        for ((kind, ..), listed) in plan.wanted.iter().zip(lists) {
            match listed {
                Ok(items) => objects.extend(items),
                Err(e) => {
                    let why = unreadable(kind, e)?;
                    plan.notes.push(format!("{}: not followed", why.0));
                    unread.push((*kind, why.1));
                }
            }
        }
        let secrets_listed = self.doctor_rest(&mut plan, &mut objects, &mut unread)?;
        Ok(Snapshot {
            objects,
            secrets_listed,
            notes: plan.notes,
            unread,
        })
    }

    /// The kinds doctor lists, by discovery; Err when the cluster serves no kcm or none of
    /// the providers.
    pub(crate) fn doctor_plan(
        &mut self,
        namespace: Option<&str>,
        providers: &[&'static ProviderApi],
    ) -> Result<DoctorPlan, ClusterError> {
        if self.discovery.is_none() {
            self.discover()?;
        }
        if !self.has_group(kinds::KCM_GROUP) {
            return Err(ClusterError::new(format!(
                "the cluster at {} serves no k0rdent.mirantis.com API: is k0rdent (kcm) installed? (kubectl api-resources --api-group=k0rdent.mirantis.com)",
                self.server
            )));
        }
        let (served, absent): (Vec<&ProviderApi>, Vec<&ProviderApi>) = providers
            .iter()
            .partition(|p| p.groups.iter().any(|g| self.has_group(g)));
        if served.is_empty() {
            let serves: Vec<&str> = providers.iter().map(|p| p.serves).collect();
            let group = providers
                .first()
                .and_then(|p| p.groups.first())
                .copied()
                .unwrap_or(kinds::KCM_GROUP);
            return Err(ClusterError::new(format!(
                "the cluster at {} serves neither {}: are the providers installed? (kubectl api-resources --api-group={group})",
                self.server,
                serves.join(" nor "),
            )));
        }
        let mut notes = Vec::new();
        for p in &absent {
            notes.push(format!(
                "the cluster serves no {} CRDs ({}): ServiceSets of {} cannot be followed past their status",
                p.label,
                p.groups.join(", "),
                p.whose
            ));
        }
        let mut wanted = Vec::new();
        for Listed { kind, everywhere } in listing::union(providers.iter().copied()) {
            let Some((ar, caps)) = self.resource(kind.group, kind.kind) else {
                // A whole provider's groups absent are said once, above.
                if !absent.iter().any(|p| p.groups.contains(&kind.group)) {
                    notes.push(format!(
                        "the cluster does not serve {} ({}): nothing of that kind to follow",
                        kind.kind, kind.group
                    ));
                }
                continue;
            };
            let ns = if everywhere { None } else { namespace };
            wanted.push((kind, ar, caps, ns.map(str::to_string)));
        }
        Ok(DoctorPlan {
            wanted,
            served,
            namespace: namespace.map(str::to_string),
            notes,
        })
    }

    /// What doctor reads besides the lists of its kinds, once those are in `objects`: the
    /// label-selected lists of the installed providers, Secret names, and what the
    /// StateManagementProviders reference. Returns whether Secret names were listed.
    pub(crate) fn doctor_rest(
        &mut self,
        plan: &mut DoctorPlan,
        objects: &mut Vec<Value>,
        unread: &mut Vec<(&'static Kind, String)>,
    ) -> Result<bool, ClusterError> {
        let notes = &mut plan.notes;
        // The label-selected lists of the installed providers, in every namespace (kcm's
        // health-rule ConfigMaps: the system namespace holds the global tier).
        for selected in plan.served.iter().flat_map(|p| p.selected) {
            // Built from the table, as the cluster serves these kinds whatever it discovered.
            let ar = api_resource(selected.kind);
            let caps = ApiCapabilities {
                scope: if selected.kind.namespaced {
                    Scope::Namespaced
                } else {
                    Scope::Cluster
                },
                subresources: Vec::new(),
                operations: Vec::new(),
            };
            match self.list_selected(&ar, &caps, None, Some(selected.selector)) {
                Ok(items) => objects.extend(items),
                Err(e) if e.forbidden() => {
                    notes.push(format!("{}: {} not read", e.message, selected.what));
                    unread.push((selected.kind, e.api_message.unwrap_or(e.message)));
                }
                Err(e) => return Err(e),
            }
        }
        // Secret names, never their data: metadata-only list.
        let secrets_listed = match self.secret_names(plan.namespace.as_deref()) {
            Ok(names) => {
                objects.extend(names);
                true
            }
            Err(e) => {
                notes.push(format!("kubeconfig Secrets not checked: {e}"));
                false
            }
        };
        let refs = self.smp_references(objects, Some(notes))?;
        objects.extend(refs);
        Ok(secrets_listed)
    }

    fn secret_names(&self, namespace: Option<&str>) -> Result<Vec<Value>, ClusterError> {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&());
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let items = self.paginate("list secrets (metadata only)", |lp| {
            let api = api.clone();
            async move { api.list_metadata(&lp).await }
        })?;
        Ok(items
            .into_iter()
            .map(|item| {
                serde_json::json!({
                    "apiVersion": kinds::SECRET.api_version,
                    "kind": kinds::SECRET.kind,
                    "metadata": {"name": item.metadata.name, "namespace": item.metadata.namespace},
                })
            })
            .collect())
    }

    /// The (apiVersion, kind) of the SMPs' references the cluster does not serve, for which
    /// kcm's REST mapper finds no mapping; after `smp_references`, which discovers their
    /// groups.
    pub fn not_served_references(&self, smps: &[Value]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for smp in smps.iter().map(StateManagementProvider) {
            for r in smp.references() {
                let key = (r.api_version, r.kind);
                if !key.1.is_empty()
                    && self.resource_at(&key.0, &key.1).is_none()
                    && !out.contains(&key)
                {
                    out.push(key);
                }
            }
        }
        out
    }

    /// The adapter/provisioner objects and provisioner CRDs of every SMP (a handful of gets).
    /// With `forbidden`, an object the user may not get is left out with a note there
    /// (doctor goes on without it); without, it is an error.
    pub fn smp_references(
        &mut self,
        objects: &[Value],
        mut forbidden: Option<&mut Vec<String>>,
    ) -> Result<Vec<Value>, ClusterError> {
        let mut refs: Vec<(String, String, String, String)> = Vec::new();
        let mut crds: Vec<String> = Vec::new();
        let smps = objects
            .iter()
            .filter(|o| Object(o).kind() == kinds::STATE_MANAGEMENT_PROVIDER.kind)
            .map(StateManagementProvider);
        for smp in smps {
            for r in smp.references() {
                let key = (r.api_version, r.kind, r.namespace, r.name);
                if !key.1.is_empty() && !refs.contains(&key) {
                    refs.push(key);
                }
            }
            for gvr in smp.provisioner_crds() {
                for name in gvr.crd_names() {
                    if !crds.contains(&name) {
                        crds.push(name);
                    }
                }
            }
        }
        let mut out = Vec::new();
        // Groups outside the usual ones are discovered once, together.
        let extra: Vec<String> = refs
            .iter()
            .map(|(av, ..)| kinds::group_of(av).to_string())
            .filter(|g| self.discovery.as_ref().is_some_and(|d| !d.has_group(g)))
            .collect();
        if !extra.is_empty() {
            let mut groups: Vec<&str> = GROUPS.to_vec();
            groups.extend(extra.iter().map(String::as_str));
            let d = self.wait(
                "discover the API",
                Discovery::new(self.client.clone()).filter(&groups).run(),
            )?;
            self.discovery = Some(d);
        }
        // At the version the reference names, as kcm's REST mapping reads it (not the
        // group's preferred version: a v1beta1 reference to a CRD that prefers v1 is read at
        // v1beta1, and one at a version no longer served is not found).
        for (api_version, kind, ns, name) in refs {
            let Some((ar, caps)) = self.resource_at(&api_version, &kind) else {
                continue;
            };
            let got = self.get(&ar, &caps, &ns, &name);
            let note = "the provider's rules are not re-evaluated against it";
            out.extend(refused_as_note(got, forbidden.as_deref_mut(), note)?);
        }
        if let Some((ar, caps)) = self.resource(kinds::CRD.group, kinds::CRD.kind) {
            for name in crds {
                let got = self.get(&ar, &caps, "", &name);
                let note = "the provider's CRDs are not checked";
                out.extend(refused_as_note(got, forbidden.as_deref_mut(), note)?);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeout_defaults_to_the_api_servers_own_limit() {
        let args = |t: Option<Duration>| ConnectOptions {
            request_timeout: t,
            ..ConnectOptions::default()
        };
        assert_eq!(args(None).timeout(), Some(Duration::from_secs(60)));
        assert_eq!(args(Some(Duration::ZERO)).timeout(), None);
        assert_eq!(
            args(Some(Duration::from_secs(2))).timeout(),
            Some(Duration::from_secs(2))
        );
    }
}
