//! The live view of sub-agents on a terminal: while the parent waits on a tool call
//! (`agent__collect`, typically), one line per running sub-agent — agent, task, state,
//! the tool in progress, tokens, cost, time — drawn on stderr below the output and
//! redrawn in place. When the last one ends, the lines give way to a one-line summary.
//!
//! [`LiveView`] receives the sub-agents' events (it is the conversation's observer); the
//! [`super::TerminalEmitter`] of the parent hides it before writing anything and says when
//! the parent waits, so the two never write over each other. It also stays hidden while a
//! question or an approval is on screen. Every redraw is one write wrapped in
//! synchronised-update escapes; lines are cut to the terminal's width so the region's
//! height is known, and a terminal that got narrower is accounted for when erasing.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::screenful::{cut, display_width, terminal_width};
use loki_protocol::emitter::Emitter;
use loki_protocol::event::{ConversationId, Envelope, Event};
use loki_wire::sanitize;

/// The fastest the view redraws for events (state changes redraw at once).
const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Most sub-agents listed; the rest are counted.
const MAX_ROWS: usize = 12;
const FRAMES: &[char] = &['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The live view; one per terminal front end.
pub struct LiveView {
    enabled: bool,
    color: bool,
    state: Mutex<View>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Starting,
    Thinking,
    Tool,
    Asking,
    Completed,
    Failed,
    Cancelled,
}

impl Phase {
    fn running(self) -> bool {
        matches!(
            self,
            Self::Starting | Self::Thinking | Self::Tool | Self::Asking
        )
    }
}

struct Row {
    conversation: ConversationId,
    parent: Option<ConversationId>,
    agent: String,
    task: String,
    phase: Phase,
    tool: Option<String>,
    tokens: u64,
    cost: f64,
    started: Instant,
    ended: Option<Instant>,
}

#[derive(Default)]
struct View {
    rows: Vec<Row>,
    /// Display widths of the lines on screen now.
    drawn: Vec<usize>,
    /// The width they were cut to.
    drawn_width: usize,
    /// Parent tool calls in progress (the view shows only while the parent waits).
    parent_calls: usize,
    /// The parent is asking for approval.
    parent_asking: bool,
    /// Questions and approvals of sub-agents on screen.
    paused: usize,
    last_draw: Option<Instant>,
    frame: usize,
    ticking: bool,
    /// Rows of this batch were on screen: its summary line is owed.
    seen: bool,
    /// The parent's output ended a line (no answer half written): a summary owed may be
    /// written even while the parent is not waiting.
    at_line_start: bool,
}

impl View {
    fn shown(&self) -> bool {
        self.parent_calls > 0 && !self.parent_asking && self.paused == 0
    }

    fn running(&self) -> usize {
        self.rows.iter().filter(|r| r.phase.running()).count()
    }

    /// Every sub-agent shown has ended, and nothing else holds the terminal: the summary
    /// line is written now, whether or not the parent still waits.
    fn summary_due(&self) -> bool {
        self.seen
            && self.at_line_start
            && self.paused == 0
            && !self.parent_asking
            && self.running() == 0
    }
}

/// What the parent's terminal emitter holds while it handles an event: nothing else
/// draws meanwhile; [`Hold::clear`] erases the view before the parent writes, and the view
/// is redrawn (if it should be shown) when the hold is dropped.
pub struct Hold<'a> {
    view: &'a LiveView,
    state: MutexGuard<'a, View>,
    erased: bool,
}

impl Hold<'_> {
    /// Erases the view: the parent is about to write.
    pub fn clear(&mut self) {
        if !self.state.drawn.is_empty() {
            self.view.erase(&mut self.state);
            self.erased = true;
        }
    }

    /// Tells the view what the parent's event means for it.
    pub fn parent_event(&mut self, event: &Event) {
        let state = &mut self.state;
        match event {
            // The parent's own questions take the terminal like approvals do.
            Event::ToolCallStarted(call) if call.name.starts_with("user__") => {
                state.parent_calls += 1;
                state.parent_asking = true;
            }
            // Calls that return at once (spawning, listing) are not worth drawing for.
            Event::ToolCallStarted(call) if !quick(&call.name) => state.parent_calls += 1,
            Event::ToolCallFinished(done) if !quick(&done.name) => {
                state.parent_calls = state.parent_calls.saturating_sub(1);
                state.parent_asking = false;
            }
            Event::ToolCallApprovalRequested(_) => state.parent_asking = true,
            Event::ToolCallApprovalDecided(_) => state.parent_asking = false,
            Event::TurnStarted(_)
            | Event::ModelCallStarted(_)
            | Event::AssistantDelta(_)
            | Event::ReasoningDelta(_)
            | Event::TurnFinished(_)
            | Event::TurnAborted(_) => {
                state.parent_calls = 0;
                state.parent_asking = false;
            }
            _ => {}
        }
        state.at_line_start = match event {
            Event::AssistantDelta(_) | Event::ReasoningDelta(_) => false,
            Event::ToolCallStarted(_)
            | Event::ToolCallFinished(_)
            | Event::ModelCallStarted(_)
            | Event::TurnFinished(_)
            | Event::TurnAborted(_) => true,
            _ => state.at_line_start,
        };
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let now = self.erased;
        self.view.refresh(&mut self.state, now);
    }
}

