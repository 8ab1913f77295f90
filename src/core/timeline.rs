//! `doctor --watch`'s timeline: what changed between two diagnoses (a service's state, what
//! the provider's objects say, the first failing link) and the Events the controllers (kcm,
//! Sveltos, Flux) recorded about the objects of the chains, merged into one timeline, oldest
//! first.
//!
//! PURE: frames of doctor's reports and the objects' Events in, entries out.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use crate::api::Object;
use crate::api::event::Event;
use crate::api::kinds;
use crate::core::doctor::Report;
use crate::diag::Severity;

/// What a diagnosis says of each service and ServiceSet, to compare with the next one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    /// `ServiceSet/<ns>/<name> service <ns>/<name>` → what is said of it.
    services: BTreeMap<String, Said>,
    /// `ServiceSet/<ns>/<name>` → its first failing link of its own.
    sets: BTreeMap<String, Option<String>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Said {
    state: Option<String>,
    observed: Option<String>,
    /// The first failing link: doctor's first error or warning (code: message).
    failing: Option<String>,
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// RFC 3339.
    pub time: String,
    /// What it is about (`ServiceSet/ns/name service ns/name`, `HelmRelease/ns/name`).
    pub object: String,
    pub text: String,
    /// A Warning Event, or a failing link.
    pub warning: bool,
}

/// The frame of a report.
pub fn frame(report: &Report) -> Frame {
    let failing = |ids: &[usize]| -> Option<String> {
        ids.iter()
            .filter_map(|i| report.findings.get(*i))
            .find(|f| matches!(f.severity, Severity::Error | Severity::Warning))
            .map(|f| format!("{}: {}", f.code, f.message))
    };
    let mut f = Frame::default();
    for view in &report.service_sets {
        let set = format!(
            "ServiceSet/{}/{}",
            view.service_set.namespace, view.service_set.name
        );
        for s in &view.services {
            f.services.insert(
                format!("{set} service {}/{}", s.namespace, s.name),
                Said {
                    state: s.reported.clone(),
                    observed: s.observed.clone(),
                    failing: failing(&s.findings),
                },
            );
        }
        f.sets.insert(set, failing(&view.findings));
    }
    f
}

/// Every service's state and first failing link, and every ServiceSet's (the first frame).
pub fn first(next: &Frame, time: &str) -> Vec<Entry> {
    changes(&Frame::default(), next, time)
}

/// What changed from `prev` to `next`, at `time`.
pub fn changes(prev: &Frame, next: &Frame, time: &str) -> Vec<Entry> {
    let entry = |object: &str, text: String, warning: bool| Entry {
        time: time.to_string(),
        object: object.to_string(),
        text,
        warning,
    };
    let word = |s: &Option<String>| s.clone().unwrap_or_else(|| "no state".to_string());
    let mut out = Vec::new();
    for (key, said) in &next.services {
        let before = prev.services.get(key);
        if before.map(|b| &b.state) != Some(&said.state) {
            let text = match before {
                Some(b) => format!("{} → {}", word(&b.state), word(&said.state)),
                None => word(&said.state),
            };
            out.push(entry(key, text, said.state.as_deref() == Some("Failed")));
        }
        if before.map(|b| &b.observed) != Some(&said.observed)
            && said.observed.is_some()
            && said.observed != said.state
        {
            let text = format!("the provider's objects say {}", word(&said.observed));
            out.push(entry(key, text, false));
        }
        if before.map(|b| &b.failing) != Some(&said.failing) {
            match &said.failing {
                Some(f) => out.push(entry(key, format!("first failing link: {f}"), true)),
                None if before.is_some_and(|b| b.failing.is_some()) => {
                    out.push(entry(key, "no failing link".to_string(), false))
                }
                None => {}
            }
        }
    }
    for key in prev
        .services
        .keys()
        .filter(|k| !next.services.contains_key(*k))
    {
        out.push(entry(key, "gone".to_string(), false));
    }
    for (set, failing) in &next.sets {
        let before = prev.sets.get(set);
        if before != Some(failing) {
            match failing {
                Some(f) => out.push(entry(set, format!("first failing link: {f}"), true)),
                None if before.is_some_and(|b| b.is_some()) => {
                    out.push(entry(set, "no failing link".to_string(), false))
                }
                None => {}
            }
        }
    }
    out
}

/// The Events among `objects` about the other objects there (the chains' objects) not seen
/// before (an Event seen again with a new resourceVersion has happened again), oldest
/// first.
pub fn events(objects: &[Value], seen: &mut HashSet<(String, String)>) -> Vec<Entry> {
    let mut about: HashSet<(&str, &str, &str)> = HashSet::new();
    let mut events = Vec::new();
    for o in objects {
        let m = Object(o);
        if kinds::EVENT.is_any_version(m.api_version(), m.kind()) {
            events.push(Event(o));
        } else {
            about.insert((m.kind(), m.namespace(), m.name()));
        }
    }
    let mut out: Vec<Entry> = events
        .into_iter()
        .filter(|e| {
            let i = e.involved();
            about.contains(&(i.kind(), i.namespace(), i.name()))
        })
        .filter(|e| {
            let m = e.meta();
            seen.insert((m.uid().to_string(), m.resource_version().to_string()))
        })
        .map(|e| {
            let i = e.involved();
            let object = if i.namespace().is_empty() {
                format!("{}/{}", i.kind(), i.name())
            } else {
                format!("{}/{}/{}", i.kind(), i.namespace(), i.name())
            };
            let times = match e.count() {
                n if n > 1 => format!(" (×{n})"),
                _ => String::new(),
            };
            Entry {
                time: e.last_time().to_string(),
                object,
                text: format!("{}: {}{times}", e.reason(), e.message()),
                warning: e.type_() == "Warning",
            }
        })
        .collect();
    out.sort();
    out
}

