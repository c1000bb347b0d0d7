//! The pieces a strict reading is made of (issue 23): an entry of a state file (a projects task,
//! an execute task, an iterative unit) read straight from the file's bytes into its type, field
//! by field, refusing as it reads whatever the entry's schema refuses
//! ([`crate::store::entries::Strict`]). Each layout's reading is then a list of its fields'
//! names and one line per field naming the check its schema asks; each is held to its schema by
//! a property test beside it.
//!
//! A refusal is only ever a reason to read the whole document the slow way, whose check words
//! what is wrong; the errors here are never shown.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::{Map, Number, Value};

use crate::store::entries::Strict;

/// A record that is only checked, nothing of it kept (a file's own schema check,
/// [`crate::store::schema::Native`]): its name, its fields' names, the required ones, and a
/// `match` over the field's name (`$field`, read from `$m`) with one check per field, as
/// [`Record::field`] has.
macro_rules! checked_record {
    (
        $(#[$doc:meta])*
        $name:ident,
        [$($field:literal),* $(,)?],
        required: [$($required:literal),* $(,)?],
        |$m:ident, $f:ident| $body:expr
    ) => {
        $(#[$doc])*
        #[derive(Default)]
        struct $name(serde_json::Map<String, serde_json::Value>);

        impl $crate::store::strict::Record for $name {
            const NAMES: &'static [&'static str] = &[$($field),*];
            const REQUIRED: &'static [&'static str] = &[$($required),*];

            fn field<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                $m: &mut A,
                $f: &'static str,
            ) -> Result<(), A::Error> {
                $body
            }

            fn rest(&mut self) -> &mut serde_json::Map<String, serde_json::Value> {
                &mut self.0
            }
        }
    };
}
pub(crate) use checked_record;

/// A record read strictly, field by field: every record type is one of these (its names, the
/// ones required, one check per field), and reads through the one visitor below.
pub trait Record: Default {
    /// The fields it knows (at most 64).
    const NAMES: &'static [&'static str];
    /// Those the schema requires.
    const REQUIRED: &'static [&'static str];

    /// Reads the field `name` (one of [`Record::NAMES`]) with its check.
    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error>;

    /// Where the fields it does not know are kept, in the order they came.
    fn rest(&mut self) -> &mut Map<String, Value>;
}

impl<T: Record> Strict for T {
    fn strict<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        d.deserialize_map(RecordVisitor(PhantomData))
    }
}

struct RecordVisitor<T>(PhantomData<T>);

impl<'de, T: Record> Visitor<'de> for RecordVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<T, A::Error> {
        let mut record = T::default();
        let mut fields = Fields::new(T::NAMES);
        while let Some(key) = fields.next(&mut m)? {
            match key {
                Key::Known(name) => record.field(&mut m, name)?,
                Key::Other(name) => other(&mut m, record.rest(), name)?,
            }
        }
        fields.require(T::REQUIRED)?;
        Ok(record)
    }
}

/// A field the record does not know, kept where it stands (a name given twice keeps the last
/// value where the first stood, as the whole document's reading does).
pub fn other<'de, A: MapAccess<'de>>(
    m: &mut A,
    rest: &mut Map<String, Value>,
    name: String,
) -> Result<(), A::Error> {
    let v = m.next_value::<Value>()?;
    rest.insert(name, v);
    Ok(())
}

/// A field the schema does not constrain, kept as found.
pub fn any<'de, A: MapAccess<'de>>(m: &mut A) -> Result<Value, A::Error> {
    m.next_value()
}

/// A field's name as read: one of the type's names, or another, kept as written.
enum Key {
    Known(&'static str),
    Other(String),
}

/// The names of a record's fields, and which of them were seen: a name given twice is refused
/// (the whole document's reading keeps the last, so it decides).
struct Fields {
    names: &'static [&'static str],
    seen: u64,
}

