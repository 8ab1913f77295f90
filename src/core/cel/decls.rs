//! cel-go's standard function declarations (common/stdlib/standard.go), with the cross-type
//! numeric comparison overloads filtered out as cel-go's checker does by default.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::types::CelType;

/// Type parameters of overload declarations: `A` and `B`.
pub const PA: CelType = CelType::Param(u32::MAX - 1);
pub const PB: CelType = CelType::Param(u32::MAX);

pub struct Overload {
    pub member: bool,
    /// Argument types, the receiver first for a member overload.
    pub args: Vec<CelType>,
    pub result: CelType,
}

fn g(args: Vec<CelType>, result: CelType) -> Overload {
    Overload {
        member: false,
        args,
        result,
    }
}
fn m(args: Vec<CelType>, result: CelType) -> Overload {
    Overload {
        member: true,
        args,
        result,
    }
}

pub static STD_FUNCTIONS: LazyLock<HashMap<&'static str, Vec<Overload>>> = LazyLock::new(build);

fn build() -> HashMap<&'static str, Vec<Overload>> {
    use CelType::*;
    let la = || CelType::list(PA);
    let mab = || CelType::map(PA, PB);
    let mut f: HashMap<&'static str, Vec<Overload>> = HashMap::new();
    f.insert("_?_:_", vec![g(vec![Bool, PA, PA], PA)]);
    f.insert("_&&_", vec![g(vec![Bool, Bool], Bool)]);
    f.insert("_||_", vec![g(vec![Bool, Bool], Bool)]);
    f.insert("!_", vec![g(vec![Bool], Bool)]);
    f.insert("@not_strictly_false", vec![g(vec![Bool], Bool)]);
    f.insert("_==_", vec![g(vec![PA, PA], Bool)]);
    f.insert("_!=_", vec![g(vec![PA, PA], Bool)]);
    f.insert(
        "_+_",
        vec![
            g(vec![Bytes, Bytes], Bytes),
            g(vec![Double, Double], Double),
            g(vec![Duration, Duration], Duration),
            g(vec![Duration, Timestamp], Timestamp),
            g(vec![Timestamp, Duration], Timestamp),
            g(vec![Int, Int], Int),
            g(vec![la(), la()], la()),
            g(vec![String, String], String),
            g(vec![Uint, Uint], Uint),
        ],
    );
    f.insert(
        "_-_",
        vec![
            g(vec![Double, Double], Double),
            g(vec![Duration, Duration], Duration),
            g(vec![Int, Int], Int),
            g(vec![Timestamp, Duration], Timestamp),
            g(vec![Timestamp, Timestamp], Duration),
            g(vec![Uint, Uint], Uint),
        ],
    );
    for op in ["_*_", "_/_"] {
        f.insert(
            op,
            vec![
                g(vec![Double, Double], Double),
                g(vec![Int, Int], Int),
                g(vec![Uint, Uint], Uint),
            ],
        );
    }
    f.insert(
        "_%_",
        vec![g(vec![Int, Int], Int), g(vec![Uint, Uint], Uint)],
    );
    f.insert("-_", vec![g(vec![Double], Double), g(vec![Int], Int)]);
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        f.insert(
            op,
            [Bool, Int, Uint, Double, String, Bytes, Timestamp, Duration]
                .into_iter()
                .map(|t| g(vec![t.clone(), t], Bool))
                .collect(),
        );
    }
    f.insert("_[_]", vec![g(vec![la(), Int], PA), g(vec![mab(), PA], PB)]);
    f.insert(
        "@in",
        vec![g(vec![PA, la()], Bool), g(vec![PA, mab()], Bool)],
    );
    let mut size = Vec::new();
    for t in [Bytes, la(), mab(), String] {
        size.push(g(vec![t.clone()], Int));
        size.push(m(vec![t], Int));
    }
    f.insert("size", size);
    f.insert("type", vec![g(vec![PA], CelType::type_of(PA))]);
    f.insert("bool", vec![g(vec![Bool], Bool), g(vec![String], Bool)]);
    f.insert("bytes", vec![g(vec![Bytes], Bytes), g(vec![String], Bytes)]);
    f.insert(
        "double",
        [Double, Int, String, Uint]
            .into_iter()
            .map(|t| g(vec![t], Double))
            .collect(),
    );
    f.insert(
        "duration",
        vec![g(vec![Duration], Duration), g(vec![String], Duration)],
    );
    f.insert("dyn", vec![g(vec![PA], Dyn)]);
    f.insert(
        "int",
        [Int, Double, Duration, String, Timestamp, Uint]
            .into_iter()
            .map(|t| g(vec![t], Int))
            .collect(),
    );
    f.insert(
        "string",
        [String, Bool, Bytes, Double, Duration, Int, Timestamp, Uint]
            .into_iter()
            .map(|t| g(vec![t], String))
            .collect(),
    );
    f.insert(
        "timestamp",
        [Timestamp, Int, String]
            .into_iter()
            .map(|t| g(vec![t], Timestamp))
            .collect(),
    );
    f.insert(
        "uint",
        [Uint, Double, Int, String]
            .into_iter()
            .map(|t| g(vec![t], Uint))
            .collect(),
    );
    for name in ["contains", "endsWith", "startsWith"] {
        f.insert(name, vec![m(vec![String, String], Bool)]);
    }
    f.insert(
        "matches",
        vec![g(vec![String, String], Bool), m(vec![String, String], Bool)],
    );
    for name in [
        "getFullYear",
        "getMonth",
        "getDayOfYear",
        "getDayOfMonth",
        "getDate",
        "getDayOfWeek",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    ] {
        let mut v = vec![m(vec![Timestamp], Int), m(vec![Timestamp, String], Int)];
        if matches!(
            name,
            "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds"
        ) {
            v.push(m(vec![Duration], Int));
        }
        f.insert(name, v);
    }
    f
}

/// The identifiers naming types in the standard environment.
pub fn type_ident(name: &str) -> Option<(super::value::TypeValue, CelType)> {
    use super::value::TypeValue as T;
    let (tv, t) = match name {
        "bool" => (T::Bool, CelType::Bool),
        "bytes" => (T::Bytes, CelType::Bytes),
        "double" => (T::Double, CelType::Double),
        "int" => (T::Int, CelType::Int),
        "uint" => (T::Uint, CelType::Uint),
        "string" => (T::String, CelType::String),
        "null_type" => (T::Null, CelType::Null),
        "type" => (T::Type, CelType::Type(None)),
        "list" => (T::List, CelType::list(CelType::Dyn)),
        "map" => (T::Map, CelType::map(CelType::Dyn, CelType::Dyn)),
        "google.protobuf.Timestamp" => (T::Timestamp, CelType::Timestamp),
        "google.protobuf.Duration" => (T::Duration, CelType::Duration),
        _ => return None,
    };
    Some((tv, CelType::type_of(t)))
}
