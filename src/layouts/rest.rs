//! The fields of a record taskhook does not know (issue 23): kept in the order they came, and
//! one pointer when there are none.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The fields of a record taskhook does not know, kept in the order they came (with
/// `#[serde(flatten)]`). Most records have none: an empty set is one pointer, not a map
/// (issue 23: 64 bytes less for each of 10,000 tasks, and for each commit, queue entry and
/// unit). Reads and changes go through the map ([`std::ops::Deref`]); a change makes it.
#[derive(Clone, Default)]
pub struct Rest(Option<Box<Map<String, Value>>>);

impl Rest {
    fn empty() -> &'static Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        EMPTY.get_or_init(Map::new)
    }
}

impl std::ops::Deref for Rest {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.0.as_deref().unwrap_or_else(|| Rest::empty())
    }
}

impl std::ops::DerefMut for Rest {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Default::default)
    }
}

impl From<Map<String, Value>> for Rest {
    fn from(m: Map<String, Value>) -> Rest {
        Rest((!m.is_empty()).then(|| Box::new(m)))
    }
}

/// Equal when they hold the same fields (an empty map and none are the same).
impl PartialEq for Rest {
    fn eq(&self, other: &Rest) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Rest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Rest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Rest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rest, D::Error> {
        Map::deserialize(d).map(Rest::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The fields a record does not know are kept in order through `flatten`, cost one pointer
    /// when there are none, and compare by what they hold.
    #[test]
    fn the_rest_of_a_record_is_kept_in_order_and_costs_a_pointer_when_empty() {
        #[derive(Debug, PartialEq, Deserialize, Serialize)]
        struct R {
            a: u8,
            #[serde(flatten)]
            rest: Rest,
        }
        assert_eq!(std::mem::size_of::<Rest>(), std::mem::size_of::<usize>());
        let text = r#"{"z":1,"a":2,"y":[null]}"#;
        let r: R = serde_json::from_str(text).unwrap();
        assert_eq!(r.rest.keys().collect::<Vec<_>>(), ["z", "y"]);
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"a":2,"z":1,"y":[null]}"#
        );
        let bare: R = serde_json::from_str(r#"{"a":2}"#).unwrap();
        assert!(bare.rest.0.is_none() && bare.rest.is_empty());
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"a":2}"#);
        let mut made = Rest::default();
        made.insert("k".into(), json!(1));
        made.remove("k");
        assert_eq!(made, Rest::default());
    }
}
