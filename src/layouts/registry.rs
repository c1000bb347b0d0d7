//! The layouts taskhook knows, in a stable order: a new layout is one line here (and one
//! folder beside this file, and one `cli/<name>.rs`). The unit tests add a sixth, test-only
//! layout (`layouts/tiny/`) that shows it: one folder and the line below.

use super::{cdd, claude_tasks, execute, iterative, projects, Layout};

/// The layouts of the binary, in a stable order.
static REGISTRY: &[&dyn Layout] = &[
    &iterative::LAYOUT,
    &claude_tasks::LAYOUT,
    &projects::LAYOUT,
    &execute::LAYOUT,
    &cdd::LAYOUT,
];

/// Every layout, in a stable order.
#[cfg(not(test))]
pub fn registry() -> &'static [&'static dyn Layout] {
    REGISTRY
}

/// Every layout, in a stable order, and the test-only sixth.
#[cfg(test)]
pub fn registry() -> &'static [&'static dyn Layout] {
    static WITH_TINY: std::sync::OnceLock<Vec<&'static dyn Layout>> = std::sync::OnceLock::new();
    WITH_TINY.get_or_init(|| [REGISTRY, &[&super::tiny::LAYOUT]].concat())
}
