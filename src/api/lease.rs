//! A coordination.k8s.io/v1 Lease: the record of a leader election (`spec.holderIdentity`,
//! `renewTime`, `leaseDurationSeconds`, `acquireTime`, `leaseTransitions`), read through a
//! view and written as client-go's leaderelection writes it.

use serde_json::Value;

use super::meta::{i64_at, str_at};

/// A borrowed view of a Lease. Absent fields read as empty.
#[derive(Debug, Clone, Copy)]
pub struct Lease<'a>(pub &'a Value);

impl<'a> Lease<'a> {
    /// `spec.holderIdentity` ("" when free).
    pub fn holder_identity(self) -> &'a str {
        str_at(self.0, "/spec/holderIdentity")
    }
    /// `spec.renewTime` ("" when unset).
    pub fn renew_time(self) -> &'a str {
        str_at(self.0, "/spec/renewTime")
    }
    /// `spec.leaseDurationSeconds`, if set.
    pub fn lease_duration_seconds(self) -> Option<i64> {
        i64_at(self.0, "/spec/leaseDurationSeconds")
    }
    /// `spec.leaseTransitions` (0 when unset).
    pub fn lease_transitions(self) -> i64 {
        i64_at(self.0, "/spec/leaseTransitions").unwrap_or(0)
    }

    /// The Lease held by `identity` from `now` for `duration` seconds: a new holder sets
    /// `acquireTime` and counts one more transition.
    pub fn taken_by(self, identity: &str, duration: i64, now: &str) -> Value {
        let mut lease = self.0.clone();
        if self.holder_identity() != identity {
            lease["spec"]["acquireTime"] = now.into();
            lease["spec"]["leaseTransitions"] = (self.lease_transitions() + 1).into();
        }
        lease["spec"]["holderIdentity"] = identity.into();
        lease["spec"]["leaseDurationSeconds"] = duration.into();
        lease["spec"]["renewTime"] = now.into();
        lease
    }

    /// The Lease released at `now`: no holder, and a duration of one second so that a
    /// successor takes it at once.
    pub fn released(self, now: &str) -> Value {
        let mut lease = self.0.clone();
        lease["spec"]["holderIdentity"] = Value::Null;
        lease["spec"]["leaseDurationSeconds"] = 1.into();
        lease["spec"]["renewTime"] = now.into();
        lease
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_holder_counts_a_transition() {
        let v = json!({"spec": {"holderIdentity": "a", "renewTime": "t0",
            "leaseDurationSeconds": 15, "leaseTransitions": 2, "acquireTime": "t-1"}});
        let l = Lease(&v);
        assert_eq!((l.holder_identity(), l.renew_time()), ("a", "t0"));
        assert_eq!(
            (l.lease_duration_seconds(), l.lease_transitions()),
            (Some(15), 2)
        );
        let renewed = l.taken_by("a", 15, "t1");
        assert_eq!(renewed["spec"]["acquireTime"], "t-1");
        assert_eq!(renewed["spec"]["renewTime"], "t1");
        let taken = l.taken_by("b", 15, "t1");
        assert_eq!(taken["spec"]["holderIdentity"], "b");
        assert_eq!(
            (
                taken["spec"]["acquireTime"].as_str(),
                taken["spec"]["leaseTransitions"].as_i64()
            ),
            (Some("t1"), Some(3))
        );
        let released = l.released("t2");
        assert!(released["spec"]["holderIdentity"].is_null());
        assert_eq!(released["spec"]["leaseDurationSeconds"], 1);
    }

    #[test]
    fn malformed_lease_reads_as_empty() {
        let v = json!({"spec": "x"});
        let l = Lease(&v);
        assert_eq!((l.holder_identity(), l.renew_time()), ("", ""));
        assert_eq!(
            (l.lease_duration_seconds(), l.lease_transitions()),
            (None, 0)
        );
    }
}
