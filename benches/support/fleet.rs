//! The fleets the process benchmarks read: the objects of a kcm management cluster with
//! `sets` ServiceSets of 5 Helm services over 20 namespaces, every object healthy. The Flux
//! fleet (ksm-flux: HelmReleases) is generated from testdata/doctor/healthy/dump.yaml, the
//! default provider's (ksm-projectsveltos: Profiles, ClusterSummaries) in `sveltos` from
//! testdata/doctor/sveltos-healthy-profile/dump.yaml.

#![allow(dead_code)]

#[path = "fleet/sveltos.rs"]
pub mod sveltos;

use std::path::Path;

use serde_json::{Value, json};

pub const NAMESPACES: usize = 20;
pub const SERVICES: usize = 5;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The objects of the healthy dump, by (kind, name).
pub struct Templates {
    seed: Vec<Value>,
    service_set: Value,
    template: Value,
    helm_chart: Value,
    helm_release: Value,
    helm_repository: Value,
    secret: Value,
}

/// The objects of a testdata dump (a List), for generators to copy.
pub struct Dump {
    path: &'static str,
    items: Vec<Value>,
}

impl Dump {
    pub fn load(path: &'static str) -> Dump {
        let text = std::fs::read_to_string(root().join(path)).expect(path);
        let list: Value = serde_saphyr::from_str(&text).expect(path);
        let items = list["items"].as_array().expect("a List").clone();
        Dump { path, items }
    }

    /// The object of `kind` named `name`.
    pub fn pick(&self, kind: &str, name: &str) -> Value {
        self.items
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{} has no {kind} {name}", self.path))
            .clone()
    }

    /// What is seeded once: the CRDs, the StateManagementProviders and their Deployments.
    pub fn seed(&self) -> Vec<Value> {
        self.items
            .iter()
            .filter(|o| {
                matches!(
                    o["kind"].as_str(),
                    Some("CustomResourceDefinition" | "StateManagementProvider" | "Deployment")
                )
            })
            .cloned()
            .collect()
    }
}

impl Templates {
    pub fn load() -> Templates {
        let dump = Dump::load("testdata/doctor/healthy/dump.yaml");
        Templates {
            seed: dump.seed(),
            service_set: dump.pick("ServiceSet", "dev-cluster"),
            template: dump.pick("ServiceTemplate", "ingress-nginx-4-13-0"),
            helm_chart: dump.pick("HelmChart", "ingress-nginx-4-13-0"),
            helm_release: dump.pick("HelmRelease", "dev-cluster-ingress-nginx"),
            helm_repository: dump.pick("HelmRepository", "ingress-nginx"),
            secret: dump.pick("Secret", "dev-cluster-kubeconfig"),
        }
    }
}

/// A fresh copy of a template object with a new name and namespace (server-assigned fields
/// dropped; a deterministic uid so owner references can point at it).
pub fn instance(t: &Value, namespace: &str, name: &str, uid: &str) -> Value {
    let mut o = t.clone();
    let m = &mut o["metadata"];
    m["name"] = name.into();
    m["namespace"] = namespace.into();
    m["uid"] = uid.into();
    if let Some(m) = m.as_object_mut() {
        m.remove("resourceVersion");
    }
    o
}

