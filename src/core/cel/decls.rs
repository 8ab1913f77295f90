//! cel-go's function declarations: the standard library (common/stdlib/standard.go, with
//! the cross-type numeric comparison overloads filtered out as cel-go's checker does by
//! default) and the string extension (ext/strings.go, at its latest version), in cel-go's
//! declaration order, which decides how the checker binds type parameters.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::types::CelType;

/// Type parameters of overload declarations: `A` and `B`.
pub const PA: CelType = CelType::Param(u32::MAX - 1);
pub const PB: CelType = CelType::Param(u32::MAX);

#[derive(Debug)]
pub struct Overload {
    pub member: bool,
    /// Argument types, the receiver first for a member overload.
    pub args: Vec<CelType>,
    pub result: CelType,
    /// Whether the type parameters `A` or `B` occur in the argument or result types.
    pub generic: bool,
}

impl Overload {
    fn new(member: bool, args: Vec<CelType>, result: CelType) -> Overload {
        let generic = args.iter().any(CelType::has_param) || result.has_param();
        Overload {
            member,
            args,
            result,
            generic,
        }
    }
}

#[derive(Debug)]
pub struct Function {
    pub overloads: Vec<Overload>,
    /// Each overload has its own binding, guarded by its argument types at run time: when the
    /// checker narrows a call to one overload, a value of another type is "no such
    /// overload". False for the operators bound once for all overloads (dispatch by the
    /// operand's traits), and for the functions declared without type guards.
    pub guarded: bool,
}

fn g(args: Vec<CelType>, result: CelType) -> Overload {
    Overload::new(false, args, result)
}
fn m(args: Vec<CelType>, result: CelType) -> Overload {
    Overload::new(true, args, result)
}

pub static STD_FUNCTIONS: LazyLock<HashMap<&'static str, Function>> = LazyLock::new(standard);
pub static STRING_FUNCTIONS: LazyLock<HashMap<&'static str, Function>> = LazyLock::new(strings);

/// The declaration of a function in an environment.
pub fn function(name: &str, strings_ext: bool) -> Option<&'static Function> {
    STD_FUNCTIONS.get(name).or_else(|| {
        if strings_ext {
            STRING_FUNCTIONS.get(name)
        } else {
            None
        }
    })
}

fn single(overloads: Vec<Overload>) -> Function {
    Function {
        overloads,
        guarded: false,
    }
}

fn guarded(overloads: Vec<Overload>) -> Function {
    Function {
        overloads,
        guarded: true,
    }
}

