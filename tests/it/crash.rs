//! SIGKILL of the real binary at random moments, on the hook path (SubagentStop on an
//! iterative store, which also writes agents.json) and in `tasks write`: at least 1,000 kills
//! in one run. After every kill each file parses, validates, is a whole version that never
//! goes back, and logs only grow; after the last, the store reconciles exactly.
//!
//! `TASKHOOK_CRASH_KILLS=N` changes the count; the ignored `..._ten_thousand_times` runs 10,000.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskhook::store::schema;

use crate::common::{Project, NOW};

/// A small deterministic generator for kill delays (xorshift64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Starts the binary with `args` and writes `stdin` to it (spawn returns once it has exec'd).
fn start(p: &Project, args: &[&str], stdin: &[u8]) -> std::process::Child {
    use std::io::Write;
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("taskhook"))
        .args(args)
        .current_dir(&p.root)
        .env_clear()
        .env("HOME", &p.home)
        .env("TASKHOOK_NOW", NOW)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    child
}

/// Runs `args` with `stdin`, killing it after `delay`; true when SIGKILL ended it.
fn run_and_kill(p: &Project, args: &[&str], stdin: &[u8], delay: Duration) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let mut child = start(p, args, stdin);
    std::thread::sleep(delay);
    let _ = child.kill();
    let status = child.wait().unwrap();
    status.signal() == Some(9)
}

/// The median time a complete run lives from the moment [`run_and_kill`] starts its clock
/// (after spawn and the write), to spread kills over a run's life; measured the same way so
/// that the spread fits a release build's short runs as well as a debug build's.
fn calibrate(p: &Project, args: &[&str], stdin: &[u8]) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let mut child = start(p, args, stdin);
            let t = Instant::now();
            let ok = child.wait().unwrap().success();
            assert!(ok, "calibration run failed");
            t.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

fn valid(path: &Path, schema_name: &str, kill: usize) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("kill {kill}: {e}"));
    let v: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("kill {kill}: {} does not parse: {e}", path.display()));
    let checked = schema::check(schema_name, &v).unwrap();
    assert_eq!(checked, Ok(()), "kill {kill}: {}", path.display());
    v
}

/// Kills SubagentStops of a subagent signalling T1 FAILED (each stop is one iteration, one
/// progress entry, a state.json rewrite and a notice in agents.json).
fn subagent_stops_under_sigkill(kills: usize, rng: &mut Rng) -> usize {
    let p = Project::in_memory();
    let dir = p.new_slug("x", &["T1"], 1_000_000);
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("Tried.\n<signal>T1_FAILED: again</signal>");
    let payload = serde_json::to_vec(&stop).unwrap();
    let typical = calibrate(&p, &["hook"], &payload);
    let agents = p.root.join(".claude/taskhook/agents.json");
    let mut last_log = std::fs::read(dir.join("progress.md")).unwrap();
    let mut done = 0;
    let mut tries = 0;
    while done < kills {
        tries += 1;
        assert!(tries < kills * 4, "only {done} of {tries} runs were killed");
        let delay = Duration::from_micros(rng.below(typical.as_micros() as u64 * 11 / 10));
        if !run_and_kill(&p, &["hook"], &payload, delay) {
            continue;
        }
        done += 1;
        let state = valid(&dir.join("state.json"), "iterative-state", done);
        if agents.exists() {
            valid(&agents, "taskhook-agents", done);
        }
        let log = std::fs::read(dir.join("progress.md")).unwrap();
        assert!(
            log.starts_with(&last_log),
            "kill {done}: progress.md was rewritten"
        );
        assert!(log.ends_with(b"\n"), "kill {done}: torn entry");
        let text = String::from_utf8(log.clone()).unwrap();
        let logged = iterations(&text);
        let want: Vec<u64> = (1..=logged.len() as u64).collect();
        assert_eq!(logged, want, "kill {done}: iterations out of order");
        let used = state["tasks"]["T1"]["iterations_used"].as_u64().unwrap();
        let n = logged.len() as u64;
        // The log is written first and is the authority: state.json may lag it (each killed
        // stop between its append and its state write adds one), never lead it.
        assert!(
            used <= n,
            "kill {done}: state.json counts {used}, progress.md logs {n}"
        );
        last_log = log;
    }
    // A last stop and a SessionStart reconcile the store exactly.
    assert_eq!(p.run(&["hook"], payload).code, 0);
    let run = p.hook(&p.payload("SessionStart.startup.json"));
    assert_eq!(run.code, 0, "{run:?}");
    let state = valid(&dir.join("state.json"), "iterative-state", done);
    let text = std::fs::read_to_string(dir.join("progress.md")).unwrap();
    let used = state["tasks"]["T1"]["iterations_used"].as_u64().unwrap();
    assert_eq!(used, iterations(&text).len() as u64);
    assert!(used > 0);
    left_over(&dir, &["state.json"], done);
    done
}

