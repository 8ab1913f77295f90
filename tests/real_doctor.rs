//! `kubectl ksm doctor` live against a real kube-apiserver with the real kcm, Flux, Sveltos and
//! Cluster API CRDs: every dump of testdata/doctor, loaded into the server, gives the same
//! report live (`doctor -A`) as from the dump (`doctor --from`), for both providers, run as
//! the admin and as a user bound to nothing but the ClusterRole of deploy/doctor/; a user who
//! may not list a kind gets the finding that names it with the server's refusal. `check` live
//! on each loaded dump evaluates every provider as `check` does offline on the dump.
//!
//! Doctor's findings depend on time only through the status times the dumps carry
//! (conditions' lastTransitionTime, the services' lastStateTransitionTime), which the loader
//! writes as they are, so both runs are judged at the dumps' `--now`. The one metadata time
//! doctor reads, creationTimestamp (the server's own: the load time), only breaks a tie of
//! the Flux adapter's release ownership between ServiceSets of equal priority, and no case
//! has one; were one added, the loader's creation order (the dump's) would still hold, and a
//! difference would show here.

mod realapi;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use realapi::dump::{self, AdminClient};
use realapi::{RealApi, User};
use serde_json::{Value, json};

const NOW: &str = "2026-11-21T12:00:00Z";

/// The tests of this binary load dumps into one server: one at a time.
static SERVER: Mutex<()> = Mutex::new(());

fn cases() -> Vec<PathBuf> {
    dump::cases("doctor", "dump.yaml")
}

/// The shared server with Cluster API's Cluster CRD installed too (the Sveltos dumps hold
/// CAPI Clusters) and the ClusterRole of deploy/doctor/ applied; None when skipped.
fn server() -> Option<&'static RealApi> {
    let api = realapi::gomod::shared_with_capi()?;
    api.kubectl(&["apply", "--server-side", "-f", ROLE_FILE]);
    Some(api)
}

const ROLE_FILE: &str = "deploy/doctor/clusterrole.yaml";
const ROLE: &str = "kubectl-ksm-doctor";

/// The ClusterRole of deploy/doctor/, as JSON.
fn role() -> Value {
    let text = std::fs::read_to_string(realapi::root().join(ROLE_FILE)).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// A fresh user bound to the documented ClusterRole and nothing else.
fn doctor_user(api: &RealApi) -> User {
    let user = api.fresh_user();
    let name = api.unique("kubectl-ksm-doctor");
    api.apply(&json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [user.subject],
    }));
    user
}

/// A fresh user granted the documented role's rules but for one resource.
fn user_without(api: &RealApi, resource: &str) -> User {
    let mut rules = role()["rules"].as_array().unwrap().clone();
    for rule in &mut rules {
        let resources = rule["resources"].as_array_mut().unwrap();
        resources.retain(|r| r != resource);
    }
    rules.retain(|r| !r["resources"].as_array().unwrap().is_empty());
    let user = api.fresh_user();
    api.grant_cluster(&user, Value::Array(rules));
    user
}

fn run(cmd: &mut Command) -> (Option<i32>, Value, String) {
    let out: Output = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("doctor -o json: {e}: {stdout}{stderr}"));
    (out.status.code(), report, stderr)
}

fn live(user: &User) -> (Option<i32>, Value, String) {
    run(user
        .ksm()
        .args(["doctor", "-A", "--now", NOW, "-o", "json"]))
}

fn from_dump(dump: &Path) -> (Option<i32>, Value, String) {
    run(Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "--now", NOW, "-o", "json", "--from"])
        .arg(dump)
        .current_dir(realapi::root())
        .env_clear())
}

/// (code, object, message) of each finding: what a difference is first shown by.
fn findings(report: &Value) -> Vec<(String, String, String)> {
    let mut f: Vec<_> = report["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings: {report}"))
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["object"].to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    f.sort();
    f
}

fn dump_path(case: &str) -> PathBuf {
    realapi::root()
        .join("testdata/doctor")
        .join(case)
        .join("dump.yaml")
}

