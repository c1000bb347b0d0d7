//! A task shared between copies of a list until one of them changes it (issue 23): copying a
//! list of 10,000 tasks to change one copies 10,000 pointers and that one task, not every
//! task's strings. Reads see the task ([`Deref`]); a change copies it first, when another
//! list still holds it ([`DerefMut`], [`Rc::make_mut`]).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value shared between copies of a list, copied by the first change.
#[derive(Default)]
pub struct Shared<T>(Rc<T>);

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Rc::new(value))
    }

    /// Whether `a` and `b` are one value, not copies (a change to either would part them).
    pub fn same(a: &Self, b: &Self) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared::new(value)
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Rc::make_mut(&mut self.0)
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Shared::same(self, other) || *self.0 == *other.0
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Shared::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_parts_the_copies_and_only_the_changed_one() {
        let a = vec![
            Shared::new(String::from("x")),
            Shared::new(String::from("y")),
        ];
        let mut b = a.clone();
        assert!(Shared::same(&a[0], &b[0]) && Shared::same(&a[1], &b[1]));
        b[1].push('!');
        assert_eq!((a[1].as_str(), b[1].as_str()), ("y", "y!"));
        assert!(Shared::same(&a[0], &b[0]) && !Shared::same(&a[1], &b[1]));
        assert_ne!(a, b);
        b[1].pop();
        assert_eq!(a, b, "equal values are equal, shared or not");
        assert_eq!(serde_json::to_string(&b).unwrap(), r#"["x","y"]"#);
    }
}
