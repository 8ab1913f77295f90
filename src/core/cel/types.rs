//! Static CEL types and cel-go's assignability / unification rules (checker/types.go).

use std::fmt;
use std::sync::Arc;

/// A statically deduced CEL type. The element types are shared (a clone of a list or map
/// type does not allocate).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CelType {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Timestamp,
    Duration,
    Dyn,
    /// The type of an expression that failed to check.
    Error,
    List(Arc<CelType>),
    Map(Arc<CelType>, Arc<CelType>),
    /// `type`, optionally `type(T)` for the type of a known type.
    Type(Option<Arc<CelType>>),
    /// A type parameter (free type variable) of the checker.
    Param(u32),
}

impl CelType {
    pub fn list(t: CelType) -> CelType {
        CelType::List(Arc::new(t))
    }
    pub fn map(k: CelType, v: CelType) -> CelType {
        CelType::Map(Arc::new(k), Arc::new(v))
    }
    pub fn type_of(t: CelType) -> CelType {
        CelType::Type(Some(Arc::new(t)))
    }

    /// Whether a type parameter occurs in this type.
    pub fn has_param(&self) -> bool {
        match self {
            CelType::Param(_) => true,
            CelType::List(e) => e.has_param(),
            CelType::Map(k, v) => k.has_param() || v.has_param(),
            CelType::Type(Some(p)) => p.has_param(),
            _ => false,
        }
    }

    /// Whether a value of this static type could be a bool at run time.
    pub fn may_be_bool(&self) -> bool {
        matches!(
            self,
            CelType::Bool | CelType::Dyn | CelType::Error | CelType::Param(_)
        )
    }

    fn kind(&self) -> u8 {
        match self {
            CelType::Bool => 0,
            CelType::Int => 1,
            CelType::Uint => 2,
            CelType::Double => 3,
            CelType::String => 4,
            CelType::Bytes => 5,
            CelType::Null => 6,
            CelType::Timestamp => 7,
            CelType::Duration => 8,
            CelType::Dyn => 9,
            CelType::Error => 10,
            CelType::List(_) => 11,
            CelType::Map(..) => 12,
            CelType::Type(_) => 13,
            CelType::Param(_) => 14,
        }
    }
}

impl fmt::Display for CelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CelType::Bool => f.write_str("bool"),
            CelType::Int => f.write_str("int"),
            CelType::Uint => f.write_str("uint"),
            CelType::Double => f.write_str("double"),
            CelType::String => f.write_str("string"),
            CelType::Bytes => f.write_str("bytes"),
            CelType::Null => f.write_str("null_type"),
            CelType::Timestamp => f.write_str("google.protobuf.Timestamp"),
            CelType::Duration => f.write_str("google.protobuf.Duration"),
            CelType::Dyn => f.write_str("dyn"),
            CelType::Error => f.write_str("*error*"),
            CelType::List(e) => write!(f, "list({e})"),
            CelType::Map(k, v) => write!(f, "map({k}, {v})"),
            CelType::Type(None) => f.write_str("type"),
            CelType::Type(Some(t)) => write!(f, "type({t})"),
            CelType::Param(p) => write!(f, "_var{p}"),
        }
    }
}

/// Substitutions of type parameters found so far, by parameter number (the checker numbers
/// its parameters from 0 up), with the log of the changes of the assignability test under
/// way: a failed test is undone from it (as cel-go tests on a copy of the mapping).
#[derive(Clone, Debug, Default)]
pub struct Mapping {
    subs: Vec<Option<CelType>>,
    /// Substitutions of parameters numbered too high to index `subs` (none in practice).
    sparse: Vec<(u32, CelType)>,
    /// The earlier substitution of each parameter changed since the test began.
    undo: Vec<(u32, Option<CelType>)>,
}

/// Parameters below this number are indexed directly.
const DENSE_PARAMS: u32 = 1 << 20;