impl Fields {
    /// At most 64 names.
    fn new(names: &'static [&'static str]) -> Fields {
        debug_assert!(names.len() <= 64);
        Fields { names, seen: 0 }
    }

    /// The next field's name, or `None` after the last.
    fn next<'de, A: MapAccess<'de>>(&mut self, m: &mut A) -> Result<Option<Key>, A::Error> {
        let Some(at) = m.next_key_seed(Name(self.names))? else {
            return Ok(None);
        };
        Ok(Some(match at {
            Ok(i) => {
                let bit = 1u64 << (i % 64);
                if self.seen & bit != 0 {
                    return Err(A::Error::custom("a field given twice"));
                }
                self.seen |= bit;
                Key::Known(self.names[i])
            }
            Err(other) => Key::Other(other),
        }))
    }

    /// Whether the field `name` was seen.
    fn saw(&self, name: &str) -> bool {
        self.names
            .iter()
            .position(|n| *n == name)
            .is_some_and(|i| self.seen & (1u64 << (i % 64)) != 0)
    }

    /// Refuses the record unless every one of `names` was seen.
    fn require<E: de::Error>(&self, names: &[&'static str]) -> Result<(), E> {
        match names.iter().find(|n| !self.saw(n)) {
            Some(n) => Err(E::missing_field(n)),
            None => Ok(()),
        }
    }
}

/// Reads a field's name as its place in the list, or the name itself when it is not there.
struct Name(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Name {
    type Value = Result<usize, String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for Name {
    type Value = Result<usize, String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self
            .0
            .iter()
            .position(|n| *n == v)
            .ok_or_else(|| v.to_string()))
    }
}

/// A value the schema refuses.
pub fn refused<E: de::Error>(field: &str) -> E {
    E::custom(format_args!("{field} does not match its schema"))
}

/// A string (`"type": "string"`).
pub fn string<'de, A: MapAccess<'de>>(m: &mut A) -> Result<String, A::Error> {
    m.next_value()
}

/// A string or `null` (`"type": ["string", "null"]`).
pub fn string_or_null<'de, A: MapAccess<'de>>(m: &mut A) -> Result<Option<String>, A::Error> {
    m.next_value()
}

/// A value of type `T` that `ok` takes (what a schema asks beyond the type), else refused.
fn checked<'de, T: de::Deserialize<'de>, A: MapAccess<'de>>(
    m: &mut A,
    field: &str,
    ok: impl FnOnce(&T) -> bool,
) -> Result<T, A::Error> {
    let v: T = m.next_value()?;
    if !ok(&v) {
        return Err(refused(field));
    }
    Ok(v)
}

/// A string that is not empty (`"minLength": 1`).
pub fn non_empty<'de, A: MapAccess<'de>>(m: &mut A, field: &str) -> Result<String, A::Error> {
    checked(m, field, |s: &String| !s.is_empty())
}

/// A timestamp of the schemas' form ([`is_timestamp`]).
pub fn timestamp<'de, A: MapAccess<'de>>(m: &mut A, field: &str) -> Result<String, A::Error> {
    checked(m, field, |s: &String| is_timestamp(s))
}

/// A timestamp or `null` (the schemas' `nullableTimestamp`).
pub fn timestamp_or_null<'de, A: MapAccess<'de>>(
    m: &mut A,
    field: &str,
) -> Result<Option<String>, A::Error> {
    checked(m, field, |s: &Option<String>| {
        s.as_deref().is_none_or(is_timestamp)
    })
}

/// A boolean.
pub fn flag<'de, A: MapAccess<'de>>(m: &mut A) -> Result<bool, A::Error> {
    m.next_value()
}

/// An integer of at least `min` (`"type": "integer", "minimum": min`; JSON Schema counts `2.0`
/// as an integer too), as written: the layout's own type reads it from there.
pub fn integer<'de, A: MapAccess<'de>>(
    m: &mut A,
    min: u64,
    field: &str,
) -> Result<Number, A::Error> {
    checked(m, field, |n| is_integer_at_least(n, min))
}

/// One of an enumeration's names (`"enum": [...]` of strings), read as the type `T` whose
/// unit variants they are: a string, never the `{"name": null}` form a derived enum also takes.
pub fn one_of<'de, T: DeserializeOwned, A: MapAccess<'de>>(
    m: &mut A,
    field: &str,
) -> Result<T, A::Error> {
    m.next_value_seed(OneOf(PhantomData))?
        .ok_or_else(|| refused(field))
}

