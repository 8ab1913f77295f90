//! `kubectl ksm run --watch-label-selector`: a replica reconciles only the ServiceSets of its
//! shard (Flux's `sharding.fluxcd.io/key` label), under a Lease of its own.

mod fakeapi;
mod run_env;

use std::time::Duration;

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
    std::thread::sleep(Duration::from_secs(3));
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
    env.server.update(set).unwrap();
    std::thread::sleep(Duration::from_secs(1));
    env.server.clear_requests();
    let mut set = env.set().unwrap();
    set["spec"]["services"].as_array_mut().unwrap().pop();
    env.server.update(set).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(env.writes().is_empty(), "{:?}", env.writes());
    assert_eq!(env.flux().len(), 5, "the other shard's to prune");
    env.stop();
}
