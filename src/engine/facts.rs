//! One payload turned into typed facts, once, without I/O: what happened, in the words the
//! layouts understand. Layouts never see the wire format (`hook::input`); they get these.
//!
//! A fact borrows from the payload. [`of`] is pure and cheap: it is what decides, for every
//! tool call, whether anything beyond process start happens at all.

use serde_json::Value;

use crate::hook::input::{Event, Payload, SessionSource, ToolUse};
pub use crate::layouts::fact::*;
use crate::signals::{bound_names, content_text};

fn str_at<'p>(v: &'p Value, key: &str) -> Option<&'p str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The facts of one payload, in the order they are handled.
pub fn of(p: &Payload) -> Vec<Fact<'_>> {
    let agent_id = p.common.agent_id.as_deref().filter(|a| !a.is_empty());
    let mut facts = Vec::new();
    match &p.event {
        Event::SessionStart(s) => facts.push(Fact::SessionStart(match s.kind() {
            SessionSource::Startup => Start::Startup,
            SessionSource::Resume => Start::Resume,
            SessionSource::Clear => Start::Clear,
            SessionSource::Compact => Start::Compact,
            SessionSource::Fork => Start::Fork,
        })),
        Event::PreToolUse(t) => match t.tool_name.as_str() {
            "Agent" | "Task" => {
                if let Some(prompt) = str_at(&t.tool_input, "prompt") {
                    let names = bound_names(prompt);
                    if !names.is_empty() {
                        facts.push(Fact::Launch(Launch {
                            names,
                            prompt,
                            caller: agent_id,
                            session: p.common.session_id.as_deref().filter(|s| !s.is_empty()),
                        }));
                    }
                }
            }
            "Bash" => {
                if let Some(command) = str_at(&t.tool_input, "command") {
                    facts.push(Fact::Bash(Bash {
                        command,
                        stdout: None,
                        agent_id,
                    }));
                }
            }
            _ => {}
        },
        Event::PostToolUse(t) => {
            post_tool_use(p, t, agent_id, &mut facts);
            if agent_id.is_none() {
                facts.push(Fact::MainToolUse);
            }
        }
        Event::SubagentStop(s) => {
            if let Some(ids) = s.tasks_completed.as_deref().filter(|v| !v.is_empty()) {
                facts.push(Fact::TasksCompleted(ids));
            }
            facts.push(Fact::Stopped(Stopped {
                agent_id,
                fork: p.common.agent_type.as_deref() == Some(""),
                transcript_path: s.agent_transcript_path.as_deref().filter(|t| !t.is_empty()),
                last_message: s.last_assistant_message.as_deref(),
                stop_hook_active: s.stop_hook_active.unwrap_or(false),
            }));
        }
        Event::TaskCompleted(e) => {
            if let Some(id) = e.task_id.as_deref().filter(|i| !i.is_empty()) {
                facts.push(Fact::TaskCompleted(id));
            }
        }
        Event::PreCompact => facts.push(Fact::Checkpoint("PreCompact")),
        Event::SessionEnd => {
            facts.push(Fact::Checkpoint("SessionEnd"));
            facts.push(Fact::SessionEnded);
        }
        _ => {}
    }
    facts
}

fn post_tool_use<'p>(
    p: &'p Payload,
    t: &'p ToolUse,
    agent_id: Option<&'p str>,
    facts: &mut Vec<Fact<'p>>,
) {
    let kind = match t.tool_name.as_str() {
        "TodoWrite" => Some(TaskToolKind::TodoWrite),
        "TaskCreate" => Some(TaskToolKind::TaskCreate),
        "TaskUpdate" => Some(TaskToolKind::TaskUpdate),
        _ => None,
    };
    if let Some(kind) = kind {
        facts.push(Fact::TaskTool(TaskTool {
            kind,
            input: &t.tool_input,
            response: &t.tool_response,
            session_id: p.common.session_id.as_deref().filter(|s| !s.is_empty()),
            agent_id,
        }));
        return;
    }
    match t.tool_name.as_str() {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            if let Some(path) = str_at(&t.tool_input, "file_path")
                .or_else(|| str_at(&t.tool_input, "notebook_path"))
            {
                facts.push(Fact::Edit(path));
            }
        }
        "Bash" => {
            let Some(command) = str_at(&t.tool_input, "command") else {
                return;
            };
            let stdout = t
                .tool_response
                .get("stdout")
                .and_then(Value::as_str)
                .unwrap_or("");
            if command.contains("git") && command.contains("commit") {
                if let Some(c) = parse_commit(stdout) {
                    facts.push(Fact::Commit(Commit { agent_id, ..c }));
                }
            }
            let merged = merged_branches(command);
            if !merged.is_empty() {
                facts.push(Fact::Merge(merged));
            }
            facts.push(Fact::Bash(Bash {
                command,
                stdout: Some(stdout),
                agent_id,
            }));
        }
        "Agent" | "Task" if agent_id.is_none() => {
            let names = str_at(&t.tool_input, "prompt")
                .map(bound_names)
                .unwrap_or_default();
            let final_text = t
                .tool_response
                .get("content")
                .map(content_text)
                .filter(|s| !s.trim().is_empty());
            facts.push(Fact::AgentReturned(AgentReturned {
                agent_id: str_at(&t.tool_response, "agentId"),
                names,
                final_text,
            }));
        }
        _ => {}
    }
}