struct OneOf<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for OneOf<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<T: DeserializeOwned> Visitor<'_> for OneOf<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<T>, E> {
        Ok(T::deserialize(StrDeserializer::<E>::new(v)).ok())
    }
}

/// One of `names` (`"enum": [...]` of strings, or a `"const"` string), kept as a string.
pub fn name_in<'de, A: MapAccess<'de>>(
    m: &mut A,
    names: &[&str],
    field: &str,
) -> Result<String, A::Error> {
    checked(m, field, |s: &String| names.contains(&s.as_str()))
}

/// An integer of at least `min`, or `null` (`"type": ["integer", "null"], "minimum": min`).
pub fn integer_or_null<'de, A: MapAccess<'de>>(
    m: &mut A,
    min: u64,
    field: &str,
) -> Result<Option<Number>, A::Error> {
    checked(m, field, |n: &Option<Number>| {
        n.as_ref().is_none_or(|n| is_integer_at_least(n, min))
    })
}

/// A number of at least zero (`"type": "number", "minimum": 0`).
pub fn number_at_least_zero<'de, A: MapAccess<'de>>(
    m: &mut A,
    field: &str,
) -> Result<Number, A::Error> {
    checked(m, field, at_least_zero)
}

/// A number of at least zero, or `null` (`"type": ["number", "null"], "minimum": 0`).
pub fn number_at_least_zero_or_null<'de, A: MapAccess<'de>>(
    m: &mut A,
    field: &str,
) -> Result<Option<Number>, A::Error> {
    checked(m, field, |n: &Option<Number>| {
        n.as_ref().is_none_or(at_least_zero)
    })
}

/// Strings that are not empty (`"type": "array", "items": {"type": "string", "minLength":
/// 1}`).
pub fn non_empty_strings<'de, A: MapAccess<'de>>(
    m: &mut A,
    field: &str,
) -> Result<Vec<String>, A::Error> {
    checked(m, field, |v: &Vec<String>| v.iter().all(|s| !s.is_empty()))
}

/// An array, whatever it holds (a member whose entries another reading checks).
pub fn any_array<'de, A: MapAccess<'de>>(m: &mut A) -> Result<(), A::Error> {
    m.next_value::<Vec<de::IgnoredAny>>().map(drop)
}

/// An object, whatever it holds (a member whose entries another reading checks).
pub fn any_object<'de, A: MapAccess<'de>>(m: &mut A) -> Result<(), A::Error> {
    m.next_value::<std::collections::HashMap<String, de::IgnoredAny>>()
        .map(drop)
}

/// An object whose values each read strictly (`"type": "object", "additionalProperties":
/// …`), only checked.
pub fn values_of<'de, T: Strict, A: MapAccess<'de>>(m: &mut A) -> Result<(), A::Error> {
    m.next_value_seed(Values::<T>(PhantomData))
}

struct Values<T>(PhantomData<T>);

impl<'de, T: Strict> DeserializeSeed<'de> for Values<T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Strict> Visitor<'de> for Values<T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while m.next_key::<de::IgnoredAny>()?.is_some() {
            m.next_value_seed(One::<T>(PhantomData))?;
        }
        Ok(())
    }
}

/// Whether `v` reads strictly as `T`: how a schema's own check ([`crate::store::schema::Native`])
/// is made of records.
pub fn takes<T: Strict>(v: &Value) -> bool {
    T::strict(v).is_ok()
}

/// An array whose items each read strictly (`"type": "array", "items": …`).
pub fn list<'de, T: Strict, A: MapAccess<'de>>(m: &mut A) -> Result<Vec<T>, A::Error> {
    m.next_value_seed(List(PhantomData))
}

/// A record that reads strictly, wherever it stands.
pub fn record<'de, T: Strict, A: MapAccess<'de>>(m: &mut A) -> Result<T, A::Error> {
    m.next_value_seed(One(PhantomData))
}

struct One<T>(PhantomData<T>);

impl<'de, T: Strict> DeserializeSeed<'de> for One<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::strict(d)
    }
}

struct List<T>(PhantomData<T>);