/// Everything healthy: no error or warning, every service Deployed.
pub fn healthy(report: &Report) -> bool {
    report.healthy()
        && report
            .service_sets
            .iter()
            .flat_map(|v| &v.services)
            .all(|s| s.reported.as_deref() == Some("Deployed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::doctor;
    use serde_json::json;

    fn set(state: &str, paused: bool) -> Value {
        let mut o = json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
            "metadata": {"name": "a", "namespace": "n", "uid": "u1"},
            "spec": {"cluster": "c", "provider": {"name": "ksm-flux"},
                     "services": [{"name": "web", "namespace": "apps", "template": "t"}]},
            "status": {"services": [{"name": "web", "namespace": "apps", "state": state}]}});
        if paused {
            o["metadata"]["annotations"] = json!({crate::api::naming::ANNOTATION_PAUSED: ""});
        }
        o
    }

    fn frame_of(objects: &[Value]) -> Frame {
        frame(&doctor::diagnose(
            objects,
            &doctor::Options::for_tests("2026-11-21T12:00:00Z".parse().unwrap()),
        ))
    }

    fn texts(entries: &[Entry]) -> Vec<(&str, &str)> {
        entries
            .iter()
            .map(|e| (e.object.as_str(), e.text.as_str()))
            .collect()
    }

    /// The healthy Flux case of doctor's fixtures, its ServiceSet changed by `change`.
    fn healthy(change: impl FnOnce(&mut Value)) -> Vec<Value> {
        let text = include_str!("../../testdata/doctor/healthy/dump.yaml");
        let dump: Value = serde_saphyr::from_str(text).unwrap();
        let mut objects = dump["items"].as_array().unwrap().clone();
        let set = objects
            .iter_mut()
            .find(|o| o["kind"] == "ServiceSet")
            .unwrap();
        change(set);
        objects
    }

    #[test]
    fn a_state_change_and_a_failing_link_that_comes_and_goes() {
        const SVC: &str = "ServiceSet/kcm-system/dev-cluster service cert-manager/cert-manager";
        const SET: &str = "ServiceSet/kcm-system/dev-cluster";
        let a = frame_of(&healthy(|_| {}));
        let first = first(&a, "T0");
        assert!(texts(&first).contains(&(SVC, "Deployed")), "{first:?}");
        let b = frame_of(&healthy(|s| {
            s["status"]["services"][0]["state"] = json!("Provisioning");
            s["metadata"]["annotations"] = json!({crate::api::naming::ANNOTATION_PAUSED: ""});
        }));
        let t = changes(&a, &b, "T1");
        assert!(
            texts(&t).contains(&(SVC, "Deployed → Provisioning")),
            "{t:?}"
        );
        let paused = t
            .iter()
            .find(|e| e.object == SET && e.text.starts_with("first failing link: KSM605"))
            .unwrap_or_else(|| panic!("the pause is the set's failing link: {t:?}"));
        assert!(paused.warning && paused.time == "T1");
        let c = frame_of(&healthy(|_| {}));
        assert!(texts(&changes(&b, &c, "T2")).contains(&(SET, "no failing link")));
        assert!(changes(&c, &c, "T3").is_empty(), "nothing changed");
        let gone = changes(&c, &Frame::default(), "T4");
        assert!(
            gone.iter().all(|e| e.text == "gone") && gone.len() == 3,
            "{gone:?}"
        );
    }

    #[test]
    fn events_about_the_chains_objects_once_each_oldest_first() {
        let event = |uid: &str, rv: &str, name: &str, time: &str, ty: &str| {
            json!({"apiVersion": "v1", "kind": "Event",
                "metadata": {"name": uid, "namespace": "n", "uid": uid, "resourceVersion": rv},
                "involvedObject": {"kind": "ServiceSet", "namespace": "n", "name": name},
                "type": ty, "reason": "R", "message": uid, "lastTimestamp": time, "count": 2})
        };
        let objects = vec![
            set("Deployed", false),
            event("late", "1", "a", "2026-01-01T00:00:02Z", "Normal"),
            event("early", "1", "a", "2026-01-01T00:00:01Z", "Warning"),
            event("other", "1", "not-here", "2026-01-01T00:00:00Z", "Normal"),
        ];
        let mut seen = HashSet::new();
        let e = events(&objects, &mut seen);
        assert_eq!(
            texts(&e),
            [
                ("ServiceSet/n/a", "R: early (×2)"),
                ("ServiceSet/n/a", "R: late (×2)")
            ]
        );
        assert!(e[0].warning && !e[1].warning);
        assert!(events(&objects, &mut seen).is_empty(), "seen already");
        // The same Event again (count and resourceVersion up): it happened again.
        let again = vec![
            set("Deployed", false),
            event("late", "2", "a", "2026-01-01T00:00:05Z", "Normal"),
        ];
        assert_eq!(events(&again, &mut seen).len(), 1);
    }
}
