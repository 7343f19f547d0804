//! Weka's ARFF format, read and written: the format the thesis exported its DTrace
//! system-call counts to before training J48 and EM in Weka.
//!
//! Supported: `@relation`, `@attribute` of type numeric (`numeric`, `real`, `integer`),
//! nominal (`{a, b, 'c d'}`) and `string`, and dense `@data` rows. Names and values may
//! be quoted with single or double quotes; inside quotes a backslash escapes the next
//! character (`\'`, `\"`, `\\`, `\n`, `\t`, `\r`). An unquoted `?` is a missing value.
//! `%` outside quotes starts a comment that runs to the end of the line. Keywords are
//! case-insensitive. Sparse rows and `date`/`relational` attributes are rejected with
//! the line they are on.

use std::fmt::Write as _;

/// An ARFF file in memory: the relation, its attributes and its rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Arff {
    /// The `@relation` name.
    pub relation: String,
    /// The attributes, in column order.
    pub attributes: Vec<Attribute>,
    /// The `@data` rows; each has one value per attribute.
    pub rows: Vec<Vec<Value>>,
}

/// One `@attribute` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// The attribute's name (may contain spaces and quotes).
    pub name: String,
    /// The attribute's type.
    pub kind: AttributeKind,
}

/// The type of an attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum AttributeKind {
    /// A number (`numeric`, `real` or `integer`; written back as `numeric`).
    Numeric,
    /// One of a closed set of labels, such as the class `{INTERACTIVE,BACKGROUND}`.
    Nominal(Vec<String>),
    /// Free text, such as a process name.
    String,
}

/// One cell of a data row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `?`: the value is unknown.
    Missing,
    /// The value of a numeric attribute.
    Number(f64),
    /// The value of a nominal or string attribute.
    Text(String),
}

/// A malformed ARFF file; `line` is 1-based so it can be shown to the user as is.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("ARFF line {line}: {problem}")]
pub struct ArffError {
    /// The 1-based line the problem is on.
    pub line: usize,
    /// What is wrong there.
    pub problem: ArffProblem,
}

/// What is wrong on the line of an [`ArffError`], with the names and values at fault.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArffProblem {
    /// A quoted string (opened with this quote) runs to the end of the line.
    #[error("unterminated quoted string ({0})")]
    UnterminatedQuote(char),
    /// A backslash escapes nothing.
    #[error("backslash at end of line")]
    TrailingBackslash,
    /// A header line that does not start with a keyword.
    #[error("expected @relation, @attribute or @data")]
    ExpectedKeyword,
    /// An `@`-word that is not an ARFF keyword (lowercased).
    #[error("unknown keyword {0}")]
    UnknownKeyword(String),
    /// `@relation` appears twice.
    #[error("second @relation")]
    SecondRelation,
    /// `@relation` without a name, or with more than one.
    #[error("@relation takes exactly one name")]
    RelationName,
    /// `@attribute` before `@relation`.
    #[error("@attribute before @relation")]
    AttributeBeforeRelation,
    /// `@attribute` without a name.
    #[error("@attribute needs a name")]
    AttributeName,
    /// Two attributes of the same name.
    #[error("duplicate attribute {0:?}")]
    DuplicateAttribute(String),
    /// An attribute of a type this reader does not support (`date`, `relational`).
    #[error("unsupported attribute type {0:?}")]
    UnsupportedType(String),
    /// A nominal type whose labels are not a comma-separated list.
    #[error("malformed nominal label list")]
    MalformedLabels,
    /// This attribute has a name and no type.
    #[error("attribute {0:?} has no type")]
    NoType(String),
    /// This attribute's type is neither a word nor a label list.
    #[error("malformed type of attribute {0:?}")]
    MalformedType(String),
    /// `@data` followed by more text.
    #[error("unexpected text after @data")]
    TextAfterData,
    /// `@data` before any attribute.
    #[error("@data before any @attribute")]
    DataBeforeAttribute,
    /// The file ends without `@data`.
    #[error("missing @data section")]
    MissingData,
    /// A sparse row (`{index value, ...}`).
    #[error("sparse data rows are not supported")]
    SparseRow,
    /// A row that is not values separated by commas.
    #[error("malformed data row (expected value, comma, value, ...)")]
    MalformedRow,
    /// A row that ends with a comma.
    #[error("data row ends with a comma")]
    TrailingComma,
    /// A row with a different number of values than there are attributes.
    #[error("data row has {values} values, {attributes} attributes are declared")]
    ValueCount { values: usize, attributes: usize },
    /// A numeric attribute's value is not a number.
    #[error("{value:?} is not a number (attribute {attribute:?})")]
    NotANumber { value: String, attribute: String },
    /// A nominal attribute's value is not one of its labels.
    #[error("{value:?} is not a label of attribute {attribute:?}")]
    NotALabel { value: String, attribute: String },
}

