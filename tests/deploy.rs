//! The deployment of `kubectl ksm run` (deploy/, Dockerfile) read as files: the manifests lint
//! clean, the RBAC is the least-privilege table below and nothing more, the Deployment is
//! hardened, the StateManagementProvider points at it, and the image builds non-root.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use kubectl_ksm::api::selector::Selector;
use serde_json::Value;

const NAMESPACE: &str = "kcm-system";
const NAME: &str = "kubectl-ksm";
const PROVIDER: &str = "ksm-flux";

/// Every permission of the ClusterRole, as (apiGroup, resource, verbs). A new permission must
/// be added here deliberately, with the reason next to it in deploy/clusterrole.yaml.
const CLUSTER_ROLE: &[(&str, &str, &[&str])] = &[
    (
        "k0rdent.mirantis.com",
        "servicesets",
        &["get", "list", "watch", "update", "patch"],
    ),
    (
        "k0rdent.mirantis.com",
        "servicesets/status",
        &["get", "update", "patch"],
    ),
    (
        "k0rdent.mirantis.com",
        "servicesets/finalizers",
        &["update"],
    ),
    (
        "k0rdent.mirantis.com",
        "servicetemplates",
        &["get", "list", "watch"],
    ),
    (
        "k0rdent.mirantis.com",
        "statemanagementproviders",
        &["get", "list", "watch"],
    ),
    (
        "helm.toolkit.fluxcd.io",
        "helmreleases",
        &[
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        &[
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
    ),
    ("source.toolkit.fluxcd.io", "helmcharts", &["get"]),
    ("source.toolkit.fluxcd.io", "helmrepositories", &["get"]),
    ("source.toolkit.fluxcd.io", "gitrepositories", &["get"]),
    ("source.toolkit.fluxcd.io", "ocirepositories", &["get"]),
    ("source.toolkit.fluxcd.io", "buckets", &["get"]),
    ("source.toolkit.fluxcd.io", "externalartifacts", &["get"]),
    ("events.k8s.io", "events", &["create", "patch"]),
];

/// The leader-election Role in kcm-system.
const LEADER_ELECTION_ROLE: &[(&str, &str, &[&str])] = &[(
    "coordination.k8s.io",
    "leases",
    &["get", "create", "update"],
)];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn deploy_dir() -> PathBuf {
    root().join("deploy")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The YAML files of deploy/, sorted by name.
fn deploy_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(deploy_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
        .collect();
    files.sort();
    files
}

/// Every object in the files kustomization.yaml lists, in order.
fn objects() -> Vec<Value> {
    kustomization_resources()
        .iter()
        .flat_map(|file| {
            let text = read(&deploy_dir().join(file));
            serde_saphyr::from_multiple::<Value>(&text)
                .unwrap_or_else(|e| panic!("deploy/{file}: {e}"))
        })
        .filter(|doc| !doc.is_null())
        .collect()
}

fn kustomization_resources() -> Vec<String> {
    let text = read(&deploy_dir().join("kustomization.yaml"));
    let k: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(k["apiVersion"], "kustomize.config.k8s.io/v1beta1");
    assert_eq!(k["kind"], "Kustomization");
    k["resources"]
        .as_array()
        .expect("kustomization.yaml has a resources list")
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

/// The one object of this kind and name; panics when there is none or more than one.
fn object(kind: &str, name: &str) -> Value {
    let found: Vec<Value> = objects()
        .into_iter()
        .filter(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "exactly one {kind} {name} in deploy/");
    found.into_iter().next().unwrap()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A role's rules as `(apiGroup, resource) -> verbs`, merged across rules.
fn permissions(role: &Value) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut map: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for rule in role["rules"].as_array().expect("rules") {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                map.entry((group.to_string(), resource.to_string()))
                    .or_default()
                    .extend(strings(&rule["verbs"]).into_iter().map(String::from));
            }
        }
    }
    map
}

fn table(rows: &[(&str, &str, &[&str])]) -> BTreeMap<(String, String), BTreeSet<String>> {
    rows.iter()
        .map(|(g, r, verbs)| {
            (
                (g.to_string(), r.to_string()),
                verbs.iter().map(|v| v.to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn lint_strict_of_deploy_reports_nothing() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["lint", "--strict", "-o", "json", "deploy/"])
        .env_clear()
        .current_dir(root())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "lint -o json: {e}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        report["diagnostics"],
        serde_json::json!([]),
        "lint --strict deploy/ found problems"
    );
    assert_eq!(report["summary"]["errors"], 0);
    assert_eq!(report["summary"]["warnings"], 0);
    // The SMP is the one object lint checks; were it skipped (a wrong apiVersion or kind), a
    // clean report would prove nothing.
    assert_eq!(
        report["summary"]["objects"], 1,
        "the StateManagementProvider was linted"
    );
    assert_eq!(out.status.code(), Some(0), "lint --strict exit code");
}

#[test]
fn kustomization_lists_every_file_in_deploy() {
    let listed: BTreeSet<String> = kustomization_resources().into_iter().collect();
    let present: BTreeSet<String> = deploy_files()
        .into_iter()
        .filter(|f| f != "kustomization.yaml")
        .collect();
    assert_eq!(
        listed, present,
        "kustomization.yaml resources vs deploy/*.yaml"
    );
}

#[test]
fn namespaced_objects_live_in_kcm_system_and_no_namespace_is_created() {
    for o in objects() {
        let kind = o["kind"].as_str().unwrap();
        assert_ne!(
            kind, "Namespace",
            "kcm owns kcm-system: `kubectl delete -k deploy/` must not delete it"
        );
        let cluster_scoped = matches!(
            kind,
            "ClusterRole" | "ClusterRoleBinding" | "StateManagementProvider"
        );
        let ns = o["metadata"]["namespace"].as_str();
        if cluster_scoped {
            assert_eq!(ns, None, "{kind} is cluster-scoped");
        } else {
            assert_eq!(ns, Some(NAMESPACE), "{kind} {}", o["metadata"]["name"]);
        }
    }
}

#[test]
fn roles_use_no_wildcards() {
    let roles: Vec<Value> = objects()
        .into_iter()
        .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "Role")
        .collect();
    assert_eq!(
        roles.len(),
        2,
        "the ClusterRole and the leader-election Role"
    );
    for role in roles {
        for rule in role["rules"].as_array().unwrap() {
            for field in ["apiGroups", "resources", "verbs"] {
                assert!(
                    rule[field].is_array(),
                    "{} rule without {field}",
                    role["metadata"]["name"]
                );
                for item in strings(&rule[field]) {
                    assert!(
                        !item.contains('*'),
                        "{} {field} has a wildcard: {item}",
                        role["metadata"]["name"]
                    );
                }
            }
            assert!(
                rule.get("nonResourceURLs").is_none(),
                "no non-resource URLs"
            );
        }
    }
}

#[test]
fn cluster_role_grants_exactly_the_least_privilege_table() {
    let role = object("ClusterRole", NAME);
    assert_eq!(permissions(&role), table(CLUSTER_ROLE));
}

#[test]
fn leader_election_role_grants_only_leases_in_kcm_system() {
    let role = object("Role", "kubectl-ksm-leader-election");
    assert_eq!(role["metadata"]["namespace"], NAMESPACE);
    assert_eq!(permissions(&role), table(LEADER_ELECTION_ROLE));
}

#[test]
fn bindings_give_the_roles_to_the_service_account() {
    let sa = object("ServiceAccount", NAME);
    assert_eq!(sa["metadata"]["namespace"], NAMESPACE);
    let subject =
        serde_json::json!([{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]);
    for (kind, role_kind, name) in [
        ("ClusterRoleBinding", "ClusterRole", NAME),
        ("RoleBinding", "Role", "kubectl-ksm-leader-election"),
    ] {
        let b = object(kind, name);
        assert_eq!(
            b["roleRef"],
            serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name}),
            "{kind} {name} roleRef"
        );
        assert_eq!(b["subjects"], subject, "{kind} {name} subjects");
    }
    let d = object("Deployment", NAME);
    assert_eq!(d["spec"]["template"]["spec"]["serviceAccountName"], NAME);
}

/// A setting as the kubelet resolves it: the container's securityContext, else the pod's.
fn effective<'a>(pod: &'a Value, container: &'a Value, field: &str) -> &'a Value {
    match &container["securityContext"][field] {
        Value::Null => &pod["securityContext"][field],
        v => v,
    }
}

#[test]
fn deployment_runs_the_adapter_hardened_with_probes() {
    let d = object("Deployment", NAME);
    assert_eq!(d["metadata"]["namespace"], NAMESPACE);
    assert_eq!(d["metadata"]["labels"]["app.kubernetes.io/name"], NAME);
    assert_eq!(d["spec"]["replicas"], 1);
    assert_eq!(
        d["spec"]["selector"]["matchLabels"],
        serde_json::json!({"app.kubernetes.io/name": NAME})
    );
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(
        d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"],
        NAME
    );
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];

    assert_eq!(
        c["image"],
        format!("ghcr.io/k0rdent/kubectl-ksm:{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        strings(&c["args"]),
        [
            "run",
            "--provider",
            PROVIDER,
            "--leader-elect",
            "--bind-address",
            "0.0.0.0:8080"
        ]
    );
    assert_eq!(
        c["ports"],
        serde_json::json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"}])
    );
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        let get = &c[probe]["httpGet"];
        assert_eq!(get["path"], path, "{probe}");
        assert!(
            get["port"] == "http" || get["port"] == 8080,
            "{probe} port: {}",
            get["port"]
        );
    }

    assert_eq!(effective(pod, c, "runAsNonRoot"), true);
    assert_eq!(effective(pod, c, "runAsUser"), 65532);
    assert_eq!(
        effective(pod, c, "seccompProfile")["type"],
        "RuntimeDefault"
    );
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(
        c["securityContext"]["capabilities"],
        serde_json::json!({"drop": ["ALL"]})
    );
    assert_ne!(c["securityContext"]["privileged"], true);

    assert_eq!(
        c["resources"],
        serde_json::json!({"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}})
    );

    let env: BTreeMap<&str, &Value> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                &e["valueFrom"]["fieldRef"]["fieldPath"],
            )
        })
        .collect();
    assert_eq!(
        env.get("POD_NAMESPACE").copied(),
        Some(&Value::from("metadata.namespace"))
    );
    assert_eq!(
        env.get("POD_NAME").copied(),
        Some(&Value::from("metadata.name"))
    );
}

