//! `diff`: the drift of each rendered object against its live copy, for people or as a
//! versioned JSON report (`DiffReport`).

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{count, envelope};
use crate::core::drift::{ObjectDrift, Status};

/// Each object that drifted (its differing fields, live then rendered) or is missing, then
/// the totals: `3 objects: 1 drifted, 1 missing, 1 unchanged`.
pub fn human(out: &mut dyn Write, drifts: &[ObjectDrift]) -> io::Result<()> {
    for d in drifts {
        match d.status {
            Status::Unchanged => {}
            Status::Missing => {
                writeln!(out, "► {} missing: not in the cluster", id_text(d))?;
            }
            Status::Drifted => {
                writeln!(out, "► {} drifted", id_text(d))?;
                for f in &d.differences {
                    writeln!(out, "    {}", f.path)?;
                    writeln!(out, "      - {}  (live)", value_text(&f.live))?;
                    writeln!(out, "      + {}  (rendered)", value_text(&f.rendered))?;
                }
            }
        }
    }
    let t = Totals::of(drifts);
    writeln!(
        out,
        "{}: {} drifted, {} missing, {} unchanged",
        count(drifts.len(), "object"),
        t.drifted,
        t.missing,
        t.unchanged
    )
}

/// The report: every object with its status and differences, and the totals.
pub fn json(out: &mut dyn Write, drifts: &[ObjectDrift]) -> io::Result<()> {
    let t = Totals::of(drifts);
    let report = envelope(
        "DiffReport",
        json!({
            "objects": drifts,
            "summary": {
                "objects": drifts.len(),
                "drifted": t.drifted,
                "missing": t.missing,
                "unchanged": t.unchanged,
            },
        }),
    );
    serde_json::to_writer_pretty(&mut *out, &report).map_err(io::Error::from)?;
    writeln!(out)
}

/// How many objects drifted, are missing, are unchanged.
struct Totals {
    drifted: usize,
    missing: usize,
    unchanged: usize,
}

impl Totals {
    fn of(drifts: &[ObjectDrift]) -> Totals {
        let n = |s: Status| drifts.iter().filter(|d| d.status == s).count();
        Totals {
            drifted: n(Status::Drifted),
            missing: n(Status::Missing),
            unchanged: n(Status::Unchanged),
        }
    }
}

/// `Kind/namespace/name`, or `Kind/name` for a cluster-scoped object.
fn id_text(d: &ObjectDrift) -> String {
    let o = &d.object;
    if o.namespace.is_empty() {
        format!("{}/{}", o.kind, o.name)
    } else {
        format!("{}/{}/{}", o.kind, o.namespace, o.name)
    }
}

/// A value as the human output shows it: a string as it is, `(absent)` for no value.
fn value_text(v: &Option<Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::ObjectId;
    use crate::core::drift::Difference;

    fn id(kind: &str, namespace: &str, name: &str) -> ObjectId {
        ObjectId {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    fn drifts() -> Vec<ObjectDrift> {
        let diff = |path: &str, live: Option<Value>, rendered: Option<Value>| Difference {
            path: path.into(),
            live,
            rendered,
        };
        vec![
            ObjectDrift {
                object: id("HelmRelease", "kcm-system", "same"),
                status: Status::Unchanged,
                differences: Vec::new(),
            },
            ObjectDrift {
                object: id("HelmRelease", "kcm-system", "changed"),
                status: Status::Drifted,
                differences: vec![
                    diff("spec.interval", Some(json!("1h")), Some(json!("10m"))),
                    diff(
                        "spec.values.replicas",
                        Some(json!(1)),
                        Some(json!({"n": [2]})),
                    ),
                    diff("metadata.labels.team", None, Some(json!("a b"))),
                ],
            },
            ObjectDrift {
                object: id("ClusterProfile", "", "gone"),
                status: Status::Missing,
                differences: Vec::new(),
            },
        ]
    }

    fn text(f: fn(&mut dyn Write, &[ObjectDrift]) -> io::Result<()>, d: &[ObjectDrift]) -> String {
        let mut out = Vec::new();
        f(&mut out, d).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn human_shows_what_drifted_and_what_is_missing_then_the_totals() {
        assert_eq!(
            text(human, &drifts()),
            "\
► HelmRelease/kcm-system/changed drifted
    spec.interval
      - 1h  (live)
      + 10m  (rendered)
    spec.values.replicas
      - 1  (live)
      + {\"n\":[2]}  (rendered)
    metadata.labels.team
      - (absent)  (live)
      + a b  (rendered)
► ClusterProfile/gone missing: not in the cluster
3 objects: 1 drifted, 1 missing, 1 unchanged
"
        );
        assert_eq!(
            text(human, &[]),
            "0 objects: 0 drifted, 0 missing, 0 unchanged\n"
        );
    }

    #[test]
    fn json_is_the_versioned_report_of_every_object() {
        let out = text(json, &drifts());
        let v: Value = serde_json::from_str(&out).unwrap();
        let want = envelope(
            "DiffReport",
            json!({
                "objects": [
                    {
                        "object": {"apiVersion": "v1", "kind": "HelmRelease", "namespace": "kcm-system", "name": "same"},
                        "status": "unchanged",
                        "differences": [],
                    },
                    {
                        "object": {"apiVersion": "v1", "kind": "HelmRelease", "namespace": "kcm-system", "name": "changed"},
                        "status": "drifted",
                        "differences": [
                            {"path": "spec.interval", "live": "1h", "rendered": "10m"},
                            {"path": "spec.values.replicas", "live": 1, "rendered": {"n": [2]}},
                            {"path": "metadata.labels.team", "live": null, "rendered": "a b"},
                        ],
                    },
                    {
                        "object": {"apiVersion": "v1", "kind": "ClusterProfile", "namespace": null, "name": "gone"},
                        "status": "missing",
                        "differences": [],
                    },
                ],
                "summary": {"objects": 3, "drifted": 1, "missing": 1, "unchanged": 1},
            }),
        );
        assert_eq!(out, serde_json::to_string_pretty(&want).unwrap() + "\n");
        assert_eq!(v, want);
    }
}