/// The iteration numbers of T1's entries, in order.
fn iterations(progress: &str) -> Vec<u64> {
    progress
        .lines()
        .filter_map(|l| l.strip_prefix("## T1 - Iteration "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// Only the store's own files are left, and temp files of killed writes at most.
fn left_over(dir: &Path, state_files: &[&str], kills: usize) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let temps = names.iter().filter(|n| n.contains(".tmp-")).count();
    assert!(temps <= kills, "{temps} temp files after {kills} kills");
    for n in names.iter().filter(|n| n.contains(".tmp-")) {
        assert!(
            state_files
                .iter()
                .any(|s| n.starts_with(&format!(".{s}.tmp-"))),
            "unexpected {n}"
        );
    }
}

/// Kills `tasks write`s that rewrite a 64 KiB list, each with a new counter.
fn tasks_writes_under_sigkill(kills: usize, rng: &mut Rng) -> usize {
    let p = Project::in_memory();
    let pad = "x".repeat(64 * 1024);
    let write = |id: &str, description: &str| {
        let input = json!({"id": id, "description": description}).to_string();
        let run = p.run(&["tasks", "write"], input);
        assert_eq!(run.code, 0, "{run:?}");
    };
    write("pad", &pad);
    write("counter", "n=0");
    let list = p.home.join(".claude/tasks/proj");
    let file = list.join("tasks.json");
    let typical = calibrate(
        &p,
        &["tasks", "write"],
        json!({"id": "counter", "description": "n=0"})
            .to_string()
            .as_bytes(),
    );
    let mut last = 0u64;
    let mut done = 0;
    let mut tries = 0;
    while done < kills {
        tries += 1;
        assert!(tries < kills * 4, "only {done} of {tries} runs were killed");
        let n = last + 1;
        let input = json!({"id": "counter", "description": format!("n={n}")}).to_string();
        let delay = Duration::from_micros(rng.below(typical.as_micros() as u64 * 11 / 10));
        if !run_and_kill(&p, &["tasks", "write"], input.as_bytes(), delay) {
            last = n;
            continue;
        }
        done += 1;
        let doc = valid(&file, "claude-tasks", done);
        let tasks = doc["tasks"].as_array().unwrap();
        let counter = tasks.iter().find(|t| t["id"] == "counter").unwrap();
        let got: u64 = counter["description"].as_str().unwrap()[2..]
            .parse()
            .unwrap();
        assert!(
            got == last || got == n,
            "kill {done}: counter {got}, expected {last} or {n}"
        );
        let pad_task = tasks.iter().find(|t| t["id"] == "pad").unwrap();
        assert_eq!(pad_task["description"].as_str().unwrap().len(), pad.len());
        last = got;
    }
    left_over(&list, &["tasks.json"], done);
    done
}

fn kill_count(default: usize) -> usize {
    std::env::var("TASKHOOK_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn crash_run(kills: usize) {
    let start = Instant::now();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let hook = subagent_stops_under_sigkill(kills * 3 / 5, &mut rng);
    let hook_secs = start.elapsed().as_secs_f64();
    let tasks = tasks_writes_under_sigkill(kills - kills * 3 / 5, &mut rng);
    eprintln!(
        "crash test: {} SIGKILLs survived ({hook} during SubagentStop on an iterative store in \
         {hook_secs:.1} s, {tasks} during tasks write in {:.1} s)",
        hook + tasks,
        start.elapsed().as_secs_f64() - hook_secs
    );
    assert!(hook + tasks >= kills);
}

#[test]
fn sigkill_the_binary_a_thousand_times() {
    crash_run(kill_count(1000));
}

#[test]
#[ignore = "long: about ten times the regular crash test (see README)"]
fn sigkill_the_binary_ten_thousand_times() {
    crash_run(kill_count(10_000));
}
