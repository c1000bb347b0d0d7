//! The one integration test binary: every test drives the real `taskhook` binary (or, for the
//! store's process-level proofs, re-executes this test binary as a child).
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod agent;
mod agents;
mod board;
mod board_html;
mod board_tui;
mod cdd;
mod claude_tasks;
mod claude_tasks_agent;
mod claude_tasks_rules;
mod claude_tasks_scale;
mod claude_tasks_sessions;
mod cli;
mod common;
mod crash;
mod demo;
mod doctor;
mod durability;
mod engine;
mod escapes;
mod execute;
mod fuzz;
mod hardening;
mod hostile;
mod install;
mod install_files;
mod install_sh;
mod iterative;
mod iterative_state;
mod iterative_units;
mod journal;
mod newcomer;
mod plugin;
mod projects;
mod protocol;
mod quickstart;
mod replay;
mod replies;
mod schemas;
mod special_files;
mod status;
mod store;
mod sync;
mod sync_faults;
mod sync_team;
mod teach;
mod unit_ids;
