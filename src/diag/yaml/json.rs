//! A node tree converted to JSON the way the API server stores an object: integers that fit
//! int64 stay integers, every other number is a double, merge keys are applied, aliases are
//! expanded.
//!
//! Expansion is where a small document becomes a large one ("billion laughs"), so it runs
//! on a budget: values (every node produced, aliases included) and the bytes of text that
//! aliases copy (an alias of a long string copies the whole string). Nesting is bounded by
//! the tree builder, which counts an alias's depth where it is used; the conversion checks
//! the depth again so that a tree built by hand cannot overflow the stack either.

use serde_json::{Map, Number, Value};

use super::{Limits, Node, NodeKind, Scalar, ScalarValue, Style, YamlError};

/// What ran out, before the error is given its message.
enum Exceeded {
    Values,
    AliasBytes,
    Depth,
}

enum Error {
    /// A budget ran out: the offset is moved out to the outermost alias being expanded.
    Exceeded(Exceeded, usize),
    Other(YamlError),
}

struct Conversion {
    values_left: usize,
    alias_bytes_left: usize,
    max_depth: usize,
    /// Whole floats become integers, as after a round trip through the API server.
    server: bool,
}

pub(super) fn to_json(node: &Node, limits: &Limits, server: bool) -> Result<Value, YamlError> {
    let mut c = Conversion {
        values_left: limits.max_values,
        alias_bytes_left: limits.max_alias_bytes,
        max_depth: limits.max_depth,
        server,
    };
    c.convert(node, 0, false).map_err(|e| match e {
        Error::Other(e) => e,
        Error::Exceeded(what, offset) => YamlError {
            message: match what {
                Exceeded::Values => format!(
                    "the document expands to more than {} values through this alias: refusing \
                     to load it (a \"billion laughs\" document?)",
                    limits.max_values
                ),
                Exceeded::AliasBytes => format!(
                    "the aliases of the document copy more than {} of text through this alias: \
                     refusing to load it (an alias bomb?)",
                    super::human_bytes(limits.max_alias_bytes)
                ),
                Exceeded::Depth => super::too_deep(limits.max_depth),
            },
            offset,
        },
    })
}

impl Conversion {
    /// `depth` counts the collections around `node`; `in_alias` is set inside an alias's
    /// expansion, where copied text is charged.
    fn convert(&mut self, node: &Node, depth: usize, in_alias: bool) -> Result<Value, Error> {
        if let NodeKind::Anchor(target) = &node.kind {
            // The anchored node itself, where it is defined: nothing is copied.
            return self.convert(target, depth, in_alias);
        }
        if self.values_left == 0 {
            return Err(Error::Exceeded(Exceeded::Values, node.span.start));
        }
        self.values_left -= 1;
        Ok(match &node.kind {
            NodeKind::Anchor(target) => self.convert(target, depth, in_alias)?,
            // The error names the outermost alias whose expansion ran out of budget.
            NodeKind::Alias(target) => self.convert(target, depth, true).map_err(|e| match e {
                Error::Exceeded(what, _) => Error::Exceeded(what, node.span.start),
                other => other,
            })?,
            NodeKind::Scalar(s) => {
                if in_alias {
                    self.charge(s.text.len(), node)?;
                }
                scalar_json(s, node.span.start, self.server).map_err(Error::Other)?
            }
            NodeKind::Seq(items) => {
                self.enter(depth, node)?;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.convert(item, depth + 1, in_alias)?);
                }
                Value::Array(out)
            }
            NodeKind::Map(entries) => {
                self.enter(depth, node)?;
                self.map(entries, depth, in_alias)?
            }
        })
    }

    fn enter(&self, depth: usize, node: &Node) -> Result<(), Error> {
        if depth >= self.max_depth {
            return Err(Error::Exceeded(Exceeded::Depth, node.span.start));
        }
        Ok(())
    }

    fn charge(&mut self, bytes: usize, node: &Node) -> Result<(), Error> {
        match self.alias_bytes_left.checked_sub(bytes) {
            Some(left) => {
                self.alias_bytes_left = left;
                Ok(())
            }
            None => Err(Error::Exceeded(Exceeded::AliasBytes, node.span.start)),
        }
    }

    fn map(
        &mut self,
        entries: &[(Node, Node)],
        depth: usize,
        in_alias: bool,
    ) -> Result<Value, Error> {
        let mut map = Map::with_capacity(entries.len());
        let mut merges = Vec::new();
        for (k, v) in entries {
            let ks = k.as_scalar();
            if ks.is_some_and(|s| s.style == Style::Plain && s.text == "<<") {
                merges.push(v);
                continue;
            }
            let Some(key) = ks else {
                return Err(Error::Other(YamlError {
                    message: "a mapping key must be a scalar (Kubernetes objects are JSON: keys \
                              are strings)"
                        .into(),
                    offset: k.span.start,
                }));
            };
            if in_alias || matches!(k.kind, NodeKind::Alias(_)) {
                self.charge(key.text.len(), k)?;
            }
            let value = self.convert(v, depth + 1, in_alias)?;
            map.insert(key.text.clone(), value);
        }
        // YAML 1.1 merge keys (`<<: *base`), which kubectl honours: explicit keys win. The
        // merged mappings' entries sit at this level, so they are converted one level up.
        for merge in merges {
            let sources: Vec<&Node> = match merge.as_seq() {
                Some(items) => items.iter().collect(),
                None => vec![merge],
            };
            for src in sources {
                let Value::Object(m) = self.convert(src, depth, in_alias)? else {
                    return Err(Error::Other(YamlError {
                        message: "a merge key (`<<`) must refer to a mapping".into(),
                        offset: src.span.start,
                    }));
                };
                for (k, v) in m {
                    map.entry(k).or_insert(v);
                }
            }
        }
        Ok(Value::Object(map))
    }
}

fn scalar_json(s: &Scalar, offset: usize, server: bool) -> Result<Value, YamlError> {
    scalar_value(&s.value, || s.text.clone(), offset, server)
}

/// The JSON of a resolved scalar; `text` gives a string's text.
pub(super) fn scalar_value(
    value: &ScalarValue,
    text: impl FnOnce() -> String,
    offset: usize,
    server: bool,
) -> Result<Value, YamlError> {
    Ok(match *value {
        ScalarValue::Null => Value::Null,
        ScalarValue::Bool(b) => Value::Bool(b),
        ScalarValue::Int(i) => Value::Number(i.into()),
        ScalarValue::Uint(u) => float_json(u as f64, offset, false)?,
        ScalarValue::Float(f) => float_json(f, offset, server)?,
        ScalarValue::String => Value::String(text()),
    })
}

/// A number the way it comes back from the API server: Go's JSON encoder writes a float below
/// 1e21 in its shortest decimal form without an exponent (a whole one without a fraction:
/// 9223372036854774784.0 is written 9223372036854775000), and the server decodes a number
/// without a fraction or exponent that fits int64 as int64.
pub(crate) fn float_json(f: f64, offset: usize, server: bool) -> Result<Value, YamlError> {
    if server
        && f.fract() == 0.0
        && f.abs() < 1e21
        && let Ok(i) = format!("{f}").parse::<i64>()
    {
        return Ok(Value::Number(i.into()));
    }
    Number::from_f64(f).map(Value::Number).ok_or(YamlError {
        message: "infinity and NaN cannot be represented in a Kubernetes object (JSON)".into(),
        offset,
    })
}
