//! Ownership (issue 20 item 12): a subagent's Bash call is refused only when it would run a cdd
//! verb that moves tasks, parsed as a shell would (quotes, operators, subshells, `$( )`, and
//! through `bash -c`, `env`, `xargs`, `timeout`, …); text that only mentions one runs. A
//! command that cannot be parsed is refused on the safe side when it mentions a verb, and the
//! reason says so.

use serde_json::json;

use super::{payload, Ws};
use crate::common::Run;

fn pre(w: &Ws, agent: Option<&str>, command: &str) -> Run {
    let mut v = payload(w, "PreToolUse.Bash.json");
    v["tool_input"]["command"] = json!(command);
    if let Some(a) = agent {
        v["agent_id"] = json!(a);
        v["agent_type"] = json!("general-purpose");
    }
    w.hook(&v)
}

/// The deny reason, or `None` when the call is let through without a word.
fn denied(run: &Run) -> Option<String> {
    assert_eq!(run.code, 0, "{run:?}");
    if run.stdout.is_empty() {
        assert_eq!(run.stderr, "", "{run:?}");
        return None;
    }
    let v = run.json();
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny", "{v}");
    Some(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

const AFTER: &str = " Do the task's work, then end your final message with <signal>NAME_DONE</signal> or <signal>NAME_FAILED: why</signal>; the orchestrator moves the task.";

#[test]
fn only_commands_that_would_run_a_moving_verb_are_denied() {
    let w = Ws::seeded();
    super::ok(&w.cdd(&["start", "foo.md"]));
    let allowed = [
        "git commit -m 'taskhook cdd done foo.md'",
        "git commit -m \"taskhook cdd done foo.md\" && git push",
        "echo 'run taskhook cdd done later'",
        "echo \"then: taskhook cdd start bar.md\" > notes.md",
        "cat .claude/scripts/task/done.ts",
        "grep -n rename .claude/scripts/task/done.ts .claude/scripts/task/start.ts",
        "less .claude/scripts/task/done.ts",
        "head -5 < .claude/scripts/task/fail.ts",
        "git add .claude/scripts/task/done.ts",
        "rg 'taskhook cdd (done|fail)' src/",
        "printf '%s\\n' 'taskhook cdd escalate x y'",
        "cat <<'EOF' > plan.md\ntaskhook cdd done foo.md\nEOF",
        "echo hi # taskhook cdd done foo.md",
        "command -v taskhook",
        "taskhook cdd next",
        "taskhook cdd list pending && taskhook cdd stats",
        "bun .claude/scripts/task/list.ts",
        "taskhook status",
    ];
    for command in allowed {
        assert_eq!(denied(&pre(&w, Some("a1"), command)), None, "{command:?}");
    }
    // Each with what the reason shows.
    let refused = [
        ("taskhook cdd done foo.md", "taskhook cdd done foo.md"),
        (
            "/usr/local/bin/taskhook --project-dir /p cdd start bar.md",
            "/usr/local/bin/taskhook --project-dir /p cdd start bar.md",
        ),
        ("cd x; taskhook cdd fail foo.md", "taskhook cdd fail foo.md"),
        (
            "true && taskhook cdd done foo.md || echo no",
            "taskhook cdd done foo.md",
        ),
        ("ls | taskhook cdd import", "taskhook cdd import"),
        (
            "(cd /tmp && taskhook cdd done foo.md)",
            "taskhook cdd done foo.md",
        ),
        (
            "echo $(taskhook cdd done foo.md)",
            "taskhook cdd done foo.md",
        ),
        (
            "echo \"`taskhook cdd done foo.md`\"",
            "taskhook cdd done foo.md",
        ),
        (
            "bash -c 'taskhook cdd escalate foo.md \"too hard\"'",
            "taskhook cdd escalate foo.md",
        ),
        (
            "sh -c \"taskhook cdd done 'foo.md'\"",
            "taskhook cdd done foo.md",
        ),
        (
            "env CDD_DIR=/w taskhook cdd done foo.md",
            "taskhook cdd done foo.md",
        ),
        (
            "CDD_DIR=/w taskhook cdd done foo.md",
            "taskhook cdd done foo.md",
        ),
        ("echo foo.md | xargs taskhook cdd done", "taskhook cdd done"),
        (
            "command taskhook cdd done foo.md",
            "taskhook cdd done foo.md",
        ),
        ("exec taskhook cdd done foo.md", "taskhook cdd done foo.md"),
        (
            "nohup taskhook cdd done foo.md &",
            "taskhook cdd done foo.md",
        ),
        (
            "timeout 30 taskhook cdd done foo.md",
            "taskhook cdd done foo.md",
        ),
        (
            "taskhook cdd --human done foo.md",
            "taskhook cdd --human done foo.md",
        ),
        (
            "\"$TASKHOOK\" cdd done foo.md",
            "'$TASKHOOK' cdd done foo.md",
        ),
        (
            "bun .claude/scripts/task/done.ts foo.md",
            "bun .claude/scripts/task/done.ts foo.md",
        ),
        (
            "node .claude/scripts/task/start.ts bar.md",
            "node .claude/scripts/task/start.ts bar.md",
        ),
        (
            "npx tsx .claude/scripts/task/done.ts foo.md",
            "tsx .claude/scripts/task/done.ts foo.md",
        ),
        (
            "deno run -A .claude/scripts/task/fail.ts foo.md",
            "deno run -A .claude/scripts/task/fail.ts foo.md",
        ),
        (
            "./.claude/scripts/task/done.ts foo.md",
            "./.claude/scripts/task/done.ts foo.md",
        ),
        (
            "bash <<'EOF'\ntaskhook cdd done foo.md\nEOF",
            "taskhook cdd done foo.md",
        ),
        (
            "echo 'taskhook cdd done foo.md' | sh",
            "taskhook cdd done foo.md",
        ),
    ];
    for (command, shown) in refused {
        let reason = denied(&pre(&w, Some("a1"), command))
            .unwrap_or_else(|| panic!("{command:?} was let through"));
        assert_eq!(
            reason,
            format!("only the orchestrator manipulates task state (seed 004): a subagent may not run `{shown}`.{AFTER}"),
            "{command:?}"
        );
    }
    assert_eq!(
        w.folders_of("foo.md"),
        ["in_progress"],
        "a refusal moves nothing"
    );
}

#[test]
fn a_command_that_cannot_be_parsed_is_refused_on_the_safe_side_and_says_so() {
    let w = Ws::seeded();
    let reason = denied(&pre(
        &w,
        Some("a1"),
        "echo 'unclosed && taskhook cdd done foo.md",
    ))
    .expect("refused");
    assert_eq!(
        reason,
        format!(
            "only the orchestrator manipulates task state (seed 004): a subagent may not run `taskhook cdd done foo.md`. This command could not be parsed (an unbalanced quote), and it mentions that, so it is refused on the safe side; if it only mentions it (a message, a search), fix its quoting.{AFTER}"
        )
    );
    // An unparsable command that mentions no moving verb is not refused.
    assert_eq!(
        denied(&pre(&w, Some("a1"), "echo 'unclosed taskhook cdd next")),
        None
    );
    assert_eq!(denied(&pre(&w, Some("a1"), "echo 'unclosed")), None);
    // The main agent's `continue` the same way.
    let reason = denied(&pre(
        &w,
        None,
        "echo \"x; taskhook cdd continue verify-core",
    ))
    .expect("refused");
    assert!(
        reason.starts_with("a cdd stop is a checkpoint for a person")
            && reason.ends_with(" (This command could not be parsed (an unbalanced quote), and it mentions `taskhook cdd continue`, so it is refused on the safe side.)"),
        "{reason}"
    );
}

#[test]
fn the_main_agent_may_mention_continue() {
    let w = Ws::seeded();
    for command in [
        "git commit -m 'docs: a person runs taskhook cdd continue verify-core'",
        "echo 'ask the user to run: taskhook cdd continue verify-core'",
        "cat .claude/scripts/task/continue.ts",
    ] {
        assert_eq!(denied(&pre(&w, None, command)), None, "{command:?}");
    }
    for command in [
        "taskhook cdd continue verify-core",
        "bash -c 'taskhook cdd continue verify-core'",
        "bun .claude/scripts/task/continue.ts verify-core",
    ] {
        assert!(denied(&pre(&w, None, command)).is_some(), "{command:?}");
    }
}