#[test]
fn every_dump_gives_the_same_report_live_as_from_the_dump() {
    let Some(api) = server() else { return };
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut client = AdminClient::new(api);
    let reader = doctor_user(api);
    let cases = cases();
    assert!(cases.len() >= 50, "only {} doctor cases", cases.len());
    let (mut flux, mut sveltos, mut providers, mut targets, mut traced) = (0, 0, 0, 0, 0);
    let mut focused = 0;
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let dump = case.join("dump.yaml");
        let loaded = client.load(&name, &std::fs::read_to_string(&dump).unwrap());
        // The commands only read: they run at once, each compared when all are done.
        let (want_code, want, live_runs, tree_targets, checked) = std::thread::scope(|s| {
            let saved = s.spawn(|| from_dump(&dump));
            let runs = [api.admin(), &reader].map(|user| s.spawn(move || (user, live(user))));
            let tree = s.spawn(|| tree_agrees(&reader, &name, &dump));
            let check = s.spawn(|| check_agrees(api, &name, &dump));
            let (want_code, want, _) = joined(saved);
            let runs = runs.map(joined);
            (want_code, want, runs, joined(tree), joined(check))
        });
        for (user, (code, report, stderr)) in live_runs {
            let who = &user.name;
            assert_eq!(
                findings(&report),
                findings(&want),
                "{name}: live as {who} (left) and the dump (right) differ\nstderr of the live run:\n{stderr}"
            );
            assert_eq!(
                report, want,
                "{name}: live as {who} (left) and the dump (right)"
            );
            assert_eq!(code, want_code, "{name}: exit codes as {who}");
        }
        targets += tree_targets.0;
        focused += tree_targets.1;
        traced += trace_agrees(&reader, &name, &dump, &want);
        providers += checked;
        for set in want["serviceSets"].as_array().unwrap() {
            match set["translation"].as_str() {
                Some("Flux") => flux += 1,
                Some(_) => sveltos += 1,
                None => {}
            }
        }
        client.unload(loaded);
    }
    assert!(
        flux >= 25 && sveltos >= 15,
        "{flux} Flux, {sveltos} Sveltos ServiceSets"
    );
    assert!(providers >= 50, "check compared on {providers} providers");
    assert!(
        targets >= 5,
        "tree compared on {targets} MultiClusterService targets"
    );
    assert!(traced >= 100, "trace compared on {traced} services");
    assert!(
        focused >= 40,
        "doctor compared on {focused} ClusterDeployments and MultiClusterServices"
    );
    // Unloaded: nothing of the last case is left for the next test.
    let left = api.kubectl(&[
        "get",
        "servicesets.k0rdent.mirantis.com",
        "-A",
        "-o",
        "name",
    ]);
    assert_eq!(left, "", "left after unloading");
}

/// A scoped thread's result; its panic, with its message, if it panicked.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// `doctor clusterdeployment/NAME` and `doctor multiclusterservice/NAME` live (as `user`)
/// against the same from the dump, for the first ClusterDeployment and the first
/// MultiClusterService the tree shows ServiceSets of: the same report and exit code.
/// Returns the number of targets compared.
fn focus_agrees(user: &User, case: &str, dump: &Path, tree: &Value) -> usize {
    let clusters = tree["clusters"].as_array().unwrap();
    let deployment = clusters.iter().find_map(|c| {
        let (ns, name) = c["cluster"]
            .as_str()?
            .strip_prefix("ClusterDeployment/")?
            .split_once('/')?;
        Some((format!("cld/{name}"), Some(ns.to_string())))
    });
    let service = clusters
        .iter()
        .flat_map(|c| c["serviceSets"].as_array().into_iter().flatten())
        .find_map(|s| Some((format!("mcs/{}", s["multiClusterService"].as_str()?), None)));
    let mut compared = 0;
    for (target, namespace) in deployment.into_iter().chain(service) {
        let namespace: Vec<&str> = namespace.as_deref().map_or(vec![], |n| vec!["-n", n]);
        let (live_code, live, live_err) = run(user
            .ksm()
            .args(["doctor", "--now", NOW, "-o", "json"])
            .args(&namespace)
            .args(["--", &target]));
        let (saved_code, saved, _) = run(Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(["doctor", "--now", NOW, "-o", "json", "--from"])
            .arg(dump)
            .args(&namespace)
            .args(["--", &target])
            .current_dir(realapi::root())
            .env_clear());
        assert_eq!(
            live, saved,
            "{case}: doctor {target} live (left) and from the dump (right)\n{live_err}"
        );
        assert_eq!(
            live_code, saved_code,
            "{case}: doctor {target}'s exit codes"
        );
        compared += 1;
    }
    compared
}

