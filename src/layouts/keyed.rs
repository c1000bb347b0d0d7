//! An object of a state file read as keyed entries (execute's layers and tasks, iterative's
//! units): in the file's order, each found by key through an index (no scan per lookup), and
//! written back in that order.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::layouts::shared::Shared;

/// Values keyed by name, in the file's order, each found by key through an index.
///
/// A copy shares the keys, the index and every value with the original until one of them
/// changes (issue 23: a change to one task of 10,000 copies that task, not the state): a
/// value is copied by its first change ([`Shared`]), the list of entries by the first change
/// to any (a copy that changes nothing, such as a session start's look, copies nothing), the
/// index by the first new key.
#[derive(Clone)]
pub struct Keyed<T> {
    entries: Rc<Vec<(Key, Shared<T>)>>,
    index: Rc<HashMap<Key, usize>>,
}

/// A key, one string for the entry and the index and every copy of the map.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key(Rc<str>);

impl std::borrow::Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl<T> Default for Keyed<T> {
    fn default() -> Self {
        Keyed {
            entries: Rc::default(),
            index: Rc::default(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Keyed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Equal when they hold equal values under the same keys in the same order (the index follows
/// from the entries).
impl<T: PartialEq> PartialEq for Keyed<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.entries, &other.entries) || self.entries == other.entries
    }
}

impl<T> Keyed<T> {
    pub fn get(&self, key: &str) -> Option<&T> {
        self.index.get(key).map(|i| &*self.entries[*i].1)
    }

    /// The value at `key`, to change (copied first when a copy of this map shares it).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T>
    where
        T: Clone,
    {
        let i = *self.index.get(key)?;
        Some(&mut *Rc::make_mut(&mut self.entries)[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// Sets `key` (in its place, or last when new).
    pub fn insert(&mut self, key: String, value: T) {
        match self.index.get(key.as_str()) {
            Some(i) => Rc::make_mut(&mut self.entries)[*i].1 = Shared::new(value),
            None => self.push_new(key, value),
        }
    }

    /// Puts `key` last, unless the map has it already (answering `false`, the map unchanged).
    pub fn add(&mut self, key: String, value: T) -> bool {
        if self.index.contains_key(key.as_str()) {
            return false;
        }
        self.push_new(key, value);
        true
    }

    /// Puts `key`, which the map does not have, last.
    fn push_new(&mut self, key: String, value: T) {
        let key = Key(Rc::from(key));
        let at = self.entries.len();
        Rc::make_mut(&mut self.index).insert(key.clone(), at);
        Rc::make_mut(&mut self.entries).push((key, Shared::new(value)));
    }

    /// The key as the map holds it, shared (a copy costs a count, not a string).
    pub fn key_of(&self, key: &str) -> Option<Rc<str>> {
        self.index.get_key_value(key).map(|(k, _)| Rc::clone(&k.0))
    }

    /// The entry at `i` in the file's order.
    pub fn at(&self, i: usize) -> Option<(&Rc<str>, &T)> {
        self.entries.get(i).map(|(k, v)| (&k.0, &**v))
    }

    /// Whether the two maps have the very same keys: one index, shared since one was copied
    /// from the other and neither has had a new key (a yes that costs nothing to ask; a no
    /// says only that the keys may differ).
    pub fn same_keys(a: &Self, b: &Self) -> bool {
        Rc::ptr_eq(&a.index, &b.index) && a.entries.len() == b.entries.len()
    }

    /// Whether the two maps share one list of entries (neither changed since one was copied
    /// from the other).
    pub fn shares_entries(a: &Self, b: &Self) -> bool {
        Rc::ptr_eq(&a.entries, &b.entries)
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| &*k.0)
    }

    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().map(|(_, v)| &**v)
    }

    /// The values, each copied by its first change (a loop that changes a few copies those).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Shared<T>> {
        Rc::make_mut(&mut self.entries).iter_mut().map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.entries.iter().map(|(k, v)| (&*k.0, &**v))
    }

    /// [`Keyed::values_mut`], with the keys.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut Shared<T>)> {
        Rc::make_mut(&mut self.entries)
            .iter_mut()
            .map(|(k, v)| (&*k.0, v))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value at `key`, a default one put last when there is none.
    pub fn entry(&mut self, key: &str) -> &mut T
    where
        T: Default + Clone,
    {
        if !self.contains_key(key) {
            self.insert(key.to_string(), T::default());
        }
        let i = self.index[key];
        &mut Rc::make_mut(&mut self.entries)[i].1
    }
}

impl<T> FromIterator<(String, T)> for Keyed<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        let mut out = Keyed::default();
        for (k, v) in iter {
            out.insert(k, v);
        }
        out
    }
}

impl<T: Serialize> Serialize for Keyed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in self.entries.iter() {
            m.serialize_entry(&*k.0, &**v)?;
        }
        m.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Keyed<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Keyed<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Keyed<T>, A::Error> {
                // Sized once (a map read from a parsed document knows its length): no
                // doubling, no slack, at 100,000 tasks.
                let n = a.size_hint().unwrap_or(0);
                let mut out = Keyed {
                    entries: Rc::new(Vec::with_capacity(n)),
                    index: Rc::new(HashMap::with_capacity(n)),
                };
                while let Some((k, v)) = a.next_entry::<String, T>()? {
                    out.insert(k, v);
                }
                Ok(out)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_shares_every_value_until_one_changes() {
        let a: Keyed<String> = [("x", "1"), ("y", "2"), ("z", "3")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut b = a.clone();
        assert!(Keyed::shares_entries(&a, &b), "a copy shares the list");
        let one = |m: &Keyed<String>, k: &str| m.get(k).unwrap() as *const String;
        assert!(["x", "y", "z"].iter().all(|k| one(&a, k) == one(&b, k)));
        b.get_mut("y").unwrap().push('!');
        assert!(!Keyed::shares_entries(&a, &b), "a change parts the list");
        for (id, v) in b.iter_mut() {
            if id == "z" {
                v.push('?');
            }
        }
        assert_eq!(
            one(&a, "x"),
            one(&b, "x"),
            "a value left alone stays shared"
        );
        assert_ne!(one(&a, "y"), one(&b, "y"));
        assert_eq!(
            (a.get("y").unwrap().as_str(), b.get("y").unwrap().as_str()),
            ("2", "2!")
        );
        assert_eq!(
            (a.get("z").unwrap().as_str(), b.get("z").unwrap().as_str()),
            ("3", "3?")
        );
        assert_ne!(a, b);
        b.insert("w".into(), "4".into());
        assert!(
            !a.contains_key("w") && b.contains_key("w"),
            "a new key parts the index"
        );
        assert_eq!(b.keys().collect::<Vec<_>>(), ["x", "y", "z", "w"]);
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"x":"1","y":"2!","z":"3?","w":"4"}"#
        );
    }
}
