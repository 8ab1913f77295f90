//! `kubectl ksm run --watch-label-selector`: a replica reconciles only the ServiceSets of its
//! shard (Flux's `sharding.fluxcd.io/key` label), under a Lease of its own.

mod fakeapi;
mod run_env;

use run_env::*;
use serde_json::json;

const KEY: &str = "sharding.fluxcd.io/key";

#[test]
fn a_shard_writes_only_its_service_sets_and_lets_go_of_one_moved_away() {
    let mut env = Env::seeded("shard");
    env.start(&[
        "--watch-label-selector",
        "sharding.fluxcd.io/key in (shard2)",
        "--leader-elect",
        "--leader-election-namespace",
        NS,
    ]);
    // Not in the shard: nothing written.
    env.wait("leading", |e| e.log().contains("leading"));
    let rv = rv_of(&env.set().unwrap());
    env.wait("the ServiceSet seen outside the shard", |e| {
        outside(e).iter().any(|v| *v >= rv)
    });
    assert!(env.writes().is_empty(), "{:?}", env.writes());
    assert!(env.flux().is_empty());
    // One Lease per shard: the provider's name and a hash of the selector.
    let leases = env.server.list("coordination.k8s.io/v1", "Lease");
    assert_eq!(leases.len(), 1);
    let lease = s(&leases[0], "/metadata/name").to_string();
    assert!(
        lease.starts_with("kubectl-ksm-ksm-flux-") && lease.len() == 29,
        "{lease}"
    );

    // Moved into the shard: it is reconciled.
    let mut set = env.set().unwrap();
    set["metadata"]["labels"][KEY] = json!("shard2");
    env.server.update(set).unwrap();
    env.converged();
    assert_matches_render(&env);

    // Moved to another shard: this replica lets go; a change is no longer acted on.
    let mut set = env.set().unwrap();
    set["metadata"]["labels"][KEY] = json!("shard3");
    let moved = rv_of(&env.server.update(set).unwrap());
    env.wait("the move seen", |e| outside(e).iter().any(|v| *v >= moved));
    env.server.clear_requests();
    let mut set = env.set().unwrap();
    set["spec"]["services"].as_array_mut().unwrap().pop();
    let changed = rv_of(&env.server.update(set).unwrap());
    env.wait("the change seen", |e| {
        outside(e).iter().any(|v| *v >= changed)
    });
    assert!(env.writes().is_empty(), "{:?}", env.writes());
    assert_eq!(env.flux().len(), 5, "the other shard's to prune");
    env.stop();
}

/// The versions at which the env's adapter saw the ServiceSet outside its shard.
fn outside(env: &Env) -> Vec<u64> {
    env.adapter
        .as_ref()
        .map(|a| a.outside_shard_versions(SET))
        .unwrap_or_default()
}

/// Writes each replica sent (by the user it impersonates), as `verb resource/name`, leaving
/// out Leases and Events (each replica writes its own).
fn writes_by(env: &Env, user: &str) -> Vec<String> {
    env.server
        .requests()
        .iter()
        .filter(|r| ["create", "update", "patch", "delete"].contains(&r.verb.as_str()))
        .filter(|r| r.impersonate_user.as_deref() == Some(user))
        .filter(|r| !matches!(r.resource.as_deref(), Some("leases" | "events")))
        .map(|r| {
            format!(
                "{} {}/{} {}",
                r.verb,
                r.resource.as_deref().unwrap_or(""),
                r.name.as_deref().unwrap_or(""),
                r.status
            )
        })
        .collect()
}

fn uids(env: &Env, prefix: &str) -> Vec<(String, String)> {
    let mut v: Vec<_> = env
        .flux()
        .iter()
        .filter(|o| s(o, "/metadata/name").starts_with(prefix))
        .map(|o| (name_of(o), s(o, "/metadata/uid").to_string()))
        .collect();
    v.sort();
    v
}

fn service_states(env: &Env, set: &str) -> usize {
    env.server
        .get(SS, "ServiceSet", NS, set)
        .and_then(|x| x.pointer("/status/services")?.as_array().map(Vec::len))
        .unwrap_or(0)
}

