//! A strict JSON reader for templates held in string literals.
//!
//! A template fact must read the template the way the service that applies
//! it does: escapes decoded (`"public\u004eetworkAccess"` is the same key),
//! and a key written twice in one object refused, since parsers disagree on
//! which one wins. Anything that is not one complete JSON value is an error.

use std::collections::BTreeMap;

/// A parsed JSON value; objects keep their (unique) keys sorted.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(String),
    Text(String),
    List(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

const MAX_DEPTH: usize = 128;

/// Parses one JSON value with nothing but whitespace around it.
pub fn parse(text: &str) -> Result<Json, String> {
    let mut p = Parser { s: text.as_bytes(), at: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.at != p.s.len() {
        return Err(format!("text after the JSON value at byte {}", p.at));
    }
    Ok(v)
}

impl Json {
    /// Every value stored under `key` in any object, depth first.
    pub fn values_of<'a>(&'a self, key: &str, out: &mut Vec<&'a Json>) {
        match self {
            Json::Object(m) => {
                for (k, v) in m {
                    if k == key {
                        out.push(v);
                    }
                    v.values_of(key, out);
                }
            }
            Json::List(l) => l.iter().for_each(|v| v.values_of(key, out)),
            _ => {}
        }
    }
}

struct Parser<'s> {
    s: &'s [u8],
    at: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.at) == Some(&b) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", b as char, self.at))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err("JSON nested too deep".into());
        }
        self.ws();
        match self.s.get(self.at) {
            Some(b'{') => self.object(depth),
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.at) == Some(&b']') {
                    self.at += 1;
                    return Ok(Json::List(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Json::List(items));
                        }
                        _ => return Err(format!("expected `,` or `]` at byte {}", self.at)),
                    }
                }
            }
            Some(b'"') => self.string().map(Json::Text),
            Some(_) => self.scalar(),
            None => Err("unexpected end of the template".into()),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.at += 1;
        let mut map = BTreeMap::new();
        self.ws();
        if self.s.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Json::Object(map));
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.eat(b':')?;
            let v = self.value(depth + 1)?;
            if map.insert(key.clone(), v).is_some() {
                return Err(format!("the key `{key}` appears twice in one object"));
            }
            self.ws();
            match self.s.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::Object(map));
                }
                _ => return Err(format!("expected `,` or `}}` at byte {}", self.at)),
            }
        }
    }

    fn scalar(&mut self) -> Result<Json, String> {
        let start = self.at;
        while self.s.get(self.at).is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')) {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.at]).map_err(|e| e.to_string())?;
        match word {
            "true" => Ok(Json::Bool(true)),
            "false" => Ok(Json::Bool(false)),
            "null" => Ok(Json::Null),
            w if !w.is_empty() && w.parse::<f64>().is_ok() && !w.starts_with('+') => Ok(Json::Number(w.to_owned())),
            _ => Err(format!("not a JSON value at byte {start}")),
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.s.get(self.at..self.at + 4).ok_or("a short \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|e| e.to_string())?;
        self.at += 4;
        u32::from_str_radix(text, 16).map_err(|_| format!("a bad \\u escape `{text}`"))
    }

    fn string(&mut self) -> Result<String, String> {
        if self.s.get(self.at) != Some(&b'"') {
            return Err(format!("expected a string at byte {}", self.at));
        }
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while self.s.get(self.at).is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20) {
                self.at += 1;
            }
            out.push_str(std::str::from_utf8(&self.s[start..self.at]).map_err(|e| e.to_string())?);
            match self.s.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let e = *self.s.get(self.at + 1).ok_or("an escape at the end")?;
                    self.at += 2;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) && self.s.get(self.at..self.at + 2) == Some(b"\\u") {
                                self.at += 2;
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            char::from_u32(code).ok_or(format!("a \\u escape that is no character ({code:x})"))?
                        }
                        other => return Err(format!("an unknown escape `\\{}`", other as char)),
                    };
                    out.push(c);
                }
                _ => return Err("an unterminated string or a control character in it".into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_decoded_duplicates_refused() {
        let v = parse(r#"{"a": {"public\u004eetwork": "x"}, "b": [1, true, null]}"#).unwrap();
        let mut out = Vec::new();
        v.values_of("publicNetwork", &mut out);
        assert_eq!(out, vec![&Json::Text("x".into())]);
        assert!(parse(r#"{"k": "a", "k": "b"}"#).unwrap_err().contains("twice"));
        assert!(parse(r#"{"k": "a"} x"#).is_err());
        assert!(parse(r#"{"k": 'a'}"#).is_err());
        assert!(parse(&"[".repeat(500)).is_err());
    }
}