/// The commit a successful `git commit` printed: `[branch abc1234] message` (also
/// `[main (root-commit) abc1234] message`).
pub fn parse_commit(stdout: &str) -> Option<Commit<'static>> {
    stdout.lines().find_map(|l| {
        let inner = l.trim().strip_prefix('[')?;
        let (head, msg) = inner.split_once("] ")?;
        let mut words = head.split_whitespace();
        let first = words.next()?;
        let hash = head.split_whitespace().last()?;
        let ok = hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit());
        ok.then(|| Commit {
            hash: hash.to_string(),
            message: msg.trim().to_string(),
            branch: (first != hash).then(|| first.to_string()),
            agent_id: None,
        })
    })
}

/// The branches a `git merge` command merges (options and their values left out); empty when
/// the command runs no merge (`--abort`, `--continue` and `--quit` merge nothing new).
pub fn merged_branches(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in command.split(['&', ';', '|', '\n']) {
        let words = shell_words(part);
        let Some(at) = words
            .windows(2)
            .position(|w| w[0] == "git" && w[1] == "merge")
        else {
            continue;
        };
        let mut rest = words[at + 2..].iter();
        while let Some(w) = rest.next() {
            match w.as_str() {
                "--abort" | "--continue" | "--quit" => return Vec::new(),
                "-m" | "--message" | "-s" | "--strategy" | "-X" | "--strategy-option" | "-F"
                | "--file" => {
                    rest.next();
                }
                w if w.starts_with('-') => {}
                w => out.push(w.to_string()),
            }
        }
    }
    out
}

/// Splits a command into words as a shell would for plain words and quotes (no expansion).
fn shell_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts(v: Value) -> Vec<String> {
        let p = Payload::from_value(v).unwrap();
        of(&p)
            .iter()
            .map(|f| {
                format!("{f:?}")
                    .split(['(', ' '])
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_read_is_only_a_main_tool_use() {
        let read = json!({"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}});
        assert_eq!(facts(read), ["MainToolUse"]);
        let sub = json!({"hook_event_name": "PostToolUse", "tool_name": "Read", "agent_id": "a1"});
        assert!(facts(sub).is_empty());
        let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
        assert_eq!(facts(pre), ["Bash"]);
    }

    #[test]
    fn commits_and_merges_are_parsed() {
        let c = parse_commit("[worktree-L2-003 1a2b3c4] feat: parser\n 1 file changed").unwrap();
        assert_eq!(c.hash, "1a2b3c4");
        assert_eq!(c.branch.as_deref(), Some("worktree-L2-003"));
        assert_eq!(c.message, "feat: parser");
        let root = parse_commit("[master (root-commit) 1f28d77] feat: parser").unwrap();
        assert_eq!(root.branch.as_deref(), Some("master"));
        assert!(parse_commit("nothing to commit").is_none());
        assert_eq!(
            merged_branches("git merge --no-ff -m 'Merge L2' worktree-L2-003"),
            ["worktree-L2-003"]
        );
        assert_eq!(merged_branches("cd x && git merge a b"), ["a", "b"]);
        assert!(merged_branches("git merge --abort").is_empty());
        assert!(merged_branches("git log").is_empty());
    }
}
