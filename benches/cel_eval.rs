use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use kubectl_ksm::core::cel::{Limits, Object, compile};

fn deployment() -> Object {
    Object::from_json(&serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": 3,
                     "labels": {"app": "web", "tier": "frontend"},
                     "annotations": {"deployment.kubernetes.io/revision": "3"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
        "status": {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                   "observedGeneration": 3,
                   "conditions": [
                       {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                       {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
    }))
}

fn bench(c: &mut Criterion) {
    let obj = deployment();
    let rule = compile(
        "self.status.availableReplicas == self.status.replicas && \
         self.status.availableReplicas == self.status.updatedReplicas && \
         self.status.availableReplicas == self.status.readyReplicas",
        &Limits::default(),
    )
    .expect("rule compiles");
    c.bench_function("evaluate deployment readiness", |b| {
        b.iter(|| black_box(rule.evaluate(black_box(&obj))))
    });
    let rule = compile(
        "self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')",
        &Limits::default(),
    )
    .expect("rule compiles");
    c.bench_function("evaluate conditions exists", |b| {
        b.iter(|| black_box(rule.evaluate(black_box(&obj))))
    });
    c.bench_function("compile readiness rule", |b| {
        b.iter(|| {
            black_box(compile(
                black_box("self.status.availableReplicas == self.status.replicas"),
                &Limits::default(),
            ))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
