use super::*;
use crate::core::objects;
use chrono::TimeZone;

/// The string at a JSON pointer of a written object, or "" (an assertion's read).
fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

const INPUT: &str = include_str!("../../../testdata/render/multi-service/input.yaml");

fn docs() -> (Value, Vec<Value>) {
    load(INPUT)
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap()
}

const ACTIVE: Provider = Provider {
    ready: true,
    suspended: false,
    gone: false,
};

/// A plan with the render it was made from.
struct Ran {
    plan: Plan,
    render: Desired,
}

impl std::ops::Deref for Ran {
    type Target = Plan;
    fn deref(&self) -> &Plan {
        &self.plan
    }
}

impl Ran {
    /// The objects the plan applies.
    fn apply(&self) -> Vec<&Value> {
        self.plan.to_apply(&self.render.rendered).collect()
    }
}

fn run(set: &Value, templates: &[Value], live: &[&Value], provider: Provider) -> Ran {
    let desired = Desired::of(set, templates);
    let plan = plan(&Inputs {
        service_set: set,
        desired: &desired,
        live,
        sources: &[],
        provider,
        previous_status: set.get("status"),
        now: now(),
        source_timeout: Duration::from_secs(300),
        rivals: &[],
    });
    Ran {
        plan,
        render: desired,
    }
}

/// The applied object as the API server returns it: our managedFields entry, a generation
/// and a Ready condition.
fn as_live(desired: &Value, ready: Option<(&str, &str)>) -> Value {
    let mut o = desired.clone();
    o["metadata"]["uid"] = "u-1".into();
    o["metadata"]["generation"] = 1.into();
    o["metadata"]["managedFields"] = json!([{"manager": FIELD_MANAGER, "operation": "Apply",
        "fieldsV1": fields_of(desired)}]);
    if let Some((status, reason)) = ready {
        o["status"] = json!({"observedGeneration": 1, "conditions": [{"type": "Ready",
            "status": status, "reason": reason, "message": "msg", "observedGeneration": 1,
            "lastTransitionTime": "2026-11-21T11:00:00Z"}]});
    }
    o
}

fn fields_of(v: &Value) -> Value {
    fn go(v: &Value) -> Value {
        match v {
            Value::Object(m) if !m.is_empty() => {
                Value::Object(m.iter().map(|(k, c)| (format!("f:{k}"), go(c))).collect())
            }
            _ => json!({}),
        }
    }
    let mut f = go(v);
    let m = f.as_object_mut().unwrap();
    m.remove("f:apiVersion");
    m.remove("f:kind");
    f
}

