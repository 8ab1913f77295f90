//! The fields of the object a compiled rule can read, so that an object given as JSON is
//! converted only where the rule looks (cel-go reads the fields of a JSON object lazily, by
//! reflection; converting the whole object on every evaluation made the path `check`,
//! `doctor` and `run` use several times slower).
//!
//! A rule reads a field through a chain of selections from the object variable (`self.a.b`,
//! `has(self.a.b)`, a fused path): the value at the end of the chain is converted whole, and
//! the maps on the way hold only the keys some chain goes through. Any other use of the
//! variable (`self == {}`, `self.all(...)`, passing it to a function) needs all of it. The
//! values the rule sees are the ones the whole conversion gives, wherever it looks; a map on
//! the way is never seen whole (seeing it whole would be a use of its own, which converts it
//! whole). The conversion is linear in what it converts, as the whole one was in the object.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::ast::{Kind, Node};
use super::value::{MapKey, MapValue, Value, same_str};

/// What of the object a rule reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Reads {
    /// All of it (from here down).
    All,
    /// Only these keys of a map, each as far as it says.
    Fields(BTreeMap<Arc<str>, Reads>),
}

/// What a rule whose tree is `root` reads of the variable in `slot`.
pub fn reads(root: &Node, slot: usize) -> Reads {
    let mut reads = Reads::Fields(BTreeMap::new());
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if reads == Reads::All {
            break;
        }
        if is_chain(n, slot) {
            reads.insert_chain(n);
            continue;
        }
        match &n.kind {
            Kind::Var(s) if *s == slot => reads = Reads::All,
            Kind::Lit(_)
            | Kind::TypeIdent(..)
            | Kind::Var(_)
            | Kind::Unresolved(_)
            | Kind::Name(_)
            | Kind::Path { .. }
            | Kind::Struct(_) => {}
            Kind::Select { operand, .. } => stack.push(operand),
            Kind::Call { target, args, .. } => {
                stack.extend(target.as_deref());
                stack.extend(args);
            }
            Kind::InSet { arg, .. } => stack.push(arg),
            Kind::List(items) => stack.extend(items),
            Kind::Map(entries) => {
                for (k, v) in entries {
                    stack.push(k);
                    stack.push(v);
                }
            }
            Kind::Comprehension(c) => {
                stack.extend([
                    &c.range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ]);
            }
        }
    }
    reads
}

/// Whether `n` is a chain of selections from the variable in `slot` (see
/// [`Reads::insert_chain`]).
fn is_chain(n: &Node, slot: usize) -> bool {
    let mut at = n;
    let mut selected = false;
    loop {
        match &at.kind {
            Kind::Select { operand, .. } => {
                selected = true;
                at = operand;
            }
            Kind::Path { slot: s, .. } => return *s == slot,
            Kind::Var(s) => return *s == slot && selected,
            _ => return false,
        }
    }
}

impl Reads {
    /// [`Reads::insert`] of the fields of the chain `n` (one [`is_chain`] accepts), from the
    /// variable on, without gathering them first.
    fn insert_chain(&mut self, n: &Node) {
        if let Some(end) = self.descend(n) {
            *end = Reads::All;
        }
    }

    /// The reads at the end of the chain `n`, made on the way; None if all of a map on the
    /// way is read already.
    fn descend(&mut self, n: &Node) -> Option<&mut Reads> {
        match &n.kind {
            Kind::Select { operand, field, .. } => self.descend(operand)?.field(field),
            Kind::Path { fields, .. } => {
                let mut at = self;
                for f in fields.iter() {
                    at = at.field(f)?;
                }
                Some(at)
            }
            _ => Some(self),
        }
    }

    /// The reads of a field of a map read in part (made if new); None if all of it is read.
    fn field(&mut self, name: &Arc<str>) -> Option<&mut Reads> {
        match self {
            Reads::All => None,
            Reads::Fields(fields) => Some(
                fields
                    .entry(Arc::clone(name))
                    .or_insert_with(|| Reads::Fields(BTreeMap::new())),
            ),
        }
    }
}

/// `v` converted as far as `reads` says (the rest of a map left out).
pub fn project(v: &serde_json::Value, reads: &Reads) -> Value {
    match (reads, v) {
        (Reads::Fields(fields), serde_json::Value::Object(o)) => {
            // In the object's own order, as the whole conversion gives them.
            let mut entries = Vec::with_capacity(fields.len().min(o.len()));
            for (k, child) in o {
                // The rule's own key: no allocation, and a lookup of the rule's field finds
                // it by identity (see MapValue::get_str).
                if let Some((key, sub)) = field(fields, k) {
                    entries.push((MapKey::shared(key), project(child, sub)));
                }
            }
            Value::Map(Arc::new(MapValue::from_distinct_strings(entries)))
        }
        _ => Value::from_json(v),
    }
}

/// The reads of the field `name`: a few fields are scanned, lengths first (most keys of an
/// object differ from the rule's in length), more are searched.
fn field<'r>(
    fields: &'r BTreeMap<Arc<str>, Reads>,
    name: &str,
) -> Option<(&'r Arc<str>, &'r Reads)> {
    if fields.len() <= 8 {
        fields.iter().find(|(k, _)| same_str(k, name))
    } else {
        fields.get_key_value(name)
    }
}
