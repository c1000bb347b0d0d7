//! An object of a state file read as keyed entries (execute's layers and tasks, iterative's
//! units): in the file's order, each found by key through an index (no scan per lookup), and
//! written back in that order.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

/// Values keyed by name, in the file's order, each found by key through an index.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<T> {
    entries: Vec<(String, T)>,
    index: HashMap<String, usize>,
}

impl<T> Default for Keyed<T> {
    fn default() -> Self {
        Keyed {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T> Keyed<T> {
    pub fn get(&self, key: &str) -> Option<&T> {
        self.index.get(key).map(|i| &self.entries[*i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        let i = *self.index.get(key)?;
        Some(&mut self.entries[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// Sets `key` (in its place, or last when new).
    pub fn insert(&mut self, key: String, value: T) {
        match self.index.get(&key) {
            Some(i) => self.entries[*i].1 = value,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut T)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
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
        T: Default,
    {
        if !self.contains_key(key) {
            self.insert(key.to_string(), T::default());
        }
        let i = self.index[key];
        &mut self.entries[i].1
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
        for (k, v) in &self.entries {
            m.serialize_entry(k, v)?;
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
                    entries: Vec::with_capacity(n),
                    index: HashMap::with_capacity(n),
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
