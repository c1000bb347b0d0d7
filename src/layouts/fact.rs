//! What happened, in the words the layouts understand: one hook payload turned into typed
//! facts (by `engine::facts::of`, without I/O). Layouts take these, never the wire format, and
//! a fact borrows from the payload.

use serde_json::Value;

/// How a session started (unknown sources count as `Startup`, CONTRACT §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Startup,
    Resume,
    Clear,
    Compact,
    Fork,
}

impl Start {
    /// Whether work from before may still be running (`compact`, `clear`, `fork`), so
    /// transitional states must not be reset.
    pub fn continues_work(self) -> bool {
        matches!(self, Start::Compact | Start::Clear | Start::Fork)
    }
}

/// A subagent about to run (PreToolUse of `Agent`/`Task`) with the units its prompt names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch<'p> {
    pub names: Vec<String>,
    pub prompt: &'p str,
    /// The agent making the call, when it is itself a subagent.
    pub caller: Option<&'p str>,
    /// The session launching it (whose claim the launch becomes).
    pub session: Option<&'p str>,
}

/// The main agent's `Agent` call came back (PostToolUse of `Agent`/`Task`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentReturned<'p> {
    /// `tool_response.agentId`.
    pub agent_id: Option<&'p str>,
    /// The units the prompt names.
    pub names: Vec<String>,
    /// A foreground agent's final text (`tool_response.content`).
    pub final_text: Option<String>,
}

/// A subagent stopped. Its prompt and final text may have to be read from its transcript,
/// which is the engine's I/O (`engine::subagent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped<'p> {
    pub agent_id: Option<&'p str>,
    /// Claude Code runs `/compact` as a forked subagent with an empty `agent_type`: its final
    /// message is the conversation summary, not a worker's (it may quote signals).
    pub fork: bool,
    pub transcript_path: Option<&'p str>,
    pub last_message: Option<&'p str>,
    pub stop_hook_active: bool,
}

/// A successful `git commit` seen in a Bash call's output (`[branch hash] message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit<'p> {
    pub hash: String,
    pub message: String,
    /// The branch the commit went to, as git printed it.
    pub branch: Option<String>,
    /// The subagent that ran it, if one did.
    pub agent_id: Option<&'p str>,
}

/// Which of Claude Code's task tools ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskToolKind {
    TodoWrite,
    TaskCreate,
    TaskUpdate,
}

/// A task tool call that ran (PostToolUse), for the claude-tasks mirror.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskTool<'p> {
    pub kind: TaskToolKind,
    pub input: &'p Value,
    pub response: &'p Value,
    pub session_id: Option<&'p str>,
    /// The subagent that called it, if one did.
    pub agent_id: Option<&'p str>,
}

/// A Bash command: before it runs in a subagent (PreToolUse, may be refused), or after it ran
/// in the main agent (PostToolUse, with its output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bash<'p> {
    pub command: &'p str,
    /// `None` before it ran.
    pub stdout: Option<&'p str>,
    /// The subagent running it (`None`: the main agent).
    pub agent_id: Option<&'p str>,
}

/// One thing that happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact<'p> {
    /// SessionStart.
    SessionStart(Start),
    /// A subagent launch naming units.
    Launch(Launch<'p>),
    /// The main agent's `Agent` call returned.
    AgentReturned(AgentReturned<'p>),
    /// SubagentStop.
    Stopped(Stopped<'p>),
    /// Seed 002's `tasks_completed` on SubagentStop.
    TasksCompleted(&'p [String]),
    /// A successful commit.
    Commit(Commit<'p>),
    /// A successful `git merge` of these branches.
    Merge(Vec<String>),
    /// A Write/Edit/MultiEdit/NotebookEdit of a file.
    Edit(&'p str),
    /// A task tool ran.
    TaskTool(TaskTool<'p>),
    /// TaskCompleted for a Claude Code task id.
    TaskCompleted(&'p str),
    /// PreCompact or SessionEnd (the event's name): time for a checkpoint.
    Checkpoint(&'static str),
    /// SessionEnd: the session's claims end.
    SessionEnded,
    /// A Bash command (see [`Bash`]).
    Bash(Bash<'p>),
    /// Any PostToolUse of the main agent: pending notices and halts are delivered.
    MainToolUse,
}