/// A lexical token of an ARFF line.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    /// An unquoted run of characters.
    Word(String),
    /// A quoted string, unescaped.
    Quoted(String),
    Comma,
    Open,
    Close,
}

impl Token {
    /// The text of a word or quoted string, `None` for punctuation.
    fn text(&self) -> Option<&str> {
        match self {
            Token::Word(s) | Token::Quoted(s) => Some(s),
            _ => None,
        }
    }
}

/// Splits one line into tokens, dropping a trailing `%` comment.
fn tokenize(line: &str) -> Result<Vec<Token>, ArffProblem> {
    let mut tokens = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            '%' => break,
            c if c.is_whitespace() => {
                chars.next();
            }
            ',' => {
                chars.next();
                tokens.push(Token::Comma);
            }
            '{' => {
                chars.next();
                tokens.push(Token::Open);
            }
            '}' => {
                chars.next();
                tokens.push(Token::Close);
            }
            '\'' | '"' => {
                let quote = c;
                chars.next();
                let mut text = String::new();
                loop {
                    match chars.next() {
                        None => return Err(ArffProblem::UnterminatedQuote(quote)),
                        Some('\\') => match chars.next() {
                            None => return Err(ArffProblem::TrailingBackslash),
                            Some('n') => text.push('\n'),
                            Some('t') => text.push('\t'),
                            Some('r') => text.push('\r'),
                            Some(other) => text.push(other),
                        },
                        Some(ch) if ch == quote => break,
                        Some(ch) => text.push(ch),
                    }
                }
                tokens.push(Token::Quoted(text));
            }
            _ => {
                let mut word = String::new();
                while let Some(&ch) = chars.peek() {
                    if ch.is_whitespace() || matches!(ch, ',' | '{' | '}' | '%' | '\'' | '"') {
                        break;
                    }
                    word.push(ch);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    Ok(tokens)
}

/// Quotes `s` if ARFF needs it (empty, spaces, separators, quotes, `%`, or `?`).
fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s != "?"
        && !s.starts_with('@')
        && s.chars().all(|c| !c.is_whitespace() && !matches!(c, ',' | '{' | '}' | '%' | '\'' | '"' | '\\'));
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

impl Arff {
    /// Parses an ARFF document; the first malformed line is reported with its number.
    pub fn parse(text: &str) -> Result<Arff, ArffError> {
        let mut relation = None;
        let mut attributes: Vec<Attribute> = Vec::new();
        let mut rows = Vec::new();
        let mut in_data = false;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let err = |problem: ArffProblem| ArffError { line, problem };
            let tokens = tokenize(raw).map_err(err)?;
            if tokens.is_empty() {
                continue;
            }
            if in_data {
                rows.push(parse_row(&tokens, &attributes).map_err(err)?);
                continue;
            }
            let keyword = match &tokens[0] {
                Token::Word(w) if w.starts_with('@') => w.to_ascii_lowercase(),
                _ => return Err(err(ArffProblem::ExpectedKeyword)),
            };
            match keyword.as_str() {
                "@relation" => {
                    if relation.is_some() {
                        return Err(err(ArffProblem::SecondRelation));
                    }
                    match tokens.as_slice() {
                        [_, name] if name.text().is_some() => relation = name.text().map(str::to_string),
                        _ => return Err(err(ArffProblem::RelationName)),
                    }
                }
                "@attribute" => {
                    if relation.is_none() {
                        return Err(err(ArffProblem::AttributeBeforeRelation));
                    }
                    let attribute = parse_attribute(&tokens[1..]).map_err(err)?;
                    if attributes.iter().any(|a| a.name == attribute.name) {
                        return Err(err(ArffProblem::DuplicateAttribute(attribute.name)));
                    }
                    attributes.push(attribute);
                }
                "@data" => {
                    if tokens.len() != 1 {
                        return Err(err(ArffProblem::TextAfterData));
                    }
                    if attributes.is_empty() {
                        return Err(err(ArffProblem::DataBeforeAttribute));
                    }
                    in_data = true;
                }
                _ => return Err(err(ArffProblem::UnknownKeyword(keyword))),
            }
        }
        if !in_data {
            let line = text.lines().count().max(1);
            return Err(ArffError { line, problem: ArffProblem::MissingData });
        }
        Ok(Arff { relation: relation.unwrap_or_default(), attributes, rows })
    }

    /// Writes the document in a form `parse` reads back to an equal `Arff` (numbers are
    /// written with Rust's shortest round-trip formatting).
    pub fn write(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "@relation {}\n", quote(&self.relation));
        for attribute in &self.attributes {
            let kind = match &attribute.kind {
                AttributeKind::Numeric => "numeric".to_string(),
                AttributeKind::String => "string".to_string(),
                AttributeKind::Nominal(labels) => {
                    let labels: Vec<String> = labels.iter().map(|l| quote(l)).collect();
                    format!("{{{}}}", labels.join(","))
                }
            };
            let _ = writeln!(out, "@attribute {} {kind}", quote(&attribute.name));
        }
        out.push_str("\n@data\n");
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|value| match value {
                    Value::Missing => "?".to_string(),
                    Value::Number(x) => x.to_string(),
                    Value::Text(s) => quote(s),
                })
                .collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    /// The index of the attribute called `name`, compared case-insensitively.
    pub fn attribute_index(&self, name: &str) -> Option<usize> {
        self.attributes.iter().position(|a| a.name.eq_ignore_ascii_case(name))
    }
}

