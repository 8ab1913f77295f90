//! Our fake API server's server-side apply against the real kube-apiserver's, on the same
//! requests: a differential test. The fake re-implements field ownership by hand (the adapter's
//! tests lean on it for what a real server cannot do on demand: injected faults, request
//! counts), so every sequence of writes the adapter and its rivals make must leave both servers
//! with the same object, the same `managedFields`, the same status code and the same conflicts.
//!
//! The writes are generated (a seeded generator: a failure names its seed and the steps, and
//! replays alike): several field managers apply, force, update (PUT), merge-patch and apply to
//! the status subresource of a HelmRelease (the Flux CRD, whose lists are all atomic, as the
//! fake models lists) and a ConfigMap, over a small set of fields so that they often meet.

mod fakeapi;
mod realapi;

use std::time::Duration;

use fakeapi::FakeApiServer;
use serde_json::{Map, Value, json};

const HR_API: &str = "helm.toolkit.fluxcd.io/v2";

/// One server as the test talks to it: plain HTTP for the fake, TLS and a token for the real.
struct Target {
    name: &'static str,
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

#[derive(Debug, Clone, PartialEq)]
struct Answer {
    status: u16,
    body: Value,
}

impl Target {
    fn fake(server: &FakeApiServer) -> Target {
        Target {
            name: "fake",
            base: server.url(),
            token: None,
            agent: agent(),
        }
    }

    fn real(api: &realapi::RealApi) -> Target {
        Target {
            name: "real",
            base: api.url().to_string(),
            token: Some(api.admin_token().to_string()),
            // A guard against a hang; every request here is answered at once.
            agent: api.http_agent(Some(Duration::from_secs(120))),
        }
    }

