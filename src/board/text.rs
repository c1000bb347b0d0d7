//! The board as plain text: what `taskhook board` prints when its output is not a terminal
//! (a pipe, a file, a CI log). The header (one line per store with its counts, one per store
//! that cannot be read), then each column with its cards: the reference and title, then a line
//! with the status, why, the pass owed, the age and the claim. Every text from a store goes
//! through [`crate::display::text`] and is cut to one line.

use super::model::{column, cut, one_line, Board, Card};
use crate::display;
use crate::layouts::Phase;

/// Longest title or detail printed, in characters.
const WIDTH: usize = 160;
/// Longest reference printed, in characters.
const REF_WIDTH: usize = 80;

/// ANSI colour of a column's heading (`None` without colour).
pub fn ansi(phase: Phase) -> &'static str {
    match phase {
        Phase::Ready => "36",
        Phase::InProgress => "33",
        Phase::Person => "35",
        Phase::Blocked => "31",
        Phase::Done => "32",
    }
}

/// Text from a store, safe for a terminal, on one line, cut to `max` characters.
pub fn safe(s: &str, max: usize) -> String {
    display::text(&cut(&one_line(s), max)).into_owned()
}

fn paint(colour: bool, code: &str, s: &str) -> String {
    if colour {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// A store's counts: `2 ready · 1 in progress · 3 done` (columns with no card left out).
pub fn counts(c: &[usize; 5]) -> String {
    let parts: Vec<String> = Phase::ALL
        .iter()
        .zip(c)
        .filter(|(_, n)| **n > 0)
        .map(|(p, n)| format!("{n} {}", p.label()))
        .collect();
    if parts.is_empty() {
        "no units".into()
    } else {
        parts.join(" · ")
    }
}

/// A card's first line: reference and title.
pub fn head(c: &Card) -> String {
    let mut s = safe(&c.reference, REF_WIDTH);
    if let Some(t) = &c.title {
        s.push_str("  ");
        s.push_str(&safe(t, WIDTH));
    }
    s
}

/// The whole board as lines of text.
pub fn render(b: &Board, colour: bool) -> String {
    let mut out = Vec::new();
    out.push(paint(
        colour,
        "1",
        &format!(
            "taskhook board · {} · {}",
            safe(&b.project.display().to_string(), WIDTH),
            b.written
        ),
    ));
    if b.stores.is_empty() && b.problems.is_empty() {
        out.push("No taskhook stores found in this project.".into());
    }
    for s in &b.stores {
        out.push(format!(
            "  {} {}: {}",
            s.layout,
            safe(&s.name, REF_WIDTH),
            counts(&s.counts)
        ));
    }
    for p in &b.problems {
        out.push(format!(
            "  {} {}: {}: {}",
            p.layout,
            safe(&p.store, REF_WIDTH),
            p.kind(),
            safe(&p.problem, WIDTH)
        ));
    }
    let cols = b.columns(None, "");
    for phase in Phase::ALL {
        let cards = &cols[column(phase)];
        out.push(String::new());
        out.push(paint(
            colour,
            ansi(phase),
            &format!("{} ({})", phase.label().to_uppercase(), cards.len()),
        ));
        for &i in cards {
            let c = &b.cards[i];
            out.push(format!("  {}", head(c)));
            out.push(format!("      {}", safe(&c.detail(), WIDTH)));
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::model::fixture::{board, unit};
    use crate::board::model::Problem;

    #[test]
    fn hostile_text_is_escaped_and_cut() {
        let u = unit(
            "T\x1b]0;pwned\x07",
            &format!("\x1b[31mred\nline {}", "x".repeat(1000)),
            Phase::Ready,
            &[],
        );
        let b = board(
            vec![("projects", "w\u{202e}", vec![u])],
            vec![Problem {
                layout: "cdd".into(),
                store: "ws".into(),
                problem: "order.json: bad \x1b[2J".into(),
                unreadable: true,
            }],
        );
        let t = render(&b, false);
        assert!(!t.contains('\x1b') && !t.contains('\x07') && !t.contains('\u{202e}'));
        assert!(t.contains("\\u{1b}]0;pwned"));
        assert!(t.lines().all(|l| l.chars().count() < 400), "{t}");
        assert!(t.contains("cannot be read: order.json: bad"));
        assert!(t.contains("READY (1)"));
    }
}
