//! How much taskhook reads of any one file. Every read is capped; a file over its cap is an
//! error naming the file and the cap, never an out-of-memory.
//!
//! The cap depends on what the file is, by name ([`cap_for`]), so layouts need not pass it.

use std::path::Path;

const MIB: u64 = 1 << 20;

/// JSON state documents (`tasks.json`, `state.json`, checkpoints) and the iterative plans
/// (`tasks.md`, `plan.md`: 100,000 units are about 13 MB): 64 MiB (task lists of 44 MB have
/// been measured in use).
pub const MAX_STATE_BYTES: u64 = 64 * MIB;
/// Append-only logs (`progress.md`, `history.jsonl`, `progress/log.md`): 64 MiB.
pub const MAX_LOG_BYTES: u64 = 64 * MIB;
/// Small configuration-like files (`agents.json`, `package.json`, `.claude/taskhook.json`,
/// `settings.json`, Claude Code's own `<N>.json`, `context.md`, `guardrails.md`, the projects
/// layout's `project.json` and `velocity.json`): 4 MiB.
pub const MAX_SMALL_BYTES: u64 = 4 * MIB;
/// Of a subagent transcript, only the head (the prompt, its first user message) …
pub const TRANSCRIPT_HEAD_BYTES: u64 = MIB;
/// … and the tail (its last assistant message) are read.
pub const TRANSCRIPT_TAIL_BYTES: u64 = 4 * MIB;
/// A capture file named on the command line (`taskhook replay FILE`).
pub const MAX_CAPTURE_BYTES: u64 = 1024 * MIB;

/// The read cap of a file, by its name.
pub fn cap_for(path: &Path) -> u64 {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match name {
        "progress.md" | "history.jsonl" | "log.md" => MAX_LOG_BYTES,
        "agents.json" | "package.json" | "taskhook.json" | "settings.json" | "context.md"
        | "guardrails.md" | "project.json" | "velocity.json" => MAX_SMALL_BYTES,
        n if n
            .strip_suffix(".json")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            MAX_SMALL_BYTES
        }
        _ => MAX_STATE_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_by_name() {
        assert_eq!(
            cap_for(Path::new("/p/.claude/taskhook/agents.json")),
            4 * MIB
        );
        assert_eq!(cap_for(Path::new("/h/.claude/tasks/s/12.json")), 4 * MIB);
        assert_eq!(
            cap_for(Path::new("/p/.claude/iterative/x/progress.md")),
            64 * MIB
        );
        assert_eq!(
            cap_for(Path::new("/h/.claude/tasks/l/tasks.json")),
            64 * MIB
        );
        assert_eq!(cap_for(Path::new("/p/x/checkpoint-001.json")), 64 * MIB);
        // One cap per file, whoever reads it (the projects layout's loader and the edit check).
        assert_eq!(
            cap_for(Path::new("/p/.claude/projects/w/progress/velocity.json")),
            4 * MIB
        );
        assert_eq!(
            cap_for(Path::new("/p/.claude/projects/w/project.json")),
            4 * MIB
        );
        assert_eq!(
            cap_for(Path::new("/p/.claude/iterative/x/tasks.md")),
            64 * MIB
        );
    }
}
