//! Team sync over git (CONTRACT §8): the stores of several clones of one repository kept as
//! one, through an op log on `refs/taskhook/ops` of the project's git remote.
//!
//! - Every change a verb, a hook or a layout command makes to a synced store is also an op
//!   ([`op`]), recorded where it happens, once, into this clone's queue ([`local`]): one
//!   append. Hooks never touch the network.
//! - `taskhook sync` fetches the remote's log ([`remote`]), applies the merged log to every
//!   store ([`apply`]), then pushes the queued ops in one commit built on the tip it fetched:
//!   a compare-and-swap; a lost race fetches, applies and retries with jittered backoff, a
//!   bounded number of times, within a deadline.
//! - `taskhook claim` proves its claim on the remote before it says yes; the other verbs
//!   apply at once and try one bounded push, queueing when the remote cannot be reached.
//! - A snapshot of a store is published every `compact_every` ops, so a reader needs only
//!   the tip's snapshots and the ops since.

pub mod apply;
pub mod local;
pub mod op;
pub mod remote;
pub mod snapshot;

mod exchange;
mod init;
mod record;
mod settings;
mod status;
mod verbs;

pub use apply::{Applying, RunCommand};
pub(crate) use exchange::remote_of;
pub use exchange::{run, ClaimReq, Claimed, Options, Report, HEARTBEAT_EVERY, MAX_ATTEMPTS};
pub use init::{init, InitDone};
pub use record::{machine, new_time, publish, record, record_command, replaying, stores};
pub use settings::{config, enable, make_findable};
pub use status::{pending, status, StoreLine, SyncStatus};
pub use verbs::{claim, verb, VerbReq};

/// Set (in a replay's own environment only, never read from the process) while the log is
/// being applied: a layout command run again then records no op of its own.
pub const REPLAYING: &str = "TASKHOOK_SYNC_REPLAYING";
