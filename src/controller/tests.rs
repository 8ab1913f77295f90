//! Scenario tests of one reconcile against a mocked API server: the exact sequence of
//! requests for a create, an update, a deletion and a conflict (kube-rs controller-rs style:
//! each expected call is awaited with a 1 s timeout and answered; any other call fails the
//! test). The fake-server tests (tests/run_adapter.rs) cover whole runs over HTTP.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use kube::Client;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::Options;
use super::cached::CachedSet;
use super::caches::Caches;
use super::context::{Ctx, Kinds, ReconcileError};
use super::reconcile::reconcile_once;
use super::written::Written;
use crate::api::naming::{FIELD_MANAGER, FINALIZER};
use crate::core::adapter;

const NS: &str = "kcm-system";
const SETS: &str = "/apis/k0rdent.mirantis.com/v1beta1/namespaces/kcm-system/servicesets/dev";
const HR: &str = "/apis/helm.toolkit.fluxcd.io/v2/namespaces/kcm-system/helmreleases";

type Call = (
    Request<kube::client::Body>,
    oneshot::Sender<Response<Full<Bytes>>>,
);

/// The other end of the mocked client: every request the reconcile sends arrives here.
struct ApiServer {
    calls: mpsc::UnboundedReceiver<Call>,
}

impl ApiServer {
    /// Awaits the next request, checks its method and path, answers it; returns its body.
    async fn expect(&mut self, method: &str, path: &str, status: u16, reply: Value) -> Value {
        let (req, tx) = tokio::time::timeout(Duration::from_secs(1), self.calls.recv())
            .await
            .unwrap_or_else(|_| panic!("no {method} {path} within 1 s"))
            .expect("the client is gone");
        assert_eq!(
            (req.method().as_str(), req.uri().path()),
            (method, path),
            "unexpected call {} {}",
            req.method(),
            req.uri()
        );
        let query = req.uri().query().unwrap_or("").to_string();
        let body = req.into_body().collect().await.unwrap().to_bytes();
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let response = Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(reply.to_string())))
            .unwrap();
        tx.send(response).unwrap();
        json!({"query": query, "body": body})
    }

    /// Nothing else was sent.
    fn done(mut self) {
        if let Ok((req, _)) = self.calls.try_recv() {
            panic!("unexpected call {} {}", req.method(), req.uri());
        }
    }
}

fn mock_client() -> (Client, ApiServer) {
    let (tx, calls) = mpsc::unbounded_channel::<Call>();
    let service = tower::service_fn(move |req: Request<kube::client::Body>| {
        let tx = tx.clone();
        async move {
            let (rtx, rrx) = oneshot::channel();
            tx.send((req, rtx))
                .map_err(|_| "the test's server is gone")?;
            rrx.await.map_err(|_| "no answer")
        }
    });
    (Client::new(service, NS), ApiServer { calls })
}

fn smp() -> Value {
    json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "StateManagementProvider",
        "metadata": {"name": "ksm-flux", "uid": "smp-uid"},
        "spec": {"selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "kubectl-ksm"}}},
        "status": {"ready": true}})
}

fn template() -> Value {
    json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
        "metadata": {"name": "nginx", "namespace": NS, "uid": "t-uid"},
        "spec": {"helm": {"chartSpec": {"chart": "ingress-nginx", "version": "4.11.0",
            "sourceRef": {"kind": "HelmRepository", "name": "catalog"}}}},
        "status": {"valid": true, "chartRef": {"kind": "HelmChart", "name": "nginx", "namespace": NS}}})
}

fn service_set() -> Value {
    json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
        "metadata": {"name": "dev", "namespace": NS, "uid": "set-uid", "resourceVersion": "1",
            "generation": 1, "labels": {"ksm.k0rdent.mirantis.com/adapter": "kubectl-ksm"}},
        "spec": {"cluster": "dev", "provider": {"name": "ksm-flux"},
            "services": [{"name": "ingress", "namespace": "ingress", "template": "nginx"}]}})
}

