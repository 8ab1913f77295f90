//! Lint throughput on generated StateManagementProvider documents.
//!
//! One multi-document source of `DOCS` SMPs, each with 4 readiness rules (the adapter and
//! three provisioners; guarded and unguarded rules as real SMPs have them), provisionerCRDs
//! and a selector. Everything runs on the calling thread; run under `taskset -c 0` for a
//! one-core figure. With `KSM_BENCH_WRITE=DIR`, the sources are also written to
//! `DIR/bench.yaml` and `DIR/bench-unique.yaml`.
//!
//! Benchmarks (throughput in documents):
//! - `saphyr events`: raw saphyr-parser event iteration (the floor of any YAML parse);
//! - `parse`: `diag::yaml::parse_documents` (events to our node tree, with spans; the
//!   documents in plain block YAML read by the block reader, the others by saphyr);
//! - `parse, saphyr alone`: the same with saphyr reading every document;
//! - `load`: `core::objects::load` (parse + JSON conversion + object checks);
//! - `lint`: `core::lint::lint_source` (load + every lint check);
//! - `lint (every rule unique)`: the same documents with every rule text different;
//! - `lint, new linter` and `lint on 2 threads, new linter`: `lint_source` and
//!   `core::lint::lint_source_on` with one helper thread, each with a linter of its own
//!   (the source cut into pieces read on both threads); `lint on 2 threads, read whole, new
//!   linter`: the same source behind a comment that is not ASCII, which is read whole on
//!   this thread while the helper checks the objects it is handed.
//!
//! In the group `report` (throughput in findings), the human report and the GitHub
//! workflow commands of the 1,250 findings of `lint`.
//!
//! And, in the group `lint ratio`, `every rule unique ÷ shared`: the two lints timed
//! iteration by iteration, one after the other, and reported as a time whose seconds are
//! the ratio of their times. Each of the two benchmarks above runs for seconds after the
//! other: on a machine whose speed changes over seconds (a shared VM) their ratio is that
//! of two different machines; interleaved, both see the same one.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use saphyr_parser::Parser;

use kubectl_ksm::core::lint::{Linter, lint_source, lint_source_on};
use kubectl_ksm::core::objects;
use kubectl_ksm::diag::Source;
use kubectl_ksm::diag::yaml::{self, parse_documents};
use kubectl_ksm::output::{github, human};

const DOCS: usize = 1_000;

/// Adapter rules: the seeds' unguarded Deployment rule and a guarded one.
const ADAPTER_RULES: &[&str] = &[
    "|-\n      self.status.availableReplicas == self.status.replicas &&\n      self.status.availableReplicas == self.status.updatedReplicas &&\n      self.status.availableReplicas == self.status.readyReplicas",
    ">-\n      has(self.status.readyReplicas) && has(self.status.availableReplicas) &&\n      self.status.readyReplicas == self.spec.replicas &&\n      self.status.availableReplicas == self.spec.replicas",
];

/// Provisioner rules (Deployments of the Flux controllers): unguarded and guarded.
const PROVISIONER_RULES: &[&str] = &[
    "|-\n      self.status.availableReplicas > 0 &&\n      self.status.readyReplicas > 0",
    "has(self.status.readyReplicas) && self.status.readyReplicas == self.spec.replicas",
    "|-\n      has(self.status.conditions) &&\n      self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')",
    "\"'readyReplicas' in self.status && self.status.readyReplicas >= 1\"",
];

const CONTROLLERS: &[&str] = &[
    "helm-controller",
    "kustomize-controller",
    "source-controller",
];

/// A rule scalar made unique to document `i` (for the no-repetition variant): a clause that
/// is always true is appended to the rule's text.
fn unique_rule(rule: &str, i: usize) -> String {
    match rule.strip_suffix('"') {
        Some(body) => format!("{body} && {i} >= 0\""),
        None => format!("{rule} && {i} >= 0"),
    }
}

fn smp(i: usize, unique: bool) -> String {
    let rule = |r: &str| {
        if unique {
            unique_rule(r, i)
        } else {
            r.to_string()
        }
    };
    let adapter_rule = rule(ADAPTER_RULES[i % ADAPTER_RULES.len()]);
    let mut doc = format!(
        "---\n\
         apiVersion: k0rdent.mirantis.com/v1beta1\n\
         kind: StateManagementProvider\n\
         metadata:\n  name: ksm-flux-{i}\n  labels:\n    app.kubernetes.io/part-of: ksm-{i}\n\
         spec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: flux-adapter-{i}\n    namespace: kcm-system\n    readinessRule: {adapter_rule}\n\
         \x20 provisioner:\n"
    );
    for (j, controller) in CONTROLLERS.iter().enumerate() {
        let rule = rule(PROVISIONER_RULES[(i + j) % PROVISIONER_RULES.len()]);
        doc.push_str(&format!(
            "  - apiVersion: apps/v1\n    kind: Deployment\n    name: {controller}\n    namespace: flux-system-{i}\n    readinessRule: {rule}\n"
        ));
    }
    doc.push_str(
        "  provisionerCRDs:\n\
         \x20 - group: helm.toolkit.fluxcd.io\n    version: v2\n    resources:\n    - helmreleases\n\
         \x20 - group: kustomize.toolkit.fluxcd.io\n    version: v1\n    resources:\n    - kustomizations\n\
         \x20 - group: source.toolkit.fluxcd.io\n    version: v1\n    resources: [gitrepositories, helmrepositories, ocirepositories, buckets]\n",
    );
    doc.push_str(&format!(
        "  selector:\n    matchLabels:\n      ksm.k0rdent.mirantis.com/adapter: flux-adapter-{i}\n  suspend: false\n"
    ));
    doc
}

