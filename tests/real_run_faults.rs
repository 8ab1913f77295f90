//! Faults a real API server makes (tests/realrun): kube-apiserver restarted during a run (a
//! replica without leader election rides it out on its watches; a leader whose outage
//! outlasts the lease's renew deadline exits and, restarted, takes over), etcd compacted under the adapter's watches (410 Gone: it must list again), and watches the
//! server ends at their timeout (it must resume, not list again). After each, a change still
//! arrives and the adapter converges with the minimum number of writes (the change's own) and
//! leaves nothing orphaned; the fault itself costs no write.

mod realapi;
mod realrun;

use realrun::*;
use serde_json::Value;

/// The resources the adapter watches.
const WATCHED: [&str; 5] = [
    "servicesets",
    "servicetemplates",
    "statemanagementproviders",
    "helmreleases",
    "kustomizations",
];

/// The watch timeout the adapter asks of the server where a test needs watches to end.
const WATCH_TIMEOUT: &str = "2s";

/// A dedicated server (with `flags`), deploy/ applied and seeded, the adapter (with `extra`
/// arguments) converged and every request of it answered. Without `leader_elect`, the
/// Deployment's `--leader-elect` is dropped.
fn converged(
    tag: &str,
    flags: &[&str],
    extra: &[&str],
    leader_elect: bool,
) -> Option<(Cluster, Adapter)> {
    let c = Cluster::start(tag, flags)?;
    let mut deployment = c.apply_kustomization("deploy/").remove(0);
    if !leader_elect {
        deployment["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array_mut()
            .unwrap()
            .retain(|a| a != "--leader-elect");
    }
    c.seed();
    let a = c.adapter(&deployment, "0", &c.service_account(), extra);
    c.converged(SET, 5, &a);
    c.wait_reconciled(&a, SET, rv_of(&c.set(SET).unwrap()));
    c.wait_answered(&a);
    Some((c, a))
}

/// After `Cluster::remove_last_service`, the adapter converges: the removed service's object is gone
/// and nothing else of the ServiceSet's is missing or left over, and its writes since the
/// `before`-th request are exactly the change's: the status without the service, and the
/// deletion of its HelmRelease.
fn converges_with_the_changes_writes_only(
    c: &Cluster,
    a: &Adapter,
    before: usize,
    changed: &Value,
    delays: Delays,
) {
    c.wait("the removed service pruned", a, delays, || {
        c.flux_of(SET).len() == 4 && c.states(SET).len() == 4
    });
    c.wait_reconciled(a, SET, rv_of(changed));
    c.assert_matches_render(SET);
    c.wait_answered(a);
    assert_eq!(
        work_writes(&c.requests_of(a)[before..]),
        [
            format!("delete helmreleases {NS}/{SET}-podinfo-oci 200"),
            format!("patch servicesets/status {NS}/{SET} 200"),
        ],
        "{}",
        a.log_text()
    );
}

/// Waits until the adapter reconciled the ServiceSet as it is now and every request of it is
/// answered, then says that it wrote nothing since the `before`-th request.
fn settled_without_writes(c: &Cluster, a: &Adapter, before: usize) {
    c.wait_reconciled(a, SET, rv_of(&c.set(SET).unwrap()));
    c.wait_answered(a);
    assert_eq!(
        work_writes(&c.requests_of(a)[before..]),
        [] as [String; 0],
        "{}",
        a.log_text()
    );
}

/// A service removed now still converges, with the change's writes only.
fn a_change_converges(c: &Cluster, a: &Adapter, delays: Delays) {
    let before = c.requests_of(a).len();
    let changed = c.remove_last_service();
    converges_with_the_changes_writes_only(c, a, before, &changed, delays);
}

/// Each resource's requests of `verb` among `requests`, answered with 200.
fn answered(requests: &[Request], verb: &str, resource: &str) -> usize {
    requests
        .iter()
        .filter(|r| r.verb == verb && r.resource == resource && r.code == Some(200))
        .count()
}

/// The writes of the adapter's work among `requests`, sorted.
fn work_writes(requests: &[Request]) -> Vec<String> {
    let mut writes: Vec<String> = requests
        .iter()
        .filter(|r| r.is_work_write())
        .map(Request::describe)
        .collect();
    writes.sort();
    writes
}

/// Waits until the adapter's process has exited; its exit code.
fn wait_exit(a: &mut Adapter, delays: Delays) -> Option<i32> {
    let log = a.log.clone();
    let mut code = None;
    wait_for(
        "the adapter exits",
        delays.patience(),
        || match a.child.as_mut().map(|c| c.try_wait().unwrap()) {
            Some(Some(status)) => {
                code = status.code();
                true
            }
            Some(None) => false,
            None => panic!("the adapter was not running"),
        },
        || std::fs::read_to_string(&log).unwrap_or_default(),
    );
    a.child = None;
    code
}

#[test]
fn kube_apiserver_restarted_during_a_run_its_watches_resume_and_nothing_is_written() {
    // A single replica without leader election: the outage, however long, ends no lease, so
    // that what is tested is the watches and the client across the restart. (With leader
    // election, an outage longer than the renew deadline ends the replica: the next test.)
    let Some((c, a)) = converged("restart", &[], &[], false) else {
        return;
    };
    let before = c.requests_of(&a).len();

    let errors = || {
        a.log_lines()
            .iter()
            .filter(|l| s(l, "/level") == "ERROR")
            .count()
    };
    let errors_before = errors();
    c.api.stop_apiserver();
    // Down until the adapter has failed to reach it: it is cut off.
    let delays = Delays {
        restarts: 1,
        ..Delays::default()
    };
    c.wait("the adapter fails to reach the server", &a, delays, || {
        errors() > errors_before
    });
    c.api.restart_apiserver();
    // Every watch opened again on the new server, and the restart cost no write.
    c.wait("every watch re-opened", &a, delays, || {
        let after = &c.requests_of(&a)[before..];
        WATCHED
            .iter()
            .all(|w| after.iter().any(|r| r.verb == "watch" && r.resource == *w))
    });
    settled_without_writes(&c, &a, before);
    // A change arrives through the re-opened watches.
    a_change_converges(&c, &a, delays);
}

#[test]
fn kube_apiserver_down_past_the_renew_deadline_the_leader_exits_and_its_restart_writes_nothing() {
    let Some((c, mut a)) = converged("restart-lease", &[], &[], true) else {
        return;
    };
    let deployment = c.deployment(NAME);
    let before = c.requests_of(&a).len();
    c.api.stop_apiserver();
    // Down until the leader gives up its lease and exits (a non-zero code: the kubelet
    // restarts it) ...
    let delays = Delays {
        lease_expiries: 1,
        restarts: 1,
        ..Delays::default()
    };
    let code = wait_exit(&mut a, delays);
    assert!(
        a.logged("leader election: could not renew the lease within 10s"),
        "{}",
        a.log_text()
    );
    assert_ne!(code, Some(0), "{}", a.log_text());
    c.api.restart_apiserver();
    // ... which here the test does: the same pod's container again, with a new token.
    let b = c.adapter(&deployment, "0", &c.service_account(), &[]);
    c.wait("the restarted adapter leads", &b, delays, || {
        b.logged("leading")
    });
    // Neither the outage nor the restart wrote anything.
    assert_eq!(work_writes(&c.requests_of(&a)[before..]), [] as [String; 0]);
    settled_without_writes(&c, &b, 0);
    a_change_converges(&c, &b, delays);
}

#[test]
fn etcd_compacted_under_the_watches_they_get_410_and_list_again_writing_nothing() {
    // Without the watch cache, watches read etcd's history, which compaction removes.
    let Some((c, a)) = converged(
        "compact",
        &["--watch-cache=false"],
        &["--watch-timeout", WATCH_TIMEOUT],
        true,
    ) else {
        return;
    };
    let before = c.requests_of(&a).len();
    // Two writes the adapter does not watch move etcd past every version it watched from;
    // then history up to now goes. Each watch, ended at its timeout, resumes from a version
    // that is gone: 410 Gone, and the adapter lists that resource again.
    for name in ["compaction-1", "compaction-2"] {
        c.api.kubectl(&["create", "configmap", name, "-n", NS]);
    }
    etcd_compact(&c.api, etcd_revision(&c.api));
    let delays = Delays {
        watch_failures: 1,
        ..Delays::default()
    };
    c.wait("every resource listed again", &a, delays, || {
        let after = &c.requests_of(&a)[before..];
        WATCHED.iter().all(|w| answered(after, "list", w) >= 1)
    });
    // Relisting everything (and reconciling what it lists) wrote nothing.
    settled_without_writes(&c, &a, before);
    a_change_converges(&c, &a, delays);
}

#[test]
fn watches_the_server_ends_at_their_timeout_resume_without_listing_or_writing() {
    let Some((c, a)) = converged("timeout", &[], &["--watch-timeout", WATCH_TIMEOUT], true) else {
        return;
    };
    let before = c.requests_of(&a).len();
    // Three ends of every watch by the server (each answered 200 at its timeout).
    c.wait(
        "three watch timeouts of each resource",
        &a,
        Delays::default(),
        || {
            let after = &c.requests_of(&a)[before..];
            WATCHED.iter().all(|w| answered(after, "watch", w) >= 3)
        },
    );
    c.wait_answered(&a);
    let after = &c.requests_of(&a)[before..];
    for w in WATCHED {
        assert_eq!(answered(after, "list", w), 0, "{w} listed again");
    }
    assert_eq!(work_writes(after), [] as [String; 0], "{}", a.log_text());

    // A change arrives through a resumed watch.
    let before = c.requests_of(&a).len();
    a_change_converges(&c, &a, Delays::default());
    let after = &c.requests_of(&a)[before..];
    assert_eq!(answered(after, "list", "servicesets"), 0);
}