/// Parses the name and type that follow `@attribute`.
fn parse_attribute(tokens: &[Token]) -> Result<Attribute, ArffProblem> {
    let name = tokens.first().and_then(Token::text).ok_or(ArffProblem::AttributeName)?.to_string();
    let kind = match &tokens[1..] {
        [Token::Word(t)] => match t.to_ascii_lowercase().as_str() {
            "numeric" | "real" | "integer" => AttributeKind::Numeric,
            "string" => AttributeKind::String,
            other => return Err(ArffProblem::UnsupportedType(other.to_string())),
        },
        [Token::Open, rest @ .., Token::Close] => {
            let mut labels = Vec::new();
            for (i, token) in rest.iter().enumerate() {
                let expect_label = i.is_multiple_of(2);
                match (expect_label, token.text()) {
                    (true, Some(label)) => labels.push(label.to_string()),
                    (false, None) if *token == Token::Comma => {}
                    _ => return Err(ArffProblem::MalformedLabels),
                }
            }
            if labels.is_empty() || rest.len().is_multiple_of(2) {
                return Err(ArffProblem::MalformedLabels);
            }
            AttributeKind::Nominal(labels)
        }
        [] => return Err(ArffProblem::NoType(name)),
        _ => return Err(ArffProblem::MalformedType(name)),
    };
    Ok(Attribute { name, kind })
}