fn standard() -> HashMap<&'static str, Function> {
    use CelType::*;
    let la = || CelType::list(PA);
    let mab = || CelType::map(PA, PB);
    let mut f: HashMap<&'static str, Function> = HashMap::new();
    f.insert("_?_:_", single(vec![g(vec![Bool, PA, PA], PA)]));
    f.insert("_&&_", single(vec![g(vec![Bool, Bool], Bool)]));
    f.insert("_||_", single(vec![g(vec![Bool, Bool], Bool)]));
    f.insert("!_", single(vec![g(vec![Bool], Bool)]));
    f.insert("@not_strictly_false", single(vec![g(vec![Bool], Bool)]));
    f.insert("_==_", single(vec![g(vec![PA, PA], Bool)]));
    f.insert("_!=_", single(vec![g(vec![PA, PA], Bool)]));
    f.insert(
        "_+_",
        single(vec![
            g(vec![Bytes, Bytes], Bytes),
            g(vec![Double, Double], Double),
            g(vec![Duration, Duration], Duration),
            g(vec![Duration, Timestamp], Timestamp),
            g(vec![Timestamp, Duration], Timestamp),
            g(vec![Int, Int], Int),
            g(vec![la(), la()], la()),
            g(vec![String, String], String),
            g(vec![Uint, Uint], Uint),
        ]),
    );
    f.insert(
        "_-_",
        single(vec![
            g(vec![Double, Double], Double),
            g(vec![Duration, Duration], Duration),
            g(vec![Int, Int], Int),
            g(vec![Timestamp, Duration], Timestamp),
            g(vec![Timestamp, Timestamp], Duration),
            g(vec![Uint, Uint], Uint),
        ]),
    );
    for op in ["_*_", "_/_"] {
        f.insert(
            op,
            single(vec![
                g(vec![Double, Double], Double),
                g(vec![Int, Int], Int),
                g(vec![Uint, Uint], Uint),
            ]),
        );
    }
    f.insert(
        "_%_",
        single(vec![g(vec![Int, Int], Int), g(vec![Uint, Uint], Uint)]),
    );
    f.insert(
        "-_",
        single(vec![g(vec![Double], Double), g(vec![Int], Int)]),
    );
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        f.insert(
            op,
            single(
                [Bool, Int, Uint, Double, String, Bytes, Timestamp, Duration]
                    .into_iter()
                    .map(|t| g(vec![t.clone(), t], Bool))
                    .collect(),
            ),
        );
    }
    f.insert(
        "_[_]",
        single(vec![g(vec![la(), Int], PA), g(vec![mab(), PA], PB)]),
    );
    f.insert(
        "@in",
        single(vec![g(vec![PA, la()], Bool), g(vec![PA, mab()], Bool)]),
    );
    let mut size = Vec::new();
    for t in [Bytes, la(), mab(), String] {
        size.push(g(vec![t.clone()], Int));
        size.push(m(vec![t], Int));
    }
    f.insert("size", single(size));
    f.insert("type", single(vec![g(vec![PA], CelType::type_of(PA))]));
    f.insert(
        "bool",
        guarded(vec![g(vec![Bool], Bool), g(vec![String], Bool)]),
    );
    f.insert(
        "bytes",
        guarded(vec![g(vec![Bytes], Bytes), g(vec![String], Bytes)]),
    );
    f.insert(
        "double",
        guarded(
            [Double, Int, String, Uint]
                .into_iter()
                .map(|t| g(vec![t], Double))
                .collect(),
        ),
    );
    f.insert(
        "duration",
        guarded(vec![g(vec![Duration], Duration), g(vec![String], Duration)]),
    );
    f.insert("dyn", single(vec![g(vec![PA], Dyn)]));
    f.insert(
        "int",
        guarded(
            [Int, Double, Duration, String, Timestamp, Uint]
                .into_iter()
                .map(|t| g(vec![t], Int))
                .collect(),
        ),
    );
    f.insert(
        "string",
        guarded(
            [String, Bool, Bytes, Double, Duration, Int, Timestamp, Uint]
                .into_iter()
                .map(|t| g(vec![t], String))
                .collect(),
        ),
    );
    f.insert(
        "timestamp",
        guarded(
            [Timestamp, Int, String]
                .into_iter()
                .map(|t| g(vec![t], Timestamp))
                .collect(),
        ),
    );
    f.insert(
        "uint",
        guarded(
            [Uint, Double, Int, String]
                .into_iter()
                .map(|t| g(vec![t], Uint))
                .collect(),
        ),
    );
    // Declared with type guards disabled: the implementation checks its operands.
    for name in ["contains", "endsWith", "startsWith"] {
        f.insert(name, single(vec![m(vec![String, String], Bool)]));
    }
    f.insert(
        "matches",
        single(vec![
            g(vec![String, String], Bool),
            m(vec![String, String], Bool),
        ]),
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
        f.insert(name, guarded(v));
    }
    f
}

/// cel-go's `ext.Strings()` at its latest version.
fn strings() -> HashMap<&'static str, Function> {
    use CelType::*;
    let mut f: HashMap<&'static str, Function> = HashMap::new();
    f.insert("charAt", guarded(vec![m(vec![String, Int], String)]));
    for name in ["indexOf", "lastIndexOf"] {
        f.insert(
            name,
            guarded(vec![
                m(vec![String, String], Int),
                m(vec![String, String, Int], Int),
            ]),
        );
    }
    for name in ["lowerAscii", "upperAscii", "trim", "reverse"] {
        f.insert(name, guarded(vec![m(vec![String], String)]));
    }
    f.insert(
        "replace",
        guarded(vec![
            m(vec![String, String, String], String),
            m(vec![String, String, String, Int], String),
        ]),
    );
    f.insert(
        "split",
        guarded(vec![
            m(vec![String, String], CelType::list(String)),
            m(vec![String, String, Int], CelType::list(String)),
        ]),
    );
    f.insert(
        "substring",
        guarded(vec![
            m(vec![String, Int], String),
            m(vec![String, Int, Int], String),
        ]),
    );
    f.insert(
        "format",
        guarded(vec![m(vec![String, CelType::list(Dyn)], String)]),
    );
    f.insert("strings.quote", guarded(vec![g(vec![String], String)]));
    f.insert(
        "join",
        guarded(vec![
            m(vec![CelType::list(String)], String),
            m(vec![CelType::list(String), String], String),
        ]),
    );
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