impl LiveView {
    /// A view drawing on stderr when `enabled` (stderr is a terminal), with colour when
    /// `color`.
    pub fn new(enabled: bool, color: bool) -> Arc<Self> {
        Arc::new(Self {
            enabled,
            color,
            state: Mutex::new(View {
                at_line_start: true,
                ..View::default()
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, View> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Holds the view while the parent handles an event; see [`Hold`].
    pub fn hold(&self) -> Hold<'_> {
        Hold {
            view: self,
            state: self.lock(),
            erased: false,
        }
    }

    fn erase(&self, state: &mut View) {
        if state.drawn.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(32);
        write_erase(state, &mut out);
        state.drawn.clear();
        write_stderr(&out);
    }

    /// Redraws (or summarises) when the view should be visible; `now` skips the
    /// throttle.
    fn refresh(&self, state: &mut View, now: bool) {
        if !self.enabled || state.rows.is_empty() {
            return;
        }
        // A sub-agent's question holds the bottom rows (a question that timed out is
        // answered before its rows come down): drawing now would write below them and
        // move the cursor, so taking them down would leave their first rows behind.
        // The view is drawn again once the question is off the screen.
        if super::question_area::on_screen() {
            return;
        }
        if !state.shown() && !state.summary_due() {
            self.erase(state);
            return;
        }
        // The summary is never held back (nothing may come to draw it later).
        if !now
            && state.running() > 0
            && state
                .last_draw
                .is_some_and(|at| at.elapsed() < REDRAW_EVERY)
        {
            return;
        }
        let width = terminal_width();
        let mut out = Vec::with_capacity(1024);
        out.extend_from_slice(b"\x1b[?2026h");
        write_erase(state, &mut out);
        state.drawn.clear();
        if state.running() == 0 {
            let line = cut(&summary(&state.rows), width);
            out.extend_from_slice(self.paint_dim(&line).as_bytes());
            out.push(b'\n');
            state.rows.clear();
            state.seen = false;
        } else {
            state.seen = true;
            state.frame = state.frame.wrapping_add(1);
            for line in lines(state, width) {
                let line = cut(&line, width);
                state.drawn.push(display_width(&line));
                out.extend_from_slice(self.paint_dim(&line).as_bytes());
                out.push(b'\n');
            }
            state.drawn_width = width;
        }
        out.extend_from_slice(b"\x1b[?2026l");
        state.last_draw = Some(Instant::now());
        write_stderr(&out);
    }

    fn paint_dim(&self, line: &str) -> String {
        if self.color {
            format!("\x1b[2m{line}\x1b[0m")
        } else {
            line.to_string()
        }
    }

    /// Keeps the elapsed times and the spinner moving while sub-agents run.
    fn tick(self: &Arc<Self>, state: &mut View) {
        if state.ticking {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        state.ticking = true;
        let view = Arc::downgrade(self);
        runtime.spawn(async move {
            let mut interval = tokio::time::interval(Duration::from_millis(250));
            loop {
                interval.tick().await;
                let Some(view) = view.upgrade() else { return };
                let mut state = view.lock();
                if state.running() == 0 {
                    state.ticking = false;
                    view.refresh(&mut state, true);
                    return;
                }
                view.refresh(&mut state, false);
            }
        });
    }

    fn observe(self: &Arc<Self>, envelope: Envelope) {
        let mut state = self.lock();
        let conversation = envelope.conversation;
        let mut changed = true;
        match envelope.event {
            Event::AgentStarted(started) => {
                // A new batch: forget a finished one that was never shown.
                if state.running() == 0 {
                    state.rows.clear();
                    state.seen = false;
                }
                state.rows.push(Row {
                    conversation,
                    parent: envelope.parent,
                    agent: envelope.agent.as_deref().unwrap_or("agent").to_string(),
                    task: started.task,
                    phase: Phase::Starting,
                    tool: None,
                    tokens: 0,
                    cost: 0.0,
                    started: Instant::now(),
                    ended: None,
                });
                self.tick(&mut state);
            }
            Event::QuestionAsked(_) | Event::ToolCallApprovalRequested(_) => {
                state.paused += 1;
                if let Some(row) = row(&mut state, &conversation) {
                    row.phase = Phase::Asking;
                }
                self.erase(&mut state);
                return;
            }
            Event::QuestionAnswered(_) | Event::ToolCallApprovalDecided(_) => {
                state.paused = state.paused.saturating_sub(1);
                if let Some(row) = row(&mut state, &conversation) {
                    // An approved call runs now; a question answered lets it think on.
                    row.phase = if row.tool.is_some() {
                        Phase::Tool
                    } else {
                        Phase::Thinking
                    };
                }
            }
            event => {
                let Some(row) = row(&mut state, &conversation) else {
                    return;
                };
                changed = update(row, event);
            }
        }
        self.refresh(&mut state, changed);
    }
}

/// The sub-agent tools that answer at once (only `agent__collect` waits).
fn quick(tool: &str) -> bool {
    tool.starts_with("agent__") && tool != "agent__collect"
}

fn row<'a>(state: &'a mut View, conversation: &ConversationId) -> Option<&'a mut Row> {
    state
        .rows
        .iter_mut()
        .find(|r| &r.conversation == conversation)
}

/// Applies a sub-agent's event to its row; true when its state changed (redraw now).
fn update(row: &mut Row, event: Event) -> bool {
    match event {
        Event::ModelCallStarted(_) => {
            row.phase = Phase::Thinking;
            row.tool = None;
        }
        Event::ToolCallStarted(call) => {
            row.phase = Phase::Tool;
            row.tool = Some(call.name);
        }
        Event::ToolCallFinished(_) => row.phase = Phase::Thinking,
        Event::Usage(usage) => {
            row.tokens += usage.input_tokens + usage.output_tokens;
            return false;
        }
        Event::TurnFinished(done) => {
            row.cost += done.cost_usd.unwrap_or(0.0);
            return false;
        }
        Event::AgentFinished(done) => {
            row.phase = match done.status {
                "completed" => Phase::Completed,
                "cancelled" => Phase::Cancelled,
                _ => Phase::Failed,
            };
            row.tool = None;
            row.tokens = row.tokens.max(done.tokens);
            row.ended = Some(Instant::now());
        }
        _ => return false,
    }
    true
}

/// The lines of the view.
fn lines(state: &View, width: usize) -> Vec<String> {
    let running = state.running();
    let done = state.rows.len() - running;
    let tokens: u64 = state.rows.iter().map(|r| r.tokens).sum();
    let cost: f64 = state.rows.iter().map(|r| r.cost).sum();
    let mut lines = vec![format!(
        "agents: {running} running, {done} done · {} tokens{}",
        compact(tokens),
        cost_text(cost)
    )];
    let frame = FRAMES[state.frame % FRAMES.len()];
    for row in state.rows.iter().take(MAX_ROWS) {
        let nested = row
            .parent
            .as_ref()
            .is_some_and(|p| state.rows.iter().any(|r| &r.conversation == p));
        let indent = if nested { "    " } else { "  " };
        let (mark, what) = match row.phase {
            Phase::Starting => (frame, "starting".to_string()),
            Phase::Thinking => (frame, "thinking".to_string()),
            Phase::Tool => (frame, format!("⚙ {}", row.tool.as_deref().unwrap_or(""))),
            Phase::Asking => ('?', "waiting for you".to_string()),
            Phase::Completed => ('✓', "done".to_string()),
            Phase::Failed => ('✗', "failed".to_string()),
            Phase::Cancelled => ('✗', "cancelled".to_string()),
        };
        let elapsed = row.ended.unwrap_or_else(Instant::now) - row.started;
        let stats = format!(
            "{} tok{} {:.1}s",
            compact(row.tokens),
            cost_text(row.cost),
            elapsed.as_secs_f64()
        );
        let head = format!(
            "{indent}{mark} {} · {what}",
            sanitize::approval_line(&row.agent)
        );
        // The task fills what is left of the line.
        let room = width
            .saturating_sub(display_width(&head) + display_width(&stats) + 6)
            .max(8);
        let task = cut(&sanitize::approval_line(first_line(&row.task)), room);
        lines.push(format!("{head} · {task} · {stats}"));
    }
    if state.rows.len() > MAX_ROWS {
        lines.push(format!("  … and {} more", state.rows.len() - MAX_ROWS));
    }
    lines
}

/// The line that replaces the view when every sub-agent has ended.
fn summary(rows: &[Row]) -> String {
    let failed = rows.iter().filter(|r| r.phase != Phase::Completed).count();
    let tokens: u64 = rows.iter().map(|r| r.tokens).sum();
    let cost: f64 = rows.iter().map(|r| r.cost).sum();
    let first = rows.iter().map(|r| r.started).min();
    let last = rows.iter().filter_map(|r| r.ended).max();
    let elapsed = match (first, last) {
        (Some(a), Some(b)) => (b - a).as_secs_f64(),
        _ => 0.0,
    };
    let mut agents: Vec<(String, usize)> = Vec::new();
    for row in rows {
        match agents.iter_mut().find(|(a, _)| *a == row.agent) {
            Some((_, n)) => *n += 1,
            None => agents.push((row.agent.clone(), 1)),
        }
    }
    let names: Vec<String> = agents
        .iter()
        .map(|(a, n)| {
            let a = sanitize::approval_line(a);
            if *n > 1 {
                format!("{a} ×{n}")
            } else {
                a.into_owned()
            }
        })
        .collect();
    let mark = if failed == 0 { '✓' } else { '✗' };
    let failures = if failed == 0 {
        String::new()
    } else {
        format!(", {failed} did not complete")
    };
    format!(
        "{mark} {} agent{} finished in {elapsed:.1}s{failures} · {} tokens{} ({})",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        compact(tokens),
        cost_text(cost),
        names.join(", ")
    )
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn compact(tokens: u64) -> String {
    if tokens >= 1000 {
        format!("{:.1}k", tokens as f64 / 1000.0)
    } else {
        tokens.to_string()
    }
}

fn cost_text(cost: f64) -> String {
    if cost > 0.0 {
        format!(" · ${cost:.4}")
    } else {
        String::new()
    }
}

/// Moves up over the drawn lines (as they wrap at today's width) and clears below.
fn write_erase(state: &View, out: &mut Vec<u8>) {
    if state.drawn.is_empty() {
        return;
    }
    let width = terminal_width().max(1);
    let rows: usize = if width >= state.drawn_width {
        state.drawn.len()
    } else {
        // A narrower terminal re-wrapped the lines.
        state.drawn.iter().map(|w| w.max(&1).div_ceil(width)).sum()
    };
    let _ = write!(out, "\r\x1b[{rows}F\x1b[J");
}

fn write_stderr(bytes: &[u8]) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(bytes);
    let _ = err.flush();
}

/// The observer side: the events of sub-agents.
pub struct Observer(pub Arc<LiveView>);

impl Emitter for Observer {
    fn emit(&self, envelope: Envelope) {
        if self.0.enabled {
            self.0.observe(envelope);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(agent: &str, phase: Phase, tokens: u64) -> Row {
        Row {
            conversation: "c2".into(),
            parent: Some("c1".into()),
            agent: agent.into(),
            task: "Find the auth code\nand more".into(),
            phase,
            tool: Some("fs_read".into()),
            tokens,
            cost: 0.0,
            started: Instant::now(),
            ended: Some(Instant::now()),
        }
    }

    #[test]
    fn lines_fit_the_width_and_name_agent_task_and_tool() {
        let state = View {
            rows: vec![
                row("explore", Phase::Tool, 1500),
                row("oracle", Phase::Completed, 10),
            ],
            ..View::default()
        };
        let lines = lines(&state, 60);
        assert_eq!(lines[0], "agents: 1 running, 1 done · 1.5k tokens");
        assert!(
            lines[1].contains("explore · ⚙ fs_read · Find the"),
            "{}",
            lines[1]
        );
        assert!(lines.iter().all(|l| display_width(&cut(l, 60)) < 60));
        assert!(lines[2].contains("✓ oracle · done"));
    }

    #[test]
    fn the_summary_counts_agents_and_failures() {
        let rows = vec![
            row("explore", Phase::Completed, 100),
            row("explore", Phase::Completed, 100),
            row("oracle", Phase::Failed, 50),
        ];
        let line = summary(&rows);
        assert!(line.starts_with("✗ 3 agents finished in"), "{line}");
        assert!(line.contains("1 did not complete · 250 tokens (explore ×2, oracle)"));
    }

    #[test]
    fn control_characters_in_names_are_escaped() {
        let mut bad = row("ev\x1b[2Jil", Phase::Thinking, 0);
        bad.task = "\x1b]0;pwned\x07".into();
        let state = View {
            rows: vec![bad],
            ..View::default()
        };
        assert!(lines(&state, 120).iter().all(|l| !l.contains('\x1b')));
    }
}
