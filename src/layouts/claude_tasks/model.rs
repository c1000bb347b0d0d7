//! One task as the write path, the mirror and the summary see it: the few fields they decide on
//! (id, status, dependencies, assignee, the mirror's origin and scope), parsed typed and
//! borrowed from the file's bytes, never as a whole JSON tree.
//!
//! [`View::parse`] is also a *sound* check of seed 002's item schema: when it accepts a task,
//! `schemas/claude-tasks.schema.json` accepts it too (a test holds it to that on random tasks).
//! It may refuse a task the schema accepts (a duplicate key, an escaped id it cannot borrow, a
//! version written `2.0`): the caller then falls back to the full JSON path, which decides with
//! the schema itself. So the fast path is never looser than the schema.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

// A present field must not be `null` here (the schema gives these a non-null type).
use crate::layouts::json::present::deserialize as present;
use crate::layouts::json::Lenient;

/// A task's status (seed 002). `Other` only for an edited task before its schema check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Pending,
    InProgress,
    Completed,
    Blocked,
    Other,
}

impl Status {
    /// The status as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Blocked => "blocked",
            Status::Other => "",
        }
    }

    /// The status a string names (`Other` for anything else).
    pub fn of(s: &str) -> Status {
        match s {
            "pending" => Status::Pending,
            "in_progress" => Status::InProgress,
            "completed" => Status::Completed,
            "blocked" => Status::Blocked,
            _ => Status::Other,
        }
    }
}

/// What the mirror recorded about who wrote a task (`metadata.custom_fields`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope<'a> {
    pub origin: Option<Cow<'a, str>>,
    pub session: Option<Cow<'a, str>>,
    pub agent: Option<Cow<'a, str>>,
    pub project: Option<Cow<'a, str>>,
}

/// The fields of one task that decisions are made on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View<'a> {
    pub id: Cow<'a, str>,
    pub status: Status,
    pub deps: Vec<Cow<'a, str>>,
    pub assignee: Option<Cow<'a, str>>,
    /// Absent for tasks the mirror did not write (most of a large list): no allocation.
    pub scope: Option<Box<Scope<'a>>>,
    /// Its timestamps all end in `Z` (else it is normalised to UTC at the next write).
    pub zulu: bool,
}

impl<'a> View<'a> {
    /// Parses one task from its JSON text; `None` when it is not a task this path can vouch for.
    pub fn parse(raw: &'a str) -> Option<View<'a>> {
        let Obj(w) = serde_json::from_str::<Obj<Wire<'a>>>(raw).ok()?;
        if w.id.0.is_empty() {
            return None;
        }
        let custom = w
            .metadata
            .and_then(|m| m.0.custom_fields)
            .map(|c| c.0)
            .unwrap_or_default();
        Some(View {
            id: w.id.0,
            status: w.status,
            deps: w
                .dependencies
                .unwrap_or_default()
                .into_iter()
                .map(|d| d.0)
                .collect(),
            assignee: w.assignee.map(|a| a.0),
            scope: Scope {
                origin: custom.origin.and_then(|s| s.0),
                session: custom.session_id.and_then(|s| s.0),
                agent: custom.agent_id.and_then(|s| s.0),
                project: custom.project.and_then(|s| s.0),
            }
            .boxed(),
            zulu: w.created_at.0 && w.updated_at.0,
        })
    }

    /// The view of a task held as JSON (an edited or re-serialised one); lenient: the schema
    /// check before the write is what refuses a bad task.
    pub fn of_map(m: &Map<String, Value>) -> View<'static> {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).map(|s| Cow::Owned(s.to_string()));
        let cf = m
            .get("metadata")
            .and_then(|v| v.get("custom_fields"))
            .and_then(Value::as_object);
        let c = |k: &str| s(cf.and_then(|cf| cf.get(k)));
        let stamp_z = |k: &str| {
            m.get(k)
                .and_then(Value::as_str)
                .is_none_or(|t| t.ends_with('Z'))
        };
        View {
            id: s(m.get("id")).unwrap_or_default(),
            status: Status::of(m.get("status").and_then(Value::as_str).unwrap_or("")),
            deps: m
                .get("dependencies")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(|d| Cow::Owned(d.to_string()))
                        .collect()
                })
                .unwrap_or_default(),
            assignee: s(m.get("assignee")),
            scope: Scope {
                origin: c("origin"),
                session: c("session_id"),
                agent: c("agent_id"),
                project: c("project"),
            }
            .boxed(),
            zulu: stamp_z("created_at") && stamp_z("updated_at"),
        }
    }

    /// `metadata.custom_fields.origin`, when a string.
    pub fn origin(&self) -> Option<&str> {
        self.scope.as_ref().and_then(|s| s.origin.as_deref())
    }

    /// `metadata.custom_fields.session_id`, when a string.
    pub fn session(&self) -> Option<&str> {
        self.scope.as_ref().and_then(|s| s.session.as_deref())
    }

    /// `metadata.custom_fields.agent_id`, when a string.
    pub fn agent(&self) -> Option<&str> {
        self.scope.as_ref().and_then(|s| s.agent.as_deref())
    }

    /// `metadata.custom_fields.project`, when a string.
    pub fn project(&self) -> Option<&str> {
        self.scope.as_ref().and_then(|s| s.project.as_deref())
    }
}

