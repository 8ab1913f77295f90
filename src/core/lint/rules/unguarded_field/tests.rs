use super::*;
use crate::core::lint::test_support::{lint_code, smp_with_rule};

fn reads(rule: &str, kind: &str) -> Vec<String> {
    let api = if kind == "Pod" {
        "v1"
    } else if kind.ends_with("Release") {
        "helm.toolkit.fluxcd.io/v2"
    } else {
        "apps/v1"
    };
    unguarded_reads(rule, &Risky::for_target(api, kind))
        .into_iter()
        .map(|u| format!("{}@{}", u.path().join("."), &rule[u.span]))
        .collect()
}

#[test]
fn spans_are_right_after_non_ascii_text() {
    assert_eq!(
        reads(
            "'éééé' != '' && self.status.readyReplicas > 0",
            "Deployment"
        ),
        ["status.readyReplicas@self.status.readyReplicas"]
    );
}

#[test]
fn seeds_rule_on_a_deployment_reads_every_counter_unguarded() {
    let rule = "self.status.availableReplicas == self.status.replicas &&\nself.status.availableReplicas == self.status.updatedReplicas &&\nself.status.availableReplicas == self.status.readyReplicas";
    assert_eq!(
        reads(rule, "Deployment"),
        [
            "status.availableReplicas@self.status.availableReplicas",
            "status.replicas@self.status.replicas",
            "status.updatedReplicas@self.status.updatedReplicas",
            "status.readyReplicas@self.status.readyReplicas"
        ]
    );
}

#[test]
fn has_guards_on_either_side_of_and_protect() {
    assert!(
        reads(
            "has(self.status.readyReplicas) && self.status.readyReplicas > 0",
            "Deployment"
        )
        .is_empty()
    );
    assert!(
        reads(
            "self.status.readyReplicas > 0 && has(self.status.readyReplicas)",
            "Deployment"
        )
        .is_empty()
    );
    assert!(
        reads(
            "!has(self.status.readyReplicas) || self.status.readyReplicas > 0",
            "Deployment"
        )
        .is_empty()
    );
    assert!(
        reads(
            "has(self.status.readyReplicas) ? self.status.readyReplicas > 0 : false",
            "Deployment"
        )
        .is_empty()
    );
    assert!(
        reads(
            "'readyReplicas' in self.status && self.status.readyReplicas > 0",
            "Deployment"
        )
        .is_empty()
    );
    // The else branch is not guarded.
    assert_eq!(
        reads(
            "has(self.status.readyReplicas) ? true : self.status.readyReplicas > 0",
            "Deployment"
        )
        .len(),
        1
    );
    // A guard inside an || does not protect the other side of an &&.
    assert_eq!(
        reads(
            "(has(self.status.readyReplicas) || true) && self.status.readyReplicas > 0",
            "Deployment"
        )
        .len(),
        1
    );
}

#[test]
fn fields_kubernetes_always_writes_are_not_flagged() {
    assert!(
        reads(
            "self.status.replicas == self.status.availableReplicas",
            "StatefulSet"
        )
        .is_empty()
    );
    assert!(
        reads(
            "self.status.numberReady == self.status.desiredNumberScheduled",
            "DaemonSet"
        )
        .is_empty()
    );
    assert!(reads("self.metadata.generation > 0", "Deployment").is_empty());
}

#[test]
fn custom_resources_need_status_itself_guarded() {
    assert_eq!(
        reads(
            "self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
            "HelmRelease"
        ),
        ["status@self.status"]
    );
    assert_eq!(
        reads("has(self.status.conditions)", "HelmRelease"),
        ["status@self.status"]
    );
    assert!(
        reads(
            "has(self.status) && has(self.status.conditions)",
            "HelmRelease"
        )
        .is_empty()
    );
}

#[test]
fn pods_and_index_syntax() {
    assert_eq!(
        reads("self.status['phase'] == 'Running'", "Pod"),
        ["status.phase@self.status['phase']"]
    );
}

#[test]
fn diagnostic_points_inside_the_rule_and_offers_the_guarded_rule() {
    let text = smp_with_rule(
        "|-\n      self.status.availableReplicas > 0 &&\n      self.status.readyReplicas > 0",
    );
    let found = lint_code(&text, "KSM204");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "KSM204 12:7 `self.status.availableReplicas`, `self.status.readyReplicas` are read"
        ),
        "{found:?}"
    );
    let source = crate::diag::Source::new("t.yaml", text);
    let report = crate::core::lint::lint_source(&source, &Default::default());
    let d = report
        .diagnostics
        .iter()
        .find(|d| d.code == "KSM204")
        .unwrap();
    assert_eq!(
        d.help.as_deref().unwrap(),
        "guard the rule:\n  has(self.status.availableReplicas) && has(self.status.readyReplicas) && self.status.availableReplicas > 0 && self.status.readyReplicas > 0"
    );
    assert_eq!(d.labels.len(), 2);
}

