//! Layout `execute` (seed 001) through the real binary: launches, signals, commits and merges
//! as hook payloads; `taskhook execute …` commands; git recovery on real scratch repositories.

mod commands;
mod git;
mod lifecycle;
mod policy;
mod recovery;

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::common::{Project, Run};

/// A project with one run at `docs/tasks/<slug>/`.
pub struct Exec {
    pub p: Project,
    pub slug: String,
}

impl Exec {
    /// A run made by `taskhook execute init` with these layers (`NAME=ID,ID`).
    pub fn init(slug: &str, layers: &[&str]) -> Self {
        Self::init_in(Project::new(), slug, layers)
    }

    pub fn init_in(p: Project, slug: &str, layers: &[&str]) -> Self {
        let path = format!("docs/tasks/{slug}");
        let mut args = vec!["execute", "init", path.as_str()];
        for l in layers {
            args.push("--layer");
            args.push(l);
        }
        let run = p.run(&args, "");
        assert_eq!(run.code, 0, "{run:?}");
        Exec {
            p,
            slug: slug.into(),
        }
    }

    /// A run whose state is `state`, written as the seed's skill would.
    pub fn with_state(slug: &str, state: &Value) -> Self {
        let p = Project::new();
        p.write(
            &format!("docs/tasks/{slug}/execute-state.json"),
            serde_json::to_vec_pretty(state).unwrap(),
        );
        Exec {
            p,
            slug: slug.into(),
        }
    }

    pub fn dir(&self) -> PathBuf {
        self.p.root.join("docs/tasks").join(&self.slug)
    }

    pub fn file(&self) -> PathBuf {
        self.dir().join("execute-state.json")
    }

    /// A state as pretty JSON bytes.
    pub fn state_bytes_of(&self, v: &Value) -> Vec<u8> {
        serde_json::to_vec_pretty(v).unwrap()
    }

    pub fn state(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.file()).unwrap()).unwrap()
    }

    pub fn task(&self, id: &str) -> Value {
        self.state()["tasks"][id].clone()
    }

    pub fn status(&self, id: &str) -> String {
        self.task(id)["status"].as_str().unwrap_or("").to_string()
    }

    /// PreToolUse of `Agent` whose prompt names `<task>ID</task>`.
    pub fn launch(&self, id: &str) -> Run {
        let mut payload = self.p.payload("PreToolUse.Agent.json");
        payload["tool_input"]["prompt"] =
            json!(format!("Implement <task>{id}</task> in its worktree."));
        self.p.hook(&payload)
    }

    /// A SubagentStop of `agent` whose prompt was `prompt` and whose final message is `message`.
    pub fn stop(&self, agent: &str, prompt: &str, message: &str) -> Run {
        self.p.hook(&self.stop_payload(agent, prompt, message))
    }

    pub fn stop_payload(&self, agent: &str, prompt: &str, message: &str) -> Value {
        self.p.subagent_stop(agent, prompt, message)
    }

    /// A stop of a subagent bound to `id` (agent `a-<id>`).
    pub fn bound(&self, id: &str, message: &str) -> Run {
        self.stop(
            &format!("a-{id}"),
            &format!("Implement <task>{id}</task>."),
            message,
        )
    }

    /// PostToolUse of a Bash `git commit` that printed `[branch hash] message`.
    pub fn commit(&self, agent: Option<&str>, branch: &str, hash: &str, message: &str) -> Run {
        let mut payload = self.p.payload("PostToolUse.Bash.json");
        payload["tool_input"]["command"] = json!(format!("git commit -m '{message}'"));
        payload["tool_response"]["stdout"] = json!(format!(
            "[{branch} {hash}] {message}\n 1 file changed, 1 insertion(+)"
        ));
        if let Some(a) = agent {
            payload["agent_id"] = json!(a);
            payload["agent_type"] = json!("general-purpose");
        }
        self.p.hook(&payload)
    }

    /// PostToolUse of the main agent's Bash `git merge BRANCH`.
    pub fn merge(&self, branch: &str) -> Run {
        let mut payload = self.p.payload("PostToolUse.Bash.json");
        payload["tool_input"]["command"] = json!(format!("git merge --no-ff {branch}"));
        payload["tool_response"]["stdout"] = json!("Merge made by the 'ort' strategy.");
        self.p.hook(&payload)
    }

    /// `taskhook execute ARGS`.
    pub fn cmd(&self, args: &[&str]) -> Run {
        let mut all = vec!["execute"];
        all.extend_from_slice(args);
        self.p.run(&all, "")
    }
}

/// The block reason of a SubagentStop reply (never additionalContext there).
pub fn reason(run: &Run) -> String {
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(v["decision"], "block", "{run:?}");
    assert!(v.get("hookSpecificOutput").is_none(), "{run:?}");
    v["reason"].as_str().unwrap().to_string()
}

/// No decision, no output.
pub fn silent(run: &Run) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", ""),
        "{run:?}"
    );
}

/// Asserts that every counter of a state that lists all its tasks equals a recount.
pub fn assert_recount(s: &Value) {
    let tasks = s["tasks"].as_object().unwrap();
    let count = |f: &dyn Fn(&str) -> bool| {
        tasks
            .values()
            .filter(|t| f(t["status"].as_str().unwrap()))
            .count() as u64
    };
    let m = &s["metrics"];
    assert_eq!(m["total_tasks"], tasks.len() as u64, "{s:#}");
    assert_eq!(m["completed_tasks"], count(&|x| x == "completed"), "{s:#}");
    assert_eq!(
        m["failed_tasks"],
        count(&|x| x == "failed" || x == "abandoned"),
        "{s:#}"
    );
    let attempts: u64 = tasks
        .values()
        .map(|t| t["attempts"].as_u64().unwrap_or(0))
        .sum();
    let commits: u64 = tasks
        .values()
        .map(|t| t["commits"].as_array().map_or(0, Vec::len) as u64)
        .sum();
    assert_eq!(m["total_attempts"], attempts, "{s:#}");
    assert_eq!(m["total_commits"], commits, "{s:#}");
    for (name, l) in s["layers"].as_object().unwrap() {
        let n: Option<u64> = name
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok();
        let mine: Vec<&Value> = tasks
            .iter()
            .filter(|(id, t)| {
                t["layer"] == name.as_str()
                    || (t.get("layer").is_none()
                        && n.is_some_and(|n| id.starts_with(&format!("L{n}-"))))
            })
            .map(|(_, t)| t)
            .collect();
        let st = |x: &str| mine.iter().filter(|t| t["status"] == x).count() as u64;
        assert_eq!(l["tasks_total"], mine.len() as u64, "{name}: {s:#}");
        assert_eq!(l["tasks_completed"], st("completed"), "{name}: {s:#}");
        assert_eq!(
            l["tasks_failed"],
            st("failed") + st("abandoned"),
            "{name}: {s:#}"
        );
        let want = if !mine.is_empty() && st("completed") == mine.len() as u64 {
            "completed"
        } else if mine.iter().any(|t| t["status"] != "pending") || l["status"] != "pending" {
            "in_progress"
        } else {
            "pending"
        };
        assert_eq!(l["status"], want, "{name}: {s:#}");
    }
    assert_eq!(s["updated_at"], crate::common::NOW);
}
