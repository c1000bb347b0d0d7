//! The layouts taskhook knows, in a stable order: a new layout is one line here (and one
//! folder beside this file, and one `cli/<name>.rs`).

use super::{cdd, claude_tasks, execute, iterative, projects, Layout};

/// Every layout, in a stable order.
pub fn registry() -> &'static [&'static dyn Layout] {
    static REGISTRY: &[&dyn Layout] = &[
        &iterative::LAYOUT,
        &claude_tasks::LAYOUT,
        &projects::LAYOUT,
        &execute::LAYOUT,
        &cdd::LAYOUT,
    ];
    REGISTRY
}
