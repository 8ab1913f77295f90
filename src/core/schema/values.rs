//! JSON values as the API server's messages show them (`%q`-quoting, numbers, type names),
//! and the value comparisons of the validation (types, equality of enum members).

use serde_json::Value;

use super::node::Ty;

/// Go `%q`-like quoting of a string (JSON quoting is close enough).
pub(super) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Renders a bad value like `field.Error` does: strings quoted, scalars
/// plain, compound values as JSON.
pub(super) fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Number(n) => render_number(n),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

pub(super) fn render_number(n: &serde_json::Number) -> String {
    if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
        render_f64(f)
    } else {
        n.to_string()
    }
}

/// Go `%v` of a float64 for the common cases.
pub(super) fn render_f64(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// The JSON type name of a value, as kube-openapi names it.
pub(super) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::String(_) => "string",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(super) fn is_whole_float(n: &serde_json::Number) -> bool {
    n.is_f64()
        && n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// kube-openapi typeValidator: an integer schema also accepts floats without
/// a fraction (`isFloatInt`), a number schema accepts integers.
pub(super) fn type_ok(ty: Ty, v: &Value) -> bool {
    match (ty, v) {
        (Ty::Any, _) => true,
        (Ty::Object, Value::Object(_))
        | (Ty::Array, Value::Array(_))
        | (Ty::String, Value::String(_))
        | (Ty::Boolean, Value::Bool(_))
        | (Ty::Number, Value::Number(_))
        | (Ty::IntOrString, Value::String(_)) => true,
        (Ty::Integer | Ty::IntOrString, Value::Number(n)) => !n.is_f64() || is_whole_float(n),
        _ => false,
    }
}

/// JSON equality with numbers compared by value (1 == 1.0).
pub(super) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() || y.is_f64() {
                x.as_f64() == y.as_f64()
            } else {
                x == y
            }
        }
        _ => a == b,
    }
}
