//! A small JSON reader for rt-app files. rt-app needs what `serde_json::Value` does not
//! give: object members in file order (events run in the order they are written), every
//! key and value's position (errors point at them), and duplicate keys reported instead of
//! silently merged. C (`/* */`) and C++ (`//`) comments are accepted, as json-c (rt-app's
//! parser) accepts them and rt-app's own examples use them.

/// A value and the byte offset in the text where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub at: usize,
    pub value: Value,
}

/// A JSON value; integers are kept apart from other numbers because rt-app accepts only
/// integers for its numeric keys.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
}

impl Value {
    /// What the value is, for messages such as "expected an integer, found a string".
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a fractional number",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// One member of an object, in file order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Member {
    pub key: String,
    /// Byte offset of the key's opening quote.
    pub key_at: usize,
    pub node: Node,
}

/// A syntax error at a byte offset.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SyntaxError {
    pub at: usize,
    pub message: String,
}

/// Parses one JSON document (a value followed only by white space and comments).
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut p = Parser { text, bytes: text.as_bytes(), i: 0, depth: 0 };
    p.skip_blank()?;
    let node = p.value()?;
    p.skip_blank()?;
    if p.i < p.bytes.len() {
        return p.fail("unexpected text after the end of the JSON document");
    }
    Ok(node)
}

