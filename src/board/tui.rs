//! The full-screen terminal board (`taskhook board` on a terminal), drawn with ratatui over
//! crossterm: a header with each store's counts, the five columns of cards, a footer with the
//! keys. It reads the stores again when they change ([`Watch`]: at most once a second, only
//! when a state file's stamp moved) and every minute (ages and leases move on).
//!
//! Keys: `←` `→` / `h` `l` change column; `↑` `↓` / `j` `k` move; `PgUp` `PgDn`, `g` `G` jump;
//! `Enter` shows the unit (what `taskhook show` prints), scrolled with the same keys and
//! closed with `Esc`, `q` or `Enter`; `/` filters (type, `Enter` keeps it, `Esc` clears it);
//! `s` cycles through the stores (all, then each); `r` reads the stores now; `q`, `Esc` or
//! `Ctrl-C` quits.
//!
//! The terminal is given back (raw mode off, the main screen and the cursor restored) when the
//! board ends, however it ends: a key, an error, a panic (a panic hook restores it before the
//! panic's message is printed), or SIGTERM, SIGHUP or SIGINT (a flag the loop reads at least
//! every 250 ms; the exit status is then 128 + the signal).
//!
//! Only the cards in view are laid out, so a column of 10,000 cards costs what a screenful
//! does.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::{Frame, Terminal};

use super::model::Board;
use super::text::{counts, safe};
use super::{load, Watch};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::Phase;
use crate::project::Project;

/// How often the board is read again even when nothing changed (ages and leases move on).
const REFRESH: Duration = Duration::from_secs(60);
/// Longest wait for a key before the loop looks at the stores and the signals again.
const TICK: Duration = Duration::from_millis(250);
/// Longest text kept per card line (the column cuts it further).
const LINE: usize = 300;
/// Most store lines in the header.
const HEADER_STORES: usize = 6;

/// Whether the board holds the terminal (so the panic hook knows to give it back).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Gives the terminal back; does nothing when the board does not hold it.
fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
    }
}

/// Restores the terminal when dropped (the board's end, an error, a panic's unwinding).
struct Held;

impl Drop for Held {
    fn drop(&mut self) {
        restore();
    }
}

fn term_err(e: io::Error) -> Error {
    Error::io("use", "the terminal", e)
}

/// Takes the terminal: raw mode, the alternate screen, no cursor; a panic hook that gives it
/// back first.
fn take() -> Result<(Terminal<CrosstermBackend<Stdout>>, Held)> {
    static HOOKED: AtomicBool = AtomicBool::new(false);
    if !HOOKED.swap(true, Ordering::SeqCst) {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            prev(info);
        }));
    }
    enable_raw_mode().map_err(term_err)?;
    ACTIVE.store(true, Ordering::SeqCst);
    let held = Held;
    execute!(io::stdout(), EnterAlternateScreen, cursor::Hide).map_err(term_err)?;
    let terminal = Terminal::new(CrosstermBackend::new(io::stdout())).map_err(term_err)?;
    Ok((terminal, held))
}

/// What the board shows: the board, the filters, where the selection is.
pub struct App {
    board: Board,
    colour: bool,
    /// One store (index into the board's stores), or all.
    store: Option<usize>,
    filter: String,
    /// The filter being typed.
    editing: Option<String>,
    cols: [Vec<usize>; 5],
    col: usize,
    sel: [usize; 5],
    top: [usize; 5],
    /// A unit shown in full: its title, lines, and how far it is scrolled.
    shown: Option<(String, Vec<String>, usize)>,
    /// Cards that fit a column, as last drawn.
    fits: usize,
}

/// What a key asks of the loop.
#[derive(Debug, PartialEq, Eq)]
pub enum Ask {
    Nothing,
    Quit,
    Reload,
    /// Show this unit reference (or a broken store's problem, already in the card).
    Show(usize),
}

impl App {
    /// A board at its first column, first card.
    pub fn new(board: Board, colour: bool) -> App {
        let cols = board.columns(None, "");
        let mut app = App {
            board,
            colour,
            store: None,
            filter: String::new(),
            editing: None,
            cols,
            col: 0,
            sel: [0; 5],
            top: [0; 5],
            shown: None,
            fits: 10,
        };
        app.col = (0..5).find(|&c| !app.cols[c].is_empty()).unwrap_or(0);
        app
    }

