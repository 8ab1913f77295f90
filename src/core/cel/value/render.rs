//! Values shown: CEL literals shortened to a limit with a marker, and a Secret's data
//! redacted (its type and size, never its content).

use std::fmt::Write as _;
use std::sync::Arc;

use super::super::strconv;
use super::{MapValue, Value};

impl Value {
    /// Renders the value as a CEL literal.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_limited(&mut out, usize::MAX, None);
        out
    }

    /// Renders the value as a CEL literal, at most about `limit` bytes of it: the rest is left
    /// out with a marker (`…`) and the work stops there, whatever the size of the value.
    /// Entries of the maps in `redacted` are shown as `<redacted: N bytes>`.
    pub fn render_limited(&self, out: &mut String, limit: usize, redacted: Option<&Redacted>) {
        let end = out.len().saturating_add(limit);
        let mut r = Renderer {
            out,
            end,
            truncated: false,
            redacted,
        };
        r.value(self);
    }
}

/// What an explanation must never show: a Secret's `data` and `stringData` values and the
/// last-applied annotation that copies them. Values are recognised by identity (the maps
/// whose values are hidden, the strings hidden whole), and the paths are kept for the
/// explanation's analysis of what a rule computes from them.
#[derive(Debug, Default, Clone)]
pub struct Redacted {
    /// Addresses of the maps whose values are hidden, only ever compared.
    maps: Vec<usize>,
    /// Addresses of the strings hidden whole.
    strings: Vec<usize>,
    /// The hidden texts (to catch them in messages).
    texts: Vec<Arc<str>>,
    /// The object paths hidden.
    pub paths: Vec<Vec<String>>,
}

impl Redacted {
    /// Hides what is at `path` in `root` (a map: its values; a string: itself).
    pub fn add_path(&mut self, root: &Value, path: &[&str]) {
        self.paths
            .push(path.iter().map(|s| s.to_string()).collect());
        let mut cur = root;
        for seg in path {
            match cur {
                Value::Map(m) => match m.get_str(seg) {
                    Some(v) => cur = v,
                    None => return,
                },
                _ => return,
            }
        }
        match cur {
            Value::Map(m) => {
                self.maps.push(Arc::as_ptr(m) as usize);
                for (_, v) in m.entries() {
                    if let Value::String(s) = v {
                        self.texts.push(s.clone());
                    }
                }
            }
            Value::String(s) => {
                self.strings.push(Arc::as_ptr(s) as *const u8 as usize);
                self.texts.push(s.clone());
            }
            _ => {}
        }
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    pub fn hides_map(&self, m: &Arc<MapValue>) -> bool {
        self.maps.contains(&(Arc::as_ptr(m) as usize))
    }

    pub fn hides_string(&self, s: &Arc<str>) -> bool {
        self.strings
            .contains(&(Arc::as_ptr(s) as *const u8 as usize))
    }

    /// Whether a text shows one of the hidden values (of four bytes or more).
    pub fn leaks(&self, text: &str) -> bool {
        self.texts
            .iter()
            .any(|t| t.len() >= 4 && text.contains(&**t))
    }
}

/// How a redacted value is shown: its type and size, never its content.
pub fn redacted_marker(v: &Value) -> String {
    match v {
        Value::String(s) => crate::core::secret::redacted_len(s.len()),
        Value::Bytes(b) => crate::core::secret::redacted_len(b.len()),
        Value::List(l) => format!("<redacted: list of {}>", l.len()),
        Value::Map(m) => format!("<redacted: map of {}>", m.len()),
        other => format!("<redacted: {}>", other.type_of().name()),
    }
}

struct Renderer<'a, 'b> {
    out: &'a mut String,
    end: usize,
    truncated: bool,
    redacted: Option<&'b Redacted>,
}

impl Renderer<'_, '_> {
    fn full(&mut self) -> bool {
        if self.out.len() >= self.end {
            if !self.truncated {
                self.out.push('…');
                self.truncated = true;
            }
            return true;
        }
        false
    }

    fn value(&mut self, v: &Value) {
        if self.full() {
            return;
        }
        match v {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            Value::Uint(u) => {
                let _ = write!(self.out, "{u}u");
            }
            Value::Double(d) => self.out.push_str(&render_double(*d)),
            Value::String(s) => {
                if self.redacted.is_some_and(|r| r.hides_string(s)) {
                    self.out.push_str(&redacted_marker(v));
                } else {
                    self.string(s)
                }
            }
            Value::Bytes(b) => {
                self.out.push_str("b\"");
                for &c in b.iter() {
                    if self.full() {
                        return;
                    }
                    match c {
                        b'"' => self.out.push_str("\\\""),
                        b'\\' => self.out.push_str("\\\\"),
                        0x20..=0x7e => self.out.push(c as char),
                        _ => {
                            let _ = write!(self.out, "\\x{c:02x}");
                        }
                    }
                }
                self.out.push('"');
            }
            Value::List(l) => {
                self.out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    if self.full() {
                        return;
                    }
                    self.value(v);
                }
                self.out.push(']');
            }
            Value::Map(m) => {
                let redact = self.redacted.is_some_and(|r| r.hides_map(m));
                self.out.push('{');
                for (i, (k, v)) in m.entries().iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    if self.full() {
                        return;
                    }
                    self.value(&k.0);
                    self.out.push_str(": ");
                    if redact {
                        self.out.push_str(&redacted_marker(v));
                    } else {
                        self.value(v);
                    }
                }
                self.out.push('}');
            }
            Value::Timestamp(t) => {
                let _ = write!(self.out, "timestamp(\"{}\")", t.to_rfc3339());
            }
            Value::Duration(d) => {
                let _ = write!(self.out, "duration(\"{}\")", d.to_cel_string());
            }
            Value::Type(t) => self.out.push_str(t.name()),
        }
    }

    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            if self.full() {
                return;
            }
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\x{:02x}", c as u32);
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}

/// Formats a double the way cel-go's `string(double)` does (Go `%g`, shortest digits).
pub fn format_double_go(d: f64) -> String {
    strconv::format_g(d)
}

fn render_double(d: f64) -> String {
    if d.is_nan() {
        return "double(\"NaN\")".into();
    }
    if d.is_infinite() {
        return if d > 0.0 {
            "double(\"Infinity\")".into()
        } else {
            "double(\"-Infinity\")".into()
        };
    }
    format!("{d:?}")
}