impl<'a> Scope<'a> {
    /// Boxed, or `None` when no field is set.
    fn boxed(self) -> Option<Box<Scope<'a>>> {
        (self != Scope::default()).then(|| Box::new(self))
    }
}

/// Whether `s` matches the schema's timestamp: `YYYY-MM-DDTHH:MM:SS[.f+]` then `Z` or
/// `±HH:MM`. Returns `Some(true)` for `Z`, `Some(false)` for an offset.
pub fn stamp_kind(s: &str) -> Option<bool> {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let two = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    let shape = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return None;
    }
    let (month, day, hour, min, sec) = (two(5), two(8), two(11), two(14), two(17));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    match &b[i..] {
        [b'Z'] => Some(true),
        [sign, h1, h2, b':', m1, m2]
            if matches!(sign, b'+' | b'-')
                && [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()) =>
        {
            let h = u32::from(h1 - b'0') * 10 + u32::from(h2 - b'0');
            let m = u32::from(m1 - b'0') * 10 + u32::from(m2 - b'0');
            (h <= 23 && m <= 59).then_some(false)
        }
        _ => None,
    }
}

/// A timestamp in UTC with `Z`: offsets converted, fractions kept; `None` when unparsable.
pub fn to_zulu(s: &str) -> Option<String> {
    let t = chrono::DateTime::parse_from_rfc3339(s).ok()?;
    Some(
        t.with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
    )
}

// ---- the wire shape ----------------------------------------------------------------------

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(borrow)]
    id: BStr<'a>,
    #[allow(dead_code)]
    description: AnyStr,
    status: Status,
    created_at: Stamp,
    updated_at: Stamp,
    /// `null` and absent alike are `None`; any other type is refused.
    #[serde(default, borrow)]
    assignee: Option<BStr<'a>>,
    #[serde(default, borrow, deserialize_with = "present")]
    dependencies: Option<Vec<BStr<'a>>>,
    #[serde(default, deserialize_with = "present")]
    #[allow(dead_code)]
    parent_id: Option<AnyStr>,
    #[serde(default, borrow, deserialize_with = "present")]
    metadata: Option<Obj<Meta<'a>>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(default, deserialize_with = "present")]
    #[allow(dead_code)]
    priority: Option<Priority>,
    #[serde(default, deserialize_with = "present")]
    #[allow(dead_code)]
    tags: Option<Vec<AnyStr>>,
    #[serde(default, deserialize_with = "present")]
    #[allow(dead_code)]
    source: Option<AnyStr>,
    #[serde(default, borrow, deserialize_with = "present")]
    custom_fields: Option<Obj<Custom<'a>>>,
}

#[derive(Deserialize, Default)]
struct Custom<'a> {
    #[serde(default, borrow)]
    origin: Option<Lenient<'a>>,
    #[serde(default, borrow)]
    session_id: Option<Lenient<'a>>,
    #[serde(default, borrow)]
    agent_id: Option<Lenient<'a>>,
    #[serde(default, borrow)]
    project: Option<Lenient<'a>>,
}

/// `low`, `medium` or `high`, as a plain string.
struct Priority;

impl<'de> Deserialize<'de> for Priority {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match &*AnyStr::text(d)? {
            "low" | "medium" | "high" => Ok(Priority),
            _ => Err(de::Error::custom("unknown priority")),
        }
    }
}

/// A JSON object, and only an object: serde's derived structs also take arrays, which the
/// schema refuses.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(a))
            }
        }
        d.deserialize_map(V(PhantomData)).map(Obj)
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = AnyStr::text(d)?;
        match Status::of(&s) {
            Status::Other => Err(de::Error::custom("unknown status")),
            st => Ok(st),
        }
    }
}

/// A string, borrowed from the input when it has no escapes.
struct BStr<'a>(Cow<'a, str>);

struct CowVisitor;

impl<'de> Visitor<'de> for CowVisitor {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for BStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(CowVisitor).map(BStr)
    }
}

/// A string whose value is not kept (only its type is checked).
struct AnyStr;

impl AnyStr {
    fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(CowVisitor)
    }
}

impl<'de> Deserialize<'de> for AnyStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<AnyStr, E> {
                Ok(AnyStr)
            }
        }
        d.deserialize_str(V)
    }
}

/// A schema timestamp; `true` when it ends in `Z`.
struct Stamp(bool);

impl<'de> Deserialize<'de> for Stamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = AnyStr::text(d)?;
        stamp_kind(&s)
            .map(Stamp)
            .ok_or_else(|| de::Error::custom("not a timestamp"))
    }
}