    /// Takes a board read again, keeping the filters and the selected card where it can.
    pub fn replace(&mut self, board: Board) {
        let picked = self
            .current()
            .map(|i| self.board.cards[i].reference.clone());
        let store = self
            .store
            .and_then(|s| self.board.stores.get(s))
            .map(|s| (s.layout.clone(), s.name.clone()));
        self.board = board;
        self.store = store.and_then(|(l, n)| {
            self.board
                .stores
                .iter()
                .position(|s| s.layout == l && s.name == n)
        });
        self.refilter();
        if let Some(r) = picked {
            for c in 0..5 {
                if let Some(p) = self.cols[c]
                    .iter()
                    .position(|&i| self.board.cards[i].reference == r)
                {
                    self.col = c;
                    self.sel[c] = p;
                }
            }
        }
    }

    fn refilter(&mut self) {
        let f = self.editing.as_deref().unwrap_or(&self.filter).to_string();
        self.cols = self.board.columns(self.store, &f);
        for c in 0..5 {
            let n = self.cols[c].len();
            self.sel[c] = self.sel[c].min(n.saturating_sub(1));
            self.top[c] = self.top[c].min(self.sel[c]);
        }
    }

    /// The selected card (index into the board's cards).
    pub fn current(&self) -> Option<usize> {
        self.cols[self.col].get(self.sel[self.col]).copied()
    }

    fn step(&mut self, by: isize) {
        let n = self.cols[self.col].len();
        if n == 0 {
            return;
        }
        let s = self.sel[self.col] as isize + by;
        self.sel[self.col] = s.clamp(0, n as isize - 1) as usize;
    }

