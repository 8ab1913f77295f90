//! `metav1.Status` errors, shaped like the real API server's.

use serde_json::{Value, json};

use super::registry::ResourceType;

/// An error answered as a `metav1.Status` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
    /// Seconds, sent as `Retry-After` and `details.retryAfterSeconds`.
    pub retry_after: Option<u64>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    fn for_object(
        code: u16,
        reason: &'static str,
        rt: &ResourceType,
        name: &str,
        what: &str,
    ) -> Self {
        ApiError::new(
            code,
            reason,
            format!("{} \"{name}\" {what}", rt.qualified()),
        )
        .with_details(json!({"name": name, "group": rt.group, "kind": rt.plural}))
    }

    pub fn not_found(rt: &ResourceType, name: &str) -> Self {
        Self::for_object(404, "NotFound", rt, name, "not found")
    }

    pub fn already_exists(rt: &ResourceType, name: &str) -> Self {
        Self::for_object(409, "AlreadyExists", rt, name, "already exists")
    }

    pub fn conflict(rt: &ResourceType, name: &str, why: &str) -> Self {
        ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                rt.qualified()
            ),
        )
        .with_details(json!({"name": name, "group": rt.group, "kind": rt.plural}))
    }

    pub fn modified(rt: &ResourceType, name: &str) -> Self {
        Self::conflict(
            rt,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    pub fn invalid(rt: &ResourceType, name: &str, field: &str, msg: &str) -> Self {
        ApiError::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {field}: {msg}", rt.kind),
        )
        .with_details(json!({
            "name": name, "group": rt.group, "kind": rt.kind,
            "causes": [{"reason": "FieldValueInvalid", "message": msg, "field": field}]
        }))
    }

    pub fn bad_request(msg: impl Into<String>) -> Self {
        ApiError::new(400, "BadRequest", msg)
    }

    pub fn unsupported_media(msg: impl Into<String>) -> Self {
        ApiError::new(415, "UnsupportedMediaType", msg)
    }

    pub fn method_not_allowed(msg: impl Into<String>) -> Self {
        ApiError::new(405, "MethodNotAllowed", msg)
    }

    pub fn expired(msg: impl Into<String>) -> Self {
        ApiError::new(410, "Expired", msg)
    }

    pub fn plain_not_found() -> Self {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    /// The error the fault injector answers for `code`.
    pub fn injected(code: u16) -> Self {
        let (reason, message): (&'static str, &str) = match code {
            409 => (
                "Conflict",
                "injected conflict: the object has been modified; please apply your changes to the latest version and try again",
            ),
            410 => ("Expired", "injected: too old resource version"),
            429 => (
                "TooManyRequests",
                "injected: the server has received too many requests and has asked us to try again later",
            ),
            500 => (
                "InternalError",
                "injected: an error on the server (\"\") has prevented the request from succeeding",
            ),
            503 => (
                "ServiceUnavailable",
                "injected: the server is currently unable to handle the request",
            ),
            504 => (
                "Timeout",
                "injected: the server was unable to return a response in the time allotted",
            ),
            404 => (
                "NotFound",
                "injected: the server could not find the requested resource",
            ),
            403 => ("Forbidden", "injected: forbidden"),
            401 => ("Unauthorized", "injected: Unauthorized"),
            _ => ("", "injected fault"),
        };
        let mut e = ApiError::new(code, reason, message);
        if code == 429 {
            e.retry_after = Some(1);
            e.details = Some(json!({"retryAfterSeconds": 1}));
        }
        e
    }

    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

/// A `Status` of success, as answered for an immediate DELETE.
pub fn success_status(rt: &ResourceType, name: &str, uid: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": name, "group": rt.group, "kind": rt.plural, "uid": uid}
    })
}