impl Mapping {
    fn get(&self, p: u32) -> Option<&CelType> {
        if p < DENSE_PARAMS {
            self.subs.get(p as usize).and_then(Option::as_ref)
        } else {
            self.sparse.iter().find(|(q, _)| *q == p).map(|(_, t)| t)
        }
    }

    /// Sets (or with None, clears) the substitution of `p`; returns the earlier one.
    fn set(&mut self, p: u32, t: Option<CelType>) -> Option<CelType> {
        if p < DENSE_PARAMS {
            let i = p as usize;
            if i >= self.subs.len() {
                // nothing to clear beyond the end
                t.as_ref()?;
                self.subs.resize(i + 1, None);
            }
            std::mem::replace(&mut self.subs[i], t)
        } else {
            let at = self.sparse.iter().position(|(q, _)| *q == p);
            match (at, t) {
                (Some(i), Some(t)) => Some(std::mem::replace(&mut self.sparse[i].1, t)),
                (Some(i), None) => Some(self.sparse.remove(i).1),
                (None, Some(t)) => {
                    self.sparse.push((p, t));
                    None
                }
                (None, None) => None,
            }
        }
    }

    fn find(&self, t: &CelType) -> Option<&CelType> {
        match t {
            CelType::Param(p) => self.get(*p),
            _ => None,
        }
    }
    fn add(&mut self, p: &CelType, t: CelType) {
        if let CelType::Param(p) = p {
            let before = self.set(*p, Some(t));
            self.undo.push((*p, before));
        }
    }

    /// Ends a test: keeps its changes, or undoes them.
    fn finish(&mut self, keep: bool) -> bool {
        if keep {
            self.undo.clear();
        } else {
            while let Some((p, before)) = self.undo.pop() {
                self.set(p, before);
            }
        }
        keep
    }

    /// The type `t` stands for at its top level: a bound parameter followed to what it is
    /// bound to (what [`substitute`] gives at the top, without building the type).
    pub fn resolve<'t>(&'t self, mut t: &'t CelType) -> &'t CelType {
        while let Some(sub) = self.find(t) {
            t = sub;
        }
        t
    }
}

fn is_dyn(t: &CelType) -> bool {
    matches!(t, CelType::Dyn)
}

pub fn is_dyn_or_error(t: &CelType) -> bool {
    matches!(t, CelType::Dyn | CelType::Error)
}

fn is_equal_or_less_specific(t1: &CelType, t2: &CelType) -> bool {
    if is_dyn(t1) || matches!(t1, CelType::Param(_)) {
        return true;
    }
    if is_dyn(t2) || matches!(t2, CelType::Param(_)) {
        return false;
    }
    if t1.kind() != t2.kind() {
        return false;
    }
    match (t1, t2) {
        (CelType::List(a), CelType::List(b)) => is_equal_or_less_specific(a, b),
        (CelType::Map(k1, v1), CelType::Map(k2, v2)) => {
            is_equal_or_less_specific(k1, k2) && is_equal_or_less_specific(v1, v2)
        }
        (CelType::Type(_), CelType::Type(_)) => true,
        _ => t1 == t2,
    }
}

fn internal_is_assignable(m: &mut Mapping, t1: &CelType, t2: &CelType) -> bool {
    if matches!(t2, CelType::Param(_)) {
        let (valid, has_sub) = is_valid_type_substitution(m, t1, t2);
        if valid {
            return true;
        }
        if has_sub {
            return false;
        }
    }
    if matches!(t1, CelType::Param(_)) {
        return is_valid_type_substitution(m, t2, t1).0;
    }
    if is_dyn_or_error(t1) || is_dyn_or_error(t2) {
        return true;
    }
    if matches!(t1, CelType::Null) {
        return is_assignable_null(t2);
    }
    if matches!(t2, CelType::Null) {
        return is_assignable_null(t1);
    }
    match (t1, t2) {
        (CelType::List(a), CelType::List(b)) => internal_is_assignable(m, a, b),
        (CelType::Map(k1, v1), CelType::Map(k2, v2)) => {
            internal_is_assignable(m, k1, k2) && internal_is_assignable(m, v1, v2)
        }
        (CelType::Type(_), CelType::Type(_)) => true,
        (CelType::List(_), _) | (CelType::Map(..), _) | (CelType::Type(_), _) => false,
        _ => t1 == t2,
    }
}

