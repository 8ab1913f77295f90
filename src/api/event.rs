//! A core/v1 Event: what a controller (kcm, Sveltos, Flux) recorded about an object, read
//! through a view: the object (`involvedObject`), `type`, `reason`, `message`, `count`, and
//! when it last happened (`lastTimestamp`, else `eventTime`, `firstTimestamp`, then the
//! Event's creation).

use serde_json::Value;

use super::meta::{Object, ObjectRef, i64_at, str_at};

#[derive(Debug, Clone, Copy)]
pub struct Event<'a>(pub &'a Value);

impl<'a> Event<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// `involvedObject`: the object the Event is about.
    pub fn involved(self) -> ObjectRef<'a> {
        ObjectRef(self.0.get("involvedObject").unwrap_or(&Value::Null))
    }
    /// `type`: Normal or Warning.
    pub fn type_(self) -> &'a str {
        str_at(self.0, "/type")
    }
    pub fn reason(self) -> &'a str {
        str_at(self.0, "/reason")
    }
    pub fn message(self) -> &'a str {
        str_at(self.0, "/message")
    }
    /// `count` (1 when unset).
    pub fn count(self) -> i64 {
        i64_at(self.0, "/count").unwrap_or(1)
    }
    /// When it last happened, RFC 3339 ("" when the Event says nowhere).
    pub fn last_time(self) -> &'a str {
        ["/lastTimestamp", "/eventTime", "/firstTimestamp"]
            .into_iter()
            .map(|p| str_at(self.0, p))
            .find(|t| !t.is_empty())
            .unwrap_or_else(|| self.meta().creation_timestamp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_events_time_is_the_latest_it_records() {
        let e = json!({"involvedObject": {"kind": "ServiceSet", "namespace": "n", "name": "a"},
            "type": "Warning", "reason": "R", "message": "m", "count": 3,
            "eventTime": "2026-01-01T00:00:02Z", "firstTimestamp": "2026-01-01T00:00:01Z",
            "metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}});
        let v = Event(&e);
        assert_eq!(
            (v.involved().kind(), v.involved().name()),
            ("ServiceSet", "a")
        );
        assert_eq!(
            (v.type_(), v.reason(), v.message(), v.count()),
            ("Warning", "R", "m", 3)
        );
        assert_eq!(v.last_time(), "2026-01-01T00:00:02Z");
        let bare = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(Event(&bare).last_time(), "2026-01-01T00:00:00Z");
        assert_eq!(Event(&bare).count(), 1);
    }
}