#[test]
fn first_reconcile_applies_every_rendered_object() {
    let (set, templates) = docs();
    let p = run(&set, &templates, &[], ACTIVE);
    assert!(!p.add_finalizer, "the fixture already has the finalizer");
    assert_eq!(p.apply().len(), 5);
    assert_eq!(p.desired, 5);
    // Exactly what render produces.
    let r = render::render(&render::Inputs {
        service_set: &set,
        templates: &templates,
    });
    assert_eq!(p.apply(), r.objects.iter().collect::<Vec<_>>());
    let states: Vec<&str> = p.status["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| s(x, "/state"))
        .collect();
    assert_eq!(states, ["Pending"; 5]);
    assert_eq!(p.status["conditions"][0]["message"], "0/5");
    assert_eq!(p.status["deployed"], false);
    assert!(p.status_changed);
}

#[test]
fn finalizer_is_added_when_missing() {
    let (mut set, templates) = docs();
    set["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("finalizers");
    assert!(run(&set, &templates, &[], ACTIVE).add_finalizer);
}

#[test]
fn converged_set_writes_nothing() {
    let (mut set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    let live: Vec<Value> = first
        .apply()
        .into_iter()
        .map(|d| as_live(d, Some(("True", "InstallSucceeded"))))
        .collect();
    let refs: Vec<&Value> = live.iter().collect();
    let p = run(&set, &templates, &refs, ACTIVE);
    assert!(p.apply().is_empty(), "{:?}", p.apply());
    assert!(p.delete.is_empty());
    assert_eq!(p.status["deployed"], true);
    assert_eq!(p.status["conditions"][0]["message"], "5/5");
    assert_eq!(p.status["services"][1]["version"], "1.2.0");
    // Written once, the next reconcile changes nothing.
    set["status"] = p.status.clone();
    let again = run(&set, &templates, &refs, ACTIVE);
    assert!(!again.status_changed);
    assert!(again.apply().is_empty());
    assert_eq!(again.requeue_after, None);
}

#[test]
fn transition_time_moves_only_with_the_state() {
    let (mut set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    let live: Vec<Value> = first
        .apply()
        .into_iter()
        .map(|d| as_live(d, Some(("True", "InstallSucceeded"))))
        .collect();
    let refs: Vec<&Value> = live.iter().collect();
    // cert-manager was Deployed at 09:21:03 in the fixture and still is: time kept.
    let p = run(&set, &templates, &refs, ACTIVE);
    assert_eq!(
        p.status["services"][0]["lastStateTransitionTime"],
        "2026-08-20T09:21:03Z"
    );
    // baseline-policies went Provisioning -> Deployed: now.
    assert_eq!(
        p.status["services"][1]["lastStateTransitionTime"],
        "2026-11-21T12:00:00Z"
    );
    set["status"] = p.status.clone();
    let failing: Vec<Value> = first
        .apply()
        .into_iter()
        .map(|d| as_live(d, Some(("False", "InstallFailed"))))
        .collect();
    let refs: Vec<&Value> = failing.iter().collect();
    let p = run(&set, &templates, &refs, ACTIVE);
    assert_eq!(p.status["services"][0]["state"], "Failed");
    assert_eq!(p.status["services"][0]["failureMessage"], "msg");
    assert_eq!(
        p.status["services"][0]["conditions"][0]["reason"],
        "InstallFailed"
    );
    // The version stays what was last Deployed.
    assert_eq!(p.status["services"][0]["version"], "v1.18.2");
}

#[test]
fn provider_not_ready_or_suspended_changes_no_flux_object() {
    let (set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    let mut stale = as_live(first.apply()[0], None);
    stale["spec"]["interval"] = "1h".into();
    let mut orphan = as_live(first.apply()[1], None);
    orphan["metadata"]["name"] = "dev-cluster-removed".into();
    orphan["metadata"]["ownerReferences"] = json!([{"controller": true,
        "uid": s(&set, "/metadata/uid")}]);
    for provider in [
        Provider::default(),
        Provider {
            ready: true,
            suspended: true,
            gone: false,
        },
    ] {
        let p = run(&set, &templates, &[&stale, &orphan], provider);
        assert!(p.apply().is_empty() && p.delete.is_empty(), "{provider:?}");
        assert_eq!(p.status["provider"], provider_json(provider));
    }
    let p = run(&set, &templates, &[&stale, &orphan], ACTIVE);
    assert_eq!(p.apply().len(), 5);
    assert_eq!(p.delete.len(), 1);
    assert_eq!(p.delete[0].name, "dev-cluster-removed");
}

#[test]
fn an_object_it_does_not_own_is_left_alone_and_the_service_fails() {
    let (set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    let mut foreign = as_live(first.apply()[0], Some(("True", "InstallSucceeded")));
    foreign["metadata"]["ownerReferences"] = json!([]);
    let p = run(&set, &templates, &[&foreign], ACTIVE);
    assert_eq!(p.apply().len(), 4);
    assert!(p.delete.is_empty());
    let svc = &p.status["services"][0];
    assert_eq!(svc["state"], "Failed");
    assert!(s(svc, "/failureMessage").contains("not controlled by this ServiceSet"));
}

#[test]
fn configuration_errors_fail_the_service() {
    let (mut set, templates) = docs();
    set["spec"]["services"][0]["template"] = "nope".into();
    set["spec"]["provider"]["config"] = json!({"interval": "soon"});
    let p = run(&set, &templates, &[], ACTIVE);
    assert!(p.apply().is_empty());
    for svc in p.status["services"].as_array().unwrap() {
        assert_eq!(svc["state"], "Failed");
        assert!(s(svc, "/failureMessage").starts_with("invalid provider config"));
    }
}

#[test]
fn deletion_goes_through_deleting_then_drops_the_finalizer() {
    let (mut set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    let live: Vec<Value> = first
        .apply()
        .into_iter()
        .map(|d| as_live(d, None))
        .collect();
    let refs: Vec<&Value> = live.iter().collect();
    set["metadata"]["deletionTimestamp"] = "2026-11-21T11:59:00Z".into();
    let p = run(&set, &templates, &refs, ACTIVE);
    assert_eq!(p.delete.len(), 5);
    assert!(!p.remove_finalizer);
    assert!(p.apply().is_empty());
    for svc in p.status["services"].as_array().unwrap() {
        assert_eq!(svc["state"], "Deleting");
        assert!(svc.get("failureMessage").is_none());
    }
    // Held by the provider: nothing deleted, the finalizer stays.
    let held = run(&set, &templates, &refs, Provider::default());
    assert!(held.delete.is_empty() && !held.remove_finalizer);
    // A provider that is gone holds nothing: the deletion goes on, and says why.
    let gone = run(&set, &templates, &refs, Provider::of(None));
    assert_eq!(gone.delete.len(), 5);
    assert!(gone.provider_gone && !p.provider_gone);
    assert!(run(&set, &templates, &[], Provider::of(None)).remove_finalizer);
    // Gone: the finalizer goes.
    set["status"] = p.status.clone();
    let p = run(&set, &templates, &[], ACTIVE);
    assert!(p.remove_finalizer);
    assert!(!p.status_changed);
}

#[test]
fn source_wait_requeues_at_the_timeout() {
    let (set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    // Ready=False ArtifactFailed since 11:00, timeout 5m: already Failed, no requeue.
    let live = as_live(first.apply()[0], Some(("False", "ArtifactFailed")));
    let p = run(&set, &templates, &[&live], ACTIVE);
    assert_eq!(p.status["services"][0]["state"], "Failed");
    assert_eq!(p.requeue_after, None);
    // Since 11:58: Provisioning, look again after the 3 minutes left (+1 s).
    let mut live = live;
    live["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-21T11:58:00Z".into();
    let p = run(&set, &templates, &[&live], ACTIVE);
    assert_eq!(p.status["services"][0]["state"], "Provisioning");
    assert_eq!(p.requeue_after, Some(Duration::from_secs(181)));
    assert!(needs_source(&live));
    // chartRef: the HelmChart named there; chart.spec: the one helm-controller generates.
    let chart = |kind: &str, ns: &str, name: &str| Some((kind.into(), ns.into(), name.into()));
    assert_eq!(
        source_ref(&live),
        chart("HelmChart", "kcm-system", "cert-manager-1-18-2")
    );
    assert_eq!(
        source_ref(first.apply()[3]),
        chart(
            "HelmChart",
            "kcm-system",
            "kcm-system-dev-cluster-podinfo-git"
        )
    );
    assert_eq!(
        source_ref(first.apply()[1]),
        chart("OCIRepository", "kcm-system", "baseline-policies")
    );
}

#[test]
fn serves_checks_provider_name_and_selector() {
    let (set, _) = docs();
    let smp = json!({"spec": {"selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "flux-adapter"}}}});
    assert!(serves("ksm-flux", Some(&smp), &set));
    assert!(!serves("other", Some(&smp), &set));
    assert!(!serves("ksm-flux", None, &set));
    // Once the SMP is gone, only a deletion to finish is still reconciled.
    assert!(reconciles("ksm-flux", Some(&smp), &set));
    assert!(!reconciles("ksm-flux", None, &set));
    let mut deleting = set.clone();
    deleting["metadata"]["deletionTimestamp"] = "2026-11-21T11:59:00Z".into();
    deleting["metadata"]["finalizers"] = json!(["someone.else/finalizer"]);
    assert!(
        !reconciles("ksm-flux", None, &deleting),
        "not our finalizer"
    );
    deleting["metadata"]["finalizers"] = json!([FINALIZER]);
    assert!(reconciles("ksm-flux", None, &deleting));
    assert!(!reconciles("other", None, &deleting));
    let no_selector = json!({"spec": {}});
    assert!(!serves("ksm-flux", Some(&no_selector), &set));
    let expr = json!({"spec": {"selector": {"matchExpressions": [
        {"key": "ksm.k0rdent.mirantis.com/adapter", "operator": "In", "values": ["x"]}]}}});
    assert!(!serves("ksm-flux", Some(&expr), &set));
}

#[test]
fn merge_diff_nulls_removed_keys_and_replaces_arrays() {
    let old = json!({"a": 1, "b": {"c": 1, "d": 2}, "l": [1, 2], "gone": true});
    let new = json!({"a": 1, "b": {"c": 2}, "l": [1]});
    assert_eq!(
        merge_diff(&old, &new),
        json!({"b": {"c": 2, "d": null}, "l": [1], "gone": null})
    );
}

mod decisions {
    use super::super::{FinalizerRelease, Next, Plan};
    use std::time::Duration;

    #[test]
    fn requeue_is_the_earliest_of_transition_and_resync() {
        let mut p = Plan::default();
        assert_eq!(p.next(Duration::ZERO), Next::AwaitChange);
        assert_eq!(
            p.next(Duration::from_secs(60)),
            Next::After(Duration::from_secs(60))
        );
        p.requeue_after = Some(Duration::from_secs(5));
        assert_eq!(
            p.next(Duration::from_secs(60)),
            Next::After(Duration::from_secs(5))
        );
        assert_eq!(p.next(Duration::ZERO), Next::After(Duration::from_secs(5)));
        p.requeue_after = Some(Duration::from_secs(600));
        assert_eq!(
            p.next(Duration::from_secs(60)),
            Next::After(Duration::from_secs(60))
        );
    }

    #[test]
    fn a_deletion_with_objects_to_delete_looks_again_soon() {
        let mut p = Plan {
            deleting: true,
            ..Plan::default()
        };
        assert_eq!(p.next(Duration::ZERO), Next::AwaitChange);
        p.delete.push(super::super::Delete {
            api_version: "helm.toolkit.fluxcd.io/v2".into(),
            kind: "HelmRelease".into(),
            namespace: "n".into(),
            name: "x".into(),
            uid: "u".into(),
        });
        assert_eq!(
            p.next(Duration::from_secs(600)),
            Next::After(Duration::from_secs(2))
        );
    }

    #[test]
    fn the_finalizer_goes_only_when_wanted_nothing_failed_and_nothing_remains() {
        let keep = Plan::default();
        assert_eq!(keep.release_finalizer(false, 0), FinalizerRelease::Keep);
        let go = Plan {
            deleting: true,
            remove_finalizer: true,
            ..Plan::default()
        };
        assert_eq!(go.release_finalizer(false, 0), FinalizerRelease::Remove);
        assert_eq!(go.release_finalizer(true, 0), FinalizerRelease::Keep);
        assert_eq!(
            go.release_finalizer(false, 1),
            FinalizerRelease::Recheck(Duration::from_secs(2))
        );
    }
}

/// The claims another ServiceSet (a copy of `set` named `name`, with `priority`) lays on the
/// same releases and paths.
fn rival_claims(
    set: &Value,
    templates: &[Value],
    name: &str,
    priority: i64,
) -> Vec<ownership::Claim> {
    let mut other = set.clone();
    other["metadata"]["name"] = name.into();
    other["metadata"]["uid"] = format!("uid-{name}").into();
    other["spec"]["provider"]["config"] = json!({"priority": priority});
    let r = render::render(&render::Inputs {
        service_set: &other,
        templates,
    });
    ownership::claims(&other, &r)
        .into_iter()
        .map(|(_, c)| c)
        .collect()
}

fn run_with_rivals(
    set: &Value,
    templates: &[Value],
    live: &[&Value],
    rivals: &[ownership::Claim],
) -> Ran {
    let desired = Desired::of(set, templates);
    let plan = plan_from(set, &desired, live, rivals);
    Ran {
        plan,
        render: desired,
    }
}

#[test]
fn a_service_whose_release_another_service_set_owns_writes_nothing_and_says_who() {
    let (set, templates) = docs();
    let rivals = rival_claims(&set, &templates, "mcs-wins", 500);
    assert_eq!(rivals.len(), 5, "every rendered service claims its target");
    let p = run_with_rivals(&set, &templates, &[], &rivals);
    assert!(
        p.apply().is_empty(),
        "a loser creates nothing: {:?}",
        p.apply()
    );
    let services = p.status["services"].as_array().unwrap();
    assert!(services.iter().all(|x| s(x, "/state") == "Failed"));
    let msg = s(&services[0], "/failureMessage");
    assert!(
        msg.contains("is owned by service")
            && msg.contains("ServiceSet")
            && msg.contains("/mcs-wins")
            && msg.contains("its priority 500 against this one's 100"),
        "{msg}"
    );
}

#[test]
fn a_lower_priority_rival_changes_nothing() {
    let (set, templates) = docs();
    let rivals = rival_claims(&set, &templates, "mcs-low", 50);
    let p = run_with_rivals(&set, &templates, &[], &rivals);
    assert_eq!(p.apply().len(), 5);
    assert!(p.release.is_empty());
}

#[test]
fn a_loser_hands_over_the_object_it_had_and_waits_while_the_owner_is_deleted() {
    let (set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    let mut live: Vec<Value> = first
        .apply()
        .into_iter()
        .map(|d| as_live(d, Some(("True", "InstallSucceeded"))))
        .collect();
    for (i, l) in live.iter_mut().enumerate() {
        l["metadata"]["uid"] = format!("u-{i}").into();
    }
    let refs: Vec<&Value> = live.iter().collect();
    let mut rivals = rival_claims(&set, &templates, "mcs-wins", 500);
    let p = run_with_rivals(&set, &templates, &refs, &rivals);
    assert!(p.apply().is_empty());
    assert!(
        p.delete.is_empty(),
        "never a plain delete: it would uninstall"
    );
    assert_eq!(p.release.len(), 5, "suspended, then deleted");
    // The owner being deleted: Pending, with the same hand-over.
    for c in &mut rivals {
        c.deleting = true;
    }
    let p = run_with_rivals(&set, &templates, &[], &rivals);
    let services = p.status["services"].as_array().unwrap();
    assert!(services.iter().all(|x| s(x, "/state") == "Pending"));
    assert!(s(&services[0], "/failureMessage").contains("being deleted"));
}

#[test]
fn a_deleted_owner_hands_its_releases_to_a_waiting_rival() {
    let (mut set, templates) = docs();
    let first = run(&set, &templates, &[], ACTIVE);
    let live: Vec<Value> = first
        .apply()
        .into_iter()
        .map(|d| as_live(d, None))
        .collect();
    let refs: Vec<&Value> = live.iter().collect();
    let rivals = rival_claims(&set, &templates, "waiting", 50);
    set["metadata"]["deletionTimestamp"] = "2026-11-21T11:59:00Z".into();
    let p = run_with_rivals(&set, &templates, &refs, &rivals);
    assert!(p.deleting);
    assert_eq!(p.release.len(), 5, "the waiting ServiceSet takes over");
    assert!(p.delete.is_empty());
    assert_eq!(p.next(Duration::ZERO), Next::After(DELETION_RECHECK));
    // Nobody waiting: a plain delete (Flux uninstalls).
    let p = run_with_rivals(&set, &templates, &refs, &[]);
    assert_eq!(p.delete.len(), 5);
    assert!(p.release.is_empty());
}

// The memo (memo.rs): a reconcile with nothing changed plans from what the last one kept.

/// The (first) ServiceSet of a YAML stream and its ServiceTemplates.
fn load(input: &str) -> (Value, Vec<Value>) {
    let mut set = None;
    let mut templates = Vec::new();
    let source = crate::diag::source::Source::new("input.yaml", input);
    for obj in objects::load(&source, &Default::default()).objects {
        match obj.kind() {
            "ServiceSet" if set.is_none() => set = Some(obj.json),
            "ServiceTemplate" => templates.push(obj.json),
            _ => {}
        }
    }
    (set.expect("a ServiceSet"), templates)
}

/// The key of `set` with every named template at version 7.
fn memo_key(set: &Value) -> memo::Key {
    let named: std::collections::BTreeSet<&str> = crate::api::kcm::ServiceSet(set)
        .services()
        .map(|s| s.template())
        .collect();
    memo::Key::of(set, vec![Some("7".to_string()); named.len()]).expect("a uid and a generation")
}

fn plan_from(set: &Value, desired: &Desired, live: &[&Value], rivals: &[ownership::Claim]) -> Plan {
    plan(&Inputs {
        service_set: set,
        desired,
        live,
        sources: &[],
        provider: ACTIVE,
        previous_status: set.get("status"),
        now: now(),
        source_timeout: Duration::from_secs(300),
        rivals,
    })
}

/// A first reconcile that applied every object: the replies (each at its own version, Ready
/// as `ready` says) and what it keeps.
fn first_applied(
    set: &Value,
    templates: &[Value],
    ready: Option<(&str, &str)>,
) -> (Vec<Value>, memo::Remembered) {
    let desired = Desired::of(set, templates);
    let first = plan_from(set, &desired, &[], &[]);
    let live: Vec<Value> = first
        .to_apply(&desired.rendered)
        .enumerate()
        .map(|(i, d)| {
            let mut l = as_live(d, ready);
            l["metadata"]["uid"] = format!("u-{i}").into();
            l["metadata"]["resourceVersion"] = (100 + i).to_string().into();
            l
        })
        .collect();
    let version = |index: usize| {
        let j = first.applied.iter().position(|&i| i == index)?;
        Some(s(&live[j], "/metadata/resourceVersion").to_string())
    };
    let kept = memo::Remembered::of(memo_key(set), set, &desired, version).expect("all applied");
    (live, kept)
}

fn assert_same_plan(recalled: &Plan, rendered: &Plan) {
    assert!(recalled.applied.is_empty() && rendered.applied.is_empty());
    assert_eq!(recalled.status, rendered.status);
    assert_eq!(recalled.status_changed, rendered.status_changed);
    assert_eq!(recalled.delete, rendered.delete);
    assert_eq!(recalled.release, rendered.release);
    assert_eq!(recalled.requeue_after, rendered.requeue_after);
    assert_eq!(recalled.desired, rendered.desired);
    assert_eq!(recalled.add_finalizer, rendered.add_finalizer);
    assert_eq!(recalled.in_sync, rendered.in_sync);
}

#[test]
fn a_recalled_render_plans_as_the_render_does() {
    let fixtures = [
        INPUT,
        include_str!("../../../testdata/render/uninstall/input.yaml"),
        include_str!("../../../testdata/render/missing-template/input.yaml"),
        include_str!("../../../testdata/render/self-management/input.yaml"),
    ];
    for input in fixtures {
        let (set, templates) = load(input);
        for ready in [
            Some(("True", "InstallSucceeded")),
            Some(("False", "InstallFailed")),
            Some(("False", "ArtifactFailed")),
            None,
        ] {
            let (live, kept) = first_applied(&set, &templates, ready);
            let refs: Vec<&Value> = live.iter().collect();
            let recalled = kept
                .recall(&memo_key(&set), &set, &live)
                .expect("nothing changed");
            let rendered = Desired::of(&set, &templates);
            assert_eq!(recalled.versions, rendered.versions);
            assert_eq!(
                recalled.rendered.services, rendered.rendered.services,
                "{input:.60}"
            );
            for i in 0..rendered.rendered.objects.len() {
                assert_eq!(recalled.target(i), rendered.target(i));
                assert_eq!(
                    key(&recalled.rendered.objects[i]),
                    key(&rendered.rendered.objects[i])
                );
            }
            let lower = rival_claims(&set, &templates, "lower", 50);
            let higher = rival_claims(&set, &templates, "higher", 500);
            for rivals in [&[][..], &lower, &higher] {
                assert_same_plan(
                    &plan_from(&set, &recalled, &refs, rivals),
                    &plan_from(&set, &rendered, &refs, rivals),
                );
            }
            // With the status the first reconcile wrote.
            let mut written = set.clone();
            written["status"] = plan_from(&set, &rendered, &refs, &[]).status;
            assert_same_plan(
                &plan_from(&written, &recalled, &refs, &[]),
                &plan_from(&written, &rendered, &refs, &[]),
            );
        }
    }
}

#[test]
fn the_memo_is_recalled_only_while_nothing_it_depends_on_changed() {
    let (set, templates) = docs();
    let (live, kept) = first_applied(&set, &templates, None);
    let at = memo_key(&set);
    assert!(kept.recall(&at, &set, &live).is_some());
    let versions = |v: &[Option<&str>]| v.iter().map(|v| v.map(str::to_string)).collect();
    let seven = [Some("7"); 5];
    let mut changed: Vec<(&str, Value, memo::Key)> = Vec::new();
    let mut newer = set.clone();
    newer["metadata"]["generation"] = 2.into();
    changed.push(("the spec", newer.clone(), memo_key(&newer)));
    let mut paused = set.clone();
    paused["metadata"]["annotations"] = json!({crate::api::naming::ANNOTATION_PAUSED: "true"});
    changed.push(("paused", paused.clone(), memo_key(&paused)));
    let mut recreated = set.clone();
    recreated["metadata"]["uid"] = "another".into();
    changed.push(("the uid", recreated.clone(), memo_key(&recreated)));
    let mut template = seven;
    template[2] = Some("8");
    changed.push((
        "a template",
        set.clone(),
        memo::Key::of(&set, versions(&template)).unwrap(),
    ));
    template[2] = None;
    changed.push((
        "a template gone",
        set.clone(),
        memo::Key::of(&set, versions(&template)).unwrap(),
    ));
    // The spec changed under the same key (never from an API server): the services differ.
    let mut more = set.clone();
    more["spec"]["services"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "extra", "namespace": "x", "template": "cert-manager-1-18-2"}));
    changed.push(("one service more", more, at.clone()));
    let mut fewer = set.clone();
    fewer["spec"]["services"].as_array_mut().unwrap().pop();
    changed.push(("one service less", fewer, at.clone()));
    for (what, set, at) in &changed {
        assert!(kept.recall(at, set, &live).is_none(), "{what}");
    }
    // A live copy changed (edited, its status written) or gone.
    let mut edited = live.clone();
    edited[3]["metadata"]["resourceVersion"] = "900".into();
    assert!(kept.recall(&at, &set, &edited).is_none());
    let mut gone = live.clone();
    gone.remove(1);
    assert!(kept.recall(&at, &set, &gone).is_none());
    let mut renamed = live.clone();
    renamed[0]["metadata"]["name"] = "someone-else".into();
    assert!(kept.recall(&at, &set, &renamed).is_none());
}

#[test]
fn nothing_is_kept_unless_every_object_is_known_in_sync() {
    let (set, templates) = docs();
    let desired = Desired::of(&set, &templates);
    let at = memo_key(&set);
    let all = |_: usize| Some("5".to_string());
    assert!(memo::Remembered::of(at.clone(), &set, &desired, all).is_some());
    let but_one = |i: usize| (i != 2).then(|| "5".to_string());
    assert!(memo::Remembered::of(at.clone(), &set, &desired, but_one).is_none());
    // A recalled render is not kept again (it is the memo's own).
    let (live, kept) = first_applied(&set, &templates, None);
    let recalled = kept.recall(&at, &set, &live).unwrap();
    assert!(memo::Remembered::of(at.clone(), &set, &recalled, all).is_none());
    // No key without a uid, a generation, or with a template of no version.
    let mut no_generation = set.clone();
    no_generation["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("generation");
    assert!(memo::Key::of(&no_generation, vec![]).is_none());
    let mut no_uid = set.clone();
    no_uid["metadata"].as_object_mut().unwrap().remove("uid");
    assert!(memo::Key::of(&no_uid, vec![]).is_none());
    assert!(memo::Key::of(&set, vec![Some(String::new())]).is_none());
}

#[test]
fn a_kept_render_reads_back_from_its_text_and_is_small() {
    let (set, templates) = docs();
    let (live, kept) = first_applied(&set, &templates, None);
    let text = serde_json::to_vec(&kept).unwrap();
    let back: memo::Remembered = serde_json::from_slice(&text).unwrap();
    assert_eq!(back, kept);
    assert!(back.recall(&memo_key(&set), &set, &live).is_some());
    // Five services: their types, versions, targets and versions in sync, not the objects.
    let objects = serde_json::to_vec(&Desired::of(&set, &templates).rendered.objects).unwrap();
    assert!(
        text.len() * 3 < objects.len(),
        "{} against {}",
        text.len(),
        objects.len()
    );
}
