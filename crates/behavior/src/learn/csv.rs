//! CSV import and export of wide datasets, for tools that do not read ARFF.
//!
//! Layout: a header row, then one row per process. A column named `process` holds the
//! process name, a column named `class` the label; every other column is a numeric
//! feature. Fields follow RFC 4180 (double quotes, `""` inside quotes, quoted fields may
//! span lines). An empty field or `?` is a missing value (NaN; an empty class is no
//! label).

use super::dataset::{Dataset, Row, CLASS_ATTRIBUTE, PROCESS_ATTRIBUTE};

/// A malformed CSV document; `line` is the 1-based line the offending record starts on.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("CSV line {line}: {message}")]
pub struct CsvError {
    /// The 1-based line of the record.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}

/// Quotes a field if it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Splits a document into records of fields, each with the line it starts on.
fn records(text: &str) -> Result<Vec<(usize, Vec<String>)>, CsvError> {
    let mut out = Vec::new();
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut line = 1;
    let mut start = 1;
    let mut quoted = false;
    let mut was_quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    current.push('"');
                }
                '"' => quoted = false,
                c => {
                    if c == '\n' {
                        line += 1;
                    }
                    current.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if current.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            '"' => return Err(CsvError { line, message: "quote inside an unquoted field".into() }),
            ',' => {
                fields.push(std::mem::take(&mut current));
                was_quoted = false;
            }
            '\r' => {}
            '\n' => {
                fields.push(std::mem::take(&mut current));
                was_quoted = false;
                if !(fields.len() == 1 && fields[0].is_empty()) {
                    out.push((start, std::mem::take(&mut fields)));
                }
                fields.clear();
                line += 1;
                start = line;
            }
            c if was_quoted => {
                return Err(CsvError { line, message: format!("text {c:?} after a closing quote") })
            }
            c => current.push(c),
        }
    }
    if quoted {
        return Err(CsvError { line: start, message: "unterminated quoted field".into() });
    }
    if !current.is_empty() || !fields.is_empty() || was_quoted {
        fields.push(current);
        out.push((start, fields));
    }
    Ok(out)
}

impl Dataset {
    /// Writes the dataset as CSV: `process`, the features, and `class` if any row is
    /// labeled; missing values are empty fields.
    pub fn to_csv(&self) -> String {
        let labeled = self.rows.iter().any(|r| r.class.is_some());
        let mut header = vec![field(PROCESS_ATTRIBUTE)];
        header.extend(self.features.iter().map(|f| field(f)));
        if labeled {
            header.push(field(CLASS_ATTRIBUTE));
        }
        let mut out = header.join(",");
        out.push('\n');
        for row in &self.rows {
            let mut cells = vec![field(&row.process)];
            cells.extend(row.values.iter().map(|x| if x.is_nan() { String::new() } else { x.to_string() }));
            if labeled {
                cells.push(field(row.class.as_deref().unwrap_or("")));
            }
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    /// Reads a CSV document written by `to_csv` or by hand in the same layout; the
    /// relation is named `relation`. Errors carry the line of the bad record.
    pub fn from_csv(relation: &str, text: &str) -> Result<Dataset, CsvError> {
        let mut records = records(text)?.into_iter();
        let (_, header) = records.next().ok_or(CsvError { line: 1, message: "no header row".into() })?;
        let find = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
        let (process, class) = (find(PROCESS_ATTRIBUTE), find(CLASS_ATTRIBUTE));
        let numeric: Vec<usize> =
            (0..header.len()).filter(|&i| Some(i) != process && Some(i) != class).collect();
        let mut rows = Vec::new();
        for (n, (line, cells)) in records.enumerate() {
            if cells.len() != header.len() {
                return Err(CsvError {
                    line,
                    message: format!("{} fields, the header has {}", cells.len(), header.len()),
                });
            }
            let mut values = Vec::with_capacity(numeric.len());
            for &i in &numeric {
                let cell = cells[i].trim();
                values.push(if cell.is_empty() || cell == "?" {
                    f64::NAN
                } else {
                    cell.parse().map_err(|_| CsvError {
                        line,
                        message: format!("{cell:?} is not a number (column {:?})", header[i]),
                    })?
                });
            }
            rows.push(Row {
                process: process.map_or_else(|| format!("row{}", n + 1), |i| cells[i].clone()),
                values,
                class: class.map(|i| cells[i].clone()).filter(|c| !c.is_empty()),
            });
        }
        Ok(Dataset {
            relation: relation.to_string(),
            features: numeric.iter().map(|&i| header[i].clone()).collect(),
            rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_awkward_names() {
        let dataset = Dataset {
            relation: "r".into(),
            features: vec!["rate.read".into(), "odd, \"name\"".into()],
            rows: vec![
                Row {
                    process: "Web Content".into(),
                    values: vec![1.0, 2.5],
                    class: Some("INTERACTIVE".into()),
                },
                Row { process: "multi\nline".into(), values: vec![0.0, -3.0], class: None },
            ],
        };
        let text = dataset.to_csv();
        assert_eq!(Dataset::from_csv("r", &text).unwrap(), dataset, "{text}");
    }

    #[test]
    fn errors_name_the_line() {
        let bad_number = "process,a,class\nx,1,A\ny,zz,B\n";
        let e = Dataset::from_csv("r", bad_number).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let short = "process,a,class\n\"multi\nline\",1,A\ny,2\n";
        assert_eq!(Dataset::from_csv("r", short).unwrap_err().line, 4);
        let unterminated = "process,a\nx,1\n\"y,2\n";
        assert_eq!(Dataset::from_csv("r", unterminated).unwrap_err().line, 3);
        let stray = "process,a\nx\"y,1\n";
        assert_eq!(Dataset::from_csv("r", stray).unwrap_err().line, 2);
        assert_eq!(Dataset::from_csv("r", "").unwrap_err().line, 1);
    }
}
