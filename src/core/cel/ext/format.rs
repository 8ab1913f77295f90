//! The string extension's `format`: Go-style clauses (`%s %d %f %e %b %x %X %o`, with a
//! precision), checked at compile time against the argument types where they are known and
//! applied at run time with cel-go's messages.

use std::fmt::Write as _;

use super::super::strconv;
use super::super::types::CelType;
use super::super::value::Value;
use super::*;

/// What a format clause asks of its argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clause {
    String,
    Decimal,
    Fixed(usize),
    Scientific(usize),
    Binary,
    Hex(bool),
    Octal,
}

const MAX_PRECISION: usize = 100;
const DEFAULT_PRECISION: usize = 6;

/// Parses the clause after a `%`: `(.precision)?[sdfebxXo]`, returning it and the bytes read.
fn parse_clause(s: &[u8]) -> Result<(Clause, usize), String> {
    let mut i = 0;
    let mut precision = DEFAULT_PRECISION;
    if s.first() == Some(&b'.') {
        i = 1;
        let start = i;
        loop {
            if i >= s.len() {
                return Err(
                    "error while parsing precision: could not find end of precision specifier"
                        .into(),
                );
            }
            if !s[i].is_ascii_digit() {
                break;
            }
            i += 1;
        }
        let digits = std::str::from_utf8(&s[start..i]).unwrap_or("");
        let p = strconv::atoi(digits).ok_or_else(|| {
            format!(
                "error while parsing precision: error while converting precision to integer: \
                 strconv.Atoi: parsing {}: invalid syntax",
                crate::core::cel::time::go_quote(digits)
            )
        })?;
        if p as usize > MAX_PRECISION {
            return Err(format!(
                "error while parsing precision: precision {p} exceeds maximum allowed precision {MAX_PRECISION}"
            ));
        }
        precision = p as usize;
    }
    let Some(&c) = s.get(i) else {
        return Err("unexpected end of string".into());
    };
    i += 1;
    let clause = match c {
        b's' => Clause::String,
        b'd' => Clause::Decimal,
        b'f' => Clause::Fixed(precision),
        b'e' => Clause::Scientific(precision),
        b'b' => Clause::Binary,
        b'x' => Clause::Hex(false),
        b'X' => Clause::Hex(true),
        b'o' => Clause::Octal,
        other => {
            return Err(format!(
                "unrecognized formatting clause \"{}\"",
                char::from(other)
            ));
        }
    };
    Ok((clause, i))
}

/// Walks a format string, calling `arg(index, clause)` for each clause; `Err` with cel-go's
/// message on a malformed string.
fn walk_format(
    fmt: &str,
    nargs: usize,
    out: &mut String,
    mut arg: impl FnMut(usize, Clause, &mut String) -> Result<(), String>,
) -> Result<usize, String> {
    let b = fmt.as_bytes();
    let mut i = 0;
    let mut index = 0;
    let mut literal_start = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        out.push_str(&fmt[literal_start..i]);
        if i + 1 < b.len() && b[i + 1] == b'%' {
            out.push('%');
            i += 2;
            literal_start = i;
            continue;
        }
        if index >= nargs {
            return Err(format!("index {index} out of range"));
        }
        if i + 1 >= b.len() {
            return Err("unexpected end of string".into());
        }
        let (clause, read) = parse_clause(&b[i + 1..])
            .map_err(|e| format!("could not parse formatting clause: {e}"))?;
        arg(index, clause, out).map_err(|e| format!("error during formatting: {e}"))?;
        i += 1 + read;
        literal_start = i;
        index += 1;
    }
    out.push_str(&fmt[literal_start..]);
    Ok(index)
}

fn clause_error(clause: Clause, type_name: &str) -> String {
    match clause {
        Clause::String => format!(
            "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {type_name}"
        ),
        Clause::Decimal => format!(
            "decimal clause can only be used on ints, uints, and doubles, was given {type_name}"
        ),
        Clause::Fixed(_) => format!(
            "fixed-point clause can only be used on ints, uints, and doubles, was given {type_name}"
        ),
        Clause::Scientific(_) => format!(
            "scientific clause can only be used on ints, uints, and doubles, was given {type_name}"
        ),
        Clause::Binary => {
            format!("only ints, uints, and bools can be formatted as binary, was given {type_name}")
        }
        Clause::Hex(_) => format!(
            "only ints, uints, bytes, and strings can be formatted as hex, was given {type_name}"
        ),
        Clause::Octal => {
            format!("octal clause can only be used on ints and uints, was given {type_name}")
        }
    }
}

/// `<string>.format(<list>)` at run time.
pub fn format(fmt: &str, args: &[Value]) -> ExtResult<String> {
    let mut out = String::with_capacity(fmt.len());
    walk_format(fmt, args.len(), &mut out, |i, clause, out| {
        format_arg(&args[i], clause, out)
    })?;
    Ok(out)
}

fn non_finite(d: f64) -> Option<&'static str> {
    if d.is_nan() {
        Some("NaN")
    } else if d.is_infinite() {
        Some(if d > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        None
    }
}

