//! The `.npy` header: a Python literal dict, read as NumPy reads it
//! (`ast.literal_eval`, then its key checks): exactly the keys `descr`,
//! `fortran_order` and `shape`, each once; `fortran_order` a bool; `shape`
//! a tuple of non-negative ints. Anything else is refused rather than
//! read differently from NumPy.

/// A parsed header.
#[derive(Debug, PartialEq, Eq)]
pub struct Header {
    /// The dtype descr (a string; a structured dtype's list is refused).
    pub descr: String,
    /// `fortran_order`.
    pub fortran_order: bool,
    /// `shape`.
    pub shape: Vec<u64>,
}

enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
    /// A bare number (valid Python, no valid value of any key).
    Number,
}

struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn ws(&mut self) {
        while self.at < self.s.len() && matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let q = self.peek().filter(|c| *c == b'\'' || *c == b'"').ok_or("expected a quoted string")?;
        self.at += 1;
        let start = self.at;
        while self.at < self.s.len() && self.s[self.at] != q {
            if self.s[self.at] == b'\\' {
                return Err("escapes in header strings are not supported".into());
            }
            self.at += 1;
        }
        if self.at >= self.s.len() {
            return Err("unterminated string".into());
        }
        let v = std::str::from_utf8(&self.s[start..self.at]).map_err(|_| "header string is not text")?.to_owned();
        self.at += 1;
        Ok(v)
    }

    fn word(&mut self) -> &str {
        self.ws();
        let start = self.at;
        while self.at < self.s.len() && (self.s[self.at].is_ascii_alphanumeric() || self.s[self.at] == b'_') {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at]).unwrap_or("")
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'\'' | b'"') => self.string().map(Value::Str),
            Some(b'(') => {
                self.at += 1;
                let mut dims = Vec::new();
                loop {
                    if self.eat(b')') {
                        break;
                    }
                    let w = self.word().to_owned();
                    let d: u64 = w.strip_suffix('L').unwrap_or(&w).parse().map_err(|_| format!("malformed 'shape': `{w}` is not a non-negative integer"))?;
                    dims.push(d);
                    // `(n)` is an int in parentheses, not a tuple: only `(n,)` is.
                    if !self.eat(b',') {
                        if !self.eat(b')') || dims.len() == 1 {
                            return Err("malformed 'shape': expected a tuple such as (2, 3) or (5,)".into());
                        }
                        break;
                    }
                }
                Ok(Value::Tuple(dims))
            }
            _ => match self.word() {
                "True" => Ok(Value::Bool(true)),
                "False" => Ok(Value::Bool(false)),
                "" => Err("expected a value".into()),
                w if w.parse::<i64>().is_ok() => Ok(Value::Number),
                w => Err(format!("unexpected value `{w}`")),
            },
        }
    }
}

/// Parses a header dict.
pub fn parse(text: &str) -> Result<Header, String> {
    let mut c = Cursor { s: text.as_bytes(), at: 0 };
    if !c.eat(b'{') {
        return Err("header is not a dict".into());
    }
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        if c.eat(b'}') {
            break;
        }
        let key = c.string().map_err(|e| format!("header dict key: {e}"))?;
        if !c.eat(b':') {
            return Err(format!("header dict: no ':' after '{key}'"));
        }
        let v = c.value()?;
        let slot_taken = match (key.as_str(), v) {
            ("descr", Value::Str(s)) => descr.replace(s).is_some(),
            ("descr", _) => return Err("'descr' must be a string (structured dtypes do not marshal)".into()),
            ("fortran_order", Value::Bool(b)) => fortran.replace(b).is_some(),
            ("fortran_order", _) => return Err("'fortran_order' must be True or False".into()),
            ("shape", Value::Tuple(t)) => shape.replace(t).is_some(),
            ("shape", _) => return Err("malformed 'shape': it must be a tuple of integers".into()),
            (k, _) => return Err(format!("unknown key '{k}' in the header (NumPy refuses it too)")),
        };
        if slot_taken {
            return Err(format!("'{key}' appears twice in the header"));
        }
        if !c.eat(b',') {
            if !c.eat(b'}') {
                return Err("header dict: expected ',' or '}'".into());
            }
            break;
        }
    }
    if c.peek().is_some() {
        return Err("text after the dict in the header".into());
    }
    Ok(Header {
        descr: descr.ok_or("header has no 'descr'")?,
        fortran_order: fortran.ok_or("header has no 'fortran_order'")?,
        shape: shape.ok_or("header has no 'shape'")?,
    })
}
