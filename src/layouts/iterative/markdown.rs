//! Seed 003's markdown files, parsed and written: `tasks.md` / `plan.md` (units, criteria,
//! dependencies, max iterations) and `guardrails.md` entries; the `Name: value` field syntax
//! is the one a subagent's final message uses too ([`crate::signals::line_field`]).
//! `progress.md` is [`super::log`]'s. Pure functions over `&str`.

pub(crate) use crate::signals::line_field as field;

/// What the plan says about one unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanUnit {
    pub id: String,
    pub title: String,
    pub criteria: Option<String>,
    pub max_iterations: Option<u64>,
    pub depends: Vec<String>,
}

/// Parses `tasks.md` or `plan.md`: `- [ ] **T1**: title` blocks with `- Criteria:`,
/// `- Max iterations:` and `- Depends:` lines, and chains like `T1 → T2 → T3` anywhere in a
/// `## Dependencies` section (each unit depends on the one before it).
pub fn parse_plan(text: &str) -> Vec<PlanUnit> {
    let mut units: Vec<PlanUnit> = Vec::new();
    let mut in_deps = false;
    let mut chains: Vec<Vec<String>> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(h) = line.strip_prefix("## ") {
            in_deps = h.trim().eq_ignore_ascii_case("dependencies");
            continue;
        }
        if in_deps && (line.contains('→') || line.contains("->")) {
            let chain: Vec<String> = line
                .replace("->", "→")
                .split('→')
                .map(first_word)
                .filter(|w| !w.is_empty())
                .collect();
            chains.push(chain);
            continue;
        }
        if let Some(unit) = unit_heading(line) {
            units.push(unit);
            continue;
        }
        let Some(cur) = units.last_mut() else {
            continue;
        };
        let Some(item) = line.strip_prefix("- ") else {
            continue;
        };
        if let Some(v) = field(item, "Criteria") {
            cur.criteria = Some(v.to_string());
        } else if let Some(v) = field(item, "Max iterations") {
            cur.max_iterations = v.trim().parse().ok();
        } else if let Some(v) = field(item, "Depends") {
            cur.depends = v
                .split([',', ' '])
                .map(|d| d.trim().trim_matches('`'))
                .filter(|d| !d.is_empty() && !d.eq_ignore_ascii_case("none") && !d.starts_with('{'))
                .map(str::to_string)
                .collect();
        }
    }
    for chain in chains {
        for pair in chain.windows(2) {
            let (before, after) = (&pair[0], &pair[1]);
            if let Some(u) = units.iter_mut().find(|u| &u.id == after) {
                if !u.depends.contains(before) {
                    u.depends.push(before.clone());
                }
            } else {
                units.push(PlanUnit {
                    id: after.clone(),
                    depends: vec![before.clone()],
                    ..Default::default()
                });
            }
        }
    }
    units
}

fn first_word(s: &str) -> String {
    s.split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
        .to_string()
}

/// `- [ ] **T1**: title` or `- [x] **T1**: title`.
fn unit_heading(line: &str) -> Option<PlanUnit> {
    let rest = line
        .strip_prefix("- [ ] ")
        .or_else(|| line.strip_prefix("- [x] "))
        .or_else(|| line.strip_prefix("- [X] "))?;
    let rest = rest.strip_prefix("**")?;
    let (id, after) = rest.split_once("**")?;
    let title = after.trim_start_matches(':').trim().to_string();
    (!id.is_empty()).then(|| PlanUnit {
        id: id.trim().to_string(),
        title,
        ..Default::default()
    })
}

/// Folds text onto one line (entries are one line per field) and bounds it.
pub fn one_paragraph(text: &str) -> String {
    let folded = crate::error::one_line(text);
    if folded.chars().count() > 1500 {
        folded.chars().take(1500).collect::<String>() + "…"
    } else {
        folded
    }
}

/// Renders a guardrail in the seed's format.
pub fn render_guardrail(
    name: &str,
    when: &str,
    problem: &str,
    solution: &str,
    learned: &str,
) -> String {
    format!(
        "## {}\n- **When**: {}\n- **Problem**: {}\n- **Solution**: {}\n- **Learned**: {}\n\n",
        one_paragraph(name),
        one_paragraph(when),
        one_paragraph(problem),
        one_paragraph(solution),
        one_paragraph(learned)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASKS: &str = "# Auth - Tasks\n\n## Dependencies\n\nT1 → T2 → T3 (sequential)\nT4 (independent)\n\n## Tasks\n\n\
- [x] **T1**: User model\n  - Files: `src/user.rs`\n  - Criteria: tests pass\n  - Completion: `<signal>T1_DONE</signal>`\n  - Max iterations: 5\n  - Depends: none\n\
- [ ] **T2**: Auth service\n  - Criteria: login works\n  - Max iterations: 8\n  - Depends: T1\n\
- [ ] **T3**: Routes\n  - Max iterations: 10\n\
- [ ] **T4**: Docs\n  - Depends: {none|T1}\n";

    #[test]
    fn plan_units_criteria_and_dependencies() {
        let units = parse_plan(TASKS);
        let ids: Vec<&str> = units.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids, ["T1", "T2", "T3", "T4"]);
        assert_eq!(units[0].criteria.as_deref(), Some("tests pass"));
        assert_eq!(units[1].max_iterations, Some(8));
        assert_eq!(units[1].depends, ["T1"]);
        assert_eq!(units[2].depends, ["T2"]);
        assert!(units[3].depends.is_empty());
        assert!(units[0].depends.is_empty());
    }

    #[test]
    fn knowledge_plan_chain() {
        let plan = "## Phases\n\n- [ ] **R1**: Gather\n  - Criteria: 10 sources\n- [ ] **R2**: Synthesize\n\n## Dependencies\n\nR1 -> R2\n";
        let units = parse_plan(plan);
        assert_eq!(units[1].depends, ["R1"]);
    }
}