#[test]
fn deployment_args_are_accepted_by_the_binary() {
    let d = object("Deployment", NAME);
    assert_args_accepted(&strings(
        &d["spec"]["template"]["spec"]["containers"][0]["args"],
    ));
}

/// `--help` after a container's arguments: clap rejects an unknown flag or a bad value as it
/// reaches it, and prints the help (exit 0) only when everything before it parses.
fn assert_args_accepted(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(args)
        .arg("--help")
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "kubectl-ksm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn state_management_provider_points_at_the_adapter_and_flux() {
    let smp = object("StateManagementProvider", PROVIDER);
    assert_eq!(smp["apiVersion"], "k0rdent.mirantis.com/v1beta1");
    let spec = &smp["spec"];
    assert_eq!(spec["adapter"]["apiVersion"], "apps/v1");
    assert_eq!(spec["adapter"]["kind"], "Deployment");
    assert_eq!(spec["adapter"]["name"], NAME);
    assert_eq!(spec["adapter"]["namespace"], NAMESPACE);
    assert_eq!(
        spec["selector"],
        serde_json::json!({"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": NAME}})
    );
    assert_ne!(spec["suspend"], true);

    let provisioners: BTreeSet<(&str, &str, &str)> = spec["provisioner"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(p["apiVersion"], "apps/v1");
            (
                p["kind"].as_str().unwrap(),
                p["namespace"].as_str().unwrap(),
                p["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        provisioners,
        BTreeSet::from([
            ("Deployment", "flux-system", "helm-controller"),
            ("Deployment", "flux-system", "kustomize-controller"),
            ("Deployment", "flux-system", "source-controller"),
        ])
    );

    let crds: BTreeSet<String> = spec["provisionerCRDs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            let (g, v) = (c["group"].as_str().unwrap(), c["version"].as_str().unwrap());
            strings(&c["resources"])
                .into_iter()
                .map(move |r| format!("{r}.{g}/{v}"))
        })
        .collect();
    assert_eq!(
        crds,
        [
            "helmreleases.helm.toolkit.fluxcd.io/v2",
            "kustomizations.kustomize.toolkit.fluxcd.io/v1",
            "gitrepositories.source.toolkit.fluxcd.io/v1",
            "helmrepositories.source.toolkit.fluxcd.io/v1",
            "helmcharts.source.toolkit.fluxcd.io/v1",
            "ocirepositories.source.toolkit.fluxcd.io/v1",
            "buckets.source.toolkit.fluxcd.io/v1",
        ]
        .into_iter()
        .map(String::from)
        .collect::<BTreeSet<_>>()
    );
}