/// Parses one dense data row against the declared attributes.
fn parse_row(tokens: &[Token], attributes: &[Attribute]) -> Result<Vec<Value>, ArffProblem> {
    if tokens.first() == Some(&Token::Open) {
        return Err(ArffProblem::SparseRow);
    }
    let mut cells = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let expect_cell = i.is_multiple_of(2);
        match (expect_cell, token) {
            (true, Token::Word(_) | Token::Quoted(_)) => cells.push(token),
            (false, Token::Comma) => {}
            _ => return Err(ArffProblem::MalformedRow),
        }
    }
    if tokens.len().is_multiple_of(2) {
        return Err(ArffProblem::TrailingComma);
    }
    if cells.len() != attributes.len() {
        return Err(ArffProblem::ValueCount { values: cells.len(), attributes: attributes.len() });
    }
    cells
        .into_iter()
        .zip(attributes)
        .map(|(token, attribute)| {
            if *token == Token::Word("?".into()) {
                return Ok(Value::Missing);
            }
            let text = token.text().unwrap_or_default();
            match &attribute.kind {
                AttributeKind::Numeric => text.parse::<f64>().map(Value::Number).map_err(|_| {
                    ArffProblem::NotANumber { value: text.to_string(), attribute: attribute.name.clone() }
                }),
                AttributeKind::Nominal(labels) => {
                    if labels.iter().any(|l| l == text) {
                        Ok(Value::Text(text.to_string()))
                    } else {
                        Err(ArffProblem::NotALabel {
                            value: text.to_string(),
                            attribute: attribute.name.clone(),
                        })
                    }
                }
                AttributeKind::String => Ok(Value::Text(text.to_string())),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Arff {
        Arff {
            relation: "sched lab's data".into(),
            attributes: vec![
                Attribute { name: "process name".into(), kind: AttributeKind::String },
                Attribute { name: "rate".into(), kind: AttributeKind::Numeric },
                Attribute {
                    name: "class".into(),
                    kind: AttributeKind::Nominal(vec!["INTER ACTIVE".into(), "BACKGROUND".into()]),
                },
            ],
            rows: vec![
                vec![
                    Value::Text("Web Content".into()),
                    Value::Number(1.5),
                    Value::Text("INTER ACTIVE".into()),
                ],
                vec![
                    Value::Text("it's \"quoted\", 100% \\ odd".into()),
                    Value::Missing,
                    Value::Text("BACKGROUND".into()),
                ],
                vec![Value::Text("?".into()), Value::Number(-2e-7), Value::Missing],
            ],
        }
    }

    #[test]
    fn round_trip_keeps_names_with_spaces_and_quotes() {
        let arff = sample();
        let text = arff.write();
        assert_eq!(Arff::parse(&text).unwrap(), arff, "{text}");
    }

    #[test]
    fn reads_weka_style_input() {
        let text = "% exported by Weka\n\
            @RELATION \"syscalls\"\n\
            \n\
            @ATTRIBUTE 'process' STRING\n\
            @attribute count REAL % trailing comment\n\
            @attribute class {INTERACTIVE, BACKGROUND}\n\
            @DATA\n\
            \"Xorg\", 12, INTERACTIVE\n\
            'gcc \\'cc1\\'' , ?, BACKGROUND\n";
        let arff = Arff::parse(text).unwrap();
        assert_eq!(arff.relation, "syscalls");
        assert_eq!(arff.attributes[1].kind, AttributeKind::Numeric);
        assert_eq!(arff.rows[1][0], Value::Text("gcc 'cc1'".into()));
        assert_eq!(arff.rows[1][1], Value::Missing);
        assert_eq!(arff.attribute_index("CLASS"), Some(2));
    }

    fn error_line(text: &str) -> (usize, String) {
        let e = Arff::parse(text).unwrap_err();
        (e.line, e.problem.to_string())
    }

    #[test]
    fn errors_name_the_line() {
        let head = "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n";
        let (line, msg) = error_line(&format!("{head}1,x\n2,z\n"));
        assert_eq!(line, 6, "{msg}");
        assert!(msg.contains("not a label"), "{msg}");
        let (line, msg) = error_line(&format!("{head}1,x\nabc,y\n"));
        assert_eq!(line, 6);
        assert!(msg.contains("not a number"), "{msg}");
        assert_eq!(error_line(&format!("{head}1\n")).0, 5);
        assert_eq!(error_line(&format!("{head}1,x,\n")).0, 5);
        assert_eq!(error_line(&format!("{head}'1,x\n")).0, 5);
        assert_eq!(error_line(&format!("{head}{{0 1}}\n")).0, 5);
        assert_eq!(error_line("@relation r\n@attribute a date\n@data\n").0, 2);
        assert_eq!(error_line("@relation r\n@attribute a {x,,y}\n@data\n").0, 2);
        assert_eq!(error_line("@relation r\n\n@attribute a numeric\n").0, 3);
        assert_eq!(error_line("@attribute a numeric\n").0, 1);
        assert_eq!(error_line("@relation r\nfoo\n").0, 2);
    }
}
