//! The decision JSON taskhook prints on stdout, exactly one object or nothing, and which event
//! accepts which part of it.
//!
//! Handlers say what they want said as a [`Reply`] (context lines, a block reason, a halt, …);
//! [`render`] keeps what the event accepts according to [`ACCEPTS`], the decision-control table
//! observed in the real Claude Code (FINDINGS.md), and builds the [`HookOutput`].
//!
//! Fields follow Claude Code's names: `continue`, `stopReason`, `systemMessage`, `decision`,
//! `reason`, `hookSpecificOutput {hookEventName, additionalContext, permissionDecision, …}`.
//! Every string Claude Code shows is made safe to show ([`crate::display::text`]: control
//! characters but newline and tab, and bidirectional-text controls, escaped: a title from a
//! cloned repository never reaches the user's terminal or the model raw), then capped at
//! [`MAX_TEXT_CHARS`] UTF-16 code units (JavaScript's string length), cut on a character
//! boundary with a marker. The exit-2 refusal line is made safe the same way.

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

/// `hookSpecificOutput`: the event name, optional context, PreToolUse's permission decision, and
/// event-specific extras (seed 002's `tasks_to_update` goes in `extra` under its own snake_case
/// name).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecific {
    pub hook_event_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// PreToolUse only: `"deny"` stops the tool call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What handlers want said about one event, before the event decides what it accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// Lines for `additionalContext` (what the model reads).
    pub context: Vec<String>,
    /// Lines for `systemMessage` (what the user sees).
    pub system: Vec<String>,
    /// Reasons for `decision: block` (another turn for the agent that stopped).
    pub block: Vec<String>,
    /// `continue: false` with this `stopReason` (halts the agent).
    pub halt: Option<String>,
    /// Refuse the event with exit 2 and this stderr line (TaskCompleted).
    pub refuse: Option<String>,
    /// Deny the tool call with this reason (PreToolUse `permissionDecision: "deny"`).
    pub deny: Option<String>,
    /// Extra `hookSpecificOutput` fields (seed 002's `tasks_to_update`).
    pub extra: Map<String, Value>,
    /// For the main agent at its next PostToolUse (the engine keeps these as notices; they are
    /// never rendered on the event itself).
    pub tell_main: Vec<String>,
}

impl Reply {
    /// Whether the reply says nothing.
    pub fn is_empty(&self) -> bool {
        *self == Reply::default()
    }

    /// A reply with one context line.
    pub fn context(line: impl Into<String>) -> Self {
        Reply {
            context: vec![line.into()],
            ..Default::default()
        }
    }

    /// Folds another reply into this one (the first halt, refusal and denial win).
    pub fn merge(&mut self, other: Reply) {
        self.context.extend(other.context);
        self.system.extend(other.system);
        self.block.extend(other.block);
        self.halt = self.halt.take().or(other.halt);
        self.refuse = self.refuse.take().or(other.refuse);
        self.deny = self.deny.take().or(other.deny);
        self.tell_main.extend(other.tell_main);
        for (k, v) in other.extra {
            match (self.extra.get_mut(&k), v) {
                (Some(Value::Array(a)), Value::Array(b)) => a.extend(b),
                (_, v) => {
                    self.extra.insert(k, v);
                }
            }
        }
    }
}

/// Which parts of a [`Reply`] an event accepts. `systemMessage` and extra
/// `hookSpecificOutput` fields are accepted everywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accepts {
    /// `hookSpecificOutput.additionalContext`.
    pub context: bool,
    /// `decision: "block"` + `reason`.
    pub block: bool,
    /// `continue: false` + `stopReason`.
    pub halt: bool,
    /// Exit 2 with the reason on stderr (the only refusal the event honours).
    pub exit2: bool,
    /// `hookSpecificOutput.permissionDecision: "deny"`.
    pub deny: bool,
}

const fn accepts_row(context: bool, block: bool, halt: bool, exit2: bool, deny: bool) -> Accepts {
    Accepts {
        context,
        block,
        halt,
        exit2,
        deny,
    }
}

