//! The two dataset shapes of the thesis and their ARFF forms.
//!
//! * Long: one row per (system call, process) pair with its count and, when known, the
//!   process class — how the DTrace aggregation came out.
//! * Wide: one row per process, one numeric column per feature (a system call's count
//!   or rate, or a derived feature), plus the class — what J48 and EM were trained on.
//!
//! The wide ARFF form is `process` (string), the numeric features, then `class`
//! (nominal); `process` and `class` are optional when reading.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::arff::{Arff, Attribute, AttributeKind, Value};
use super::error::LearnError;
use super::features::FeatureVector;

/// Name of the string attribute holding the process (program) name.
pub const PROCESS_ATTRIBUTE: &str = "process";
/// Name of the nominal attribute holding the class label.
pub const CLASS_ATTRIBUTE: &str = "class";
/// Name of the numeric attribute of the long format holding a count.
pub const COUNT_ATTRIBUTE: &str = "count";
/// Name of the attribute of the long format holding the system call name.
pub const SYSCALL_ATTRIBUTE: &str = "syscall";

/// One process in the wide format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The process (program) name; leave-one-program-out groups rows by it.
    pub process: String,
    /// One value per feature of the dataset; `NaN` is a missing value.
    pub values: Vec<f64>,
    /// The class label, if the row is labeled.
    pub class: Option<String>,
}

/// A wide dataset: feature names and one row per process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// The relation name written to ARFF.
    pub relation: String,
    /// The feature (column) names, in order.
    pub features: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// One row of the long format: how often `process` made `syscall`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LongRecord {
    /// The system call name.
    pub syscall: String,
    /// The process (program) name.
    pub process: String,
    /// How many times the call was made in the window.
    pub count: f64,
    /// The process class, if labeled.
    pub class: Option<String>,
}

impl Dataset {
    /// Builds a wide dataset from per-process feature vectors; the columns are the
    /// union of all names (sorted), and a feature a process lacks is 0 (for rates and
    /// counts, "never seen" means zero).
    pub fn from_vectors(relation: &str, vectors: &[(String, FeatureVector, Option<String>)]) -> Dataset {
        let mut features: Vec<String> =
            vectors.iter().flat_map(|(_, v, _)| v.names.iter().cloned()).collect();
        features.sort();
        features.dedup();
        let rows = vectors
            .iter()
            .map(|(process, vector, class)| Row {
                process: process.clone(),
                values: features.iter().map(|f| vector.get(f).unwrap_or(0.0)).collect(),
                class: class.clone(),
            })
            .collect();
        Dataset { relation: relation.to_string(), features, rows }
    }

    /// The distinct class labels in first-seen order.
    pub fn classes(&self) -> Vec<String> {
        let mut classes: Vec<String> = Vec::new();
        for class in self.rows.iter().filter_map(|r| r.class.as_ref()) {
            if !classes.contains(class) {
                classes.push(class.clone());
            }
        }
        classes
    }

    /// The feature vector of row `index`, for `Classifier::predict` and
    /// `Clusterer::assign`.
    pub fn vector(&self, index: usize) -> FeatureVector {
        FeatureVector { names: self.features.clone(), values: self.rows[index].values.clone() }
    }

    /// The wide ARFF form: `process`, the features, then `class` if any row is labeled.
    pub fn to_arff(&self) -> Arff {
        let mut attributes = vec![Attribute { name: PROCESS_ATTRIBUTE.into(), kind: AttributeKind::String }];
        attributes.extend(
            self.features.iter().map(|f| Attribute { name: f.clone(), kind: AttributeKind::Numeric }),
        );
        let classes = self.classes();
        if !classes.is_empty() {
            attributes.push(Attribute {
                name: CLASS_ATTRIBUTE.into(),
                kind: AttributeKind::Nominal(classes.clone()),
            });
        }
        let rows = self
            .rows
            .iter()
            .map(|row| {
                let mut cells = vec![Value::Text(row.process.clone())];
                cells.extend(row.values.iter().map(|&x| {
                    if x.is_nan() {
                        Value::Missing
                    } else {
                        Value::Number(x)
                    }
                }));
                if !classes.is_empty() {
                    cells.push(row.class.clone().map_or(Value::Missing, Value::Text));
                }
                cells
            })
            .collect();
        Arff { relation: self.relation.clone(), attributes, rows }
    }

    /// Reads the wide form: every numeric attribute is a feature, a string attribute
    /// named `process` names the row (else the row number does), a nominal attribute
    /// named `class` (else the last nominal attribute) is the label.
    pub fn from_arff(arff: &Arff) -> Result<Dataset, LearnError> {
        let process = arff
            .attribute_index(PROCESS_ATTRIBUTE)
            .filter(|&i| arff.attributes[i].kind == AttributeKind::String);
        let class = arff
            .attribute_index(CLASS_ATTRIBUTE)
            .filter(|&i| matches!(arff.attributes[i].kind, AttributeKind::Nominal(_)))
            .or_else(|| arff.attributes.iter().rposition(|a| matches!(a.kind, AttributeKind::Nominal(_))));
        let numeric: Vec<usize> = (0..arff.attributes.len())
            .filter(|&i| arff.attributes[i].kind == AttributeKind::Numeric)
            .collect();
        if numeric.is_empty() {
            return Err(LearnError::Shape("no numeric attribute".into()));
        }
        let rows = arff
            .rows
            .iter()
            .enumerate()
            .map(|(n, cells)| Row {
                process: match process.map(|i| &cells[i]) {
                    Some(Value::Text(name)) => name.clone(),
                    _ => format!("row{}", n + 1),
                },
                values: numeric
                    .iter()
                    .map(|&i| match cells[i] {
                        Value::Number(x) => x,
                        _ => f64::NAN,
                    })
                    .collect(),
                class: match class.map(|i| &cells[i]) {
                    Some(Value::Text(label)) => Some(label.clone()),
                    _ => None,
                },
            })
            .collect();
        Ok(Dataset {
            relation: arff.relation.clone(),
            features: numeric.iter().map(|&i| arff.attributes[i].name.clone()).collect(),
            rows,
        })
    }

