use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use kubectl_ksm::core::cel::{Limits, Object, Verdict, compile};
use kubectl_ksm::core::readiness::{Explain, Rule};

/// The seeds' Deployment rule and the Deployment it is evaluated on: the same files the
/// side-by-side figures against cel-go read (benches/peers/run.py).
const SEEDS_DEPLOYMENT_RULE: &str = include_str!("peers/seeds-deployment-rule.cel");

fn deployment() -> Object {
    Object::from_json(&deployment_json())
}

fn deployment_json() -> serde_json::Value {
    serde_json::from_str(include_str!("peers/deployment.json"))
        .expect("benches/peers/deployment.json")
}

fn bench(c: &mut Criterion) {
    let obj = deployment();
    let rule = compile(SEEDS_DEPLOYMENT_RULE, &Limits::default()).expect("rule compiles");
    assert_eq!(rule.evaluate(&obj), Verdict::True);
    c.bench_function("evaluate deployment readiness", |b| {
        b.iter(|| black_box(rule.evaluate(black_box(&obj))))
    });
    // The same rule through readiness::Rule, which converts the JSON object on every call.
    let json = deployment_json();
    let readiness_rule = Rule::new(SEEDS_DEPLOYMENT_RULE, &Limits::default());
    assert_eq!(
        readiness_rule.evaluate(&json, Explain::Never).result,
        Some(true)
    );
    c.bench_function(
        "evaluate deployment readiness from JSON (readiness::Rule)",
        |b| b.iter(|| black_box(readiness_rule.evaluate(black_box(&json), Explain::Never))),
    );
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

/// An evaluation that runs into the default cost budget (Limits::default().max_cost):
/// 500 × 500 × 500 iterations are far more than 50,000,000 steps.
fn budget(c: &mut Criterion) {
    let items: Vec<i64> = (0..500).collect();
    let obj = Object::from_json(&serde_json::json!({ "items": items }));
    let rule = compile(
        "self.items.all(x, self.items.all(y, self.items.all(z, x + y + z >= 0)))",
        &Limits::default(),
    )
    .expect("rule compiles");
    match rule.evaluate(&obj) {
        Verdict::BudgetExceeded(_) => {}
        v => panic!("expected the budget to stop the evaluation, got {v:?}"),
    }
    let mut g = c.benchmark_group("budget");
    g.sample_size(10);
    g.bench_function("evaluation stopped by the default budget", |b| {
        b.iter(|| black_box(rule.evaluate(black_box(&obj))))
    });
    g.finish();
}

criterion_group!(benches, bench, budget);
criterion_main!(benches);
