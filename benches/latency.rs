//! Process-level latency of `taskhook hook`, against the floor of a hello-world binary built
//! with the same optimisation settings. Run with `cargo bench --bench latency`.
//!
//! The binary measured is the one `install.sh` installs (on x86_64 Linux with glibc: linked
//! statically), built by running `install.sh --no-demo` into `target/bench-install/`
//! (incremental after the first run); `cargo bench`'s own build of it (dynamically linked) is
//! measured beside it for comparison.
//!
//! Each case spawns the process, writes the payload to its stdin and waits for it to exit;
//! cases are interleaved round-robin so drift on a shared machine hits them alike. Prints the
//! median and 90th percentile of the wall time per case, the median of the child's own CPU
//! time (user + system, from `wait4`), and the no-op/floor ratios (targets: at most 1.5× in
//! wall time, issue 8; at most 1.2× in CPU time, issue 13); exits 1 when either is missed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::exit
)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 400;

struct Case {
    name: &'static str,
    bin: PathBuf,
    project: PathBuf,
    args: Vec<&'static str>,
    payload: Vec<u8>,
    samples: Vec<Duration>,
    cpu: Vec<Duration>,
}

/// Builds the floor with rustc's defaults for this target (`static`: linked like the installed
/// taskhook, statically and position-dependent, for reference).
fn build_floor(out_dir: &Path, static_: bool) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/floor.rs");
    let out = out_dir.join(if static_ { "floor-static" } else { "floor" });
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let mut cmd = Command::new(rustc);
    if static_ {
        cmd.args([
            "-C",
            "target-feature=+crt-static",
            "-C",
            "relocation-model=static",
        ]);
    }
    let status = cmd
        .args([
            "--edition",
            "2021",
            "-C",
            "opt-level=3",
            "-C",
            "codegen-units=1",
        ])
        .args([
            "-C",
            "lto=fat",
            "-C",
            "strip=symbols",
            "-C",
            "panic=unwind",
            "-o",
        ])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("run rustc");
    assert!(status.success(), "building the floor binary failed");
    out
}

/// The binary as `install.sh` installs it, built into `target/bench-install/`; `None` (said on
/// stderr) when that fails.
fn build_installed() -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = repo.join("target/bench-install");
    eprintln!(
        "latency: building the installed form with install.sh into {}",
        dir.display()
    );
    let status = Command::new("bash")
        .arg(repo.join("install.sh"))
        .arg("--no-demo")
        .env("CARGO_INSTALL_ROOT", dir.join("root"))
        .env("CARGO_TARGET_DIR", dir.join("build"))
        .stdout(Stdio::null())
        .status();
    let bin = dir.join("root/bin/taskhook");
    match status {
        Ok(s) if s.success() && bin.exists() => Some(bin),
        other => {
            eprintln!("latency: install.sh failed ({other:?}); measuring cargo's build only");
            None
        }
    }
}