/// The decision-control table (CONTRACT §2 and §5, FINDINGS.md): what each event accepts.
/// `continue: false` on SubagentStop would end only the subagent, and `additionalContext` there
/// gives the subagent another turn: neither is ever sent. Events not listed accept only
/// `systemMessage`.
pub const ACCEPTS: &[(&str, Accepts)] = &[
    //                                   context block  halt   exit2  deny
    ("SessionStart", accepts_row(true, false, true, false, false)),
    (
        "UserPromptSubmit",
        accepts_row(true, false, true, false, false),
    ),
    (
        "SubagentStart",
        accepts_row(true, false, false, false, false),
    ),
    ("PreToolUse", accepts_row(false, false, true, false, true)),
    ("PostToolUse", accepts_row(true, true, true, false, false)),
    (
        "PostToolUseFailure",
        accepts_row(true, false, true, false, false),
    ),
    (
        "SubagentStop",
        accepts_row(false, true, false, false, false),
    ),
    ("Stop", accepts_row(false, true, true, false, false)),
    (
        "TaskCompleted",
        accepts_row(false, false, false, true, false),
    ),
];

/// What `event` accepts (an unknown event: only `systemMessage`).
pub fn accepts(event: &str) -> Accepts {
    ACCEPTS
        .iter()
        .find(|(name, _)| *name == event)
        .map(|(_, a)| *a)
        .unwrap_or_default()
}

/// Keeps what `event` accepts of `reply` and builds the JSON; also returns the exit-2 refusal
/// line, when the event honours one and the reply refuses.
pub fn render(event: &str, r: Reply) -> (Option<HookOutput>, Option<String>) {
    let a = accepts(event);
    let mut out = HookOutput::default();
    if !r.system.is_empty() {
        out.system_message = Some(r.system.join("\n"));
    }
    if a.block && !r.block.is_empty() {
        out.decision = Some(Decision::Block);
        out.reason = Some(r.block.join("\n\n"));
    }
    if let Some(reason) = r.halt.filter(|_| a.halt) {
        out.continue_ = Some(false);
        out.stop_reason = Some(reason);
    }
    let context = (a.context && !r.context.is_empty()).then(|| r.context.join("\n\n"));
    let deny = r.deny.filter(|_| a.deny);
    if context.is_some() || deny.is_some() || !r.extra.is_empty() {
        out.hook_specific_output = Some(HookSpecific {
            hook_event_name: event.to_string(),
            additional_context: context,
            permission_decision: deny.is_some().then_some("deny"),
            permission_decision_reason: deny,
            extra: r.extra,
        });
    }
    let refusal = r
        .refuse
        .filter(|_| a.exit2)
        .map(|line| crate::display::text(&line).into_owned());
    ((!out.is_empty()).then_some(out), refusal)
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
                ..Default::default()
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

    /// Every shown string made safe to show, then capped ([`show`]).
    pub fn shown(mut self) -> Self {
        for s in [
            &mut self.stop_reason,
            &mut self.system_message,
            &mut self.reason,
        ]
        .into_iter()
        .flatten()
        {
            *s = show(s);
        }
        if let Some(h) = &mut self.hook_specific_output {
            for c in [&mut h.additional_context, &mut h.permission_decision_reason]
                .into_iter()
                .flatten()
            {
                *c = show(c);
            }
        }
        self
    }

    /// Serializes to the one-line JSON printed on stdout.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.clone().shown()).unwrap_or(Value::Null)
    }
}

/// `s` as Claude Code is given it: made safe to show ([`crate::display::text`]), then capped
/// ([`cap`]).
pub fn show(s: &str) -> String {
    cap(&crate::display::text(s))
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
            extra,
            ..Default::default()
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
    fn events_keep_only_what_they_accept() {
        let r = Reply {
            context: vec!["ctx".into()],
            block: vec!["again".into()],
            halt: Some("stop".into()),
            refuse: Some("no".into()),
            deny: Some("not yours".into()),
            ..Default::default()
        };
        let json = |event: &str| {
            let (out, refusal) = render(event, r.clone());
            (out.map(|o| serde_json::to_string(&o).unwrap()), refusal)
        };
        assert_eq!(
            json("SubagentStop"),
            (
                Some(r#"{"decision":"block","reason":"again"}"#.into()),
                None
            )
        );
        assert_eq!(
            json("PreToolUse").0.unwrap(),
            r#"{"continue":false,"stopReason":"stop","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not yours"}}"#
        );
        assert_eq!(json("TaskCompleted"), (None, Some("no".into())));
        assert_eq!(json("Teleport"), (None, None));
        let (out, _) = render("PostToolUse", r);
        let out = out.unwrap();
        assert_eq!(out.continue_, Some(false));
        assert_eq!(out.decision, Some(Decision::Block));
        assert_eq!(
            out.hook_specific_output
                .unwrap()
                .additional_context
                .as_deref(),
            Some("ctx")
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
