//! Render throughput: ServiceSets of 5 services (3 Helm, 1 Kustomize, 1 Resources), each
//! translated into Flux objects and checked against the Flux CRDs, as `render` and `run` do.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kubectl_ksm::core::render::{Inputs, Outcome, render};
use serde_json::{Value, json};

fn templates() -> Vec<Value> {
    let t = |name: &str, spec: Value, status: Value| {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
               "metadata": {"name": name, "namespace": "kcm-system"}, "spec": spec, "status": status})
    };
    let mut out: Vec<Value> = (0..3)
        .map(|i| {
            t(
                &format!("chart-{i}"),
                json!({"helm": {"chartSpec": {"chart": format!("chart-{i}"), "version": "1.0.0", "interval": "10m",
                       "sourceRef": {"kind": "HelmRepository", "name": "catalog"}}}}),
                json!({"valid": true, "chartRef": {"kind": "HelmChart", "name": format!("chart-{i}"), "namespace": "kcm-system"}}),
            )
        })
        .collect();
    out.push(t(
        "kustomize",
        json!({"kustomize": {"deploymentType": "Remote", "path": "./deploy",
               "localSourceRef": {"kind": "GitRepository", "name": "apps"}}}),
        json!({"valid": true}),
    ));
    out.push(t(
        "resources",
        json!({"resources": {"deploymentType": "Local", "path": "./policies",
               "localSourceRef": {"kind": "OCIRepository", "name": "policies"}}}),
        json!({"valid": true}),
    ));
    out
}

fn service_set(i: usize) -> Value {
    let mut services: Vec<Value> = (0..3)
        .map(|j| {
            json!({"name": format!("app-{j}"), "namespace": format!("ns-{j}"), "template": format!("chart-{j}"),
                   "values": "replicaCount: 2\nimage:\n  tag: v1.2.3\nresources:\n  limits: {cpu: 500m, memory: 256Mi}\n",
                   "valuesFrom": [{"kind": "ConfigMap", "name": "shared-values"}],
                   "helmOptions": {"timeout": "10m", "atomic": true, "wait": true}})
        })
        .collect();
    services.push(json!({"name": "manifests", "namespace": "apps", "template": "kustomize"}));
    services.push(json!({"name": "policies", "namespace": "kyverno", "template": "resources"}));
    json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
           "metadata": {"name": format!("cluster-{i}"), "namespace": "kcm-system", "uid": format!("uid-{i}")},
           "spec": {"cluster": format!("cluster-{i}"), "provider": {"name": "ksm-flux"}, "services": services}})
}

fn bench(c: &mut Criterion) {
    let templates = templates();
    let sets: Vec<Value> = (0..100).map(service_set).collect();
    for set in &sets {
        let r = render(&Inputs {
            service_set: set,
            templates: &templates,
        });
        assert_eq!(r.objects.len(), 5, "{:?}", r.diagnostics);
        assert!(
            r.services
                .iter()
                .all(|s| matches!(s.outcome, Outcome::Rendered { .. }))
        );
    }
    let mut g = c.benchmark_group("render");
    g.throughput(Throughput::Elements(sets.len() as u64));
    g.bench_function("ServiceSets of 5 services", |b| {
        b.iter(|| {
            for set in &sets {
                black_box(render(&Inputs {
                    service_set: black_box(set),
                    templates: &templates,
                }));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