    /// Acts on one key.
    pub fn key(&mut self, k: KeyEvent) -> Ask {
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            return Ask::Quit;
        }
        if let Some(text) = &mut self.editing {
            match k.code {
                KeyCode::Enter => {
                    self.filter = std::mem::take(text);
                    self.editing = None;
                }
                KeyCode::Esc => {
                    self.filter.clear();
                    self.editing = None;
                }
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) if !c.is_control() && text.chars().count() < 200 => {
                    text.push(c);
                }
                _ => return Ask::Nothing,
            }
            self.refilter();
            return Ask::Nothing;
        }
        if let Some((_, lines, scroll)) = &mut self.shown {
            let last = lines.len().saturating_sub(1);
            match k.code {
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => self.shown = None,
                KeyCode::Down | KeyCode::Char('j') => *scroll = (*scroll + 1).min(last),
                KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
                KeyCode::PageDown | KeyCode::Char(' ') => *scroll = (*scroll + 20).min(last),
                KeyCode::PageUp => *scroll = scroll.saturating_sub(20),
                _ => {}
            }
            return Ask::Nothing;
        }
        let page = self.fits.max(1) as isize;
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => return Ask::Quit,
            KeyCode::Left | KeyCode::Char('h') => self.col = self.col.saturating_sub(1),
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Tab => self.col = (self.col + 1).min(4),
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::PageDown => self.step(page),
            KeyCode::PageUp => self.step(-page),
            KeyCode::Home | KeyCode::Char('g') => self.sel[self.col] = 0,
            KeyCode::End | KeyCode::Char('G') => self.step(isize::MAX / 2),
            KeyCode::Enter => {
                if let Some(i) = self.current() {
                    return Ask::Show(i);
                }
            }
            KeyCode::Char('/') => {
                self.editing = Some(self.filter.clone());
            }
            KeyCode::Char('s') => {
                let n = self.board.stores.len();
                self.store = match self.store {
                    None if n > 0 => Some(0),
                    Some(s) if s + 1 < n => Some(s + 1),
                    _ => None,
                };
                self.refilter();
            }
            KeyCode::Char('r') => return Ask::Reload,
            _ => {}
        }
        Ask::Nothing
    }

    /// Shows a unit in full (lines already made safe for the terminal).
    pub fn show(&mut self, title: String, text: &str) {
        let lines = text.lines().map(|l| safe(l, 1000)).collect();
        self.shown = Some((title, lines, 0));
    }

    fn style(&self, phase: Phase) -> Style {
        if !self.colour {
            return Style::default().add_modifier(Modifier::BOLD);
        }
        let c = match phase {
            Phase::Ready => Color::Cyan,
            Phase::InProgress => Color::Yellow,
            Phase::Person => Color::Magenta,
            Phase::Blocked => Color::Red,
            Phase::Done => Color::Green,
        };
        Style::default().fg(c).add_modifier(Modifier::BOLD)
    }

    /// Draws the whole board.
    pub fn draw(&mut self, f: &mut Frame<'_>) {
        let area = f.area();
        let shown_stores = self.board.stores.len().min(HEADER_STORES);
        let extra =
            usize::from(self.board.stores.len() > HEADER_STORES) + self.board.problems.len().min(3);
        let header_h = (2 + shown_stores + extra) as u16;
        let [head, body, foot] = Layout::vertical([
            Constraint::Length(header_h.min(area.height / 3).max(1)),
            Constraint::Min(3),
            Constraint::Length(1),
        ])
        .areas(area);
        f.render_widget(Paragraph::new(self.header_lines()), head);
        let cols: [Rect; 5] = Layout::horizontal([Constraint::Ratio(1, 5); 5]).areas(body);
        for (c, phase) in Phase::ALL.iter().enumerate() {
            self.draw_column(f, cols[c], c, *phase);
        }
        f.render_widget(Paragraph::new(self.footer()), foot);
        if let Some((title, lines, scroll)) = &self.shown {
            let w = area
                .width
                .saturating_sub(area.width / 8)
                .max(10)
                .min(area.width);
            let h = area
                .height
                .saturating_sub(area.height / 8)
                .max(5)
                .min(area.height);
            let pop = Rect {
                x: area.x + (area.width - w) / 2,
                y: area.y + (area.height - h) / 2,
                width: w,
                height: h,
            };
            let inner = h.saturating_sub(2) as usize;
            let text: Vec<Line<'_>> = lines
                .iter()
                .skip(*scroll)
                .take(inner)
                .map(|l| Line::raw(l.as_str()))
                .collect();
            f.render_widget(Clear, pop);
            f.render_widget(
                Paragraph::new(text).block(
                    Block::default()
                        .borders(Borders::ALL)
                        .title(format!(" {title} — Esc closes, ↑↓ scroll ")),
                ),
                pop,
            );
        }
    }

    fn header_lines(&self) -> Vec<Line<'static>> {
        let b = &self.board;
        let scope = match self.store.and_then(|s| b.stores.get(s)) {
            Some(s) => format!(" · showing {} {}", s.layout, safe(&s.name, 60)),
            None => String::new(),
        };
        let mut lines = vec![Line::from(vec![
            Span::styled(
                "taskhook board",
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!(
                " · {} · {} units · read {}{scope}",
                safe(&b.project.display().to_string(), 120),
                b.cards.len() - b.problems.len(),
                b.written
            )),
        ])];
        for s in b.stores.iter().take(HEADER_STORES) {
            lines.push(Line::raw(format!(
                "  {} {}: {}",
                s.layout,
                safe(&s.name, 60),
                counts(&s.counts)
            )));
        }
        if b.stores.len() > HEADER_STORES {
            lines.push(Line::raw(format!(
                "  … {} more stores (s cycles through them)",
                b.stores.len() - HEADER_STORES
            )));
        }
        for p in b.problems.iter().take(3) {
            lines.push(Line::styled(
                format!(
                    "  {} {}: {}: {}",
                    p.layout,
                    safe(&p.store, 60),
                    p.kind(),
                    safe(&p.problem, 200)
                ),
                self.style(Phase::Blocked),
            ));
        }
        if b.stores.is_empty() && b.problems.is_empty() {
            lines.push(Line::raw("  No taskhook stores found in this project."));
        }
        lines
    }

    fn footer(&self) -> Line<'static> {
        match &self.editing {
            Some(t) => Line::raw(format!(
                "filter: {}▏  (Enter keeps it, Esc clears it)",
                safe(t, 200)
            )),
            None => {
                let f = if self.filter.is_empty() {
                    String::new()
                } else {
                    format!("  [filter: {}]", safe(&self.filter, 40))
                };
                Line::raw(format!(
                    "←→ column  ↑↓ card  PgUp/PgDn  Enter show  / filter  s store  r read  q quit{f}"
                ))
            }
        }
    }

    fn draw_column(&mut self, f: &mut Frame<'_>, area: Rect, c: usize, phase: Phase) {
        let ids = &self.cols[c];
        let active = c == self.col;
        let mut title_style = self.style(phase);
        if active {
            title_style = title_style.add_modifier(Modifier::REVERSED);
        }
        let block = Block::default().borders(Borders::ALL).title(Span::styled(
            if active && !ids.is_empty() {
                format!(" {} ({}/{}) ", phase.label(), self.sel[c] + 1, ids.len())
            } else {
                format!(" {} ({}) ", phase.label(), ids.len())
            },
            title_style,
        ));
        let inner = block.inner(area);
        f.render_widget(block, area);
        // Three lines a card: reference and title, state, age and claim.
        let fits = (inner.height as usize / 3).max(1);
        if active {
            self.fits = fits;
        }
        let sel = self.sel[c];
        let mut top = self.top[c];
        if sel < top {
            top = sel;
        } else if sel >= top + fits {
            top = sel + 1 - fits;
        }
        self.top[c] = top;
        let mut lines: Vec<Line<'static>> = Vec::with_capacity(fits * 3 + 1);
        for (k, &i) in self.cols[c].iter().enumerate().skip(top).take(fits) {
            let card = &self.board.cards[i];
            let picked = active && k == sel;
            let mut head_style = Style::default().add_modifier(Modifier::BOLD);
            let mut detail_style = if self.colour {
                Style::default().fg(Color::Gray)
            } else {
                Style::default()
            };
            if picked {
                head_style = head_style.add_modifier(Modifier::REVERSED);
                detail_style = detail_style.add_modifier(Modifier::REVERSED);
            }
            let mut head = safe(&card.reference, LINE);
            if let Some(t) = &card.title {
                head.push(' ');
                head.push_str(&safe(t, LINE));
            }
            lines.push(Line::styled(head, head_style));
            lines.push(Line::styled(
                format!(" {}", safe(&card.state_line(), LINE)),
                detail_style,
            ));
            lines.push(Line::styled(
                format!(" {}", safe(&card.held_line(), LINE)),
                detail_style,
            ));
        }
        if self.cols[c].len() > top + fits {
            // A hint that more follow, on the last line when it is free.
            let more = self.cols[c].len() - top - fits;
            if lines.len() < inner.height as usize {
                lines.push(Line::raw(format!("  ↓ {more} more")));
            }
        }
        f.render_widget(Paragraph::new(lines), inner);
    }
}