    fn send(&self, method: &str, path: &str, content_type: &str, body: Option<&Value>) -> Answer {
        let url = format!("{}{path}", self.base);
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("Accept", "application/json");
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        let text = body.map(|b| b.to_string()).unwrap_or_default();
        if body.is_some() {
            req = req.header("Content-Type", content_type);
        }
        let req = req.body(text).unwrap();
        let mut resp = self
            .agent
            .run(req)
            .unwrap_or_else(|e| panic!("{} {method} {path}: {e}", self.name));
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        Answer {
            status,
            body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        }
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        // A guard against a hang; every request here is answered at once.
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into()
}

/// A small, seeded generator (xorshift64*): the same seed, the same steps.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The kinds under test: where a write goes, and the fields writers fight over.
struct Kind {
    api_version: &'static str,
    kind: &'static str,
    plural_path: &'static str,
    /// What the object needs to be valid, applied by the manager `base` first and kept.
    required: fn(&str, &str) -> Value,
    /// Fields (a path of keys) and the values they take.
    fields: Vec<(Vec<&'static str>, Vec<Value>)>,
    /// A status a controller would apply (None: no status subresource).
    status: Option<fn(u64) -> Value>,
}

fn helm_release() -> Kind {
    Kind {
        api_version: HR_API,
        kind: "HelmRelease",
        plural_path: "/apis/helm.toolkit.fluxcd.io/v2/namespaces/{ns}/helmreleases",
        required: |ns, name| {
            json!({"apiVersion": HR_API, "kind": "HelmRelease",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"interval": "5m", "chart": {"spec": {"chart": "podinfo",
                    "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}}}})
        },
        fields: vec![
            // (Not what `base` applies: a manager that took it and dropped it would leave
            // the object invalid, and validation is not what is compared here.)
            (vec!["spec", "maxHistory"], vec![json!(5), json!(10)]),
            (vec!["spec", "timeout"], vec![json!("1m"), json!("2m")]),
            (vec!["spec", "suspend"], vec![json!(true), json!(false)]),
            (
                vec!["spec", "chart", "spec", "version"],
                vec![json!("6.0.0"), json!("6.1.0")],
            ),
            (vec!["spec", "values", "a"], vec![json!(1), json!(2)]),
            (
                vec!["spec", "values", "b", "c"],
                vec![json!("x"), json!("y")],
            ),
            (
                vec!["spec", "values", "list"],
                vec![json!([1, 2]), json!([3])],
            ),
            (
                vec!["spec", "dependsOn"],
                vec![
                    json!([{"name": "d1"}]),
                    json!([{"name": "d2"}, {"name": "d1"}]),
                ],
            ),
            (
                vec!["metadata", "labels", "l1"],
                vec![json!("a"), json!("b")],
            ),
            (
                vec!["metadata", "annotations", "n1"],
                vec![json!("a"), json!("b")],
            ),
        ],
        status: Some(|g| {
            json!({"observedGeneration": g as i64, "lastAttemptedRevision": format!("6.{g}.0"),
                "conditions": [{"type": "Ready", "status": "True", "reason": "InstallSucceeded",
                    "message": "ok", "lastTransitionTime": "2026-11-21T12:00:00Z"}]})
        }),
    }
}

fn config_map() -> Kind {
    Kind {
        api_version: "v1",
        kind: "ConfigMap",
        plural_path: "/api/v1/namespaces/{ns}/configmaps",
        required: |ns, name| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns}})
        },
        fields: vec![
            (vec!["data", "a"], vec![json!("1"), json!("2")]),
            (vec!["data", "b"], vec![json!("x"), json!("y")]),
            (
                vec!["metadata", "labels", "l1"],
                vec![json!("a"), json!("b")],
            ),
            (
                vec!["metadata", "labels", "l2"],
                vec![json!("a"), json!("b")],
            ),
            (
                vec!["metadata", "annotations", "n1"],
                vec![json!("a"), json!("b")],
            ),
        ],
        status: None,
    }
}

fn set_path(obj: &mut Value, path: &[&str], value: Value) {
    let mut cur = obj;
    for (i, key) in path.iter().enumerate() {
        let map = cur.as_object_mut().unwrap();
        if i + 1 == path.len() {
            map.insert((*key).to_string(), value);
            return;
        }
        cur = map
            .entry((*key).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// One write, as both servers receive it.
#[derive(Debug, Clone)]
enum Step {
    Apply {
        manager: String,
        body: Value,
        force: bool,
    },
    StatusApply {
        manager: String,
        body: Value,
    },
    MergePatch {
        manager: String,
        patch: Value,
    },
    /// Read, change one field, write back (PUT) with the read resourceVersion.
    Update {
        manager: String,
        path: Vec<&'static str>,
        value: Value,
    },
}

fn generate(kind: &Kind, ns: &str, name: &str, rng: &mut Rng, steps: usize) -> Vec<Step> {
    let managers = ["m1", "m2", "kubectl-ksm"];
    let mut out = vec![Step::Apply {
        manager: "base".into(),
        body: (kind.required)(ns, name),
        force: false,
    }];
    for _ in 0..steps {
        let manager = rng.pick(&managers).to_string();
        let roll = rng.below(100);
        let step = if roll < 55 {
            // An apply of a few fields: what this manager wants now (fields it applied
            // before and leaves out are let go).
            let mut body = json!({"apiVersion": kind.api_version, "kind": kind.kind,
                "metadata": {"name": name, "namespace": ns}});
            for (path, values) in &kind.fields {
                if rng.chance(35) {
                    set_path(&mut body, path, rng.pick(values).clone());
                }
            }
            Step::Apply {
                manager,
                body,
                force: rng.chance(25),
            }
        } else if roll < 65 && kind.status.is_some() {
            let g = 1 + rng.below(3) as u64;
            let mut body = json!({"apiVersion": kind.api_version, "kind": kind.kind,
                "metadata": {"name": name, "namespace": ns}});
            body["status"] = (kind.status.unwrap())(g);
            Step::StatusApply { manager, body }
        } else if roll < 85 {
            let (path, values) = rng.pick(&kind.fields);
            // Never null out what the object needs.
            let value = if rng.chance(30) && path[0] != "spec" {
                Value::Null
            } else {
                rng.pick(values).clone()
            };
            let mut patch = json!({});
            set_path(&mut patch, path, value);
            Step::MergePatch { manager, patch }
        } else {
            let (path, values) = rng.pick(&kind.fields);
            Step::Update {
                manager,
                path: path.clone(),
                value: rng.pick(values).clone(),
            }
        };
        out.push(step);
    }
    out
}

/// What both servers must agree on after a write: the status code, the conflicts of a 409
/// (or the message of another error), and on success the object and its field owners.
fn outcome(kind: &Kind, target: &Target, ns: &str, name: &str, answer: &Answer) -> Value {
    if answer.status >= 300 {
        let causes: Vec<Value> = answer.body["details"]["causes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut causes: Vec<String> = causes
            .iter()
            .map(|c| without_times(&format!("{} {}", c["field"], c["message"])))
            .collect();
        causes.sort();
        let message = without_times(answer.body["message"].as_str().unwrap_or(""));
        return json!({"status": answer.status, "reason": answer.body["reason"],
            "causes": causes, "message": message});
    }
    let path = format!("{}/{name}", kind.plural_path.replace("{ns}", ns));
    let now = target.send("GET", &path, "", None);
    assert_eq!(now.status, 200, "{}: {:?}", target.name, now.body);
    json!({"status": answer.status, "object": normalized(&now.body)})
}

/// A conflict names an updater `"m" using v1 at 2026-11-27T10:00:00Z`: the time is each
/// server's own.
fn without_times(text: &str) -> String {
    const STAMP: usize = "2026-11-27T10:00:00Z".len();
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(" at ") {
        let stamp = rest[i + 4..].get(..STAMP).filter(|t| t.ends_with('Z'));
        out.push_str(&rest[..i + 4]);
        match stamp {
            Some(_) => {
                out.push_str("<time>");
                rest = &rest[i + 4 + STAMP..];
            }
            None => rest = &rest[i + 4..],
        }
    }
    out.push_str(rest);
    out
}

/// The object without what only its server decides (identity, versions, times), and its
/// managedFields as a sorted set of (manager, operation, apiVersion, subresource, fields).
fn normalized(o: &Value) -> Value {
    let mut o = o.clone();
    let meta = o["metadata"].as_object_mut().unwrap();
    for k in ["uid", "resourceVersion", "creationTimestamp", "selfLink"] {
        meta.remove(k);
    }
    // Keyed by who and how, so that a difference names its entry.
    let managed: Map<String, Value> = meta
        .remove("managedFields")
        .and_then(|m| m.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .map(|mut e| {
            let key = format!(
                "{} {} {}",
                e["manager"].as_str().unwrap_or(""),
                e["operation"].as_str().unwrap_or(""),
                e["subresource"].as_str().unwrap_or("")
            );
            e.as_object_mut().unwrap().remove("time");
            (key.trim().to_string(), e)
        })
        .collect();
    meta.insert("managedFields".into(), Value::Object(managed));
    o
}

fn send_step(kind: &Kind, target: &Target, ns: &str, name: &str, step: &Step) -> Answer {
    let item = format!("{}/{name}", kind.plural_path.replace("{ns}", ns));
    match step {
        Step::Apply {
            manager,
            body,
            force,
        } => target.send(
            "PATCH",
            &format!("{item}?fieldManager={manager}&force={force}"),
            "application/apply-patch+yaml",
            Some(body),
        ),
        Step::StatusApply { manager, body } => target.send(
            "PATCH",
            &format!("{item}/status?fieldManager={manager}&force=true"),
            "application/apply-patch+yaml",
            Some(body),
        ),
        Step::MergePatch { manager, patch } => target.send(
            "PATCH",
            &format!("{item}?fieldManager={manager}"),
            "application/merge-patch+json",
            Some(patch),
        ),
        Step::Update {
            manager,
            path,
            value,
        } => {
            let mut now = target.send("GET", &item, "", None).body;
            now["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("managedFields");
            set_path(&mut now, path, value.clone());
            target.send(
                "PUT",
                &format!("{item}?fieldManager={manager}"),
                "application/json",
                Some(&now),
            )
        }
    }
}

/// Runs `sequences` generated sequences of `steps` writes on both servers, one object each,
/// and fails at the first write whose outcome differs.
fn differential(kind: &Kind, fake: &Target, real: &Target, ns: &str, sequences: u64, steps: usize) {
    for seed in 1..=sequences {
        let name = format!("{}-{seed}", kind.kind.to_lowercase());
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed.wrapping_mul(0x1000_0000_01B3));
        let plan = generate(kind, ns, &name, &mut rng, steps);
        for (i, step) in plan.iter().enumerate() {
            let a = send_step(kind, fake, ns, &name, step);
            let b = send_step(kind, real, ns, &name, step);
            let (fa, fb) = (
                outcome(kind, fake, ns, &name, &a),
                outcome(kind, real, ns, &name, &b),
            );
            if fa != fb {
                let done: Vec<String> = plan[..=i].iter().map(|s| format!("{s:?}")).collect();
                let mut diffs = Vec::new();
                differences(&fa, &fb, String::new(), &mut diffs);
                panic!(
                    "{} seed {seed}, step {i}: the fake and the real server differ\nsteps:\n{}\ndifferences (path: fake | real):\n{}\nreal: {:#}",
                    kind.kind,
                    done.join("\n"),
                    diffs.join("\n"),
                    fb
                );
            }
        }
    }
}

/// Where two values differ, as `path: a | b` lines.
fn differences(a: &Value, b: &Value, path: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differences(va, vb, format!("{path}.{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                differences(va, vb, format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} | {b}")),
        _ => {}
    }
}

#[test]
fn the_fake_servers_server_side_apply_is_the_real_ones() {
    let Some(api) = realapi::shared() else { return };
    let ns = api.namespace("ssa");
    let fake = FakeApiServer::start();
    fake.load_crds_dir(realapi::root().join("crds/flux"));
    fake.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    let (f, r) = (Target::fake(&fake), Target::real(api));
    differential(&helm_release(), &f, &r, &ns, 60, 10);
    differential(&config_map(), &f, &r, &ns, 30, 10);
}
