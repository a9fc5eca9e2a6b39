//! A one-line choice menu for `-e`: arrows and Enter, or one key per item.

use std::io::Write;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::render::theme::{Style, Theme};

/// Raw mode for as long as the value lives.
struct RawMode;

impl RawMode {
    fn enable() -> std::io::Result<Self> {
        crossterm::terminal::enable_raw_mode()?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// What a key does in the menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Move(isize),
    Choose(usize),
    Submit,
    Quit,
    Ignore,
}

/// Maps a key to an action; `items` are chosen by their first letter.
fn action(key: &KeyEvent, items: &[&str]) -> Action {
    if key.kind == KeyEventKind::Release {
        return Action::Ignore;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('c' | 'd') if ctrl => Action::Quit,
        KeyCode::Esc => Action::Quit,
        KeyCode::Enter => Action::Submit,
        KeyCode::Up | KeyCode::Left | KeyCode::BackTab => Action::Move(-1),
        KeyCode::Down | KeyCode::Right | KeyCode::Tab => Action::Move(1),
        KeyCode::Char(c) if !ctrl => items
            .iter()
            .position(|item| item.starts_with(c.to_ascii_lowercase()))
            .map_or(Action::Ignore, Action::Choose),
        _ => Action::Ignore,
    }
}

/// Shows `items` on one line of stderr and returns the chosen one; Esc or Ctrl-C (or a
/// terminal that cannot be read) chooses `quit`.
pub(super) fn choose<'a>(theme: &Theme, items: &[&'a str]) -> &'a str {
    let quit = items.last().copied().unwrap_or("quit");
    let Ok(raw) = RawMode::enable() else {
        return quit;
    };
    let mut selected = 0usize;
    let chosen = loop {
        draw(theme, items, selected);
        let Ok(event) = crossterm::event::read() else {
            break quit;
        };
        let Event::Key(key) = event else { continue };
        match action(&key, items) {
            Action::Move(step) => {
                selected = (selected as isize + step).rem_euclid(items.len() as isize) as usize;
            }
            Action::Choose(i) => break items[i],
            Action::Submit => break items[selected],
            Action::Quit => break quit,
            Action::Ignore => {}
        }
    };
    drop(raw);
    let mut err = std::io::stderr().lock();
    // The menu line stays, showing the choice; every redraw has the same width, so a
    // carriage return is all it takes (no escape sequences next to the command).
    let _ = write!(err, "\r\n");
    let _ = err.flush();
    chosen
}

fn draw(theme: &Theme, items: &[&str], selected: usize) {
    let mut line = String::new();
    let mut keys = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i == selected {
            line.push_str(&theme.paint(Style::Warning, &format!("❯ {item}")));
        } else {
            line.push_str(&format!("  {item}"));
        }
        line.push(' ');
        keys.extend(item.chars().next());
    }
    let hint = format!(
        " ({} or arrows and Enter)",
        keys.iter()
            .map(char::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    );
    line.push_str(&theme.paint(Style::Dim, &hint));
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r{line}");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_choose_and_arrows_move() {
        let items = ["execute", "revise", "describe", "copy", "quit"];
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert_eq!(action(&key(KeyCode::Char('d')), &items), Action::Choose(2));
        assert_eq!(action(&key(KeyCode::Char('Q')), &items), Action::Choose(4));
        assert_eq!(action(&key(KeyCode::Char('x')), &items), Action::Ignore);
        assert_eq!(action(&key(KeyCode::Down), &items), Action::Move(1));
        assert_eq!(
            action(
                &KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                &items
            ),
            Action::Quit
        );
    }
}