/// Runs the board until `q`, `Esc`, `Ctrl-C` or a signal; `show` gives the text of a unit
/// (what `taskhook show` prints). Returns the exit status.
pub fn run(cx: &Ctx, project: &Project, colour: bool, show: &dyn Fn(&str) -> String) -> Result<u8> {
    let signal = super::signals()?;
    // A terminal that went away (its window closed: SIGHUP) can leave crossterm's read spinning
    // on end of file, where the loop never sees the flag: a second after a signal, if the board
    // has not ended on its own, it ends here (the terminal given back as far as it still can be).
    let flag = std::sync::Arc::clone(&signal);
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(250));
        let sig = flag.load(Ordering::SeqCst);
        if sig != 0 {
            std::thread::sleep(Duration::from_secs(1));
            restore();
            // The one way out of a read that never returns.
            #[allow(clippy::exit)]
            {
                std::process::exit(128 + i32::try_from(sig).unwrap_or(0));
            }
        }
    });
    let mut watch = Watch::new(cx, project);
    let mut app = App::new(load(cx, project), colour);
    let mut read_at = Instant::now();
    // crossterm drops colours by itself when NO_COLOR is set; the board decides (--color).
    crossterm::style::force_color_output(colour);
    let (mut terminal, held) = take()?;
    let code = loop {
        let sig = signal.load(Ordering::SeqCst);
        if sig != 0 {
            break 128u8.saturating_add(u8::try_from(sig).unwrap_or(0));
        }
        terminal.draw(|f| app.draw(f)).map_err(term_err)?;
        #[cfg(debug_assertions)]
        if cx.env.get(crate::env::TASKHOOK_BOARD_TEST_PANIC).is_some() {
            #[allow(clippy::panic)]
            {
                panic!("TASKHOOK_BOARD_TEST_PANIC: the board panics on purpose");
            }
        }
        if event::poll(TICK.min(watch.due_in().max(Duration::from_millis(20)))).map_err(term_err)? {
            match event::read().map_err(term_err)? {
                Event::Key(k) if k.kind != KeyEventKind::Release => match app.key(k) {
                    Ask::Quit => break 0,
                    Ask::Reload => {
                        app.replace(load(cx, project));
                        read_at = Instant::now();
                    }
                    Ask::Show(i) => {
                        let card = &app.board.cards[i];
                        let (title, text) = match &card.problem {
                            Some(p) => (
                                safe(&card.reference, 80),
                                format!(
                                    "{} {}, {}:\n{p}",
                                    card.layout, card.store_name, card.status
                                ),
                            ),
                            // Named with its layout: `STORE/TASK` alone may name units of
                            // stores of one name in two layouts.
                            None => (
                                safe(&card.reference, 80),
                                show(&format!("{}:{}", card.layout, card.reference)),
                            ),
                        };
                        app.show(title, &text);
                    }
                    Ask::Nothing => {}
                },
                _ => {}
            }
        }
        if watch.changed(cx, project) || read_at.elapsed() >= REFRESH {
            app.replace(load(cx, project));
            read_at = Instant::now();
        }
    };
    drop(terminal);
    drop(held);
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::model::fixture::{board, unit};
    use ratatui::backend::TestBackend;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn app(n: usize) -> App {
        let units = (0..n)
            .map(|i| {
                let phase = if i % 2 == 0 {
                    Phase::Ready
                } else {
                    Phase::Done
                };
                unit(&format!("T{i}"), &format!("task {i} \x1b[2J"), phase, &[])
            })
            .collect();
        App::new(
            board(
                vec![("projects", "web", units), ("cdd", "ws", vec![])],
                vec![],
            ),
            false,
        )
    }

    fn screen(app: &mut App) -> String {
        screen_of(app, 120, 30)
    }

    fn screen_of(app: &mut App, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| app.draw(f)).unwrap();
        let buf = t.backend().buffer().clone();
        let mut s = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                s.push_str(buf[(x, y)].symbol());
            }
            s.push('\n');
        }
        s
    }

    #[test]
    fn moves_filters_and_cycles_stores() {
        let mut a = app(10);
        assert_eq!(a.current(), Some(0));
        a.key(key(KeyCode::Down));
        assert_eq!(a.board.cards[a.current().unwrap()].task, "T2");
        a.key(key(KeyCode::Right));
        a.key(key(KeyCode::Right));
        a.key(key(KeyCode::Right));
        a.key(key(KeyCode::Right));
        assert_eq!(a.board.cards[a.current().unwrap()].task, "T1");
        a.key(key(KeyCode::Char('/')));
        for c in "t7".chars() {
            a.key(key(KeyCode::Char(c)));
        }
        a.key(key(KeyCode::Enter));
        assert_eq!(a.cols[4].len(), 1);
        a.key(key(KeyCode::Char('/')));
        a.key(key(KeyCode::Esc));
        assert_eq!(a.cols[4].len(), 5);
        a.key(key(KeyCode::Char('s')));
        a.key(key(KeyCode::Char('s')));
        assert_eq!(a.store, Some(1));
        assert!(a.cols.iter().all(Vec::is_empty));
        a.key(key(KeyCode::Char('s')));
        assert_eq!(a.store, None);
        assert_eq!(a.key(key(KeyCode::Enter)), Ask::Show(a.current().unwrap()));
        assert_eq!(a.key(key(KeyCode::Char('q'))), Ask::Quit);
    }

    #[test]
    fn draws_only_what_fits_and_escapes() {
        let mut a = app(10_000);
        let s = screen(&mut a);
        assert!(s.contains("ready (1/5000)"), "{s}");
        assert!(s.contains("done (5000)"), "{s}");
        assert!(s.contains("T0 task 0"));
        assert!(!s.contains('\x1b'));
        assert!(s.contains("more"));
        a.key(key(KeyCode::End));
        let s = screen(&mut a);
        assert!(s.contains("T9998"), "{s}");
    }

    #[test]
    fn any_terminal_size_draws_without_a_panic() {
        let mut a = app(30);
        for (w, h) in [(1, 1), (3, 2), (9, 4), (20, 6), (300, 3)] {
            screen_of(&mut a, w, h);
            a.show("T0".into(), &"a long line\n".repeat(50));
            screen_of(&mut a, w, h);
            a.key(key(KeyCode::Esc));
        }
    }
}
