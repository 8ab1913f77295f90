//! The deployment of `kubectl ksm run` (deploy/, Dockerfile): `kubectl kustomize` (the real
//! kubectl) builds deploy/ and deploy/sharded/, the manifests lint clean, the RBAC is the
//! least-privilege table below and nothing more, the Deployment is hardened, the
//! StateManagementProvider points at it, the image builds non-root, and a real API server
//! accepts both layouts as `kubectl apply -k` sends them.

mod realapi;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use kubectl_ksm::api::selector::Selector;
use serde_json::Value;

const NAMESPACE: &str = "kcm-system";
const NAME: &str = "kubectl-ksm";
const PROVIDER: &str = "ksm-flux";

/// Every permission of the ClusterRole, as (apiGroup, resource, verbs). A new permission must
/// be added here deliberately, with the reason next to it in deploy/base/clusterrole.yaml.
const CLUSTER_ROLE: &[(&str, &str, &[&str])] = &[
    (
        "k0rdent.mirantis.com",
        "servicesets",
        &["get", "list", "watch", "patch"],
    ),
    ("k0rdent.mirantis.com", "servicesets/status", &["patch"]),
    (
        "k0rdent.mirantis.com",
        "servicesets/finalizers",
        &["update"],
    ),
    (
        "k0rdent.mirantis.com",
        "servicetemplates",
        &["list", "watch"],
    ),
    (
        "k0rdent.mirantis.com",
        "statemanagementproviders",
        &["list", "watch"],
    ),
    (
        "helm.toolkit.fluxcd.io",
        "helmreleases",
        &["list", "watch", "create", "patch", "delete"],
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        &["list", "watch", "create", "patch", "delete"],
    ),
    ("source.toolkit.fluxcd.io", "helmcharts", &["get"]),
    ("source.toolkit.fluxcd.io", "gitrepositories", &["get"]),
    ("source.toolkit.fluxcd.io", "ocirepositories", &["get"]),
    ("source.toolkit.fluxcd.io", "buckets", &["get"]),
    ("events.k8s.io", "events", &["create"]),
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

/// deploy/base/: the manifests deploy/ and deploy/sharded/ build on.
fn base_dir() -> PathBuf {
    deploy_dir().join("base")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The YAML files of deploy/base/, sorted by name.
fn base_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(base_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
        .collect();
    files.sort();
    files
}

/// The objects `kubectl kustomize DIR` builds (DIR relative to the repository); None, after
/// saying so, where kubectl cannot be run (CI fails instead).
fn kustomize(dir: &str) -> Option<Vec<Value>> {
    if !realapi::have_kubectl() {
        return None;
    }
    let out = realapi::checked(
        Command::new("kubectl")
            .args(["kustomize", dir])
            .current_dir(root()),
        &format!("kubectl kustomize {dir}"),
    );
    Some(
        serde_saphyr::from_multiple::<Value>(&out)
            .unwrap_or_else(|e| panic!("kubectl kustomize {dir}: {e}\n{out}"))
            .into_iter()
            .filter(|doc| !doc.is_null())
            .collect(),
    )
}

/// Every object `kubectl kustomize deploy/` builds (None: skipped, said on stderr).
fn objects() -> Option<Vec<Value>> {
    kustomize("deploy/")
}

fn kustomization_resources(dir: &Path) -> Vec<String> {
    let text = read(&dir.join("kustomization.yaml"));
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

/// The one object of this kind and name among objects; panics when there is none or more
/// than one.
fn find(objects: &[Value], kind: &str, name: &str) -> Value {
    let found: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "exactly one {kind} {name}");
    found[0].clone()
}

/// The one object of this kind and name that deploy/ builds (None: skipped).
fn object(kind: &str, name: &str) -> Option<Value> {
    Some(find(&objects()?, kind, name))
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
fn kustomization_lists_every_file_in_deploy_base() {
    let listed: BTreeSet<String> = kustomization_resources(&base_dir()).into_iter().collect();
    let present: BTreeSet<String> = base_files()
        .into_iter()
        .filter(|f| f != "kustomization.yaml")
        .collect();
    assert_eq!(
        listed, present,
        "deploy/base/kustomization.yaml resources vs deploy/base/*.yaml"
    );
    // deploy/ is the base as it is, and deploy/sharded/ builds on the same base (a
    // kustomization may not take a directory above it: kustomize refuses the cycle).
    assert_eq!(kustomization_resources(&deploy_dir()), ["base"]);
    assert_eq!(
        kustomization_resources(&deploy_dir().join("sharded"))[0],
        "../base"
    );
}

#[test]
fn namespaced_objects_live_in_kcm_system_and_no_namespace_is_created() {
    let Some(objects) = objects() else { return };
    for o in objects {
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
    let Some(objects) = objects() else { return };
    let roles: Vec<Value> = objects
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
    let Some(role) = object("ClusterRole", NAME) else {
        return;
    };
    assert_eq!(permissions(&role), table(CLUSTER_ROLE));
}

#[test]
fn leader_election_role_grants_only_leases_in_kcm_system() {
    let Some(role) = object("Role", "kubectl-ksm-leader-election") else {
        return;
    };
    assert_eq!(role["metadata"]["namespace"], NAMESPACE);
    assert_eq!(permissions(&role), table(LEADER_ELECTION_ROLE));
}

#[test]
fn bindings_give_the_roles_to_the_service_account() {
    let Some(objects) = objects() else { return };
    let object = |kind: &str, name: &str| find(&objects, kind, name);
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
    let Some(d) = object("Deployment", NAME) else {
        return;
    };
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
    let Some(d) = object("Deployment", NAME) else {
        return;
    };
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
    let Some(smp) = object("StateManagementProvider", PROVIDER) else {
        return;
    };
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

/// deploy/sharded/ as `kubectl kustomize` builds it: the Deployments, by name (None: skipped).
/// Everything else is deploy/'s objects unchanged, and the main Deployment is deploy/'s with
/// one argument more, the selector of the ServiceSets no shard takes.
fn sharded_deployments() -> Option<Vec<Value>> {
    let base = objects()?;
    let sharded = kustomize("deploy/sharded/")?;
    let (mut deployments, others): (Vec<Value>, Vec<Value>) =
        sharded.into_iter().partition(|o| o["kind"] == "Deployment");
    let base_others: Vec<Value> = base
        .iter()
        .filter(|o| o["kind"] != "Deployment")
        .cloned()
        .collect();
    assert_eq!(
        others, base_others,
        "deploy/sharded/ keeps deploy/'s other objects as they are"
    );
    deployments.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let mut expected = find(&base, "Deployment", NAME);
    expected["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array_mut()
        .unwrap()
        .push("--watch-label-selector=sharding.fluxcd.io/key notin (shard1,shard2)".into());
    assert_eq!(
        deployments[0], expected,
        "the main Deployment of deploy/sharded/: deploy/'s, with the selector of the rest"
    );
    Some(deployments)
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
    let Some(deployments) = sharded_deployments() else {
        return;
    };
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
    let Some(role) = object("Role", "kubectl-ksm-leader-election") else {
        return;
    };
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

/// Both layouts, as the README applies them (`kubectl apply -k`), are accepted by a real API
/// server holding the real CRDs: every manifest passes the server's own validation, the
/// StateManagementProvider its CRD's schema and CEL rules.
#[test]
fn deploy_and_the_sharded_layout_apply_to_a_real_api_server() {
    let Some(api) = realapi::shared() else { return };
    let Some(objects) = objects() else { return };
    // kcm owns kcm-system; deploy/ does not create it.
    api.ensure_namespace(NAMESPACE);
    for dir in ["deploy/", "deploy/sharded/"] {
        let out = api
            .admin()
            .kubectl()
            .args(["apply", "-k", dir])
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl apply -k {dir}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Every object of both layouts is on the server, as stored (kubectl reads them back by
    // the kustomization itself).
    for dir in ["deploy/", "deploy/sharded/"] {
        let stored = realapi::checked(
            api.admin()
                .kubectl()
                .args(["get", "-k", dir, "-o", "name"])
                .current_dir(root()),
            &format!("kubectl get -k {dir}"),
        );
        assert_eq!(
            stored.lines().count(),
            kustomize(dir).unwrap().len(),
            "{stored}"
        );
    }
    assert_eq!(objects.len(), 7, "deploy/ builds 7 objects");
    let names = api.kubectl(&["get", "deployments", "-n", NAMESPACE, "-o", "name"]);
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        [
            "deployment.apps/kubectl-ksm",
            "deployment.apps/kubectl-ksm-shard1",
            "deployment.apps/kubectl-ksm-shard2"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// The Helm chart, charts/kubectl-ksm/: generated from deploy/base/ by scripts/helm_chart.py.

const CHART: &str = "charts/kubectl-ksm";

/// The objects of `helm template kubectl-ksm charts/kubectl-ksm -n NAMESPACE ARGS` (the real
/// helm); None where helm is missing (said on stderr; CI fails instead).
fn helm_template(namespace: &str, args: &[&str]) -> Option<Vec<Value>> {
    let helm = realapi::helm()?;
    let mut all = vec!["template", NAME, CHART, "--namespace", namespace];
    all.extend(args);
    let out = helm.run(None, &all);
    Some(
        serde_saphyr::from_multiple::<Value>(&out)
            .unwrap_or_else(|e| panic!("helm template: {e}\n{out}"))
            .into_iter()
            .filter(|doc| !doc.is_null())
            .collect(),
    )
}

fn by_kind_and_name(mut objects: Vec<Value>) -> Vec<Value> {
    objects.sort_by_key(|o| {
        (
            o["kind"].as_str().unwrap_or("").to_string(),
            o["metadata"]["name"].as_str().unwrap_or("").to_string(),
        )
    });
    objects
}

#[test]
fn the_chart_is_what_the_generator_makes_of_deploy_base() {
    let out = Command::new("python3")
        .args(["scripts/helm_chart.py", "--check"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn helm_lints_the_chart_and_templates_exactly_the_objects_of_deploy() {
    let Some(helm) = realapi::helm() else { return };
    helm.run(None, &["lint", "--strict", CHART]);
    let Some(templated) = helm_template(NAMESPACE, &[]) else {
        return;
    };
    let Some(kustomized) = objects() else { return };
    // One source: with the default values, the same objects, field for field.
    assert_eq!(by_kind_and_name(templated), by_kind_and_name(kustomized));
    // And what it templates lints clean, kcm's CEL rules included, as the README advises for
    // charts.
    let text = helm.run(None, &["template", NAME, CHART, "--namespace", NAMESPACE]);
    let out = realapi::run_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_kubectl-ksm")).args(["lint", "--strict", "-"]),
        text.as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_charts_values_set_the_namespace_image_replicas_resources_and_arguments() {
    let Some(objects) = helm_template(
        "adapters",
        &[
            "--set",
            "replicas=2",
            "--set",
            "image.repository=registry.example/ksm,image.tag=1.2.3,image.pullPolicy=Always",
            "--set",
            "extraArgs={--watch-label-selector=sharding.fluxcd.io/key=shard1}",
            "--set",
            "resources.limits.memory=256Mi",
        ],
    ) else {
        return;
    };
    let d = find(&objects, "Deployment", NAME);
    let container = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(container["image"], "registry.example/ksm:1.2.3");
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(container["resources"]["limits"]["memory"], "256Mi");
    assert_eq!(container["resources"]["requests"]["cpu"], "50m");
    let args: Vec<&str> = strings(&container["args"]);
    assert_eq!(
        args.last(),
        Some(&"--watch-label-selector=sharding.fluxcd.io/key=shard1")
    );
    assert_args_accepted(&args);
    // Everything namespaced, and every reference to the ServiceAccount and the Deployment,
    // follows the release's namespace.
    for o in &objects {
        if let Some(ns) = o["metadata"]["namespace"].as_str() {
            assert_eq!(ns, "adapters", "{}", o["metadata"]["name"]);
        }
        for subject in o["subjects"].as_array().into_iter().flatten() {
            assert_eq!(subject["namespace"], "adapters");
        }
    }
    let smp = find(&objects, "StateManagementProvider", PROVIDER);
    assert_eq!(smp["spec"]["adapter"]["namespace"], "adapters");
    // The image tag defaults to the chart's appVersion, the crate's version.
    let Some(default) = helm_template(NAMESPACE, &[]) else {
        return;
    };
    let d = find(&default, "Deployment", NAME);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        format!("ghcr.io/k0rdent/kubectl-ksm:{}", env!("CARGO_PKG_VERSION"))
    );
}