/// The HelmRelease the adapter renders for the set, as the server would return it.
fn helm_release(set: &Value) -> Value {
    let rendered = crate::core::render::render(&crate::core::render::Inputs {
        service_set: set,
        templates: &[template()],
    });
    let mut hr = rendered.objects[0].clone();
    hr["metadata"]["uid"] = json!("hr-uid");
    hr["metadata"]["resourceVersion"] = json!("5");
    hr["metadata"]["managedFields"] = json!([{"manager": FIELD_MANAGER, "operation": "Apply",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:interval": {}}}}]);
    hr
}

fn ctx(client: Client, helm_releases: &[Value]) -> Ctx {
    let kinds = Kinds::new();
    let caches = Caches::of(&kinds, "ksm-flux", &[smp()], &[template()], helm_releases);
    let (_, synced) = tokio::sync::watch::channel(true);
    let opts = Options {
        provider: "ksm-flux".into(),
        leader_elect: false,
        lease_namespace: None,
        lease_name: None,
        bind: "127.0.0.1:0".parse().unwrap(),
        source_timeout: Duration::from_secs(600),
        resync: Duration::ZERO,
        concurrency: 1,
        retry: super::RetryDelays::default(),
        json_logs: false,
        shard: None,
        watch_timeout: Duration::from_secs(290),
    };
    let metrics = Arc::new(super::Metrics::default());
    let written = Arc::new(Written::default());
    Ctx::new(
        client,
        kinds,
        opts,
        &Arc::new(caches),
        written,
        synced,
        &metrics,
    )
}

/// The status the adapter computes for `set` with `live` Flux objects (as a previous
/// reconcile would have written it).
fn status_of(set: &Value, live: &[Value]) -> Value {
    let live: Vec<&Value> = live.iter().collect();
    adapter::plan(&adapter::Inputs {
        service_set: set,
        desired: &adapter::Desired::of(set, &[template()]),
        live: &live,
        sources: &[],
        provider: adapter::Provider {
            ready: true,
            suspended: false,
            gone: false,
        },
        previous_status: set.get("status"),
        now: chrono::Utc::now(),
        source_timeout: Duration::from_secs(600),
        rivals: &[],
    })
    .status
}

async fn reconcile(ctx: &Ctx, set: &Value) -> Result<adapter::Next, ReconcileError> {
    let cached: CachedSet = serde_json::from_value(set.clone()).expect("a ServiceSet");
    reconcile_once(&cached, ctx).await
}

#[tokio::test]
async fn a_new_service_set_gets_the_finalizer_then_its_status_then_its_helm_release() {
    let (client, mut server) = mock_client();
    let ctx = ctx(client, &[]);
    let set = service_set();
    let mut with_finalizer = set.clone();
    with_finalizer["metadata"]["finalizers"] = json!([FINALIZER]);
    with_finalizer["metadata"]["resourceVersion"] = json!("2");
    let (result, ()) = tokio::join!(reconcile(&ctx, &set), async {
        let call = server
            .expect("PATCH", SETS, 200, with_finalizer.clone())
            .await;
        assert_eq!(
            call["body"],
            json!({"metadata": {"finalizers": [FINALIZER], "resourceVersion": "1"}})
        );
        // Every write names the adapter as its field manager, the merge patches too (the API
        // server would otherwise record them under the client's User-Agent).
        assert!(
            call["query"]
                .as_str()
                .unwrap()
                .contains("fieldManager=kubectl-ksm")
        );
        let call = server
            .expect(
                "PATCH",
                &format!("{SETS}/status"),
                200,
                with_finalizer.clone(),
            )
            .await;
        assert_eq!(
            call["body"]["metadata"]["resourceVersion"], "2",
            "the finalizer's version"
        );
        assert_eq!(call["body"]["status"]["services"][0]["state"], "Pending");
        assert!(
            call["query"]
                .as_str()
                .unwrap()
                .contains("fieldManager=kubectl-ksm")
        );
        let hr = helm_release(&set);
        let call = server
            .expect("PATCH", &format!("{HR}/dev-ingress"), 200, hr)
            .await;
        assert!(
            call["query"]
                .as_str()
                .unwrap()
                .contains("fieldManager=kubectl-ksm")
        );
        assert!(call["query"].as_str().unwrap().contains("force=true"));
        assert_eq!(call["body"]["kind"], "HelmRelease");
    });
    assert_eq!(result.unwrap(), adapter::Next::AwaitChange);
    server.done();
}

#[tokio::test]
async fn a_helm_release_out_of_sync_is_applied_again_and_nothing_else_is_written() {
    let (client, mut server) = mock_client();
    let mut set = service_set();
    set["metadata"]["finalizers"] = json!([FINALIZER]);
    let mut hr = helm_release(&set);
    hr["spec"]["interval"] = json!("1h");
    set["status"] = status_of(&set, std::slice::from_ref(&hr));
    let ctx = ctx(client, std::slice::from_ref(&hr));
    let (result, ()) = tokio::join!(reconcile(&ctx, &set), async {
        let call = server
            .expect(
                "PATCH",
                &format!("{HR}/dev-ingress"),
                200,
                helm_release(&set),
            )
            .await;
        assert_eq!(call["body"]["spec"]["interval"], "10m");
    });
    assert_eq!(result.unwrap(), adapter::Next::AwaitChange);
    server.done();
}

#[tokio::test]
async fn a_deleted_service_set_shows_deleting_then_deletes_its_objects_and_looks_again() {
    let (client, mut server) = mock_client();
    let mut set = service_set();
    set["metadata"]["finalizers"] = json!([FINALIZER]);
    let hr = helm_release(&set);
    set["status"] = status_of(&set, std::slice::from_ref(&hr));
    set["metadata"]["deletionTimestamp"] = json!("2026-11-21T12:00:00Z");
    let ctx = ctx(client, std::slice::from_ref(&hr));
    let (result, ()) = tokio::join!(reconcile(&ctx, &set), async {
        let call = server
            .expect("PATCH", &format!("{SETS}/status"), 200, set.clone())
            .await;
        assert_eq!(call["body"]["status"]["services"][0]["state"], "Deleting");
        let call = server
            .expect("DELETE", &format!("{HR}/dev-ingress"), 200, hr.clone())
            .await;
        assert_eq!(call["body"]["preconditions"]["uid"], "hr-uid");
    });
    assert_eq!(
        result.unwrap(),
        adapter::Next::After(Duration::from_secs(2))
    );
    server.done();
}

#[tokio::test]
async fn once_nothing_remains_the_server_is_asked_then_the_finalizer_goes() {
    let (client, mut server) = mock_client();
    let mut set = service_set();
    set["metadata"]["finalizers"] = json!([FINALIZER, "other/finalizer"]);
    set["metadata"]["deletionTimestamp"] = json!("2026-11-21T12:00:00Z");
    set["status"] = status_of(&set, &[]);
    let ctx = ctx(client, &[]);
    let empty = |kind: &str| json!({"apiVersion": "v1", "kind": kind, "metadata": {}, "items": []});
    let (result, ()) = tokio::join!(reconcile(&ctx, &set), async {
        let call = server
            .expect("GET", HR, 200, empty("HelmReleaseList"))
            .await;
        assert!(
            call["query"]
                .as_str()
                .unwrap()
                .contains("labelSelector=ksm.k0rdent.mirantis.com%2Fserviceset%3Ddev")
        );
        server
            .expect(
                "GET",
                "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/kcm-system/kustomizations",
                200,
                empty("KustomizationList"),
            )
            .await;
        let call = server.expect("PATCH", SETS, 200, set.clone()).await;
        assert_eq!(
            call["body"]["metadata"]["finalizers"],
            json!(["other/finalizer"])
        );
        // An Event says the deletion is complete.
        let call = server
            .expect(
                "POST",
                "/apis/events.k8s.io/v1/namespaces/kcm-system/events",
                201,
                json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                    "metadata": {"name": "dev.1", "namespace": NS}, "eventTime": null}),
            )
            .await;
        assert_eq!(call["body"]["reason"], "Deleted");
        assert_eq!(call["body"]["regarding"]["name"], "dev");
    });
    assert_eq!(result.unwrap(), adapter::Next::AwaitChange);
    server.done();
}

#[tokio::test]
async fn a_conflict_on_the_finalizer_reads_the_service_set_again_and_fails_for_a_retry() {
    let (client, mut server) = mock_client();
    let ctx = ctx(client, &[]);
    let set = service_set();
    let conflict = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": "the object has been modified", "reason": "Conflict", "code": 409});
    let mut fresh = set.clone();
    fresh["metadata"]["resourceVersion"] = json!("7");
    let (result, ()) = tokio::join!(reconcile(&ctx, &set), async {
        server.expect("PATCH", SETS, 409, conflict.clone()).await;
        server.expect("GET", SETS, 200, fresh.clone()).await;
    });
    assert!(
        matches!(result, Err(ReconcileError::Conflict(_))),
        "{result:?}"
    );
    // The fresh copy stands in for the lagging cache on the retry.
    let again = ctx.written.freshest(set.clone());
    assert_eq!(again["metadata"]["resourceVersion"], "7");
    server.done();
}

#[test]
fn retries_double_from_the_minimum_up_to_the_maximum() {
    let ms = Duration::from_millis;
    let r = super::RetryDelays::default();
    let delays: Vec<Duration> = (1..=13).map(|n| r.delay(n, false)).collect();
    assert_eq!(delays[..4], [ms(100), ms(200), ms(400), ms(800)]);
    assert_eq!(delays[12], Duration::from_secs(300), "capped at 5m");
    // A conflict: read again soon, a little later each time, then as any other error.
    let conflicts: Vec<Duration> = (1..=5).map(|n| r.delay(n, true)).collect();
    assert_eq!(conflicts, [ms(100), ms(200), ms(300), ms(800), ms(1600)]);
    // Flags: a test's (or an impatient operator's) cap holds for every count, however large.
    let short = super::RetryDelays {
        min: ms(50),
        max: ms(250),
    };
    assert_eq!(short.delay(3, false), ms(200));
    for n in [4, 30, u32::MAX] {
        assert_eq!(short.delay(n, false), ms(250));
        assert_eq!(short.delay(n, true), ms(250));
    }
    assert_eq!(
        short.delay(0, false),
        ms(50),
        "no failure counts as the first"
    );
}

#[test]
fn a_watch_timeout_is_whole_seconds_and_never_zero() {
    assert_eq!(super::watch_timeout_seconds(Duration::from_secs(290)), 290);
    assert_eq!(super::watch_timeout_seconds(Duration::from_millis(2500)), 2);
    assert_eq!(super::watch_timeout_seconds(Duration::from_millis(300)), 1);
    assert_eq!(super::watch_timeout_seconds(Duration::MAX), u32::MAX);
}

#[test]
fn a_set_is_rendered_from_the_templates_it_names_as_from_every_template() {
    let kinds = Kinds::new();
    let mut unused = template();
    unused["metadata"]["name"] = "unused".into();
    let mut elsewhere = template();
    elsewhere["metadata"]["namespace"] = "other".into();
    let all = [template(), unused, elsewhere];
    let caches = Caches::of(&kinds, "ksm-flux", &[smp()], &all, &[]);
    let mut missing = service_set();
    missing["spec"]["services"][0]["template"] = "absent".into();
    for set in [service_set(), missing] {
        let got = caches.desired(&set);
        let want = adapter::Desired::of(&set, &all);
        assert_eq!(got.rendered.objects, want.rendered.objects);
        assert_eq!(got.rendered.services, want.rendered.services);
        assert_eq!(got.versions, want.versions);
    }
    assert_eq!(caches.desired(&service_set()).rendered.objects.len(), 1);
}

#[test]
fn the_templates_of_a_render_are_converted_once_per_versions_for_every_set_naming_them() {
    let kinds = Kinds::new();
    let mut nginx = template();
    nginx["metadata"]["resourceVersion"] = "5".into();
    let mut other = template();
    other["metadata"]["name"] = "other".into();
    other["metadata"]["resourceVersion"] = "7".into();
    other["spec"]["helm"]["chartSpec"]["version"] = "4.12.0".into();
    let all = [nginx, other];
    let caches = Caches::of(&kinds, "ksm-flux", &[smp()], &all, &[]);
    let mut second = service_set();
    second["metadata"]["name"] = "prod".into();
    second["metadata"]["uid"] = "prod-uid".into();
    let mut third = service_set();
    third["spec"]["services"][0]["template"] = "other".into();
    for set in [service_set(), second, service_set(), third] {
        let got = caches.desired(&set);
        let want = adapter::Desired::of(&set, &all);
        assert_eq!(got.rendered.objects, want.rendered.objects);
        assert_eq!(got.rendered.services, want.rendered.services);
        assert_eq!(got.versions, want.versions);
    }
    // nginx@5 (three renders of two ServiceSets), other@7.
    assert_eq!(caches.templates_converted(), 2);
    // A template without a version is converted for each render, never kept.
    let caches = Caches::of(&kinds, "ksm-flux", &[smp()], &[template()], &[]);
    caches.desired(&service_set());
    assert_eq!(caches.templates_converted(), 0);
}

#[test]
fn the_smp_is_converted_once_per_version() {
    let kinds = Kinds::new();
    let mut smp = smp();
    smp["metadata"]["resourceVersion"] = "3".into();
    let caches = Caches::of(&kinds, "ksm-flux", &[smp.clone()], &[], &[]);
    let (a, b) = (caches.smp().unwrap(), caches.smp().unwrap());
    assert!(Arc::ptr_eq(&a, &b), "the same version: converted once");
    assert_eq!(a["metadata"]["name"], "ksm-flux");
    assert_eq!(a["kind"], "StateManagementProvider");
}

#[test]
fn the_render_key_follows_the_versions_of_the_templates_named() {
    let kinds = Kinds::new();
    let at = |version: Option<&str>, extra: bool| {
        let mut templates = Vec::new();
        if let Some(v) = version {
            let mut t = template();
            t["metadata"]["resourceVersion"] = v.into();
            templates.push(t);
        }
        if extra {
            let mut unused = template();
            unused["metadata"]["name"] = "unused".into();
            unused["metadata"]["resourceVersion"] = "99".into();
            templates.push(unused);
        }
        Caches::of(&kinds, "ksm-flux", &[smp()], &templates, &[]).render_key(&service_set())
    };
    let five = at(Some("5"), false).expect("a uid, a generation, a versioned template");
    assert_eq!(
        at(Some("5"), true),
        Some(five.clone()),
        "a template not named"
    );
    assert_ne!(at(Some("6"), false), Some(five.clone()));
    assert_ne!(at(None, false), Some(five));
}

#[test]
fn the_memo_keeps_a_render_until_the_service_set_goes() {
    use super::memo::Memo;
    use crate::core::adapter::memo::{Key, Remembered};
    use kube::api::DynamicObject;
    use kube::runtime::watcher::Event;

    let set = service_set();
    let key = ("kcm-system".to_string(), "dev".to_string());
    let at = Key::of(&set, vec![Some("5".into())]).unwrap();
    let desired = adapter::Desired::of(&set, &[template()]);
    let kept = Remembered::of(at.clone(), &set, &desired, |_| Some("5".into())).unwrap();
    let live = [helm_release(&set)];
    let memo = Memo::default();
    let remembered = |memo: &Memo| memo.recall(&key, &at, &set, &live).is_some();
    assert!(!remembered(&memo));
    memo.remember(&key, Some(&kept));
    assert!(remembered(&memo), "read back from its packed text");
    memo.remember(&key, None);
    assert!(!remembered(&memo));

    let event = |set: &Value| serde_json::from_value::<DynamicObject>(set.clone()).unwrap();
    let mut other = set.clone();
    other["metadata"]["name"] = "other".into();
    memo.remember(&key, Some(&kept));
    // A relist that shows it keeps it; one that does not forgets it.
    for (shown, kept_after) in [(&set, true), (&other, false)] {
        memo.observe(&Event::<DynamicObject>::Init);
        memo.observe(&Event::InitApply(event(shown)));
        memo.observe(&Event::<DynamicObject>::InitDone);
        assert_eq!(remembered(&memo), kept_after);
        assert_eq!(memo.len(), usize::from(kept_after));
    }
    memo.remember(&key, Some(&kept));
    memo.observe(&Event::Apply(event(&set)));
    assert!(remembered(&memo));
    memo.observe(&Event::Delete(event(&set)));
    assert!(!remembered(&memo));
}