impl<'de, T: Strict> DeserializeSeed<'de> for List<T> {
    type Value = Vec<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: Strict> Visitor<'de> for List<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Vec<T>, S::Error> {
        let mut items = Vec::new();
        while let Some(item) = s.next_element_seed(One(PhantomData))? {
            items.push(item);
        }
        // A list of one (a task's commits, mostly) would otherwise hold room for four.
        items.shrink_to_fit();
        Ok(items)
    }
}

/// A top-level array member of records read strictly whole (`"type": "array", "items": …`),
/// beside the member read entry by entry ([`crate::store::entries::Side`]): `items` is what it
/// held, `None` when the document did not have it.
pub struct Records<T> {
    key: &'static str,
    pub items: Option<Vec<T>>,
}

impl<T> Records<T> {
    pub fn new(key: &'static str) -> Self {
        Records { key, items: None }
    }
}

impl<T: Strict> crate::store::entries::Side for Records<T> {
    fn key(&self) -> Option<&str> {
        Some(self.key)
    }

    fn read<'de, A: MapAccess<'de>>(&mut self, m: &mut A) -> Result<(), A::Error> {
        self.items = Some(list(m)?);
        Ok(())
    }
}

/// An integer of at least `min`, as JSON Schema judges a number (`2.0` is one).
pub fn is_integer_at_least(n: &Number, min: u64) -> bool {
    if let Some(u) = n.as_u64() {
        return u >= min;
    }
    if n.as_i64().is_some() {
        // Negative.
        return false;
    }
    n.as_f64()
        .is_some_and(|f| f.fract() == 0.0 && f >= min as f64)
}

/// `"minimum": 0` on any number.
pub fn at_least_zero(n: &Number) -> bool {
    n.as_u64().is_some() || n.as_f64().is_some_and(|f| f >= 0.0)
}

