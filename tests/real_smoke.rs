//! The real-server harness itself (tests/realapi): a real kube-apiserver and etcd come up with
//! the kcm, Flux and Sveltos CRDs established, keep a ServiceSet as kubectl and kubectl-ksm
//! read it, evaluate the CRDs' schemas and CEL rules, authorize with RBAC (a restricted user
//! gets the server's 403), issue service-account tokens, and stop without leaving a process.

mod realapi;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn service_set(namespace: &str, name: &str, provider: &str) -> Value {
    json!({
        "apiVersion": "k0rdent.mirantis.com/v1beta1",
        "kind": "ServiceSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "cluster": "dev-cluster",
            "provider": {"name": provider},
            "services": [{"name": "podinfo", "namespace": "apps", "template": "podinfo-6-5-0"}],
        },
    })
}

/// Every CRD file of the repository's crds/ directories: its metadata.name.
fn repository_crds() -> Vec<String> {
    let mut names = Vec::new();
    for dir in realapi::CRD_DIRS {
        for entry in std::fs::read_dir(realapi::root().join(dir)).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let crd: Value = serde_saphyr::from_str(&text).unwrap();
            names.push(crd["metadata"]["name"].as_str().unwrap().to_string());
        }
    }
    names.sort();
    names
}

#[test]
fn the_server_is_up_with_every_crd_established() {
    let Some(api) = realapi::shared() else { return };
    let version: Value = serde_json::from_str(&api.kubectl(&["version", "-o", "json"])).unwrap();
    assert_eq!(
        version["serverVersion"]["gitVersion"],
        api.env()["versions"]["kube-apiserver"],
        "the pinned release"
    );
    let crds: Value = serde_json::from_str(&api.kubectl(&["get", "crd", "-o", "json"])).unwrap();
    let mut established: Vec<String> = crds["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|crd| {
            crd["status"]["conditions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
        .map(|crd| crd["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    established.sort();
    assert_eq!(established, repository_crds());
    // Served: the kinds are in discovery.
    let resources = api.kubectl(&[
        "api-resources",
        "--api-group=k0rdent.mirantis.com",
        "-o",
        "name",
    ]);
    assert!(
        resources
            .lines()
            .any(|l| l == "servicesets.k0rdent.mirantis.com"),
        "{resources}"
    );
}

#[test]
fn a_service_set_is_stored_and_read_back_by_kubectl_and_kubectl_ksm() {
    let Some(api) = realapi::shared() else { return };
    let ns = api.namespace("smoke");
    let stored = api.apply(&service_set(&ns, "dev-cluster", "ksm-flux"));
    assert_eq!(stored.len(), 1);
    assert!(stored[0]["metadata"]["uid"].is_string(), "{}", stored[0]);

    let read = api
        .get("servicesets.k0rdent.mirantis.com", Some(&ns), "dev-cluster")
        .expect("the ServiceSet is there");
    assert_eq!(
        read["spec"],
        service_set(&ns, "dev-cluster", "ksm-flux")["spec"]
    );
    let managers: Vec<&str> = read["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, [realapi::FIELD_MANAGER]);

    // kubectl-ksm reads it live: doctor names the ServiceSet and its missing provider.
    let out = api
        .admin()
        .ksm()
        .args(["doctor", "-n", &ns, "-o", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor -o json: {e}\n{stderr}"));
    let objects: Vec<String> = report["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"))
        .iter()
        .map(|f| f["object"].to_string())
        .collect();
    assert!(
        objects.iter().any(|o| o.contains("dev-cluster")),
        "doctor's findings name the ServiceSet: {report:#}\n{stderr}"
    );
}

#[test]
fn the_server_enforces_the_crd_schema_and_its_cel_rules() {
    let Some(api) = realapi::shared() else { return };
    let ns = api.namespace("schema");
    let admin = api.admin();

    // OpenAPI schema: spec.cluster is required.
    let mut missing = service_set(&ns, "no-cluster", "ksm-flux");
    missing["spec"].as_object_mut().unwrap().remove("cluster");
    let out = api.try_apply_as(admin, &missing);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("spec.cluster: Required value"), "{stderr}");

    // CEL transition rule of spec.provider.name: immutable once set.
    api.apply(&service_set(&ns, "pinned", "ksm-flux"));
    let out = api.try_apply_as(admin, &service_set(&ns, "pinned", "ksm-projectsveltos"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("Provider name is immutable once set"),
        "{stderr}"
    );
}

#[test]
fn a_restricted_user_gets_the_servers_403_until_granted() {
    let Some(api) = realapi::shared() else { return };
    let ns = api.namespace("rbac");
    api.apply(&service_set(&ns, "dev-cluster", "ksm-flux"));
    let user = api.fresh_user();

    let out = user
        .kubectl()
        .args(["get", "servicesets.k0rdent.mirantis.com", "-n", &ns, "-v=6"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("403 Forbidden"), "{stderr}");
    let denied = format!(
        "User \"{}\" cannot list resource \"servicesets\" in API group \"k0rdent.mirantis.com\" in the namespace \"{ns}\"",
        user.name
    );
    assert!(stderr.contains(&denied), "{stderr}");
    let whoami = user.run_kubectl(&["auth", "whoami", "-o", "json"]);
    let review: Value = serde_json::from_str(&whoami).unwrap();
    assert_eq!(
        review["status"]["userInfo"]["groups"],
        json!(["system:authenticated"]),
        "restricted users have no group of their own"
    );

    // kubectl-ksm as that user says what the server refused.
    let out = user
        .ksm()
        .args(["doctor", "-n", &ns, "-o", "json"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("forbidden"), "{text}");

    // Granted list and get in the namespace, the same request succeeds.
    api.grant(
        &ns,
        &user,
        json!([{"apiGroups": ["k0rdent.mirantis.com"], "resources": ["servicesets"], "verbs": ["get", "list"]}]),
    );
    let listed = user.run_kubectl(&[
        "get",
        "servicesets.k0rdent.mirantis.com",
        "-n",
        &ns,
        "-o",
        "name",
    ]);
    assert_eq!(listed.trim(), "serviceset.k0rdent.mirantis.com/dev-cluster");
}

#[test]
fn service_account_tokens_are_issued_and_authenticate() {
    let Some(api) = realapi::shared() else { return };
    let ns = api.namespace("sa");
    let sa = api.service_account(&ns, "reader");
    let review: Value =
        serde_json::from_str(&sa.run_kubectl(&["auth", "whoami", "-o", "json"])).unwrap();
    assert_eq!(review["status"]["userInfo"]["username"], sa.name);
    assert_eq!(sa.name, format!("system:serviceaccount:{ns}:reader"));
}

fn alive(pid: i64) -> bool {
    // A zombie is gone for our purpose (only its parent, init here, can still reap it).
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn pids(env: &Value) -> Vec<i64> {
    ["script", "etcd", "kube-apiserver"]
        .iter()
        .map(|k| env["pids"][k].as_i64().unwrap())
        .collect()
}

/// Waits until none of the processes is alive; false after a minute (a safety net only:
/// each stops within seconds of being told to).
fn all_gone(pids: &[i64]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if !pids.iter().any(|&p| alive(p)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_dedicated_server_restarts_and_stops_on_drop_and_on_panic() {
    let Some(api) = realapi::dedicated() else {
        return;
    };
    api.kubectl(&["create", "namespace", "before-restart"]);
    api.restart_apiserver();
    // etcd kept the data; the CRDs are still served.
    api.kubectl(&["get", "namespace", "before-restart"]);
    api.kubectl(&["get", "servicesets.k0rdent.mirantis.com", "-A"]);
    let env = api.env().clone();
    let dir = api.dir().to_path_buf();
    drop(api);
    assert!(all_gone(&pids(&env)), "processes left: {:?}", pids(&env));
    assert!(!dir.exists(), "{} removed", dir.display());

    // A test that fails while its server is up: the server stops as the panic unwinds.
    let (tx, rx) = std::sync::mpsc::channel();
    let failed = std::thread::spawn(move || {
        let api = realapi::dedicated().unwrap();
        tx.send(api.env().clone()).unwrap();
        panic!("a failing test");
    })
    .join();
    assert!(failed.is_err());
    let env = rx.recv().unwrap();
    assert!(all_gone(&pids(&env)), "processes left: {:?}", pids(&env));
}

#[test]
fn the_script_stops_the_server_when_its_parent_dies() {
    if realapi::shared().is_none() {
        return; // skipped, said above
    }
    let dir = std::env::temp_dir().join(format!("ksm-real-orphan-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A parent that starts the script and is then killed outright (no signal reaches the
    // script, nothing closes a pipe it reads).
    let script = realapi::root().join("scripts/kube-test-server");
    let mut parent = Command::new("sh")
        .arg("-c")
        .arg(r#"python3 "$1" start --no-build --dir "$2" > "$2/out" 2>&1 < /dev/null & wait"#)
        .arg("sh")
        .arg(&script)
        .arg(&dir)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let env_path = dir.join("env.json");
    let deadline = Instant::now() + Duration::from_secs(180);
    while !env_path.exists() {
        assert!(
            Instant::now() < deadline,
            "no env.json: {}",
            std::fs::read_to_string(dir.join("out")).unwrap_or_default()
        );
        assert!(
            parent.try_wait().unwrap().is_none(),
            "the script exited early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let env: Value = serde_json::from_str(&std::fs::read_to_string(&env_path).unwrap()).unwrap();
    assert!(pids(&env).iter().all(|&p| alive(p)));
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(all_gone(&pids(&env)), "orphans: {:?}", pids(&env));
    assert!(
        !Path::new(&dir.join("etcd-data")).exists(),
        "etcd's data removed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