fn format_arg(v: &Value, clause: Clause, out: &mut String) -> Result<(), String> {
    let bad = || Err(clause_error(clause, v.type_of().name()));
    match clause {
        Clause::String => format_string(v, out),
        Clause::Decimal => match v {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}");
                Ok(())
            }
            Value::Double(d) => {
                out.push_str(
                    non_finite(*d)
                        .map_or_else(|| strconv::format_float_f(*d), String::from)
                        .as_str(),
                );
                Ok(())
            }
            _ => bad(),
        },
        Clause::Fixed(p) | Clause::Scientific(p) => {
            let d = match v {
                Value::Int(i) => *i as f64,
                Value::Uint(u) => *u as f64,
                Value::Double(d) => {
                    if let Some(s) = non_finite(*d) {
                        out.push_str(s);
                        return Ok(());
                    }
                    *d
                }
                _ => return bad(),
            };
            out.push_str(&if matches!(clause, Clause::Fixed(_)) {
                strconv::format_fixed(d, p)
            } else {
                strconv::format_scientific(d, p)
            });
            Ok(())
        }
        Clause::Binary => match v {
            Value::Bool(b) => {
                out.push(if *b { '1' } else { '0' });
                Ok(())
            }
            Value::Int(i) => {
                write_signed(out, *i, 2);
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:b}");
                Ok(())
            }
            _ => bad(),
        },
        Clause::Hex(upper) => {
            let s = match v {
                Value::Int(i) => {
                    let mut s = String::new();
                    write_signed(&mut s, *i, 16);
                    s
                }
                Value::Uint(u) => format!("{u:x}"),
                Value::String(s) => hex_bytes(s.as_bytes()),
                Value::Bytes(b) => hex_bytes(b),
                _ => return bad(),
            };
            out.push_str(&if upper { s.to_uppercase() } else { s });
            Ok(())
        }
        Clause::Octal => match v {
            Value::Int(i) => {
                write_signed(out, *i, 8);
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:o}");
                Ok(())
            }
            _ => bad(),
        },
    }
}

fn write_signed(out: &mut String, i: i64, radix: u32) {
    if i < 0 {
        out.push('-');
    }
    let u = i.unsigned_abs();
    let _ = match radix {
        2 => write!(out, "{u:b}"),
        8 => write!(out, "{u:o}"),
        _ => write!(out, "{u:x}"),
    };
}

fn hex_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for byte in b {
        let _ = write!(s, "{byte:02x}");
    }
    s
}

/// The `%s` rendering of cel-go's formatter.
fn format_string(v: &Value, out: &mut String) -> Result<(), String> {
    match v {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Uint(u) => {
            let _ = write!(out, "{u}");
        }
        Value::Double(d) => {
            out.push_str(&non_finite(*d).map_or_else(|| strconv::format_float_f(*d), String::from));
        }
        Value::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
        Value::String(s) => out.push_str(s),
        Value::Duration(d) => {
            out.push_str(&strconv::format_float_f(d.seconds_f64()));
            out.push('s');
        }
        Value::Timestamp(t) => out.push_str(&t.utc().to_rfc3339()),
        Value::Null => out.push_str("null"),
        Value::Type(t) => out.push_str(t.name()),
        Value::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                format_string(e, out)?;
            }
            out.push(']');
        }
        Value::Map(m) => {
            let mut entries = Vec::with_capacity(m.len());
            for (k, val) in m.entries() {
                let mut ks = String::new();
                format_string(k.value(), &mut ks)?;
                let mut vs = String::new();
                format_string(val, &mut vs)?;
                entries.push((ks, vs));
            }
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (k, val)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                out.push_str(val);
            }
            out.push('}');
        }
    }
    Ok(())
}

/// cel-go's compile-time check of `'<constant>'.format([<list literal>])`: each clause
/// against the static type of its argument, and no argument left over. `Err` with the index
/// of the argument at fault (None: the call) and the message.
pub fn check_format(fmt: &str, arg_types: &[CelType]) -> Result<(), (Option<usize>, String)> {
    let mut at_fault = None;
    let mut scratch = String::new();
    let used = walk_format(fmt, arg_types.len(), &mut scratch, |i, clause, _| {
        if type_fits(&arg_types[i], clause) {
            Ok(())
        } else {
            at_fault = Some(i);
            Err(clause_error(clause, &static_type_name(&arg_types[i])))
        }
    })
    .map_err(|e| (at_fault, e))?;
    if arg_types.len() > used {
        return Err((
            None,
            format!(
                "too many arguments supplied to string.format (expected {used}, got {})",
                arg_types.len()
            ),
        ));
    }
    Ok(())
}

fn type_fits(t: &CelType, clause: Clause) -> bool {
    use CelType as T;
    if matches!(t, T::Dyn | T::Param(_)) {
        return true;
    }
    match clause {
        Clause::String => !matches!(t, T::Error),
        Clause::Decimal | Clause::Fixed(_) | Clause::Scientific(_) => {
            matches!(t, T::Int | T::Uint | T::Double)
        }
        Clause::Binary => matches!(t, T::Bool | T::Int | T::Uint),
        Clause::Hex(_) => matches!(t, T::Int | T::Uint | T::String | T::Bytes),
        Clause::Octal => matches!(t, T::Int | T::Uint),
    }
}

fn static_type_name(t: &CelType) -> String {
    match t {
        CelType::List(_) => "list".into(),
        CelType::Map(..) => "map".into(),
        CelType::Type(_) => "type".into(),
        other => other.to_string(),
    }
}
