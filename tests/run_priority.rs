//! `kubectl ksm run` with two ServiceSets deploying the same releases (a ClusterDeployment's
//! and a MultiClusterService's): the higher priority owns them, the other writes nothing and
//! says why, and the releases are handed over (suspended, then deleted: never uninstalled)
//! both when a higher priority arrives and when the owner goes away.

mod fakeapi;
mod run_env;

use serde_json::{Value, json};

use run_env::*;

const RIVAL: &str = "mcs-dev";

/// A second ServiceSet on the same cluster with the same services, at `priority`.
fn rival(priority: i64) -> Value {
    let (mut set, _) = fixture();
    set["metadata"]["name"] = RIVAL.into();
    set["spec"]["provider"]["config"] = json!({"priority": priority});
    set
}

fn objects_of(env: &Env, set: &str) -> Vec<String> {
    let mut names: Vec<String> = env
        .flux()
        .iter()
        .map(|o| s(o, "/metadata/name").to_string())
        .filter(|n| n.starts_with(&format!("{set}-")))
        .collect();
    names.sort();
    names
}

fn states_of(env: &Env, set: &str) -> Vec<(String, String)> {
    env.server
        .get(SS, "ServiceSet", NS, set)
        .and_then(|x| x.pointer("/status/services").cloned())
        .and_then(|a| a.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|x| {
            (
                s(x, "/state").to_string(),
                s(x, "/failureMessage").to_string(),
            )
        })
        .collect()
}

/// Every object deleted by the adapter was suspended by it first.
fn deletions_were_hand_overs(env: &Env, set: &str) -> usize {
    let reqs = env.server.requests();
    let mut deleted = 0;
    for (i, r) in reqs.iter().enumerate() {
        let name = r.name.as_deref().unwrap_or("");
        if r.verb != "delete"
            || !matches!(
                r.resource.as_deref(),
                Some("helmreleases" | "kustomizations")
            )
            || !name.starts_with(&format!("{set}-"))
        {
            continue;
        }
        let suspended = reqs[..i]
            .iter()
            .any(|p| p.verb == "patch" && p.name.as_deref() == Some(name) && p.status == 200);
        assert!(suspended, "{name} deleted without being suspended first");
        deleted += 1;
    }
    deleted
}

#[test]
fn the_higher_priority_takes_the_releases_over_and_hands_them_back_when_it_goes() {
    let mut env = Env::seeded("priority");
    env.start(&[]);
    env.converged();
    assert_eq!(objects_of(&env, SET).len(), 5);

    // A MultiClusterService's ServiceSet with a higher priority deploys the same releases.
    env.server.create(rival(500));
    env.wait(
        "the rival owns the releases and the first hands them over",
        |e| objects_of(e, RIVAL).len() == 5 && objects_of(e, SET).is_empty(),
    );
    env.wait("the first says who owns its releases", |e| {
        let st = states_of(e, SET);
        st.len() == 5
            && st.iter().all(|(state, msg)| {
                state == "Failed"
                    && msg.contains(&format!("ServiceSet {NS}/{RIVAL}"))
                    && msg.contains("its priority 500 against this one's 100")
            })
    });
    // (A request is logged once answered: the count may trail the objects by a moment.)
    env.wait("five hand-overs", |e| {
        deletions_were_hand_overs(e, SET) == 5
    });

    // The owner goes: it hands the releases back instead of uninstalling them.
    env.server.delete(SS, "ServiceSet", NS, RIVAL).unwrap();
    env.wait(
        "the rival is gone and the first owns its releases again",
        |e| {
            e.server.get(SS, "ServiceSet", NS, RIVAL).is_none()
                && objects_of(e, SET).len() == 5
                && objects_of(e, RIVAL).is_empty()
        },
    );
    env.wait("five hand-overs back", |e| {
        deletions_were_hand_overs(e, RIVAL) == 5
    });
    env.wait("no service of the first is Failed any more", |e| {
        let st = states_of(e, SET);
        st.len() == 5 && st.iter().all(|(state, _)| state != "Failed")
    });
    env.stop();
}

#[test]
fn an_equal_priority_leaves_the_releases_with_the_older_service_set() {
    let mut env = Env::seeded("priority-tie");
    env.start(&[]);
    env.converged();
    env.server.create(rival(100));
    env.wait("the newer says the older owns the releases", |e| {
        let st = states_of(e, RIVAL);
        st.len() == 5
            && st
                .iter()
                .all(|(state, msg)| state == "Failed" && msg.contains(&format!("{NS}/{SET}")))
    });
    assert!(
        objects_of(&env, RIVAL).is_empty(),
        "a loser creates nothing"
    );
    assert_eq!(objects_of(&env, SET).len(), 5);
    assert_eq!(deletions_were_hand_overs(&env, SET), 0);
    env.stop();
}