/// The schemas' timestamp:
/// `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?Z$`.
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 {
        return false;
    }
    let d = |i: usize| b[i].is_ascii_digit();
    let two = |i: usize| (b[i] - b'0') * 10 + (b[i + 1] - b'0');
    if !(d(0) && d(1) && d(2) && d(3) && b[4] == b'-' && d(5) && d(6) && b[7] == b'-')
        || !(d(8) && d(9) && b[10] == b'T' && d(11) && d(12) && b[13] == b':')
        || !(d(14) && d(15) && b[16] == b':' && d(17) && d(18))
    {
        return false;
    }
    let (month, day, hour, minute, second) = (two(5), two(8), two(11), two(14), two(17));
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return false;
    }
    match &b[19..] {
        [b'Z'] => true,
        [b'.', frac @ .., b'Z'] => !frac.is_empty() && frac.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// The strategies the layouts' property tests draw values from: near the edges of what the
/// schemas take.
#[cfg(test)]
pub mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    /// What one field may hold, valid or not.
    pub fn any_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            Just(json!(true)),
            Just(json!("")),
            Just(json!("T1")),
            Just(json!("pending")),
            Just(json!("done")),
            Just(json!("failed")),
            Just(json!({"pending": null})),
            Just(json!(0)),
            Just(json!(1)),
            Just(json!(3)),
            Just(json!(-1)),
            Just(json!(-0.0)),
            Just(json!(2.0)),
            Just(json!(2.5)),
            Just(json!(1e300)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(-2.5)),
            Just(json!([])),
            Just(json!(["A", "B"])),
            Just(json!(["A", ""])),
            Just(json!(["A", 1])),
            Just(json!([1])),
            Just(json!({})),
            Just(json!({"x": 1})),
            Just(json!({"JIRA": "P-1"})),
            timestamp().prop_map(Value::String),
        ]
    }

    /// [`timestamp`] as a JSON value.
    pub fn stamp() -> BoxedStrategy<Value> {
        timestamp().prop_map(Value::String).boxed()
    }

    /// [`stamp`] or `null` (a nullable timestamp).
    pub fn stamp_or_null() -> BoxedStrategy<Value> {
        prop_oneof![stamp(), Just(Value::Null)].boxed()
    }

    /// Strings near the schemas' timestamp form.
    pub fn timestamp() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("2026-01-05T08:00:00Z".to_string()),
            Just("2026-12-31T23:59:60.125Z".to_string()),
            Just("2026-01-05T08:00:00.Z".to_string()),
            Just("2026-01-05T08:00:00Z\n".to_string()),
            Just("2026-01-05 08:00:00Z".to_string()),
            Just("2026-01-05T08:00:00+00:00".to_string()),
            "[0-9]{4}-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\\.[0-9]{0,2})?Z?",
            "[0-9T:.Z-]{18,24}",
        ]
    }

    /// An object of some of `fields` (each drawn from its own strategy, or, less often, from
    /// anything) and unknown ones, in any order, over `base` (the required fields): whole most
    /// often, else with one of them left out, or none of it.
    pub fn object(
        fields: Vec<(&'static str, BoxedStrategy<Value>)>,
        base: Vec<(&'static str, Value)>,
        most: usize,
    ) -> impl Strategy<Value = Value> {
        let mut fields = fields;
        fields.push(("notes", any_value().boxed()));
        fields.push(("x-extra", any_value().boxed()));
        let pick = prop::sample::select((0..fields.len()).collect::<Vec<_>>());
        let field = pick.prop_flat_map(move |i| {
            let (name, valid) = fields[i].clone();
            prop_oneof![5 => valid, 1 => any_value()].prop_map(move |v| (name, v))
        });
        let base_len = base.len();
        let left_out = prop_oneof![
            4 => Just(None),
            2 => (0..base_len.max(1)).prop_map(Some),
            1 => Just(Some(usize::MAX)),
        ];
        (prop::collection::vec(field, 0..most), left_out).prop_map(move |(fs, left_out)| {
            let mut m = Map::new();
            for (i, (k, v)) in base.iter().enumerate() {
                if left_out != Some(i) && left_out != Some(usize::MAX) {
                    m.insert(k.to_string(), v.clone());
                }
            }
            for (k, v) in fs {
                m.insert(k.to_string(), v);
            }
            Value::Object(m)
        })
    }

    /// The strict reading of `v`'s JSON, or `None` where it refuses it.
    pub fn read<T: crate::store::entries::Strict>(v: &Value) -> Option<T> {
        let bytes = serde_json::to_vec(v).ok()?;
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        T::strict(&mut de).ok()
    }

    /// What a strict reading is held to: it takes `v` exactly when the entry schema of
    /// `member` in `schema` does and the derive can type it, and gives what the derive gives.
    pub fn is_the_schema_and_the_derive<T>(
        schema: &str,
        member: &str,
        v: &Value,
    ) -> Result<(), proptest::test_runner::TestCaseError>
    where
        T: crate::store::entries::Strict
            + serde::de::DeserializeOwned
            + PartialEq
            + std::fmt::Debug,
    {
        let valid = crate::store::schema::entry_is_valid(schema, member, v).unwrap();
        let derived = serde_json::from_value::<T>(v.clone()).ok();
        let got = read::<T>(v);
        prop_assert_eq!(got.is_some(), valid && derived.is_some(), "{}", v);
        if let Some(t) = got {
            prop_assert_eq!(Some(t), derived);
        }
        Ok(())
    }

    /// What a schema's own check is held to on the rest of a document read entry by entry:
    /// it takes `head` with its members `emptied` (those read entry by entry, which the rest
    /// holds as an empty array or object) exactly when the schema's validator does.
    pub fn is_the_schema_on_the_head(
        schema: &str,
        emptied: &[&str],
        mut head: Value,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        for k in emptied {
            match head.get_mut(*k) {
                Some(Value::Array(a)) => a.clear(),
                Some(Value::Object(m)) => m.clear(),
                _ => {}
            }
        }
        crate::store::schema::tests::native_is_the_schema(schema, &head)
    }

    /// One of `values`.
    pub fn pick(values: Vec<Value>) -> BoxedStrategy<Value> {
        prop::sample::select(values).boxed()
    }

    /// Sorted keys, at every depth (to compare what was written with what was read).
    pub fn sorted(v: Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut m: Map<String, Value> =
                    m.into_iter().map(|(k, v)| (k, sorted(v))).collect();
                m.sort_keys();
                Value::Object(m)
            }
            Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
            other => other,
        }
    }
}
