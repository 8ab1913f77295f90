//! Test helpers: CRD loading and tiny rule evaluators.
#![allow(dead_code)]

use std::cell::RefCell;

use kubectl_ksm::core::schema::{Crd, RuleEvaluator};
use kubectl_ksm::diag::{Source, yaml};
use serde_json::Value;

pub const CRD_DIRS: [&str; 2] = [
    concat!(env!("CARGO_MANIFEST_DIR"), "/crds/kcm"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/crds/flux"),
];
pub const EXAMPLES_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/objects");

pub fn yaml_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    files
}

pub fn yaml_docs(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    parse_all(&path.display().to_string(), &text)
}

pub fn yaml(text: &str) -> Value {
    parse_all("test", text)
        .into_iter()
        .next()
        .unwrap_or(Value::Null)
}

/// Every non-empty document, through the project's own YAML loader.
pub fn parse_all(name: &str, text: &str) -> Vec<Value> {
    let source = Source::new(name, text);
    let (docs, err) = yaml::parse_documents(&source);
    assert!(err.is_none(), "{name}: {err:?}");
    docs.into_iter()
        .filter_map(|d| d.root)
        .map(|r| r.to_json(&yaml::Limits::default()).unwrap())
        .filter(|d| !d.is_null())
        .collect()
}

pub fn load_crds() -> Vec<Crd> {
    let mut out = Vec::new();
    for dir in CRD_DIRS {
        for p in yaml_files(dir) {
            for d in yaml_docs(&p) {
                out.push(Crd::from_json(&d).unwrap_or_else(|e| panic!("{}: {e}", p.display())));
            }
        }
    }
    out
}

pub fn crd_for<'c>(crds: &'c [Crd], doc: &Value) -> Option<&'c Crd> {
    let av = doc.get("apiVersion")?.as_str()?;
    let kind = doc.get("kind")?.as_str()?;
    crds.iter().find(|c| c.matches(av, kind))
}

/// Records every (rule, value) it is asked about; answers `None`.
#[derive(Default)]
pub struct Recorder {
    pub calls: RefCell<Vec<(String, Value)>>,
}

impl RuleEvaluator for Recorder {
    fn eval(&self, rule: &str, value: &Value) -> Option<bool> {
        self.calls
            .borrow_mut()
            .push((rule.to_string(), value.clone()));
        None
    }
}

/// A tiny CEL subset: `has(self.a.b)`, `self.a.b`, string literals, `true`,
/// `false`, `!`, `&&`, `||`, `==`, `!=`, `? :` and parentheses. Anything else
/// gives `None`.
pub struct MiniCel;

impl RuleEvaluator for MiniCel {
    fn eval(&self, rule: &str, value: &Value) -> Option<bool> {
        let toks = tokenize(rule)?;
        let mut p = Parser {
            toks: &toks,
            pos: 0,
            this: value,
        };
        let v = p.ternary()?;
        if p.pos != toks.len() {
            return None;
        }
        match v {
            V::Bool(b) => Some(b),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(&'static str),
}

fn tokenize(s: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphabetic() || ch == '_' {
            let st = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[st..i].iter().collect()));
        } else if ch == '\'' || ch == '"' {
            let st = i + 1;
            i += 1;
            while i < c.len() && c[i] != ch {
                i += 1;
            }
            out.push(Tok::Str(c[st..i.min(c.len())].iter().collect()));
            i += 1;
        } else {
            let two: String = c[i..(i + 2).min(c.len())].iter().collect();
            let p = ["&&", "||", "==", "!="].into_iter().find(|p| *p == two);
            if let Some(p) = p {
                out.push(Tok::Punct(p));
                i += 2;
            } else {
                let p = ["!", "(", ")", ".", "?", ":"]
                    .into_iter()
                    .find(|p| p.starts_with(ch))?;
                out.push(Tok::Punct(p));
                i += 1;
            }
        }
    }
    Some(out)
}

#[derive(Debug, Clone, PartialEq)]
enum V {
    Bool(bool),
    Json(Value),
    Missing,
}

struct Parser<'t> {
    toks: &'t [Tok],
    pos: usize,
    this: &'t Value,
}

impl Parser<'_> {
    fn eat(&mut self, p: &str) -> bool {
        if self.toks.get(self.pos)
            == Some(&Tok::Punct(match p {
                "&&" => "&&",
                "||" => "||",
                "==" => "==",
                "!=" => "!=",
                "!" => "!",
                "(" => "(",
                ")" => ")",
                "." => ".",
                "?" => "?",
                ":" => ":",
                _ => return false,
            }))
        {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn ternary(&mut self) -> Option<V> {
        let c = self.or()?;
        if self.eat("?") {
            let a = self.ternary()?;
            if !self.eat(":") {
                return None;
            }
            let b = self.ternary()?;
            return match c {
                V::Bool(true) => Some(a),
                V::Bool(false) => Some(b),
                _ => None,
            };
        }
        Some(c)
    }
    fn or(&mut self) -> Option<V> {
        let mut l = self.and()?;
        while self.eat("||") {
            let r = self.and()?;
            l = match (l, r) {
                (V::Bool(a), V::Bool(b)) => V::Bool(a || b),
                _ => return None,
            };
        }
        Some(l)
    }
    fn and(&mut self) -> Option<V> {
        let mut l = self.eq()?;
        while self.eat("&&") {
            let r = self.eq()?;
            l = match (l, r) {
                (V::Bool(a), V::Bool(b)) => V::Bool(a && b),
                _ => return None,
            };
        }
        Some(l)
    }
    fn eq(&mut self) -> Option<V> {
        let l = self.unary()?;
        for (op, want) in [("==", true), ("!=", false)] {
            if self.eat(op) {
                let r = self.unary()?;
                if l == V::Missing || r == V::Missing {
                    return None; // CEL: no such key
                }
                return Some(V::Bool((l == r) == want));
            }
        }
        Some(l)
    }
    fn unary(&mut self) -> Option<V> {
        if self.eat("!") {
            return match self.unary()? {
                V::Bool(b) => Some(V::Bool(!b)),
                _ => None,
            };
        }
        if self.eat("(") {
            let v = self.ternary()?;
            return self.eat(")").then_some(v);
        }
        match self.toks.get(self.pos)?.clone() {
            Tok::Str(s) => {
                self.pos += 1;
                Some(V::Json(Value::String(s)))
            }
            Tok::Ident(id) if id == "true" || id == "false" => {
                self.pos += 1;
                Some(V::Bool(id == "true"))
            }
            Tok::Ident(id) if id == "has" => {
                self.pos += 1;
                if !self.eat("(") {
                    return None;
                }
                let v = self.path()?;
                self.eat(")").then_some(V::Bool(v != V::Missing))
            }
            Tok::Ident(id) if id == "self" => self.path(),
            _ => None,
        }
    }
    fn path(&mut self) -> Option<V> {
        match self.toks.get(self.pos)? {
            Tok::Ident(id) if id == "self" => self.pos += 1,
            _ => return None,
        }
        let mut cur = Some(self.this);
        while self.eat(".") {
            let Tok::Ident(k) = self.toks.get(self.pos)?.clone() else {
                return None;
            };
            self.pos += 1;
            cur = cur.and_then(|c| c.get(k.as_str()));
        }
        Some(match cur {
            None => V::Missing,
            Some(Value::Bool(b)) => V::Bool(*b),
            Some(v) => V::Json(v.clone()),
        })
    }
}
