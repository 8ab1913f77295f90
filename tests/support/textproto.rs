//! A small protobuf text-format parser: enough for the cel-spec simple test files.

#[derive(Clone, Debug)]
pub enum Field {
    /// A scalar: string literals are decoded to bytes, other tokens kept as written.
    Str(Vec<u8>),
    Token(String),
    Msg(Msg),
}

#[derive(Clone, Debug, Default)]
pub struct Msg {
    pub fields: Vec<(String, Field)>,
}

impl Msg {
    pub fn get(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Field> + 'a {
        self.fields
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, f)| f)
    }
    pub fn msg(&self, name: &str) -> Option<&Msg> {
        match self.get(name) {
            Some(Field::Msg(m)) => Some(m),
            _ => None,
        }
    }
    pub fn msgs<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Msg> + 'a {
        self.all(name).filter_map(|f| match f {
            Field::Msg(m) => Some(m),
            _ => None,
        })
    }
    pub fn str(&self, name: &str) -> Option<String> {
        match self.get(name) {
            Some(Field::Str(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            Some(Field::Token(t)) => Some(t.clone()),
            _ => None,
        }
    }
    pub fn bytes(&self, name: &str) -> Option<Vec<u8>> {
        match self.get(name) {
            Some(Field::Str(b)) => Some(b.clone()),
            _ => None,
        }
    }
    pub fn token(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(Field::Token(t)) => Some(t),
            _ => None,
        }
    }
    pub fn flag(&self, name: &str) -> bool {
        self.token(name) == Some("true")
    }
    /// Whether a field of that name occurs anywhere inside.
    pub fn contains_field(&self, name: &str) -> bool {
        self.fields.iter().any(|(n, f)| {
            n == name
                || match f {
                    Field::Msg(m) => m.contains_field(name),
                    _ => false,
                }
        })
    }
}

pub fn parse(text: &str) -> Result<Msg, String> {
    let mut p = P {
        b: text.as_bytes(),
        i: 0,
    };
    let m = p.fields(None)?;
    Ok(m)
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        loop {
            while self.i < self.b.len()
                && (self.b[self.i].is_ascii_whitespace()
                    || self.b[self.i] == b','
                    || self.b[self.i] == b';')
            {
                self.i += 1;
            }
            if self.i < self.b.len() && self.b[self.i] == b'#' {
                while self.i < self.b.len() && self.b[self.i] != b'\n' {
                    self.i += 1;
                }
                continue;
            }
            break;
        }
    }

    fn err(&self, m: &str) -> String {
        let line = self.b[..self.i.min(self.b.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
            + 1;
        format!("line {line}: {m}")
    }

    fn fields(&mut self, close: Option<u8>) -> Result<Msg, String> {
        let mut m = Msg::default();
        loop {
            self.ws();
            if self.i >= self.b.len() {
                return if close.is_none() {
                    Ok(m)
                } else {
                    Err(self.err("unexpected end"))
                };
            }
            if Some(self.b[self.i]) == close {
                self.i += 1;
                return Ok(m);
            }
            let name = self.name()?;
            self.ws();
            let mut colon = false;
            if self.i < self.b.len() && self.b[self.i] == b':' {
                self.i += 1;
                colon = true;
                self.ws();
            }
            let _ = colon;
            if self.i < self.b.len() && self.b[self.i] == b'[' {
                self.i += 1;
                loop {
                    self.ws();
                    if self.i < self.b.len() && self.b[self.i] == b']' {
                        self.i += 1;
                        break;
                    }
                    let v = self.value()?;
                    m.fields.push((name.clone(), v));
                }
            } else {
                let v = self.value()?;
                m.fields.push((name, v));
            }
        }
    }

    fn name(&mut self) -> Result<String, String> {
        if self.b[self.i] == b'[' {
            // extension / Any type URL
            let start = self.i;
            while self.i < self.b.len() && self.b[self.i] != b']' {
                self.i += 1;
            }
            self.i += 1;
            return Ok(String::from_utf8_lossy(&self.b[start..self.i]).into_owned());
        }
        let start = self.i;
        while self.i < self.b.len()
            && (self.b[self.i].is_ascii_alphanumeric()
                || self.b[self.i] == b'_'
                || self.b[self.i] == b'.')
        {
            self.i += 1;
        }
        if start == self.i {
            return Err(self.err("expected a field name"));
        }
        Ok(String::from_utf8_lossy(&self.b[start..self.i]).into_owned())
    }

    fn value(&mut self) -> Result<Field, String> {
        self.ws();
        let c = *self
            .b
            .get(self.i)
            .ok_or_else(|| self.err("expected a value"))?;
        match c {
            b'{' | b'<' => {
                self.i += 1;
                let close = if c == b'{' { b'}' } else { b'>' };
                Ok(Field::Msg(self.fields(Some(close))?))
            }
            b'"' | b'\'' => {
                let mut out = Vec::new();
                // adjacent string literals concatenate
                loop {
                    self.string(&mut out)?;
                    let save = self.i;
                    self.ws();
                    if self.i < self.b.len() && (self.b[self.i] == b'"' || self.b[self.i] == b'\'')
                    {
                        continue;
                    }
                    self.i = save;
                    break;
                }
                Ok(Field::Str(out))
            }
            _ => {
                let start = self.i;
                while self.i < self.b.len()
                    && !self.b[self.i].is_ascii_whitespace()
                    && !matches!(self.b[self.i], b',' | b';' | b'}' | b']' | b'>' | b'#')
                {
                    self.i += 1;
                }
                Ok(Field::Token(
                    String::from_utf8_lossy(&self.b[start..self.i]).into_owned(),
                ))
            }
        }
    }

    fn string(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let q = self.b[self.i];
        self.i += 1;
        while self.i < self.b.len() && self.b[self.i] != q {
            let c = self.b[self.i];
            self.i += 1;
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let e = self.b[self.i];
            self.i += 1;
            match e {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'a' => out.push(7),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'v' => out.push(11),
                b'?' => out.push(b'?'),
                b'0'..=b'7' => {
                    let mut v = (e - b'0') as u32;
                    for _ in 0..2 {
                        if self.i < self.b.len() && (b'0'..=b'7').contains(&self.b[self.i]) {
                            v = v * 8 + (self.b[self.i] - b'0') as u32;
                            self.i += 1;
                        }
                    }
                    out.push(v as u8);
                }
                b'x' | b'X' => {
                    let mut v = 0u32;
                    for _ in 0..2 {
                        if self.i < self.b.len() && self.b[self.i].is_ascii_hexdigit() {
                            v = v * 16 + (self.b[self.i] as char).to_digit(16).unwrap_or(0);
                            self.i += 1;
                        }
                    }
                    out.push(v as u8);
                }
                b'u' | b'U' => {
                    let n = if e == b'u' { 4 } else { 8 };
                    let hex = std::str::from_utf8(&self.b[self.i..self.i + n])
                        .map_err(|_| self.err("bad \\u"))?;
                    self.i += n;
                    let cp = u32::from_str_radix(hex, 16).map_err(|_| self.err("bad \\u"))?;
                    let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                other => out.push(other),
            }
        }
        self.i += 1;
        Ok(())
    }
}
