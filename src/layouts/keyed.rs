//! An object of a state file read as keyed entries (execute's layers and tasks, iterative's
//! units): in the file's order, each found by key through an index (no scan per lookup), and
//! written back in that order.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
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
    index: Rc<Index>,
}

/// A key, one string for the entry and every copy of the map.
#[derive(Clone, PartialEq, Eq)]
struct Key(Rc<str>);

/// Where each key stands in the entries: a table of positions found by the key's hash (open
/// addressing, probed in turn), four bytes a slot rather than a key and a position (issue 23:
/// 10,000 tasks' index is 64 KiB, not 400). Keys are never removed. The hash is keyed per
/// process, so a file's ids cannot be chosen to collide.
#[derive(Clone)]
struct Index {
    slots: Vec<u32>,
    len: usize,
    hasher: RandomState,
}

/// A slot that holds no position.
const EMPTY: u32 = u32::MAX;

impl Default for Index {
    fn default() -> Index {
        Index::with_capacity(0)
    }
}

impl Index {
    /// An index with room for `n` keys before it grows.
    fn with_capacity(n: usize) -> Index {
        Index {
            slots: vec![EMPTY; Index::slots_for(n)],
            len: 0,
            hasher: RandomState::new(),
        }
    }

    /// Slots for `n` keys: a power of two, at most three quarters full.
    fn slots_for(n: usize) -> usize {
        (n.saturating_mul(4) / 3 + 1).next_power_of_two().max(8)
    }

    /// The slot of `key`: where it stands, or the empty slot it would take.
    fn slot<E>(&self, entries: &[(Key, E)], key: &str) -> (usize, Option<usize>) {
        let mask = self.slots.len() - 1;
        let mut i = (self.hasher.hash_one(key) as usize) & mask;
        loop {
            match self.slots[i] {
                EMPTY => return (i, None),
                at if &*entries[at as usize].0 .0 == key => return (i, Some(at as usize)),
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn get<E>(&self, entries: &[(Key, E)], key: &str) -> Option<usize> {
        self.slot(entries, key).1
    }

    /// Records that `entries[at]` (its key new) stands at `at`; grows the table first when it
    /// would be more than three quarters full.
    fn put<E>(&mut self, entries: &[(Key, E)], at: usize) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            let mut bigger = vec![EMPTY; Index::slots_for(self.len * 2 + 1)];
            std::mem::swap(&mut self.slots, &mut bigger);
            for p in bigger.into_iter().filter(|p| *p != EMPTY) {
                let (i, _) = self.slot(entries, &entries[p as usize].0 .0);
                self.slots[i] = p;
            }
        }
        let (i, _) = self.slot(entries, &entries[at].0 .0);
        self.slots[i] = u32::try_from(at).unwrap_or(EMPTY);
        self.len += 1;
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
        self.index
            .get(&self.entries, key)
            .map(|i| &*self.entries[i].1)
    }

    /// The value at `key`, to change (copied first when a copy of this map shares it).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T>
    where
        T: Clone,
    {
        let i = self.index.get(&self.entries, key)?;
        Some(&mut *Rc::make_mut(&mut self.entries)[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.index.get(&self.entries, key).is_some()
    }

    /// Sets `key` (in its place, or last when new).
    pub fn insert(&mut self, key: String, value: T) {
        match self.index.get(&self.entries, &key) {
            Some(i) => Rc::make_mut(&mut self.entries)[i].1 = Shared::new(value),
            None => self.push_new(key, value),
        }
    }

    /// Puts `key` last, unless the map has it already (answering `false`, the map unchanged).
    pub fn add(&mut self, key: String, value: T) -> bool {
        if self.contains_key(&key) {
            return false;
        }
        self.push_new(key, value);
        true
    }

    /// Puts `key`, which the map does not have, last.
    fn push_new(&mut self, key: String, value: T) {
        let entries = Rc::make_mut(&mut self.entries);
        entries.push((Key(Rc::from(key)), Shared::new(value)));
        Rc::make_mut(&mut self.index).put(entries, entries.len() - 1);
    }

    /// The key as the map holds it, shared (a copy costs a count, not a string).
    pub fn key_of(&self, key: &str) -> Option<Rc<str>> {
        let at = self.index.get(&self.entries, key)?;
        Some(Rc::clone(&self.entries[at].0 .0))
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
        let i = self.index.get(&self.entries, key).unwrap_or(0);
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
                    index: Rc::new(Index::with_capacity(n)),
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// The index finds what a list of the entries finds, through growth and copies: every
        /// key at its place, the first value put under it replaced only by `insert`, none of
        /// the keys never put.
        #[test]
        fn the_index_finds_what_the_entries_hold(
            ops in proptest::collection::vec((0..3u8, 0..400u32), 0..600),
            sized in 0usize..50,
        ) {
            let mut m: Keyed<u32> = Keyed::default();
            if sized > 0 {
                m.index = Rc::new(Index::with_capacity(sized));
            }
            let mut list: Vec<(String, u32)> = Vec::new();
            let mut copies = Vec::new();
            for (i, (op, k)) in ops.into_iter().enumerate() {
                let key = format!("L{}-{k:03}", k % 7);
                let at = list.iter().position(|(x, _)| *x == key);
                match op {
                    0 => {
                        proptest::prop_assert_eq!(m.add(key.clone(), i as u32), at.is_none());
                        if at.is_none() {
                            list.push((key, i as u32));
                        }
                    }
                    1 => {
                        m.insert(key.clone(), i as u32);
                        match at {
                            Some(a) => list[a].1 = i as u32,
                            None => list.push((key, i as u32)),
                        }
                    }
                    _ => copies.push(m.clone()),
                }
            }
            proptest::prop_assert_eq!(m.len(), list.len());
            for (i, (k, v)) in list.iter().enumerate() {
                proptest::prop_assert_eq!(m.get(k), Some(v));
                proptest::prop_assert_eq!(m.at(i).map(|(k, _)| k.to_string()), Some(k.clone()));
                let found = m.key_of(k);
                proptest::prop_assert_eq!(found.as_deref(), Some(k.as_str()));
            }
            for k in ["L9-000", "", "L0-0000"] {
                proptest::prop_assert!(!m.contains_key(k));
            }
            // A copy made along the way finds its own keys still.
            for c in &copies {
                for (k, _) in c.iter() {
                    proptest::prop_assert!(c.contains_key(k));
                }
            }
        }
    }
}
