//! The decision JSON taskhook prints on stdout, exactly one object or nothing.
//!
//! Fields follow Claude Code's names: `continue`, `stopReason`, `systemMessage`, `decision`,
//! `reason`, `hookSpecificOutput {hookEventName, additionalContext, …}`. Every string Claude Code
//! shows is capped at [`MAX_TEXT_CHARS`] UTF-16 code units (JavaScript's string length), cut on a
//! character boundary with a marker.

use serde::Serialize;
use serde_json::{Map, Value};

/// Claude Code's cap on hook output strings.
pub const MAX_TEXT_CHARS: usize = 10_000;
/// Appended where a string was cut.
pub const TRUNCATION_MARKER: &str = "\n[… truncated by taskhook]";

/// One hook reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecific>,
}

/// The only decision Claude Code acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Block,
}

/// `hookSpecificOutput`: the event name, optional context, and event-specific extras (seed
/// 002's `tasks_to_update` goes in `extra` under its own snake_case name).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecific {
    pub hook_event_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl HookOutput {
    /// Whether there is nothing to say (prints nothing).
    pub fn is_empty(&self) -> bool {
        *self == HookOutput::default()
    }

    /// A reply carrying only `additionalContext` for `event`.
    pub fn context(event: &str, text: impl Into<String>) -> Self {
        HookOutput {
            hook_specific_output: Some(HookSpecific {
                hook_event_name: event.to_string(),
                additional_context: Some(text.into()),
                extra: Map::new(),
            }),
            ..Default::default()
        }
    }

    /// A `decision: block` reply with its reason.
    pub fn block(reason: impl Into<String>) -> Self {
        HookOutput {
            decision: Some(Decision::Block),
            reason: Some(reason.into()),
            ..Default::default()
        }
    }

    /// Applies the character cap to every shown string.
    pub fn capped(mut self) -> Self {
        for s in [
            &mut self.stop_reason,
            &mut self.system_message,
            &mut self.reason,
        ]
        .into_iter()
        .flatten()
        {
            *s = cap(s);
        }
        if let Some(h) = &mut self.hook_specific_output {
            if let Some(c) = &mut h.additional_context {
                *c = cap(c);
            }
        }
        self
    }

    /// Serializes to the one-line JSON printed on stdout.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.clone().capped()).unwrap_or(Value::Null)
    }
}

/// Caps `s` at [`MAX_TEXT_CHARS`] (marker included), counted in UTF-16 code units as Claude
/// Code (JavaScript) counts a string's length; never splits a character, so never a surrogate
/// pair.
pub fn cap(s: &str) -> String {
    if utf16_len(s) <= MAX_TEXT_CHARS {
        return s.to_string();
    }
    let budget = MAX_TEXT_CHARS - utf16_len(TRUNCATION_MARKER);
    let mut used = 0;
    let mut cut = s.len();
    for (i, c) in s.char_indices() {
        if used + c.len_utf16() > budget {
            cut = i;
            break;
        }
        used += c.len_utf16();
    }
    format!("{}{}", &s[..cut], TRUNCATION_MARKER)
}

/// The length of `s` in UTF-16 code units (JavaScript's `length`).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_exact() {
        let mut o = HookOutput::block("keep going");
        o.continue_ = Some(false);
        o.stop_reason = Some("halt".into());
        o.system_message = Some("note".into());
        let mut extra = Map::new();
        extra.insert("tasks_to_update".into(), serde_json::json!([]));
        o.hook_specific_output = Some(HookSpecific {
            hook_event_name: "SubagentStop".into(),
            additional_context: None,
            extra,
        });
        assert_eq!(
            serde_json::to_string(&o).unwrap(),
            r#"{"continue":false,"stopReason":"halt","systemMessage":"note","decision":"block","reason":"keep going","hookSpecificOutput":{"hookEventName":"SubagentStop","tasks_to_update":[]}}"#
        );
        assert_eq!(
            serde_json::to_string(&HookOutput::context("SessionStart", "x")).unwrap(),
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"x"}}"#
        );
    }

    #[test]
    fn cap_respects_chars_and_marks() {
        let s = "é".repeat(20_000);
        let c = cap(&s);
        assert_eq!(c.chars().count(), MAX_TEXT_CHARS);
        assert!(c.ends_with(TRUNCATION_MARKER));
        assert_eq!(cap("short"), "short");
        let exact = "a".repeat(MAX_TEXT_CHARS);
        assert_eq!(cap(&exact), exact);
    }

    #[test]
    fn cap_counts_utf16_units_and_keeps_pairs_whole() {
        // 6,000 emoji are 6,000 chars but 12,000 UTF-16 units: over Claude Code's cap.
        let s = "😀".repeat(6_000);
        let c = cap(&s);
        assert!(utf16_len(&c) <= MAX_TEXT_CHARS, "{}", utf16_len(&c));
        assert!(c.ends_with(TRUNCATION_MARKER));
        let kept = c.strip_suffix(TRUNCATION_MARKER).unwrap();
        assert!(kept.chars().all(|ch| ch == '😀'));
        // An odd budget: one unit short of a pair is left unused, never half a pair.
        let s = format!("a{}", "😀".repeat(6_000));
        let c = cap(&s);
        assert!(utf16_len(&c) <= MAX_TEXT_CHARS);
        assert!(MAX_TEXT_CHARS - utf16_len(&c) <= 1);
        let exact = "😀".repeat(MAX_TEXT_CHARS / 2);
        assert_eq!(cap(&exact), exact);
    }
}