/// Runs a case once: its wall time and its own CPU time (user + system).
#[allow(clippy::zombie_processes)]
fn time_once(case: &Case, home: &Path) -> (Duration, Duration) {
    let start = Instant::now();
    let mut child = Command::new(&case.bin)
        .args(&case.args)
        .env_clear()
        .env("HOME", home)
        .current_dir(&case.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&case.payload)
        .unwrap();
    let u = common::wait_usage(&child);
    let elapsed = start.elapsed();
    assert!(u.ok, "{} exited {}", case.name, u.status);
    (elapsed, u.cpu)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    // `cargo bench` passes flags such as `--bench`; this harness takes none.
    let tmp = std::env::temp_dir().join(format!("taskhook-bench-{}", std::process::id()));
    let home = tmp.join("home");
    let project = tmp.join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    // A project that has taskhook state: an iterative slug and agents.json (no notices).
    let busy = tmp.join("busy");
    std::fs::create_dir_all(busy.join(".git")).unwrap();
    std::fs::create_dir_all(busy.join(".claude/taskhook")).unwrap();
    std::fs::create_dir_all(busy.join(".claude/iterative/web")).unwrap();
    std::fs::write(
        busy.join(".claude/taskhook/agents.json"),
        r#"{"bindings": {"a1": {"units": ["T1"], "at": "2026-01-01T00:00:00Z"}}, "notices": []}"#,
    )
    .unwrap();
    let floor = build_floor(&tmp, false);
    let floor_static = build_floor(&tmp, true);
    let cargo_build = PathBuf::from(env!("CARGO_BIN_EXE_taskhook"));
    let taskhook = build_installed().unwrap_or_else(|| cargo_build.clone());
    let cwd = project.display().to_string();
    let read = serde_json::json!({
        "session_id": "d0f25021-a11f-4950-869e-feafa9106abd",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/d0f25021.jsonl",
        "cwd": cwd, "prompt_id": "a10ee3db-ea76-4d9d-aea7-6c551e275ec1",
        "permission_mode": "bypassPermissions", "effort": {"level": "medium"},
        "hook_event_name": "PostToolUse", "tool_name": "Read",
        "tool_input": {"file_path": "/home/dev/proj/hello.txt"},
        "tool_response": {"type": "text", "file": {"filePath": "/home/dev/proj/hello.txt",
            "content": "hello world\n", "numLines": 2, "startLine": 1, "totalLines": 2}},
        "tool_use_id": "toolu_13445a7515124958bdd0c042", "duration_ms": 3
    });
    let start = serde_json::json!({
        "session_id": "d0f25021-a11f-4950-869e-feafa9106abd",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/d0f25021.jsonl",
        "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"
    });
    let mut busy_read = read.clone();
    busy_read["cwd"] = serde_json::json!(busy.display().to_string());
    let case = |name,
                bin: &PathBuf,
                project: &PathBuf,
                args: Vec<&'static str>,
                payload: &serde_json::Value| Case {
        name,
        bin: bin.clone(),
        project: project.clone(),
        args,
        payload: serde_json::to_vec(payload).unwrap(),
        samples: vec![],
        cpu: vec![],
    };
    let mut cases = vec![
        case("floor (hello world)", &floor, &project, vec![], &read),
        case(
            "hook: no-op PostToolUse Read",
            &taskhook,
            &project,
            vec!["hook"],
            &read,
        ),
        case(
            "hook: SessionStart, no stores",
            &taskhook,
            &project,
            vec!["hook"],
            &start,
        ),
        case(
            "hook: no-op Read, project w/ stores",
            &taskhook,
            &busy,
            vec!["hook"],
            &busy_read,
        ),
        case(
            "no-op Read, cargo's dynamic build",
            &cargo_build,
            &project,
            vec!["hook"],
            &read,
        ),
        case(
            "floor, linked statically",
            &floor_static,
            &project,
            vec![],
            &read,
        ),
    ];
    for case in &cases {
        for _ in 0..20 {
            time_once(case, &home); // warm the page cache
        }
    }
    for _ in 0..RUNS {
        for case in cases.iter_mut() {
            let (wall, cpu) = time_once(case, &home);
            case.samples.push(wall);
            case.cpu.push(cpu);
        }
    }
    println!(
        "{:<34} {:>10} {:>10} {:>10}   ({RUNS} runs each, interleaved)",
        "case", "median", "p90", "CPU med"
    );
    let mut medians = Vec::new();
    let mut cpus = Vec::new();
    for case in cases.iter_mut() {
        case.samples.sort();
        case.cpu.sort();
        let med = percentile(&case.samples, 0.5);
        let p90 = percentile(&case.samples, 0.9);
        let cpu = percentile(&case.cpu, 0.5);
        medians.push(med);
        cpus.push(cpu);
        println!(
            "{:<34} {:>8.0}µs {:>8.0}µs {:>8.0}µs",
            case.name,
            med.as_secs_f64() * 1e6,
            p90.as_secs_f64() * 1e6,
            cpu.as_secs_f64() * 1e6
        );
    }
    let cpu_ratio = cpus[1].as_secs_f64() / cpus[0].as_secs_f64();
    let cpu_ratio_busy = cpus[3].as_secs_f64() / cpus[0].as_secs_f64();
    let cpu_ratio_dynamic = cpus[4].as_secs_f64() / cpus[0].as_secs_f64();
    let cpu_ratio_static = cpus[1].as_secs_f64() / cpus[5].as_secs_f64();
    println!(
        "CPU time: no-op / floor {cpu_ratio:.2}x (target <= 1.20x); no-op with stores / floor \
         {cpu_ratio_busy:.2}x; cargo's dynamic build {cpu_ratio_dynamic:.2}x; no-op / static \
         floor {cpu_ratio_static:.2}x"
    );
    println!("measured: {}", taskhook.display());
    let ratio = medians[1].as_secs_f64() / medians[0].as_secs_f64();
    let ratio_start = medians[2].as_secs_f64() / medians[0].as_secs_f64();
    let ratio_busy = medians[3].as_secs_f64() / medians[0].as_secs_f64();
    println!(
        "no-op / floor: {ratio:.2}x (target <= 1.50x); SessionStart / floor: {ratio_start:.2}x; \
         no-op with stores / floor: {ratio_busy:.2}x"
    );
    let _ = std::fs::remove_dir_all(&tmp);
    if ratio.max(ratio_busy) > 1.5 {
        eprintln!("no-op hook is over 1.5x the floor in wall time");
        std::process::exit(1);
    }
    if cpu_ratio.max(cpu_ratio_busy) > 1.2 {
        eprintln!("no-op hook is over 1.2x the floor in CPU time");
        std::process::exit(1);
    }
}