/// `n` SMP documents in one multi-document source. Rules come from a small pool, as in real
/// repositories; with `unique`, every rule text is different (nothing can be shared).
pub fn smp_stream(n: usize, unique: bool) -> String {
    (0..n).map(|i| smp(i, unique)).collect()
}

fn bench(c: &mut Criterion) {
    let source: Arc<Source> = Source::new("bench.yaml", smp_stream(DOCS, false));
    let unique: Arc<Source> = Source::new("bench-unique.yaml", smp_stream(DOCS, true));
    // KSM_BENCH_WRITE=DIR: the two sources written there too, to time the whole binary on
    // them (BENCHMARKS.md).
    if let Some(dir) = std::env::var_os("KSM_BENCH_WRITE") {
        let dir = std::path::Path::new(&dir);
        for src in [&source, &unique] {
            std::fs::write(dir.join(src.name()), src.text()).expect("KSM_BENCH_WRITE is writable");
        }
    }
    let linter = Linter::default();

    // Sanity: every document is an SMP that lint checks, and the unguarded rules are found
    // (the same findings whether rules repeat or not).
    for src in [&source, &unique] {
        let report = lint_source(src, &linter);
        assert_eq!(report.documents, DOCS);
        assert_eq!(report.linted, DOCS);
        assert!(!report.unreadable);
        let ksm204 = report
            .diagnostics
            .iter()
            .filter(|d| d.code == "KSM204")
            .count();
        assert_eq!(ksm204, 1_250, "KSM204 findings");
        assert!(report.diagnostics.iter().all(|d| d.code == "KSM204"));
    }

    let mut g = c.benchmark_group("lint");
    g.throughput(Throughput::Elements(DOCS as u64));
    g.sample_size(30);
    g.bench_function("saphyr events", |b| {
        b.iter(|| {
            let mut parser = Parser::new_from_str(black_box(source.text()));
            let mut events = 0usize;
            while let Some(e) = parser.next_event() {
                black_box(e.expect("valid YAML"));
                events += 1;
            }
            events
        })
    });
    g.bench_function("parse", |b| b.iter(|| parse_documents(black_box(&source))));
    g.bench_function("parse, saphyr alone", |b| {
        b.iter(|| yaml::parse_documents_by_saphyr(black_box(&source)))
    });
    g.bench_function("load", |b| {
        b.iter(|| objects::load(black_box(&source), &yaml::Limits::default()))
    });
    g.bench_function("lint", |b| {
        b.iter(|| lint_source(black_box(&source), &linter))
    });
    g.bench_function("lint (every rule unique)", |b| {
        b.iter(|| lint_source(black_box(&unique), &linter))
    });
    // The source's objects checked on a second thread while this one reads it (what `lint`
    // does with a large file and two jobs), against one thread, each with a new linter as
    // a `lint` run has (a helper's linter is always new: a reused one would have every rule
    // compiled already on one side only). On one core it measures the hand-over's cost.
    g.bench_function("lint, new linter", |b| {
        b.iter(|| lint_source(black_box(&source), &Linter::default()))
    });
    g.bench_function("lint on 2 threads, new linter", |b| {
        b.iter(|| lint_source_on(black_box(&source), &Linter::default(), 2))
    });
    let whole = Source::new("bench.yaml", format!("# read whole: é\n{}", source.text()));
    g.bench_function("lint on 2 threads, read whole, new linter", |b| {
        b.iter(|| lint_source_on(black_box(&whole), &Linter::default(), 2))
    });
    g.finish();

    // The report of those 1,250 findings (each with its excerpt and help), as people and as
    // GitHub read it, on this thread; throughput in findings.
    let diagnostics = lint_source(&source, &linter).diagnostics;
    let mut g = c.benchmark_group("report");
    g.throughput(Throughput::Elements(diagnostics.len() as u64));
    g.sample_size(30);
    g.bench_function("human", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            human::render(&mut out, black_box(&diagnostics), false, 100).expect("in memory");
            out
        })
    });
    g.bench_function("github", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            github::render(&mut out, black_box(&diagnostics)).expect("in memory");
            out
        })
    });
    g.finish();

    let mut g = c.benchmark_group("lint ratio");
    g.sample_size(10);
    g.bench_function("every rule unique ÷ shared", |b| {
        b.iter_custom(|iters| {
            let (mut unique_time, mut shared_time) = (Duration::ZERO, Duration::ZERO);
            for _ in 0..iters {
                let start = Instant::now();
                black_box(lint_source(black_box(&unique), &linter));
                unique_time += start.elapsed();
                let start = Instant::now();
                black_box(lint_source(black_box(&source), &linter));
                shared_time += start.elapsed();
            }
            // Seconds per iteration = the ratio.
            let ratio = unique_time.as_secs_f64() / shared_time.as_secs_f64();
            Duration::from_secs_f64(ratio * iters as f64)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
