//! Closed sets of named values (the benchmarks' programs, IPC kinds, the suite's
//! workloads): one parser, one error, for every option that takes their names.

/// A closed set of values, each with the name options and reports spell it by.
pub trait Named: Copy + Sized {
    /// What one of them is called in an error ("program", "IPC kind").
    const KIND: &'static str;

    /// Every value, in the order reports list them.
    fn every() -> Vec<Self>;

    /// Its name.
    fn label(self) -> String;
}

/// A name that is none of a set's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} '{given}': use one of {known}")]
pub struct UnknownName {
    /// What was named ([`Named::KIND`]).
    pub kind: &'static str,
    /// The name given.
    pub given: String,
    /// The names there are, comma-separated.
    pub known: String,
}

/// The value of `T` named `s`.
pub fn parse_named<T: Named>(s: &str) -> Result<T, UnknownName> {
    T::every().into_iter().find(|v| v.label() == s).ok_or_else(|| UnknownName {
        kind: T::KIND,
        given: s.to_string(),
        known: T::every().into_iter().map(T::label).collect::<Vec<_>>().join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Fruit {
        Apple,
        Pear,
    }

    impl Named for Fruit {
        const KIND: &'static str = "fruit";
        fn every() -> Vec<Self> {
            vec![Fruit::Apple, Fruit::Pear]
        }
        fn label(self) -> String {
            format!("{self:?}").to_lowercase()
        }
    }

    #[test]
    fn names_parse_and_an_unknown_one_lists_the_set() {
        assert_eq!(parse_named::<Fruit>("pear"), Ok(Fruit::Pear));
        let e = parse_named::<Fruit>("plum").unwrap_err();
        assert_eq!(e.to_string(), "unknown fruit 'plum': use one of apple, pear");
    }
}
