//! More than one adapter process on a real API server (tests/realrun), each as its
//! ServiceAccount with a token of its own: two replicas of deploy/'s Deployment under leader
//! election (one writes, the other takes over when it dies, the Lease released on a graceful
//! stop), and the three Deployments of deploy/sharded/ (each writes only its shard's
//! ServiceSets, each under a Lease of its own, and a ServiceSet relabelled to another shard is
//! handed over as it is).

mod realapi;
mod realrun;

use kubectl_ksm::api::kinds::{self, SERVICE_SET};
use realrun::*;
use serde_json::{Value, json};

const KEY: &str = "sharding.fluxcd.io/key";

fn lease(c: &Cluster, name: &str) -> Value {
    c.kube
        .get(&kinds::LEASE, NS, name)
        .unwrap_or_else(|| panic!("no Lease {name}"))
}

#[test]
fn two_replicas_one_leads_the_other_takes_over_when_it_dies() {
    let Some(c) = Cluster::start("leader", &[]) else {
        return;
    };
    let deployment = c.apply_kustomization("deploy/").remove(0);
    assert_eq!(s(&deployment, "/metadata/name"), NAME);
    c.seed();
    let mut a = c.adapter(&deployment, "a", &c.service_account(), &[]);
    let mut b = c.adapter(&deployment, "b", &c.service_account(), &[]);
    let both = Delays::default();
    wait_for(
        "one replica leading",
        both.patience(),
        || a.logged("leading") || b.logged("leading"),
        || format!("a:\n{}\nb:\n{}", a.log_text(), b.log_text()),
    );
    let (leader, standby) = if a.logged("leading") {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    c.converged(SET, 5, leader);
    c.wait("the standby waiting", standby, both, || {
        standby.logged("waiting for leadership")
    });
    assert!(!standby.logged("leading"), "{}", standby.log_text());
    // The Lease is held by the leader's pod (POD_NAME, then a nonce), in the pod's namespace.
    let held = lease(&c, "kubectl-ksm-ksm-flux");
    assert!(
        s(&held, "/spec/holderIdentity").starts_with(&format!("{}_", leader.pod)),
        "{held:#}"
    );
    // The standby wrote nothing at all: not the Lease, not a Flux object.
    c.wait_answered(standby);
    let standby_writes: Vec<String> = c
        .requests_of(standby)
        .iter()
        .filter(|r| r.is_write())
        .map(Request::describe)
        .collect();
    assert_eq!(standby_writes, [] as [String; 0]);
    assert!(!c.writes_of(leader).is_empty());

    // The leader dies (SIGKILL: no Lease released). The standby takes the Lease once it has
    // not been renewed for its duration, and serves: a change is acted on.
    leader.kill();
    let took_over = Delays {
        lease_expiries: 1,
        ..Delays::default()
    };
    c.wait("the standby leading", standby, took_over, || {
        standby.logged("leading")
    });
    let taken = lease(&c, "kubectl-ksm-ksm-flux");
    assert!(
        s(&taken, "/spec/holderIdentity").starts_with(&format!("{}_", standby.pod)),
        "{taken:#}"
    );
    assert_eq!(
        taken["spec"]["leaseTransitions"].as_i64(),
        held["spec"]["leaseTransitions"].as_i64().map(|t| t + 1)
    );
    c.remove_last_service();
    c.converged(SET, 4, standby);
    c.assert_matches_render(SET);

    // A graceful stop releases the Lease: no holder, so a successor takes it at once.
    assert_eq!(standby.stop(), Some(0));
    let released = lease(&c, "kubectl-ksm-ksm-flux");
    assert!(
        released["spec"].get("holderIdentity").is_none(),
        "{released:#}"
    );
}

/// The ServiceSet `name` for cluster `name`, in shard `shard` (None: no shard key).
fn sharded_set(name: &str, shard: Option<&str>) -> Value {
    let mut set = if name == SET {
        realrun::fixture().0
    } else {
        another_set(name, name)
    };
    if let Some(shard) = shard {
        set["metadata"]["labels"][KEY] = shard.into();
    }
    set
}

#[test]
fn the_shards_of_deploy_sharded_write_only_their_service_sets_and_hand_one_over() {
    let Some(c) = Cluster::start("shards", &[]) else {
        return;
    };
    let deployments = c.apply_kustomization("deploy/sharded/");
    let names: Vec<&str> = deployments.iter().map(|d| s(d, "/metadata/name")).collect();
    assert_eq!(names, [NAME, "kubectl-ksm-shard1", "kubectl-ksm-shard2"]);
    c.seed();
    // dev-cluster (seeded without a key) belongs to the main Deployment.
    for (name, shard) in [("prod-cluster", "shard1"), ("edge-cluster", "shard2")] {
        c.kube
            .apply(&SERVICE_SET, &sharded_set(name, Some(shard)), "manager");
    }
    let adapters: Vec<Adapter> = deployments
        .iter()
        .map(|d| c.adapter(d, "0", &c.service_account(), &[]))
        .collect();
    let (main, shard1, shard2) = (&adapters[0], &adapters[1], &adapters[2]);
    for (set, adapter) in [
        (SET, main),
        ("prod-cluster", shard1),
        ("edge-cluster", shard2),
    ] {
        c.converged(set, 5, adapter);
        c.assert_matches_render(set);
    }
    // Each ServiceSet's last version reconciled by its own Deployment: every write answered.
    for (set, adapter) in [
        (SET, main),
        ("prod-cluster", shard1),
        ("edge-cluster", shard2),
    ] {
        c.wait_reconciled(adapter, set, rv_of(&c.set(set).unwrap()));
        c.wait_answered(adapter);
        let writes = c.writes_of(adapter);
        assert!(!writes.is_empty());
        assert!(
            writes.iter().all(|w| w.contains(&format!("/{set}"))),
            "{} wrote another shard's object: {writes:#?}",
            adapter.pod
        );
    }
    // A Lease per Deployment: the provider's name and a hash of its selector.
    let mut leases: Vec<String> = c
        .kube
        .list(&kinds::LEASE, NS)
        .iter()
        .map(|l| s(l, "/spec/holderIdentity").to_string())
        .collect();
    leases.sort();
    let mut pods: Vec<String> = adapters.iter().map(|a| format!("{}_", a.pod)).collect();
    pods.sort();
    assert_eq!(leases.len(), 3, "{leases:?}");
    for (holder, pod) in leases.iter().zip(&pods) {
        assert!(holder.starts_with(pod.as_str()), "{leases:?}");
    }

    // prod-cluster moves to shard2: shard1 lets go without deleting, shard2 takes its Flux
    // objects over as they are (same uids: no delete and re-create).
    let uids = |set: &str| -> Vec<(String, String)> {
        c.flux_of(set)
            .iter()
            .map(|o| (name_of(o), s(o, "/metadata/uid").to_string()))
            .collect()
    };
    let held = uids("prod-cluster");
    let before1 = c.writes_of(shard1).len();
    let before2 = c.writes_of(shard2).len();
    let moved = c.kube.merge(
        &SERVICE_SET,
        NS,
        "prod-cluster",
        &json!({"metadata": {"labels": {KEY: "shard2"}}}),
        "manager",
    );
    c.wait(
        "shard1 lets go and shard2 takes it",
        shard2,
        Delays::default(),
        || {
            shard1
                .outside_shard_versions("prod-cluster")
                .iter()
                .any(|v| *v >= rv_of(&moved))
                && shard2
                    .reconciled_versions("prod-cluster")
                    .iter()
                    .any(|v| *v >= rv_of(&moved))
        },
    );
    // A change now reaches prod-cluster through shard2 only.
    let mut set = c.set("prod-cluster").unwrap();
    set["spec"]["services"].as_array_mut().unwrap().pop();
    let changed = c.kube.merge(
        &SERVICE_SET,
        NS,
        "prod-cluster",
        &json!({"spec": {"services": set["spec"]["services"]}}),
        "manager",
    );
    c.converged("prod-cluster", 4, shard2);
    c.wait_reconciled(shard2, "prod-cluster", rv_of(&changed));
    c.wait_answered(shard1);
    c.wait_answered(shard2);
    let after = uids("prod-cluster");
    assert!(after.iter().all(|u| held.contains(u)), "{after:?} {held:?}");
    assert_eq!(c.writes_of(shard1)[before1..], [] as [String; 0]);
    let taken: Vec<String> = c.writes_of(shard2)[before2..]
        .iter()
        .filter(|w| w.contains("/prod-cluster-"))
        .cloned()
        .collect();
    assert_eq!(
        taken,
        [format!(
            "delete helmreleases {NS}/prod-cluster-podinfo-oci 200"
        )],
        "taken over without re-creating, the removed service's object deleted"
    );
    for mut a in adapters {
        assert_eq!(a.stop(), Some(0));
    }
}