    /// Pivots long records into a wide dataset: one row per process (in first-seen
    /// order), one column per system call (sorted), counts summed, absent pairs 0.
    /// A process's class is the first one its records carry.
    pub fn from_long(relation: &str, records: &[LongRecord]) -> Dataset {
        let mut order: Vec<String> = Vec::new();
        let mut table: BTreeMap<&str, (BTreeMap<&str, f64>, Option<String>)> = BTreeMap::new();
        for record in records {
            let entry = table.entry(&record.process).or_insert_with(|| {
                order.push(record.process.clone());
                (BTreeMap::new(), None)
            });
            *entry.0.entry(&record.syscall).or_insert(0.0) += record.count;
            if entry.1.is_none() {
                entry.1.clone_from(&record.class);
            }
        }
        let vectors: Vec<(String, FeatureVector, Option<String>)> = order
            .iter()
            .map(|process| {
                let (counts, class) = &table[process.as_str()];
                let vector = FeatureVector {
                    names: counts.keys().map(|k| k.to_string()).collect(),
                    values: counts.values().copied().collect(),
                };
                (process.clone(), vector, class.clone())
            })
            .collect();
        Dataset::from_vectors(relation, &vectors)
    }
}

/// The long ARFF form: `syscall` (string), `process` (string), `count` (numeric) and,
/// if any record is labeled, `class` (nominal).
pub fn long_to_arff(relation: &str, records: &[LongRecord]) -> Arff {
    let mut classes: Vec<String> = Vec::new();
    for class in records.iter().filter_map(|r| r.class.as_ref()) {
        if !classes.contains(class) {
            classes.push(class.clone());
        }
    }
    let text = |name: &str| Attribute { name: name.into(), kind: AttributeKind::String };
    let mut attributes = vec![
        text(SYSCALL_ATTRIBUTE),
        text(PROCESS_ATTRIBUTE),
        Attribute { name: COUNT_ATTRIBUTE.into(), kind: AttributeKind::Numeric },
    ];
    if !classes.is_empty() {
        attributes
            .push(Attribute { name: CLASS_ATTRIBUTE.into(), kind: AttributeKind::Nominal(classes.clone()) });
    }
    let rows = records
        .iter()
        .map(|r| {
            let mut cells =
                vec![Value::Text(r.syscall.clone()), Value::Text(r.process.clone()), Value::Number(r.count)];
            if !classes.is_empty() {
                cells.push(r.class.clone().map_or(Value::Missing, Value::Text));
            }
            cells
        })
        .collect();
    Arff { relation: relation.to_string(), attributes, rows }
}

/// Reads the long form; `syscall`, `process` and `count` are required (by name, any
/// case), `class` is optional. A row with a missing syscall, process or count is an
/// error naming the data row.
pub fn long_from_arff(arff: &Arff) -> Result<Vec<LongRecord>, LearnError> {
    let column = |name: &str| {
        arff.attribute_index(name).ok_or_else(|| LearnError::Shape(format!("no attribute {name:?}")))
    };
    let (syscall, process, count) =
        (column(SYSCALL_ATTRIBUTE)?, column(PROCESS_ATTRIBUTE)?, column(COUNT_ATTRIBUTE)?);
    let class = arff.attribute_index(CLASS_ATTRIBUTE);
    arff.rows
        .iter()
        .enumerate()
        .map(|(n, cells)| match (&cells[syscall], &cells[process], &cells[count]) {
            (Value::Text(s), Value::Text(p), Value::Number(c)) => Ok(LongRecord {
                syscall: s.clone(),
                process: p.clone(),
                count: *c,
                class: match class.map(|i| &cells[i]) {
                    Some(Value::Text(label)) => Some(label.clone()),
                    _ => None,
                },
            }),
            _ => Err(LearnError::Shape(format!("data row {} lacks a syscall, process or count", n + 1))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long() -> Vec<LongRecord> {
        let r = |s: &str, p: &str, c: f64, k: &str| LongRecord {
            syscall: s.into(),
            process: p.into(),
            count: c,
            class: Some(k.into()),
        };
        vec![
            r("read", "Xorg", 10.0, "INTERACTIVE"),
            r("poll", "Xorg", 50.0, "INTERACTIVE"),
            r("read", "gcc driver", 900.0, "BACKGROUND"),
            r("mmap", "gcc driver", 40.0, "BACKGROUND"),
        ]
    }

    #[test]
    fn long_format_round_trips_through_arff_text() {
        let records = long();
        let text = long_to_arff("calls", &records).write();
        let back = long_from_arff(&Arff::parse(&text).unwrap()).unwrap();
        assert_eq!(back, records);
    }

    #[test]
    fn long_pivots_to_wide_and_wide_round_trips() {
        let wide = Dataset::from_long("calls", &long());
        assert_eq!(wide.features, ["mmap", "poll", "read"]);
        assert_eq!(wide.rows[0].process, "Xorg");
        assert_eq!(wide.rows[0].values, [0.0, 50.0, 10.0]);
        assert_eq!(wide.rows[1].class.as_deref(), Some("BACKGROUND"));
        let text = wide.to_arff().write();
        let back = Dataset::from_arff(&Arff::parse(&text).unwrap()).unwrap();
        assert_eq!(back, wide);
    }
}
