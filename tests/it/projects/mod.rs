//! Layout `projects` (seed 000) through the real binary: payloads in, tasks.json,
//! progress/log.md, velocity.json, checkpoints and stdout checked at each step.

mod commands;
mod crash;
mod hooks;
mod session;
mod typed;
mod wording;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use crate::common::{Project, Run, NOW};

/// A project with one seed-000 store and helpers to drive it.
pub struct Proj {
    pub p: Project,
    pub id: String,
}

impl Proj {
    /// A project whose store `id` was made by `taskhook projects new`.
    pub fn new(id: &str) -> Self {
        let p = Project::new();
        let run = p.run(&["projects", "new", id, "--name", "Web app"], "");
        assert_eq!(run.code, 0, "{run:?}");
        Proj { p, id: id.into() }
    }

    /// A project whose store was written by hand (`files`: path inside the store → content).
    pub fn by_hand(id: &str, files: &[(&str, &str)]) -> Self {
        let p = Project::new();
        for (rel, content) in files {
            p.write(&format!(".claude/projects/{id}/{rel}"), content);
        }
        Proj { p, id: id.into() }
    }

    pub fn dir(&self) -> PathBuf {
        self.p.root.join(".claude/projects").join(&self.id)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir().join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn tasks(&self) -> Value {
        self.json("tasks.json")
    }

    pub fn task(&self, id: &str) -> Value {
        self.tasks()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no task {id}: {:#}", self.tasks()))
    }

    /// The ids of tasks.json, in order.
    pub fn ids(&self) -> Vec<String> {
        self.tasks()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect()
    }

    pub fn status(&self, id: &str) -> String {
        self.task(id)["status"].as_str().unwrap().to_string()
    }

    pub fn log(&self) -> String {
        self.read("progress/log.md")
    }

    /// The event of every log entry, in order.
    pub fn events(&self) -> Vec<String> {
        self.log()
            .lines()
            .filter_map(|l| l.strip_prefix("## "))
            .map(|l| l.split(" — ").nth(1).unwrap_or("?").to_string())
            .collect()
    }

    /// `taskhook ARGS` at time `at`.
    pub fn run_at(&self, at: &str, args: &[&str]) -> Run {
        let mut c = self.p.cmd();
        c.env("TASKHOOK_NOW", at);
        self.p.run_with(c, args, "")
    }

    /// `taskhook ARGS` at [`NOW`], asserting success.
    pub fn ok(&self, args: &[&str]) -> Run {
        let run = self.p.run(args, "");
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        run
    }

    /// `taskhook projects add ID TASK --title TASK ARGS…`.
    pub fn add(&self, task: &str, more: &[&str]) {
        let mut args = vec!["projects", "add", &self.id, task, "--title"];
        let title = format!("Task {task}");
        args.push(&title);
        args.extend_from_slice(more);
        self.ok(&args);
    }

    /// One hook payload at time `at`.
    pub fn hook_at(&self, at: &str, payload: &Value) -> Run {
        let mut c = self.p.cmd();
        c.env("TASKHOOK_NOW", at);
        self.p
            .run_with(c, &["hook"], serde_json::to_vec(payload).unwrap())
    }

    /// PreToolUse of `Agent` with `prompt`.
    pub fn launch(&self, at: &str, prompt: &str) -> Run {
        let mut v = self.p.payload("PreToolUse.Agent.json");
        v["tool_input"]["prompt"] = json!(prompt);
        self.hook_at(at, &v)
    }

    /// SubagentStop of `agent` whose prompt was `prompt` and final message `message`.
    pub fn stop(&self, at: &str, agent: &str, prompt: &str, message: &str) -> Run {
        self.hook_at(at, &self.p.subagent_stop(agent, prompt, message))
    }

    /// PostToolUse of the main agent's `Agent` call.
    pub fn returned(&self, at: &str, agent: &str, prompt: &str) -> Run {
        let mut v = self.p.payload("PostToolUse.Agent.json");
        v["tool_input"]["prompt"] = json!(prompt);
        v["tool_response"]["prompt"] = json!(prompt);
        v["tool_response"]["agentId"] = json!(agent);
        self.hook_at(at, &v)
    }

    /// A full foreground run of a subagent bound to `task` that ends with `message`: launch,
    /// stop, return. Returns the three runs.
    pub fn subagent(&self, at: &str, task: &str, message: &str) -> [Run; 3] {
        let agent = format!("agent-{task}-{}", at.replace(':', ""));
        let prompt = format!("Work on <task>{task}</task>.");
        [
            self.launch(at, &prompt),
            self.stop(at, &agent, &prompt, message),
            self.returned(at, &agent, &prompt),
        ]
    }

    /// SessionStart with `source` at `at`.
    pub fn session(&self, at: &str, source: &str) -> Run {
        let mut v = self.p.payload("SessionStart.startup.json");
        v["source"] = json!(source);
        self.hook_at(at, &v)
    }

    /// Sets a file's modification time to `secs` before the fixed clock.
    pub fn age(&self, rel: &str, secs_before_now: i64) {
        let now = chrono::DateTime::parse_from_rfc3339(NOW)
            .unwrap()
            .timestamp();
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs((now - secs_before_now) as u64);
        let f = std::fs::File::options()
            .write(true)
            .open(self.path(rel))
            .unwrap();
        f.set_modified(t).unwrap();
    }

    /// Sets a file's modification time `secs` into the real past.
    pub fn real_age(&self, rel: &str, secs: u64) {
        let f = std::fs::File::options()
            .write(true)
            .open(self.path(rel))
            .unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(secs))
            .unwrap();
    }
}

/// Asserts a run succeeded with nothing on stdout or stderr.
pub fn silent(run: &Run) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", ""),
        "{run:?}"
    );
}

/// Every entry header of a log is `## YYYY-MM-DDTHH:MM:SSZ — EVENT`.
pub fn assert_seed_log_format(log: &str) {
    for line in log.lines().filter(|l| l.starts_with("## ")) {
        let rest = &line[3..];
        let (at, event) = rest.split_once(" — ").unwrap_or_else(|| panic!("{line}"));
        assert_eq!(at.len(), 20, "{line}");
        assert!(
            chrono::DateTime::parse_from_rfc3339(at).is_ok() && at.ends_with('Z'),
            "{line}"
        );
        assert!(
            event
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()),
            "{line}"
        );
    }
}
