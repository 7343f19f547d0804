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

/// Makes `$ty` [`Named`] (its names from `$name`, its values from `$every`, called
/// `$kind` in errors) and parsable by those names (`FromStr`).
macro_rules! named {
    ($ty:ty, $kind:literal, $every:expr, $name:expr) => {
        impl $crate::bench::named::Named for $ty {
            const KIND: &'static str = $kind;
            fn every() -> Vec<Self> {
                $every.into_iter().collect()
            }
            fn label(self) -> String {
                ($name)(self).into()
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::bench::named::UnknownName;

            fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
                $crate::bench::named::parse_named(s)
            }
        }
    };
}
pub(crate) use named;

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

    named!(Fruit, "fruit", [Fruit::Apple, Fruit::Pear], |f: Fruit| format!("{f:?}").to_lowercase());

    #[test]
    fn names_parse_and_an_unknown_one_lists_the_set() {
        assert_eq!(parse_named::<Fruit>("pear"), Ok(Fruit::Pear));
        assert_eq!("apple".parse::<Fruit>(), Ok(Fruit::Apple));
        let e = parse_named::<Fruit>("plum").unwrap_err();
        assert_eq!(e.to_string(), "unknown fruit 'plum': use one of apple, pear");
    }
}