/// `tree -A` live (as a user bound to doctor's role, the dump loaded) against `tree --from`
/// the dump: the same document. Returns the number of MultiClusterService targets in it and
/// of the targets [`focus_agrees`] compared.
fn tree_agrees(user: &User, case: &str, dump: &Path) -> (usize, usize) {
    let json = |out: Output| -> Value {
        assert!(
            out.status.success(),
            "{case}: tree: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{case}: tree -o json: {e}"))
    };
    let live = json(
        user.ksm()
            .args(["tree", "-A", "--now", NOW, "-o", "json"])
            .output()
            .unwrap(),
    );
    let saved = json(
        Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(["tree", "--now", NOW, "-o", "json", "--from"])
            .arg(dump)
            .env_clear()
            .output()
            .unwrap(),
    );
    assert_eq!(
        live, saved,
        "{case}: tree live (left) and from the dump (right)"
    );
    let targets = saved["multiClusterServices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["targets"].as_array().unwrap().len())
        .sum();
    (targets, focus_agrees(user, case, dump, &saved))
}

/// `trace serviceset/NAME` live (as a user bound to doctor's role, the dump loaded) against
/// the same from the dump, for every ServiceSet of doctor's report: the same document.
/// Returns the number of services traced.
fn trace_agrees(user: &User, case: &str, dump: &Path, report: &Value) -> usize {
    let json = |out: Output| -> Value {
        assert!(
            out.status.success(),
            "{case}: trace: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{case}: trace -o json: {e}"))
    };
    let mut traced = 0;
    for set in report["serviceSets"].as_array().unwrap() {
        let (ns, name) = (
            set["namespace"].as_str().unwrap(),
            set["name"].as_str().unwrap(),
        );
        if set["services"].as_array().is_none_or(|s| s.is_empty()) {
            continue;
        }
        let start = format!("serviceset/{name}");
        let args = ["trace", &start, "-n", ns, "--now", NOW, "-o", "json"];
        // Live and from the dump at once.
        let (live, saved) = std::thread::scope(|s| {
            let live = s.spawn(|| user.ksm().args(args).output().unwrap());
            let saved = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
                .args(args)
                .arg("--from")
                .arg(dump)
                .env_clear()
                .output()
                .unwrap();
            let live = live.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (json(live), json(saved))
        });
        assert_eq!(
            live, saved,
            "{case}: trace {start} live (left) and from the dump (right)"
        );
        traced += saved["services"].as_array().unwrap().len();
    }
    traced
}

/// `check` live (as the admin, the dump loaded) against `check DUMP --objects DUMP`: every
/// provider with the same evaluations and the same conditions but RBACReady, which offline
/// cannot know (live it is what kcm recorded), and where kcm recorded it True the same
/// verdict; and against `check --from DUMP`: the same report. Returns the number of
/// providers compared.
fn check_agrees(api: &RealApi, case: &str, dump: &Path) -> usize {
    let json = |out: Output| -> (Option<i32>, Value) {
        let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{case}: check -o json: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code(), v)
    };
    let (live_code, live) = json(
        api.admin()
            .ksm()
            .args(["check", "-o", "json"])
            .output()
            .unwrap(),
    );
    let (offline_code, offline) = json(
        Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(["check", "-o", "json"])
            .arg(dump)
            .arg("--objects")
            .arg(dump)
            .env_clear()
            .output()
            .unwrap(),
    );
    let without_rbac = |p: &Value| {
        let mut p = p.clone();
        p["conditions"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["type"] != "RBACReady");
        for k in ["statusDisagreements", "ready"] {
            p.as_object_mut().unwrap().remove(k);
        }
        p
    };
    let providers = |v: &Value| -> Vec<Value> {
        v["providers"]
            .as_array()
            .unwrap()
            .iter()
            .map(without_rbac)
            .collect()
    };
    assert_eq!(
        providers(&live),
        providers(&offline),
        "{case}: check live (left) and offline (right)"
    );
    let rbac_true = live["providers"].as_array().unwrap().iter().all(|p| {
        p["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "RBACReady" && c["status"] == "True")
    });
    if rbac_true {
        assert_eq!(live_code, offline_code, "{case}: check's exit codes");
    }
    // From the dump as from the cluster: RBACReady and the recorded conditions included.
    let (saved_code, saved) = json(
        Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(["check", "-o", "json", "--from"])
            .arg(dump)
            .env_clear()
            .output()
            .unwrap(),
    );
    assert_eq!(
        live["providers"], saved["providers"],
        "{case}: check live (left) and --from the dump (right)"
    );
    assert_eq!(
        live_code, saved_code,
        "{case}: check's exit codes live and --from"
    );
    live["providers"].as_array().unwrap().len()
}

