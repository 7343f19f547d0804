//! Plain-text tables with aligned columns, for terminal reports.

use std::io::{self, Write};

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A table built row by row and printed with every column as wide as its widest cell.
pub struct Table {
    headers: Vec<&'static str>,
    aligns: Vec<Align>,
    show_header: bool,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers and alignments.
    pub fn new(columns: &[(&'static str, Align)]) -> Self {
        Table {
            headers: columns.iter().map(|c| c.0).collect(),
            aligns: columns.iter().map(|c| c.1).collect(),
            show_header: true,
            rows: Vec::new(),
        }
    }

    /// The same table without its header row (for key-value lists).
    pub fn headless(mut self) -> Self {
        self.show_header = false;
        self
    }

    /// Adds a row; missing trailing cells print empty. Cells are printed safe for a
    /// terminal: a process's name may hold control characters, which are escaped
    /// ([`schedlab_live::text::printable`]).
    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert!(cells.len() <= self.headers.len(), "more cells than columns");
        self.rows.push(cells.into_iter().map(|c| schedlab_live::text::printable(&c).into_owned()).collect());
    }

    /// Prints the header (unless [`headless`](Table::headless)) and the rows, columns two spaces apart, without trailing
    /// blanks.
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> =
            self.headers.iter().map(|h| if self.show_header { width(h) } else { 0 }).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let headers: Vec<String> = self.headers.iter().map(|h| h.to_string()).collect();
        let header = self.show_header.then_some(&headers);
        for row in header.into_iter().chain(&self.rows) {
            let mut line = String::new();
            for (i, &w) in widths.iter().enumerate() {
                let cell = row.get(i).map_or("", String::as_str);
                let pad = " ".repeat(w - width(cell));
                if i > 0 {
                    line.push_str("  ");
                }
                match self.aligns[i] {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&pad);
                    }
                    Align::Right => {
                        line.push_str(&pad);
                        line.push_str(cell);
                    }
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let mut t = Table::new(&[("NAME", Align::Left), ("TIME", Align::Right), ("NOTE", Align::Left)]);
        t.row(vec!["a".into(), "1.000 µs".into(), "x".into()]);
        t.row(vec!["longer".into(), "5 ns".into()]);
        let mut out = Vec::new();
        t.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAME        TIME  NOTE\n\
             a       1.000 µs  x\n\
             longer      5 ns\n"
        );
    }
}
