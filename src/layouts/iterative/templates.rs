//! Seed 003's templates, filled in by `taskhook iterative new`: brief.md, context.md, and a
//! starting tasks.md (development) or plan.md (knowledge). What the command was not told
//! stays visibly open ("(not stated yet)") rather than keeping the template's `{braces}`.

use super::commands::NewSlug;

/// Units listed in context.md's **Signals** before the rest are counted (the seed keeps
/// context.md under 200 words).
const CONTEXT_SIGNALS_CAP: usize = 10;
const OPEN: &str = "(not stated yet)";

fn bullets(items: &[String]) -> String {
    if items.is_empty() {
        format!("- {OPEN}\n")
    } else {
        items
            .iter()
            .map(|i| format!("- {}\n", one_line(i)))
            .collect()
    }
}

fn one_line(s: &str) -> String {
    crate::error::one_line(s)
}

fn or_open(s: &Option<String>) -> String {
    s.as_deref().map(one_line).unwrap_or_else(|| OPEN.into())
}

/// brief.md, from the seed's template.
pub(crate) fn brief(n: &NewSlug, name: &str, now: &str) -> String {
    format!(
        "# {name}\n\n**Created:** {now}\n**Mode:** {}\n**Domain:** {}\n\n## Outcome Needed\n{}\n\n## Done When\n{}\n## Constraints\n{}\n## Approach / Notes\n{}\n",
        if n.knowledge { "knowledge" } else { "development" },
        n.domain.as_deref().unwrap_or(OPEN),
        or_open(&n.goal),
        bullets(&n.done_when),
        bullets(&n.constraints),
        or_open(&n.approach),
    )
}

/// context.md, from the seed's template.
pub(crate) fn context(n: &NewSlug, name: &str) -> String {
    let plan = if n.knowledge { "plan.md" } else { "tasks.md" };
    let mut signals = String::new();
    for u in n.units.iter().take(CONTEXT_SIGNALS_CAP) {
        signals.push_str(&format!(
            "- {u}: `<signal>{u}_DONE</signal>` when every criterion of {u} in {plan} holds\n"
        ));
    }
    if n.units.len() > CONTEXT_SIGNALS_CAP {
        signals.push_str(&format!(
            "- …and {} more: each `<signal>ID_DONE</signal>` as {plan} says\n",
            n.units.len() - CONTEXT_SIGNALS_CAP
        ));
    }
    if n.units.is_empty() {
        signals.push_str(&format!("- {OPEN}\n"));
    }
    format!(
        "# {name} Context\n\n**Goal:** {}\n\n**Approach:** {}\n\n**Key files/outputs:**\n- {OPEN}\n\n**Patterns to follow:**\n- Read guardrails.md before starting any iteration.\n\n**Signals:**\n{signals}",
        or_open(&n.goal),
        or_open(&n.approach),
    )
}

/// One unit's block in tasks.md / plan.md.
pub(crate) fn unit_block(
    id: &str,
    title: &str,
    criteria: Option<&str>,
    max: u64,
    depends: &[String],
    knowledge: bool,
) -> String {
    let mut s = format!("- [ ] **{id}**: {}\n", one_line(title));
    if let Some(c) = criteria {
        s.push_str(&format!("  - Criteria: {}\n", one_line(c)));
    }
    if !knowledge {
        s.push_str(&format!("  - Completion: `<signal>{id}_DONE</signal>`\n"));
    }
    s.push_str(&format!("  - Max iterations: {max}\n"));
    let deps = if depends.is_empty() {
        "none".to_string()
    } else {
        depends.join(", ")
    };
    s.push_str(&format!("  - Depends: {deps}\n\n"));
    s
}

/// A starting tasks.md / plan.md in the seed's template.
pub(crate) fn plan(n: &NewSlug, name: &str, now: &str) -> String {
    let count = n.units.len();
    let mut s = if n.knowledge {
        format!(
            "# {name} - Phases\n\n**Created:** {now}\n**Domain:** {}\n**Total:** {count} phases\n\n## Phases\n\n",
            n.domain.as_deref().unwrap_or(OPEN)
        )
    } else {
        format!(
            "# {name} - Tasks\n\n**Created:** {now}\n**Total:** {count} tasks\n**Status:** 0 done, 0 in progress, {count} pending\n\n## Tasks\n\n"
        )
    };
    for u in &n.units {
        s.push_str(&unit_block(u, u, None, n.max_iterations, &[], n.knowledge));
    }
    s
}

/// `text` (a tasks.md / plan.md) with `block` inserted after its last unit block (else after
/// its `## Tasks` / `## Phases` heading, else at the end), and its `**Total:**` line counted
/// up.
pub(crate) fn insert_unit(text: &str, block: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let is_unit = |l: &str| {
        let t = l.trim_start();
        (t.starts_with("- [ ] **") || t.starts_with("- [x] **") || t.starts_with("- [X] **"))
            && !l.starts_with(' ')
    };
    let at = match lines.iter().rposition(|l| is_unit(l)) {
        Some(i) => {
            let mut j = i + 1;
            while j < lines.len() && (lines[j].starts_with(' ') || lines[j].trim().is_empty()) {
                j += 1;
            }
            j
        }
        None => lines
            .iter()
            .position(|l| matches!(l.trim(), "## Tasks" | "## Phases"))
            .map_or(lines.len(), |i| i + 1),
    };
    let mut out = String::new();
    for l in &lines[..at] {
        out.push_str(&count_up(l));
        out.push('\n');
    }
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
    out.push_str(block);
    for l in &lines[at..] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// `**Total:** 3 tasks` → `**Total:** 4 tasks`; other lines as they are.
fn count_up(line: &str) -> String {
    let Some(rest) = line.strip_prefix("**Total:** ") else {
        return line.to_string();
    };
    let (n, unit) = rest.split_once(' ').unwrap_or((rest, ""));
    match n.parse::<u64>() {
        Ok(n) => format!("**Total:** {} {unit}", n + 1)
            .trim_end()
            .to_string(),
        Err(_) => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_goes_after_the_last_block() {
        let text = "# x - Tasks\n\n**Total:** 1 tasks\n\n## Tasks\n\n- [ ] **T1**: a\n  - Depends: none\n\n## Notes\n\nkeep\n";
        let out = insert_unit(text, "- [ ] **T2**: b\n  - Depends: T1\n\n");
        assert_eq!(
            out,
            "# x - Tasks\n\n**Total:** 2 tasks\n\n## Tasks\n\n- [ ] **T1**: a\n  - Depends: none\n\n- [ ] **T2**: b\n  - Depends: T1\n\n## Notes\n\nkeep\n"
        );
        let units = super::super::markdown::parse_plan(&out);
        assert_eq!(units[1].depends, ["T1"]);
    }
}