/// Loads a case, runs doctor as `user`, unloads; (exit code, report, stderr).
fn doctor_on(api: &RealApi, case: &str, user: &User) -> (Option<i32>, Value, String) {
    let mut client = AdminClient::new(api);
    let loaded = client.load(case, &std::fs::read_to_string(dump_path(case)).unwrap());
    let out = live(user);
    client.unload(loaded);
    out
}

/// The refusal kube-apiserver words for a list across the cluster.
fn refusal(user: &User, resource: &str, group: &str) -> String {
    format!(
        "{resource}.{group} is forbidden: User \"{}\" cannot list resource \"{resource}\" in API group \"{group}\" at the cluster scope",
        user.name
    )
}

#[test]
fn a_kind_the_user_may_not_list_is_named_with_the_servers_refusal() {
    let Some(api) = server() else { return };
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());

    // Flux adapter, HelmReleases refused: one KSM637 naming the kind and the server's
    // reason; the Kustomization's chain is still followed, and no HelmRelease is called
    // missing.
    let user = user_without(api, "helmreleases");
    let (code, report, stderr) = doctor_on(api, "healthy", &user);
    assert_eq!(
        code,
        Some(1),
        "incomplete is not healthy: {report:#}\n{stderr}"
    );
    let why = refusal(&user, "helmreleases", "helm.toolkit.fluxcd.io");
    let codes: Vec<String> = findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(codes, ["KSM637"], "{report:#}");
    let message = report["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("HelmRelease could not be read (") && message.contains(&why),
        "{message}"
    );
    assert!(
        stderr.contains(&why) && stderr.contains("not followed"),
        "{stderr}"
    );
    let services = &report["serviceSets"][0]["services"];
    let podinfo = services
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "podinfo")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(podinfo["status"], "healthy", "{podinfo:#}");

    // kcm's default provider, ClusterSummaries refused: KSM637 for them and, for each
    // service, where its chain stopped (info); no ClusterSummary is reported missing (KSM621).
    let user = user_without(api, "clustersummaries");
    let (code, report, stderr) = doctor_on(api, "sveltos-healthy-profile", &user);
    assert_eq!(code, Some(1), "{report:#}\n{stderr}");
    let why = refusal(&user, "clustersummaries", "config.projectsveltos.io");
    let (infos, problems): (Vec<&Value>, Vec<&Value>) = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .partition(|f| f["severity"] == "info");
    assert_eq!(problems.len(), 1, "{report:#}");
    assert_eq!(problems[0]["code"], "KSM637");
    let message = problems[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("ClusterSummary could not be read (") && message.contains(&why),
        "{message}"
    );
    assert_eq!(infos.len(), 2, "one per service: {report:#}");
    for info in infos {
        let m = info["message"].as_str().unwrap();
        assert!(
            m.ends_with(": not followed further: ClusterSummary/kcm-system/p--dev-cluster-capi-dev-cluster could not be read"),
            "{m}"
        );
    }

    // ServiceSets refused: nothing to diagnose, exit 2 with the server's refusal.
    let user = user_without(api, "servicesets");
    let mut client = AdminClient::new(api);
    let loaded = client.load(
        "healthy",
        &std::fs::read_to_string(dump_path("healthy")).unwrap(),
    );
    let out = user
        .ksm()
        .args(["doctor", "-A", "--now", NOW])
        .output()
        .unwrap();
    client.unload(loaded);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: forbidden to list servicesets: ")
            && stderr.contains(&refusal(&user, "servicesets", "k0rdent.mirantis.com")),
        "{stderr}"
    );
}