/// The 1-based line and column (in characters) of byte offset `at`.
pub(crate) fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn fail<T>(&self, message: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError { at: self.i, message: message.into() })
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    /// Skips white space and comments.
    fn skip_blank(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.bytes.get(self.i + 1) == Some(&b'/') => {
                    self.i = self.text[self.i..].find('\n').map_or(self.bytes.len(), |n| self.i + n);
                }
                Some(b'/') if self.bytes.get(self.i + 1) == Some(&b'*') => {
                    match self.text[self.i + 2..].find("*/") {
                        Some(n) => self.i += n + 4,
                        None => return self.fail("comment not closed: missing '*/'"),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, SyntaxError> {
        let at = self.i;
        let value = match self.peek() {
            Some(b'{') => self.nested(Self::object)?,
            Some(b'[') => self.nested(Self::array)?,
            Some(b'"') => Value::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.literal("true", Value::Bool(true))?,
            Some(b'f') => self.literal("false", Value::Bool(false))?,
            Some(b'n') => self.literal("null", Value::Null)?,
            Some(_) => {
                return self.fail("expected a value (object, array, string, number, true, false or null)")
            }
            None => return self.fail("unexpected end of file: expected a value"),
        };
        Ok(Node { at, value })
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Value, SyntaxError>) -> Result<Value, SyntaxError> {
        if self.depth == MAX_DEPTH {
            return self.fail(format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, SyntaxError> {
        if self.text[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(value)
        } else {
            self.fail("expected a value (object, array, string, number, true, false or null)")
        }
    }

    fn object(&mut self) -> Result<Value, SyntaxError> {
        self.i += 1; // '{'
        let mut members: Vec<Member> = Vec::new();
        self.skip_blank()?;
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Object(members));
        }
        loop {
            if self.peek() != Some(b'"') {
                return self.fail("expected a key in double quotes");
            }
            let key_at = self.i;
            let key = self.string()?;
            if let Some(first) = members.iter().find(|m| m.key == key) {
                let (line, column) = line_column(self.text, first.key_at);
                return Err(SyntaxError {
                    at: key_at,
                    message: format!(
                        "duplicate key \"{key}\" (first at {line}:{column}); keys must be unique: \
                         number repeated events (\"run0\", \"run1\"), as rt-app's workgen does"
                    ),
                });
            }
            self.skip_blank()?;
            if self.peek() != Some(b':') {
                return self.fail(format!("expected ':' after the key \"{key}\""));
            }
            self.i += 1;
            self.skip_blank()?;
            let node = self.value()?;
            members.push(Member { key, key_at, node });
            self.skip_blank()?;
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_blank()?;
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(members));
                }
                _ => return self.fail("expected ',' or '}' after an object member"),
            }
        }
    }

    fn array(&mut self) -> Result<Value, SyntaxError> {
        self.i += 1; // '['
        let mut items = Vec::new();
        self.skip_blank()?;
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_blank()?;
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_blank()?;
                }
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => return self.fail("expected ',' or ']' after an array element"),
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.i;
        self.i += 1; // '"'
        let mut out = String::new();
        loop {
            let run_start = self.i;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.push_str(&self.text[run_start..self.i]);
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    out.push(self.escape()?);
                }
                Some(_) => {
                    return self.fail("control character in a string (write it as an escape such as \\n)")
                }
                None => {
                    return Err(SyntaxError { at: start, message: "string not closed: missing '\"'".into() })
                }
            }
        }
    }

    /// The character of the escape after a backslash.
    fn escape(&mut self) -> Result<char, SyntaxError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.i += 1;
                let hi = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    if !self.text[self.i..].starts_with("\\u") {
                        return self.fail("unpaired UTF-16 surrogate in \\u escape");
                    }
                    self.i += 2;
                    let lo = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return self.fail("unpaired UTF-16 surrogate in \\u escape");
                    }
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else {
                    hi
                };
                return char::from_u32(code).map_or_else(|| self.fail("invalid \\u escape"), Ok);
            }
            _ => return self.fail("unknown escape (use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)"),
        };
        self.i += 1;
        Ok(c)
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self.text.get(self.i..self.i + 4).unwrap_or("");
        match u32::from_str_radix(digits, 16) {
            Ok(v) if digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.i += 4;
                Ok(v)
            }
            _ => self.fail("\\u must be followed by four hexadecimal digits"),
        }
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.peek().is_some_and(|b| b.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - from
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        match digits(self) {
            0 => return self.fail("expected a digit"),
            n if n > 1 && self.bytes[int_start] == b'0' => {
                return Err(SyntaxError { at: int_start, message: "numbers must not start with 0".into() })
            }
            _ => {}
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.i += 1;
            if digits(self) == 0 {
                return self.fail("expected a digit after '.'");
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integer = false;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return self.fail("expected a digit in the exponent");
            }
        }
        let literal = &self.text[start..self.i];
        if integer {
            if let Ok(v) = literal.parse() {
                return Ok(Value::Int(v));
            }
        }
        match literal.parse() {
            Ok(v) => Ok(Value::Float(v)),
            Err(_) => Err(SyntaxError { at: start, message: format!("'{literal}' is not a number") }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(node: &Node) -> Vec<&str> {
        match &node.value {
            Value::Object(m) => m.iter().map(|m| m.key.as_str()).collect(),
            other => panic!("not an object: {other:?}"),
        }
    }

    #[test]
    fn keeps_member_order_and_positions() {
        let text = "{\n  \"z\": 1, \"a\": [true, null],\n  \"m\": {\"k\": \"v\\n\\u00e9\\ud83d\\ude00\"}, \"f\": -1.5e2\n}";
        let root = parse(text).unwrap();
        assert_eq!(keys(&root), ["z", "a", "m", "f"]);
        let Value::Object(members) = &root.value else { unreachable!() };
        assert_eq!(line_column(text, members[0].key_at), (2, 3));
        assert_eq!(line_column(text, members[1].node.at), (2, 16));
        assert_eq!(members[0].node.value, Value::Int(1));
        assert_eq!(members[3].node.value, Value::Float(-150.0));
        let Value::Object(inner) = &members[2].node.value else { unreachable!() };
        assert_eq!(inner[0].node.value, Value::Str("v\né😀".into()));
        assert_eq!(line_column(text, inner[0].key_at), (3, 9));
    }

    #[test]
    fn accepts_comments() {
        let text = "/* head */ {\"a\": 1, // line\n /* x */ \"b\": 2 /* tail */} // end";
        assert_eq!(keys(&parse(text).unwrap()), ["a", "b"]);
    }

    #[test]
    fn columns_count_characters() {
        let text = "{\"é\": 1, \"x\" 2}";
        let e = parse(text).unwrap_err();
        assert_eq!(line_column(text, e.at), (1, 14));
        assert!(e.message.contains("expected ':'"), "{}", e.message);
    }

    #[test]
    fn reports_errors_where_they_are() {
        let cases = [
            ("{\"a\": 1,\n \"a\": 2}", (2, 2), "duplicate key \"a\" (first at 1:2)"),
            ("{\"a\": 1\n \"b\": 2}", (2, 2), "expected ',' or '}'"),
            ("{\"a\": 1,}", (1, 9), "expected a key"),
            ("{\"a\": [1 2]}", (1, 10), "expected ',' or ']'"),
            ("{\"a\": tru}", (1, 7), "expected a value"),
            ("{\"a\": 01}", (1, 7), "must not start with 0"),
            ("{\"a\": \"x", (1, 7), "string not closed"),
            ("{\"a\": 1} x", (1, 10), "after the end"),
            ("{\"a\": /* 1}", (1, 7), "comment not closed"),
            ("{\"a\": \"\\q\"}", (1, 9), "unknown escape"),
            ("", (1, 1), "unexpected end of file"),
        ];
        for (text, pos, message) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(line_column(text, e.at), pos, "{text}: {}", e.message);
            assert!(e.message.contains(message), "{text}: {}", e.message);
        }
    }

    #[test]
    fn refuses_deep_nesting() {
        let text = "[".repeat(MAX_DEPTH + 1);
        assert!(parse(&text).unwrap_err().message.contains("nesting"));
    }
}