/// Dockerfile instructions as (INSTRUCTION, arguments), continuation lines joined, comments
/// and parser directives dropped.
fn dockerfile_instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part.trim_end());
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                let (inst, args) = current
                    .split_once(char::is_whitespace)
                    .unwrap_or((&current, ""));
                out.push((inst.to_ascii_uppercase(), args.trim().to_string()));
                current.clear();
            }
        }
    }
    out
}

#[test]
fn dockerfile_is_multi_stage_static_and_non_root() {
    let text = read(&root().join("Dockerfile"));
    let instructions = dockerfile_instructions(&text);
    let stages: Vec<usize> = instructions
        .iter()
        .enumerate()
        .filter(|(_, (i, _))| i == "FROM")
        .map(|(n, _)| n)
        .collect();
    assert!(
        stages.len() >= 2,
        "a builder and a runtime stage: {stages:?}"
    );

    let builder = &instructions[stages[0]..stages[stages.len() - 1]];
    assert!(
        builder
            .iter()
            .any(|(i, a)| i == "RUN" && a.contains("cargo build --release --locked")),
        "the builder runs `cargo build --release --locked`"
    );

    let last = &instructions[*stages.last().unwrap()..];
    let base = &last[0].1;
    assert!(
        base.starts_with("gcr.io/distroless/static") || base == "scratch",
        "the runtime stage has no libc or shell: {base}"
    );
    let user = last
        .iter()
        .rev()
        .find(|(i, _)| i == "USER")
        .map(|(_, a)| a.as_str())
        .expect("the runtime stage sets USER");
    let uid = user.split(':').next().unwrap();
    assert!(
        uid.parse::<u32>().is_ok_and(|u| u != 0),
        "USER is a numeric non-root uid (runAsNonRoot needs a number): {user}"
    );
    assert!(
        last.iter()
            .any(|(i, a)| i == "ENTRYPOINT" && a == r#"["/kubectl-ksm"]"#),
        "ENTRYPOINT is the binary, so the Deployment's args start with the subcommand"
    );

    let ignore = read(&root().join(".dockerignore"));
    for path in ["target/", ".git"] {
        assert!(
            ignore.lines().any(|l| l.trim() == path),
            ".dockerignore leaves {path} out of the build context"
        );
    }
}

#[test]
fn dockerfile_parser_joins_continuations_and_skips_comments() {
    let parsed = dockerfile_instructions(
        "# syntax=docker/dockerfile:1\nFROM a AS b\nRUN x \\\n    && y\n\nuser 1:1\n",
    );
    assert_eq!(
        parsed,
        [
            ("FROM".to_string(), "a AS b".to_string()),
            ("RUN".to_string(), "x && y".to_string()),
            ("USER".to_string(), "1:1".to_string()),
        ]
    );
}

/// deploy/sharded/: its kustomization (the base, the shard Deployments, a JSON patch adding an
/// argument to the base Deployment) and the Deployments it yields.
fn sharded_deployments() -> Vec<Value> {
    let dir = deploy_dir().join("sharded");
    let k: Value = serde_saphyr::from_str(&read(&dir.join("kustomization.yaml"))).unwrap();
    let resources = strings(&k["resources"]);
    assert_eq!(resources[0], "..", "the sharded example builds on deploy/");
    let mut out = vec![object("Deployment", NAME)];
    for file in &resources[1..] {
        out.extend(
            serde_saphyr::from_multiple::<Value>(&read(&dir.join(file)))
                .unwrap()
                .into_iter()
                .filter(|d| d["kind"] == "Deployment"),
        );
    }
    let patches = k["patches"].as_array().expect("patches");
    assert_eq!(patches.len(), 1);
    let p = &patches[0];
    assert_eq!(p["target"]["kind"], "Deployment");
    assert_eq!(p["target"]["name"], NAME);
    let ops: Vec<Value> = serde_saphyr::from_str(p["patch"].as_str().unwrap()).unwrap();
    for op in ops {
        assert_eq!(op["op"], "add");
        assert_eq!(op["path"], "/spec/template/spec/containers/0/args/-");
        out[0]["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array_mut()
            .unwrap()
            .push(op["value"].clone());
    }
    out
}

fn watch_selector(d: &Value) -> Selector {
    let args = strings(&d["spec"]["template"]["spec"]["containers"][0]["args"]);
    let text = args
        .iter()
        .find_map(|a| a.strip_prefix("--watch-label-selector="))
        .unwrap_or_else(|| panic!("{} has no --watch-label-selector", d["metadata"]["name"]));
    Selector::parse_string(text).unwrap()
}

#[test]
fn sharded_example_partitions_the_service_sets_and_runs_as_is() {
    let deployments = sharded_deployments();
    let names: Vec<&str> = deployments
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [NAME, "kubectl-ksm-shard1", "kubectl-ksm-shard2"]);
    // Every value of the shard key, and none, goes to exactly one Deployment.
    for key in [
        None,
        Some("shard1"),
        Some("shard2"),
        Some("shard3"),
        Some(""),
    ] {
        let takers: Vec<&str> = deployments
            .iter()
            .filter(|d| {
                watch_selector(d).matches_with(|k| {
                    if k == "sharding.fluxcd.io/key" {
                        key
                    } else {
                        None
                    }
                })
            })
            .map(|d| d["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(takers.len(), 1, "key {key:?} taken by {takers:?}");
    }
    // No two Deployments select each other's pods; all run as the one service account,
    // leader-elected, and the binary takes their arguments.
    for (i, d) in deployments.iter().enumerate() {
        let pod = &d["spec"]["template"];
        assert_eq!(pod["spec"]["serviceAccountName"], NAME);
        let selector = Selector::parse(&d["spec"]["selector"]).unwrap();
        for (j, other) in deployments.iter().enumerate() {
            let labels = &other["spec"]["template"]["metadata"]["labels"];
            let selects = selector.matches_with(|k| labels[k].as_str());
            assert_eq!(
                selects,
                i == j,
                "{} selects the pods of {}",
                names[i],
                names[j]
            );
        }
        let args = strings(&pod["spec"]["containers"][0]["args"]);
        assert!(args.contains(&"--leader-elect"), "{args:?}");
        assert_args_accepted(&args);
    }
    // The base's Role gives the Leases of every shard (one per selector, same namespace).
    let role = object("Role", "kubectl-ksm-leader-election");
    assert_eq!(permissions(&role), table(LEADER_ELECTION_ROLE));
}

#[test]
fn lint_strict_of_the_sharded_example_reports_nothing() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["lint", "--strict", "deploy/sharded/"])
        .env_clear()
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("0 errors, 0 warnings"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