#[test]
fn two_shards_never_write_the_same_object_and_hand_a_service_set_over() {
    let env = Env::seeded("two-shards");
    // ServiceSet dev-cluster in shard1; prod-cluster, the same services for another
    // cluster, in shard2.
    let mut dev = env.set().unwrap();
    dev["metadata"]["labels"][KEY] = json!("shard1");
    env.server.update(dev).unwrap();
    let (mut prod, _) = fixture();
    prod["metadata"]["name"] = json!("prod-cluster");
    prod["spec"]["cluster"] = json!("prod-cluster");
    prod["metadata"]["labels"][KEY] = json!("shard2");
    // Its Resources service deploys to the management cluster (deploymentType Local), as
    // dev-cluster's does: another namespace, or the two would claim the same path.
    prod["spec"]["services"][1]["namespace"] = json!("kyverno-prod");
    env.server.create(prod);
    let shard = |n: &str, user: &str| {
        env.spawn(&[
            "--watch-label-selector",
            &format!("{KEY} in ({n})"),
            "--leader-elect",
            "--leader-election-namespace",
            NS,
            "--as",
            user,
        ])
    };
    // Two replicas of shard1 (the Lease holder alone writes), one of shard2.
    let shard1 = shard("shard1", "shard1-a");
    let replica = shard("shard1", "shard1-b");
    let shard2 = shard("shard2", "shard2");
    env.wait("both ServiceSets converged", |e| {
        e.flux().len() == 10
            && service_states(e, "dev-cluster") == 5
            && service_states(e, "prod-cluster") == 5
    });
    let (leader, standby, lead) = if shard1.log().contains("leading") {
        ("shard1-a", "shard1-b", &shard1)
    } else {
        ("shard1-b", "shard1-a", &replica)
    };
    // Each ServiceSet's last version reconciled by its shard: every write answered.
    let version = |name: &str| rv_of(&env.server.get(SS, "ServiceSet", NS, name).unwrap());
    let reconciled =
        |a: &Adapter, name: &str, rv: u64| a.reconciled_versions(name).iter().any(|v| *v >= rv);
    let (dev_rv, prod_rv) = (version("dev-cluster"), version("prod-cluster"));
    env.wait("each shard's last reconcile", |_| {
        reconciled(lead, "dev-cluster", dev_rv) && reconciled(&shard2, "prod-cluster", prod_rv)
    });
    assert!(
        writes_by(&env, standby).is_empty(),
        "both replicas of shard1 wrote"
    );
    let one = writes_by(&env, leader);
    let two = writes_by(&env, "shard2");
    assert!(!one.is_empty() && !two.is_empty(), "{one:?} {two:?}");
    assert!(
        one.iter().all(|w| w.contains("/dev-cluster")),
        "shard1 wrote another shard's object: {one:?}"
    );
    assert!(
        two.iter().all(|w| w.contains("/prod-cluster")),
        "shard2 wrote another shard's object: {two:?}"
    );
    // Two Leases, one per shard; the replica waits on shard1's.
    assert_eq!(env.server.list("coordination.k8s.io/v1", "Lease").len(), 2);
    let held = uids(&env, "prod-cluster-");
    assert_eq!(held.len(), 5);

    // prod-cluster moves to shard1: shard2 lets go without deleting, shard1 takes the Flux
    // objects over as they are (same uids: no delete and re-create, no duplicate).
    env.server.clear_requests();
    let mut prod = env
        .server
        .get(SS, "ServiceSet", NS, "prod-cluster")
        .unwrap();
    prod["metadata"]["labels"][KEY] = json!("shard1");
    let moved = rv_of(&env.server.update(prod).unwrap());
    env.wait("shard2 lets go and shard1 takes it", |_| {
        shard2
            .outside_shard_versions("prod-cluster")
            .iter()
            .any(|v| *v >= moved)
            && reconciled(lead, "prod-cluster", moved)
    });
    // A change now reaches prod-cluster through shard1 only.
    let mut prod = env
        .server
        .get(SS, "ServiceSet", NS, "prod-cluster")
        .unwrap();
    prod["spec"]["services"].as_array_mut().unwrap().pop();
    env.server.update(prod).unwrap();
    env.wait("prod-cluster pruned by shard1", |e| {
        uids(e, "prod-cluster-").len() == 4 && service_states(e, "prod-cluster") == 4
    });
    let prod_rv = version("prod-cluster");
    env.wait("shard1's last reconcile of prod-cluster", |_| {
        reconciled(lead, "prod-cluster", prod_rv)
    });
    let after = uids(&env, "prod-cluster-");
    assert!(after.iter().all(|u| held.contains(u)), "{after:?} {held:?}");
    assert!(
        writes_by(&env, "shard2").is_empty(),
        "{:?}",
        writes_by(&env, "shard2")
    );
    let one = writes_by(&env, leader);
    assert!(
        !one.iter().any(|w| w.starts_with("create ")),
        "taken over by re-creating: {one:?}"
    );
    assert_eq!(
        one.iter().filter(|w| w.starts_with("delete ")).count(),
        1,
        "{one:?}"
    );
    assert!(writes_by(&env, standby).is_empty());
    assert_eq!(env.flux().len(), 9, "no orphan, no duplicate");
    for a in [shard1, shard2, replica] {
        unsafe {
            libc::kill(a.child.id() as i32, libc::SIGTERM);
        }
        drop(a);
    }
}