pub fn uid(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

pub fn service_name(k: usize) -> String {
    format!("app-{k}")
}

pub fn template_name(k: usize) -> String {
    format!("app-{k}-1-0-{k}")
}

/// A ServiceSet's 5 services, in its spec and (from the status entry `status_tpl`) its status.
pub fn set_services(ss: &mut Value, status_tpl: &Value) {
    let mut services = Vec::new();
    let mut statuses = Vec::new();
    for k in 0..SERVICES {
        let version = format!("1.0.{k}");
        services.push(json!({
            "name": service_name(k),
            "namespace": service_name(k),
            "template": template_name(k),
            "version": version,
        }));
        let mut st = status_tpl.clone();
        st["name"] = service_name(k).into();
        st["namespace"] = service_name(k).into();
        st["template"] = template_name(k).into();
        st["version"] = version.into();
        statuses.push(st);
    }
    ss["spec"]["services"] = services.into();
    ss["status"]["services"] = statuses.into();
}

/// The SMP with its Deployments and CRDs, then `sets` ServiceSets of 5 Helm services spread
/// over 20 namespaces, every object healthy.
pub fn populate(t: &Templates, sets: usize) -> Vec<Value> {
    let mut out = t.seed.clone();
    let mut next_uid = 1usize;
    let mut new_uid = || {
        next_uid += 1;
        uid(next_uid)
    };
    for i in 0..NAMESPACES {
        let ns = format!("team-{i:02}");
        // One HelmRepository per namespace, one ServiceTemplate + HelmChart per service.
        let mut repo = instance(&t.helm_repository, &ns, "charts", &new_uid());
        repo["spec"]["url"] = format!("https://charts.example.invalid/{ns}").into();
        out.push(repo);
        for k in 0..SERVICES {
            let name = template_name(k);
            let version = format!("1.0.{k}");
            let tuid = new_uid();
            let mut st = instance(&t.template, &ns, &name, &tuid);
            st["spec"]["helm"]["chartSpec"]["chart"] = service_name(k).into();
            st["spec"]["helm"]["chartSpec"]["sourceRef"]["name"] = "charts".into();
            st["spec"]["helm"]["chartSpec"]["version"] = version.clone().into();
            st["spec"]["version"] = version.clone().into();
            st["status"]["chartRef"]["name"] = name.clone().into();
            st["status"]["chartRef"]["namespace"] = ns.clone().into();
            st["status"]["chartVersion"] = version.clone().into();
            out.push(st);
            let mut hc = instance(&t.helm_chart, &ns, &name, &new_uid());
            hc["metadata"]["ownerReferences"][0]["name"] = name.clone().into();
            hc["metadata"]["ownerReferences"][0]["uid"] = tuid.into();
            hc["spec"]["chart"] = service_name(k).into();
            hc["spec"]["sourceRef"]["name"] = "charts".into();
            hc["spec"]["version"] = version.clone().into();
            hc["status"]["artifact"]["revision"] = version.into();
            out.push(hc);
        }
    }
    for s in 0..sets {
        let ns = format!("team-{:02}", s % NAMESPACES);
        let set = format!("cluster-{s:05}");
        let set_uid = new_uid();
        let mut ss = instance(&t.service_set, &ns, &set, &set_uid);
        ss["spec"]["cluster"] = set.clone().into();
        ss["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        set_services(&mut ss, &t.service_set["status"]["services"][1]);
        ss["status"]["conditions"][0]["message"] = format!("{SERVICES}/{SERVICES}").into();
        ss["status"]["cluster"]["name"] = set.clone().into();
        ss["status"]["cluster"]["namespace"] = ns.clone().into();
        out.push(ss);

        let secret_name = format!("{set}-kubeconfig");
        let mut sec = instance(&t.secret, &ns, &secret_name, &new_uid());
        sec["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = set.clone().into();
        sec["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        out.push(sec);

        for k in 0..SERVICES {
            let svc = service_name(k);
            let version = format!("1.0.{k}");
            let mut hr = instance(&t.helm_release, &ns, &format!("{set}-{svc}"), &new_uid());
            let labels = &mut hr["metadata"]["labels"];
            labels["ksm.k0rdent.mirantis.com/service"] = svc.clone().into();
            labels["ksm.k0rdent.mirantis.com/serviceset"] = set.clone().into();
            hr["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
            hr["metadata"]["ownerReferences"][0]["uid"] = set_uid.clone().into();
            hr["spec"]["chartRef"]["name"] = template_name(k).into();
            hr["spec"]["chartRef"]["namespace"] = ns.clone().into();
            hr["spec"]["kubeConfig"]["secretRef"]["name"] = secret_name.clone().into();
            hr["spec"]["releaseName"] = svc.clone().into();
            hr["spec"]["storageNamespace"] = svc.clone().into();
            hr["spec"]["targetNamespace"] = svc.clone().into();
            let msg = format!(
                "Helm install succeeded for release {svc}/{svc}.v1 with chart {svc}@{version}"
            );
            for c in hr["status"]["conditions"].as_array_mut().unwrap() {
                c["message"] = msg.clone().into();
            }
            let h = &mut hr["status"]["history"][0];
            h["appVersion"] = version.clone().into();
            h["chartName"] = svc.clone().into();
            h["chartVersion"] = version.clone().into();
            h["name"] = svc.clone().into();
            h["namespace"] = svc.clone().into();
            hr["status"]["lastAttemptedRevision"] = version.into();
            hr["status"]["storageNamespace"] = svc.into();
            out.push(hr);
        }
    }
    out
}