#[test]
fn the_analysis_is_linear_in_the_rule() {
    // Every term guarded by all the others: the facts are added once per guard, not copied
    // into every term (the walk did quadratic work, 4.2 s on a 95 KB rule).
    let rule = |n: usize| {
        (0..n)
            .map(|i| {
                format!("(has(self.status.f{i}) && self.status.f{i} > 0 || !has(self.status.g{i}))")
            })
            .collect::<Vec<_>>()
            .join(" && ")
            + " && self.status.readyReplicas > 0"
    };
    let risky = Risky::for_target("apps/v1", "Deployment");
    let (small, small_work) = analyse_text(&rule(100), &risky);
    let (large, large_work) = analyse_text(&rule(2000), &risky);
    let paths = |found: &[Unguarded]| found.iter().map(|u| u.path().join(".")).collect::<Vec<_>>();
    assert_eq!(paths(&small), ["status.readyReplicas"]);
    assert_eq!(paths(&large), ["status.readyReplicas"]);
    assert!(small_work > 0);
    assert!(
        large_work <= small_work * 20 * 2,
        "{small_work} for 100 terms, {large_work} for 2,000"
    );
}

#[test]
fn a_variable_named_self_is_not_the_object() {
    // The comprehension's `self` shadows the object's: its fields are the list's elements'.
    assert!(
        reads(
            "[{'status': {'readyReplicas': 1}}].all(self, self.status.readyReplicas > 0)",
            "Deployment"
        )
        .is_empty()
    );
    // Outside the comprehension, `self` is the object again.
    assert_eq!(
        reads(
            "[1].all(self, self > 0) && self.status.readyReplicas > 0",
            "Deployment"
        ),
        ["status.readyReplicas@self.status.readyReplicas"]
    );
}

#[test]
fn reads_through_parentheses_and_mixed_syntax_are_found() {
    assert_eq!(
        reads("(self).status.readyReplicas > 0", "Deployment"),
        ["status.readyReplicas@(self).status.readyReplicas"]
    );
    assert_eq!(
        reads("(self.status.readyReplicas) > 0", "Deployment"),
        ["status.readyReplicas@self.status.readyReplicas"]
    );
    assert_eq!(
        reads("self['status'].readyReplicas > 0", "Deployment"),
        ["status.readyReplicas@self['status'].readyReplicas"]
    );
    assert_eq!(
        reads("self.status['readyReplicas'] in [1, 2]", "Deployment"),
        ["status.readyReplicas@self.status['readyReplicas']"]
    );
}

#[test]
fn findings_of_a_rule_seen_before_say_what_they_said_at_every_site() {
    // The same rule on a Deployment twice, and on two custom resources: one linter, so the
    // later sites take the analysis (and, for the Deployment, the words) from its memo.
    let rule = "self.status.readyReplicas > 0";
    let site = |kind: &str, name: &str| {
        format!(
            "  - apiVersion: example.com/v1\n    kind: {kind}\n    name: {name}\n    \
             namespace: x\n    readinessRule: {rule}\n"
        )
    };
    let text = smp_with_rule(rule).replace(
        "  provisioner: []\n",
        &format!(
            "  provisioner:\n{}{}{}",
            site("Foo", "a"),
            site("Bar", "b"),
            site("Foo", "c").replace(
                "example.com/v1\n    kind: Foo",
                "apps/v1\n    kind: Deployment"
            ),
        ),
    );
    let linter = crate::core::lint::Linter::default();
    let source = crate::diag::Source::new("t.yaml", text);
    let once = crate::core::lint::lint_source(&source, &linter);
    let again = crate::core::lint::lint_source(&source, &linter);
    let words = |r: &crate::core::lint::SourceReport| -> Vec<(String, String)> {
        r.diagnostics
            .iter()
            .filter(|d| d.code == "KSM204")
            .map(|d| (d.message.clone(), d.help.clone().unwrap_or_default()))
            .collect()
    };
    let found = words(&once);
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(found, words(&again));
    // Each custom resource's finding names its own kind; the Deployments' are alike.
    assert!(found[1].0.contains("a Foo has no status"), "{found:?}");
    assert!(found[2].0.contains("a Bar has no status"), "{found:?}");
    assert_eq!(found[0], found[3]);
    assert!(
        found[0].0.contains("`self.status.readyReplicas` is read"),
        "{found:?}"
    );
    assert_eq!(
        found[0].1,
        format!("guard the rule:\n  has(self.status.readyReplicas) && {rule}")
    );
}