#[test]
fn without_the_optional_secrets_rule_doctor_goes_on_unchecked() {
    let Some(api) = server() else { return };
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let user = user_without(api, "secrets");
    // Healthy: the same report as from the dump; stderr says what was not checked.
    let (code, report, stderr) = doctor_on(api, "healthy", &user);
    let (want_code, want, _) = from_dump(&dump_path("healthy"));
    assert_eq!((code, &report), (want_code, &want));
    assert!(
        stderr.contains("kubeconfig Secrets not checked: forbidden to list secrets"),
        "{stderr}"
    );
    // A missing kubeconfig Secret cannot be seen then: no KSM617, which the dump (and the
    // admin) report.
    let (_, report, _) = doctor_on(api, "kubeconfig-missing", &user);
    let (_, want, _) = from_dump(&dump_path("kubeconfig-missing"));
    let codes = |r: &Value| findings(r).into_iter().map(|f| f.0).collect::<Vec<_>>();
    assert_eq!(codes(&want), ["KSM617"]);
    assert_eq!(codes(&report), Vec::<String>::new(), "{report:#}");
}

#[test]
fn the_documented_role_grants_exactly_what_doctor_reads() {
    use kubectl_ksm::api::kinds;
    // (group, resource, verb) granted by the role.
    let mut granted: Vec<(String, String, String)> = Vec::new();
    for rule in role()["rules"].as_array().unwrap() {
        for group in rule["apiGroups"].as_array().unwrap() {
            for resource in rule["resources"].as_array().unwrap() {
                for verb in rule["verbs"].as_array().unwrap() {
                    granted.push((
                        group.as_str().unwrap().into(),
                        resource.as_str().unwrap().into(),
                        verb.as_str().unwrap().into(),
                    ));
                }
            }
        }
    }
    granted.sort();
    // What doctor reads: get and list on every kind it lists (and watch: wait watches
    // them), the health-rule ConfigMaps and the Secrets' names (lists), the SMPs'
    // Deployments and provisioner CRDs (gets).
    let mut reads: Vec<(String, String, String)> = Vec::new();
    for listed in kubectl_ksm::core::provider::doctor_kinds() {
        let kind = listed.kind;
        for verb in ["get", "list", "watch"] {
            reads.push((kind.group.into(), kind.plural.into(), verb.into()));
        }
    }
    for (kind, verb) in [
        (&kinds::CONFIG_MAP, "list"),
        (&kinds::SECRET, "list"),
        (&kinds::DEPLOYMENT, "get"),
        (&kinds::CRD, "get"),
        // doctor --watch's timeline.
        (&kinds::EVENT, "list"),
        (&kinds::EVENT, "watch"),
    ] {
        reads.push((kind.group.into(), kind.plural.into(), verb.into()));
    }
    reads.sort();
    assert_eq!(
        granted, reads,
        "{ROLE_FILE} against provider::doctor_kinds() and doctor_snapshot"
    );
    assert_eq!(role()["metadata"]["name"], ROLE);
}