fn is_assignable_null(t: &CelType) -> bool {
    matches!(t, CelType::Null | CelType::Timestamp | CelType::Duration)
}

fn is_valid_type_substitution(m: &mut Mapping, t1: &CelType, t2: &CelType) -> (bool, bool) {
    if t1 == t2 {
        return (true, true);
    }
    if let Some(t2_sub) = m.find(t2).cloned() {
        if *t1 == t2_sub {
            return (true, true);
        }
        if internal_is_assignable(m, t1, &t2_sub) {
            let t2_new = most_general(t1, &t2_sub);
            if not_referenced_in(m, t2, &t2_new) {
                m.add(t2, t2_new);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, t2, t1) {
        m.add(t2, t1.clone());
        return (true, false);
    }
    (false, false)
}

fn not_referenced_in(m: &Mapping, t: &CelType, within: &CelType) -> bool {
    if t == within {
        return false;
    }
    match within {
        CelType::Param(_) => match m.find(within) {
            None => true,
            Some(sub) => not_referenced_in(m, t, sub),
        },
        CelType::List(e) => not_referenced_in(m, t, e),
        CelType::Map(k, v) => not_referenced_in(m, t, k) && not_referenced_in(m, t, v),
        CelType::Type(Some(p)) => not_referenced_in(m, t, p),
        _ => true,
    }
}

pub fn most_general(t1: &CelType, t2: &CelType) -> CelType {
    if is_equal_or_less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

/// `isAssignable`: on success the mapping is updated.
pub fn is_assignable(m: &mut Mapping, t1: &CelType, t2: &CelType) -> bool {
    let ok = internal_is_assignable(m, t1, t2);
    m.finish(ok)
}

pub fn is_assignable_list(m: &mut Mapping, l1: &[CelType], l2: &[CelType]) -> bool {
    if l1.len() != l2.len() {
        return false;
    }
    let ok = l1
        .iter()
        .zip(l2)
        .all(|(a, b)| internal_is_assignable(m, a, b));
    m.finish(ok)
}

pub fn substitute(m: &Mapping, t: &CelType, param_to_dyn: bool) -> CelType {
    if !t.has_param() {
        return t.clone();
    }
    if let Some(sub) = m.find(t) {
        return substitute(m, sub, param_to_dyn);
    }
    match t {
        CelType::Param(_) if param_to_dyn => CelType::Dyn,
        CelType::List(e) => CelType::list(substitute(m, e, param_to_dyn)),
        CelType::Map(k, v) => CelType::map(
            substitute(m, k, param_to_dyn),
            substitute(m, v, param_to_dyn),
        ),
        CelType::Type(Some(p)) => CelType::type_of(substitute(m, p, param_to_dyn)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unification_binds_params() {
        let mut m = Mapping::default();
        let a = CelType::Param(0);
        assert!(is_assignable_list(
            &mut m,
            &[CelType::Int, CelType::Int],
            &[a.clone(), a.clone()]
        ));
        assert_eq!(substitute(&m, &a, false), CelType::Int);
        let mut m = Mapping::default();
        assert!(!is_assignable_list(
            &mut m,
            &[CelType::Int, CelType::Double],
            &[a.clone(), a.clone()]
        ));
        let mut m = Mapping::default();
        assert!(is_assignable_list(
            &mut m,
            &[CelType::Int, CelType::Dyn],
            &[a.clone(), a.clone()]
        ));
    }

    #[test]
    fn displays_like_cel_go() {
        assert_eq!(
            CelType::map(CelType::String, CelType::Dyn).to_string(),
            "map(string, dyn)"
        );
        assert_eq!(CelType::type_of(CelType::Int).to_string(), "type(int)");
    }
}