/// `kubectl-ksm ARGS` as doctor's role with `case` loaded (and `prepare` applied), read
/// until it has printed `marker`, then `change` applied to the server: the exit code and
/// everything it printed. A watchdog kills it after ten minutes (the test then fails on the
/// code): a guard against a run that never ends, not a measure (wait's own --timeout in these
/// tests is as long).
fn live_through(
    case: &str,
    prepare: impl FnOnce(&RealApi),
    args: &[&str],
    marker: &str,
    change: impl FnOnce(&RealApi),
) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader};
    let api = server().expect("the real API server");
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut client = AdminClient::new(api);
    let reader = doctor_user(api);
    let dump = dump_path(case);
    let loaded = client.load(case, &std::fs::read_to_string(&dump).unwrap());
    prepare(api);
    let mut child = reader
        .ksm()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, watchdog) = std::sync::mpsc::channel::<()>();
    let dog = std::thread::spawn(move || {
        if watchdog
            .recv_timeout(std::time::Duration::from_secs(600))
            .is_err()
        {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    while !printed.contains(marker) {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        printed.push_str(&line);
    }
    change(api);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    printed.push_str(&rest);
    let status = child.wait().unwrap();
    let _ = done.send(());
    dog.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    client.unload(loaded);
    (status.code(), format!("{printed}--- stderr\n{stderr}"))
}

/// `wait serviceset/dev-cluster` on the stuck case (ingress-nginx Provisioning), from its
/// first judgement, with `change` applied then.
fn wait_through(change: impl FnOnce(&RealApi), timeout: &str) -> (Option<i32>, String) {
    live_through(
        "service-stuck-provisioning",
        |_| {},
        &[
            "wait",
            "serviceset/dev-cluster",
            "-n",
            "kcm-system",
            "--timeout",
            timeout,
        ],
        "ingress-nginx/ingress-nginx: Provisioning",
        change,
    )
}

/// The ServiceSet's status with every service Deployed, as kcm's adapter would write it.
fn all_deployed(api: &RealApi) {
    set_state(api, None, "Deployed");
}

/// The state of one service (or every one) in the ServiceSet's status.
fn set_state(api: &RealApi, service: Option<&str>, state: &str) {
    realapi::dump::set_service_states(
        &|args| api.kubectl(args),
        "kcm-system",
        "dev-cluster",
        service,
        state,
    );
}

#[test]
fn wait_exits_once_the_server_says_every_service_is_deployed() {
    if server().is_none() {
        return;
    }
    let (code, out) = wait_through(all_deployed, "10m");
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("ingress-nginx/ingress-nginx: Deployed")
            && out.contains("ServiceSet \"dev-cluster\": 3 services deployed"),
        "{out}"
    );
}

#[test]
fn wait_fails_at_once_on_a_pause_and_times_out_with_each_state() {
    if server().is_none() {
        return;
    }
    let pause = |api: &RealApi| {
        api.kubectl(&[
            "annotate",
            "servicesets.k0rdent.mirantis.com",
            "dev-cluster",
            "-n",
            "kcm-system",
            "k0rdent.mirantis.com/service-set-paused=true",
        ]);
    };
    let (code, out) = wait_through(pause, "10m");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("failed KSM605")
            && out.contains("will not heal by itself: the ServiceSet is paused"),
        "{out}"
    );
    // Nothing changes: the timeout's code, and the state each service was last seen in.
    let (code, out) = wait_through(|_| {}, "2s");
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("timed out after 2s; last seen:")
            && out.contains("  ServiceSet kcm-system/dev-cluster service ingress-nginx/ingress-nginx: Provisioning"),
        "{out}"
    );
}

#[test]
fn doctor_watch_prints_the_changes_and_events_until_healthy() {
    if server().is_none() {
        return;
    }
    // The healthy case with ingress-nginx set back to Provisioning; an Event about the
    // ServiceSet is recorded, then the state is Deployed again.
    let change = |api: &RealApi| {
        let event = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "dev-cluster.deployed", "namespace": "kcm-system"},
            "involvedObject": {"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
                "namespace": "kcm-system", "name": "dev-cluster"},
            "type": "Normal", "reason": "Deployed", "message": "ingress-nginx is back",
            "lastTimestamp": "2026-11-27T00:00:00Z", "count": 1,
            "source": {"component": "ksm-test"}});
        api.apply(&event);
        set_state(api, Some("ingress-nginx"), "Deployed");
    };
    let (code, out) = live_through(
        "healthy",
        |api| set_state(api, Some("ingress-nginx"), "Provisioning"),
        &["doctor", "--watch", "--until-healthy", "-n", "kcm-system"],
        "service ingress-nginx/ingress-nginx  Provisioning",
        change,
    );
    assert_eq!(code, Some(0), "{out}");
    for want in [
        "ServiceSet/kcm-system/dev-cluster service cert-manager/cert-manager  Deployed",
        "ServiceSet/kcm-system/dev-cluster  Deployed: ingress-nginx is back",
        "service ingress-nginx/ingress-nginx  Provisioning → Deployed",
        "service ingress-nginx/ingress-nginx  no failing link",
        "healthy: every service Deployed, no finding",
    ] {
        assert!(out.contains(want), "{want:?} in\n{out}");
    }
}
