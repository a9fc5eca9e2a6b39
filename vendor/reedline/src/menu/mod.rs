mod columnar_menu;
mod description_menu;
mod ide_menu;
mod list_menu;
pub mod menu_functions;

use crate::core_editor::Editor;
use crate::History;
use crate::{completion::history::HistoryCompleter, painting::Painter, Completer, Suggestion};
pub use columnar_menu::ColumnarMenu;
pub use columnar_menu::TraversalDirection;
pub use description_menu::DescriptionMenu;
pub use ide_menu::DescriptionMode;
pub use ide_menu::IdeMenu;
pub use list_menu::DescriptionPosition;
pub use list_menu::ListMenu;
use nu_ansi_term::{Color, Style};

/// Struct to store the menu style
pub struct MenuTextStyle {
    /// Text style for selected text in a menu
    pub selected_text_style: Style,
    /// Text style for not selected text in the menu
    pub text_style: Style,
    /// Text style for the item description
    pub description_style: Style,
    /// Text style of the parts of the suggestions that match the
    /// typed text when the suggestion is selected
    pub selected_match_style: Style,
    /// Text style of the parts of the suggestions that match the
    /// typed text
    pub match_style: Style,
}

impl Default for MenuTextStyle {
    fn default() -> Self {
        Self {
            selected_text_style: Color::Green.bold().reverse(),
            text_style: Color::DarkGray.normal(),
            description_style: Color::Yellow.normal(),
            selected_match_style: Color::Green.bold().reverse().underline(),
            match_style: Style::default().underline(),
        }
    }
}

/// Menu events.
#[derive(Clone)]
pub enum MenuEvent {
    /// Activation event for the menu. When the bool is true it means that the values
    /// have already being updated. This is true when the option `quick_completions` is true
    Activate(bool),
    /// Deactivation event
    Deactivate,
    /// Line buffer edit event. When the bool is true it means that the values
    /// have already being updated. This is true when the option `quick_completions` is true
    Edit(bool),
    /// Selecting next element in the menu
    NextElement,
    /// Selecting previous element in the menu
    PreviousElement,
    /// Moving up in the menu
    MoveUp,
    /// Moving down in the menu
    MoveDown,
    /// Moving left in the menu
    MoveLeft,
    /// Moving right in the menu
    MoveRight,
    /// Move to next page
    NextPage,
    /// Move to previous page
    PreviousPage,
}

/// Trait that defines how a menu will be printed by the painter
pub trait Menu: Send {
    /// Get MenuSettings
    ///
    /// The default `name` and `indicator` read through here, and the engine
    /// looks a menu up by `name` on every menu event, so a menu has to own a
    /// [`MenuSettings`] and hand it out.
    fn settings(&self) -> &MenuSettings;

    /// Menu name
    fn name(&self) -> &str {
        &self.settings().name
    }

    /// Menu indicator
    fn indicator(&self) -> &str {
        &self.settings().marker
    }

    /// Checks if the menu is active
    fn is_active(&self) -> bool;

    /// Set active state
    fn set_active(&mut self, active: bool);

    /// Clear input
    fn clear_input(&mut self);

    /// Called after Activate event.
    fn on_activate(&mut self) {}

    /// Called after Deactivate event.
    fn on_deactivate(&mut self) {}

    /// Handle Activate/Deactivate events.
    fn handle_menu_event(&mut self, event: &MenuEvent) {
        match event {
            MenuEvent::Activate(_) => {
                self.set_active(true);
                self.on_activate();
            }
            MenuEvent::Deactivate => {
                self.set_active(false);
                self.clear_input();
                self.on_deactivate();
            }
            _ => {}
        }
    }

    /// Handle menu event
    fn menu_event(&mut self, event: MenuEvent);

    /// A menu may not be allowed to quick complete because it needs to stay
    /// active even with one element
    fn can_quick_complete(&self) -> bool;

    /// The completion menu can try to find the common string and replace it
    /// in the given line buffer
    fn can_partially_complete(
        &mut self,
        values_updated: bool,
        editor: &mut Editor,
        completer: &mut dyn Completer,
    ) -> bool;

    /// Updates the values presented in the menu
    /// This function needs to be defined in the trait because when the menu is
    /// activated or the `quick_completion` option is true, the len of the values
    /// is calculated to know if there is only one value so it can be selected
    /// immediately
    fn update_values(&mut self, editor: &mut Editor, completer: &mut dyn Completer);

    /// Resets the menu's selection back to its initial position.
    fn reset_position(&mut self);

    /// Handles a menu event that reloads the menu's contents
    fn reload(&mut self, updated: bool, editor: &mut Editor, completer: &mut dyn Completer) {
        self.reset_position();
        if !updated {
            self.update_values(editor, completer);
        }
    }

    /// The working details of a menu are values that could change based on
    /// the menu conditions before it being printed, such as the number or size
    /// of columns, etc.
    /// In this function should be defined how the menu event is treated since
    /// it is called just before painting the menu
    fn update_working_details(
        &mut self,
        editor: &mut Editor,
        completer: &mut dyn Completer,
        painter: &Painter,
    );

    /// Indicates how to replace in the line buffer the selected value from the menu
    fn replace_in_buffer(&self, editor: &mut Editor);

    /// Calculates the real required lines for the menu considering how many lines
    /// wrap the terminal or if entries have multiple lines
    fn menu_required_lines(&self, terminal_columns: u16) -> u16;

    /// Creates the menu representation as a string which will be painted by the painter
    fn menu_string(&self, available_lines: u16, use_ansi_coloring: bool) -> String;

    /// Minimum rows that should be displayed by the menu
    fn min_rows(&self) -> u16;

    /// Gets cached values from menu that will be displayed
    fn get_values(&self) -> &[Suggestion];

    /// Whether the values currently held may still be superseded, because the
    /// last request came back [`Pending`](crate::CompletionResult::Pending) or
    /// [`Stale`](crate::CompletionResult::Stale).
    ///
    /// Such values display and navigate normally, but nothing final may be
    /// decided from them: a lone stale suggestion cannot be accepted, since its
    /// span belongs to another line.
    fn results_are_provisional(&self) -> bool {
        false
    }

    /// Whether the menu is activated but not yet drawn, having heard no answer
    /// about the line on screen. It claims no prompt indicator and reserves no
    /// rows, so a menu about to be closed by a lone suggestion never appears.
    fn is_awaiting_first_answer(&self) -> bool {
        false
    }

    /// Whether the menu is on screen. An active menu still awaiting its first answer
    /// is not: it takes input, but claims no indicator and reserves no rows.
    fn is_visible(&self) -> bool {
        self.is_active() && !self.is_awaiting_first_answer()
    }

    /// Sets the position of the cursor (currently only required by the IDE menu)
    fn set_cursor_pos(&mut self, _pos: (u16, u16)) {
        // empty implementation to make it optional
    }
}

/// Struct to store configuration for a menu.
pub struct MenuSettings {
    /// Menu name
    name: String,
    /// Menu coloring
    color: MenuTextStyle,
    /// Menu marker when active
    marker: String,
    /// Use buffer diff after activation. Ignored if input_mode set.
    only_buffer_difference: bool,
    /// Optional override for completer input handling.
    /// If `Some`, takes precedence over `only_buffer_difference`.
    input_mode: Option<InputMode>,
    /// Optional override for the buffer range replaced on selection.
    /// If `None`, the menu uses `Suggestion::span` as-is.
    output_mode: Option<OutputMode>,
    /// Punctuation that extends a completable word, when the menu should close
    /// at the end of the word it was opened for. `None` keeps it open for the
    /// rest of the line.
    word_chars: Option<String>,
}

impl Default for MenuSettings {
    fn default() -> Self {
        Self {
            name: "menu".to_string(),
            color: MenuTextStyle::default(),
            marker: "| ".to_string(),
            only_buffer_difference: false,
            input_mode: None,
            output_mode: None,
            word_chars: None,
        }
    }
}

impl MenuSettings {
    /// MenuSettings builder with name
    #[must_use]
    pub fn with_name(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// MenuSettings builder with color
    #[must_use]
    pub fn with_color(mut self, color: MenuTextStyle) -> Self {
        self.color = color;
        self
    }

    /// Set marker
    #[must_use]
    pub fn with_marker(mut self, marker: &str) -> Self {
        self.marker = marker.to_string();
        self
    }

    /// MenuSettings builder with only_buffer_difference.
    /// Consider `with_input_mode` for finer control; the bool is ignored when
    /// `input_mode` is set.
    #[must_use]
    pub fn with_only_buffer_difference(mut self, only_buffer_difference: bool) -> Self {
        self.only_buffer_difference = only_buffer_difference;
        self
    }

    /// Set the input mode. If set, this overrides `only_buffer_difference`.
    #[must_use]
    pub fn with_input_mode(mut self, mode: InputMode) -> Self {
        self.input_mode = Some(mode);
        self
    }

    /// Set the output mode. If unset, the menu uses `Suggestion::span` as-is.
    #[must_use]
    pub fn with_output_mode(mut self, mode: OutputMode) -> Self {
        self.output_mode = Some(mode);
        self
    }

    /// Close the menu once a typed character can no longer extend the word it
    /// was opened for. See [`MenuBuilder::with_word_chars`].
    #[must_use]
    pub fn with_word_chars(mut self, word_chars: impl Into<String>) -> Self {
        self.word_chars = Some(word_chars.into());
        self
    }

    /// Whether `c` ends the word this menu was opened for. Always false when
    /// the menu has no word characters set, which is the default.
    pub fn word_ends_at(&self, c: char) -> bool {
        self.word_chars
            .as_ref()
            .is_some_and(|word_chars| !c.is_alphanumeric() && !word_chars.contains(c))
    }

    /// Resolves input_mode and only_buffer_difference into concrete InputMode.
    /// `input_mode` wins if set; otherwise falls back to the bool.
    pub fn effective_input_mode(&self) -> InputMode {
        self.input_mode.unwrap_or(if self.only_buffer_difference {
            InputMode::Diff
        } else {
            InputMode::CursorPrefix
        })
    }
}

/// Controls what the menu hands to its completer.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMode {
    /// Completer receives only the text typed after menu activation.
    /// Equivalent to `only_buffer_difference: true`.
    Diff,
    /// Completer receives the buffer up to the cursor (`buffer[..cursor]`).
    /// Equivalent to `only_buffer_difference: false`.
    CursorPrefix,
    /// Completer receives the entire buffer including text after the cursor.
    /// No bool equivalent.
    FullBuffer,
}

/// Controls what range of the buffer the menu replaces when a suggestion is selected.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// Replace the range specified by `Suggestion::span`.
    /// Equivalent to leaving `output_mode` unset.
    SuggestedSpan,
    /// Replace the entire buffer (`0..buffer.len()`), ignoring `Suggestion::span`.
    FullBuffer,
    /// Keep `Suggestion::span.start`, force `end = buffer.len()`.
    ExtendToEnd,
}

/// Common builder for all menus
pub trait MenuBuilder: Menu + Sized {
    /// Get mutable MenuSettings
    /// required for the builder functions
    fn settings_mut(&mut self) -> &mut MenuSettings;

    /// Menu builder with new name
    #[must_use]
    fn with_name(mut self, name: &str) -> Self {
        self.settings_mut().name = name.to_string();
        self
    }

    /// Menu builder with new value for text style
    #[must_use]
    fn with_text_style(mut self, color: Style) -> Self {
        self.settings_mut().color.text_style = color;
        self
    }

    /// Menu builder with new value for selected text style
    #[must_use]
    fn with_selected_text_style(mut self, color: Style) -> Self {
        self.settings_mut().color.selected_text_style = color;
        self
    }

    /// Menu builder with new value for description style
    #[must_use]
    fn with_description_text_style(mut self, color: Style) -> Self {
        self.settings_mut().color.description_style = color;
        self
    }

    /// Menu builder with new value for match style
    /// This is the style of the part of the input text, the suggestions
    /// are based on
    #[must_use]
    fn with_match_text_style(mut self, color: Style) -> Self {
        self.settings_mut().color.match_style = color;
        self
    }

    /// Menu builder with new value for selected match style
    /// This is the style of the part of the input text, the suggestions
    /// are based on
    #[must_use]
    fn with_selected_match_text_style(mut self, color: Style) -> Self {
        self.settings_mut().color.selected_match_style = color;
        self
    }

    /// Menu builder with new value for marker
    #[must_use]
    fn with_marker(mut self, marker: &str) -> Self {
        self.settings_mut().marker = marker.to_string();
        self
    }

    /// Set only_buffer_difference. Ignored when input_mode set.
    #[must_use]
    fn with_only_buffer_difference(mut self, only_buffer_difference: bool) -> Self {
        self.settings_mut().only_buffer_difference = only_buffer_difference;
        self
    }

    /// Menu builder with new value for input_mode. Overrides `only_buffer_difference` when set.
    #[must_use]
    fn with_input_mode(mut self, mode: InputMode) -> Self {
        self.settings_mut().input_mode = Some(mode);
        self
    }

    /// Menu builder with new value for output_mode. Defaults to `OutputMode::SuggestedSpan` when unset.
    #[must_use]
    fn with_output_mode(mut self, mode: OutputMode) -> Self {
        self.settings_mut().output_mode = Some(mode);
        self
    }

    /// Close this menu once a typed character can no longer extend the word it
    /// was opened for, instead of refiltering for the rest of the line.
    ///
    /// An alphanumeric character always extends a word; `word_chars` lists the
    /// punctuation that also does. `"_."` suits SQL identifiers, `"_-./"`
    /// suits paths. A menu that never calls this keeps the default, no word
    /// characters, and stays open for the rest of the line, which is what a
    /// menu filtering on whole command lines, such as a history menu, wants.
    ///
    /// Only characters typed into the line end a word; text inserted whole,
    /// such as a bracketed paste, does not.
    #[must_use]
    fn with_word_chars(mut self, word_chars: impl Into<String>) -> Self {
        self.settings_mut().word_chars = Some(word_chars.into());
        self
    }
}

/// Allowed menus in Reedline
pub enum ReedlineMenu {
    /// Menu that uses Reedline's completer to update its values
    EngineCompleter(Box<dyn Menu>),
    /// Menu that uses the history as its completer
    HistoryMenu(Box<dyn Menu>),
    /// Menu that has its own Completer
    WithCompleter {
        /// Base menu
        menu: Box<dyn Menu>,
        /// External completer defined outside Reedline
        completer: Box<dyn Completer + Send>,
    },
}

impl ReedlineMenu {
    fn as_ref(&self) -> &dyn Menu {
        match self {
            Self::EngineCompleter(menu)
            | Self::HistoryMenu(menu)
            | Self::WithCompleter { menu, .. } => menu.as_ref(),
        }
    }

    fn as_mut(&mut self) -> &mut dyn Menu {
        match self {
            Self::EngineCompleter(menu)
            | Self::HistoryMenu(menu)
            | Self::WithCompleter { menu, .. } => menu.as_mut(),
        }
    }

    /// Whether updating this menu runs a completer supplied by the host.
    ///
    /// Host completers own the tty while they run and may shell out to a program that
    /// scrolls the terminal (nushell's external completer running `fzf --height`),
    /// leaving the painter's cached prompt anchor pointing at the wrong row.
    /// Reedline cannot tell whether a given completer does that, so any host completer
    /// is assumed to. [`HistoryMenu`](Self::HistoryMenu) is the one case it can rule
    /// out: it is answered by reedline's own in-process [`HistoryCompleter`], which
    /// never yields the terminal. See #1130.
    pub(crate) fn queries_host_completer(&self) -> bool {
        !matches!(self, Self::HistoryMenu(_))
    }

    pub(crate) fn can_partially_complete(
        &mut self,
        values_updated: bool,
        editor: &mut Editor,
        completer: &mut dyn Completer,
        history: &dyn History,
    ) -> bool {
        match self {
            Self::EngineCompleter(menu) => {
                menu.can_partially_complete(values_updated, editor, completer)
            }
            Self::HistoryMenu(menu) => {
                let mut history_completer = HistoryCompleter::new(history);
                menu.can_partially_complete(values_updated, editor, &mut history_completer)
            }
            Self::WithCompleter {
                menu,
                completer: own_completer,
            } => menu.can_partially_complete(values_updated, editor, own_completer.as_mut()),
        }
    }

    pub(crate) fn update_values(
        &mut self,
        editor: &mut Editor,
        completer: &mut dyn Completer,
        history: &dyn History,
    ) {
        match self {
            Self::EngineCompleter(menu) => menu.update_values(editor, completer),
            Self::HistoryMenu(menu) => {
                let mut history_completer = HistoryCompleter::new(history);
                menu.update_values(editor, &mut history_completer);
            }
            Self::WithCompleter {
                menu,
                completer: own_completer,
            } => {
                menu.update_values(editor, own_completer.as_mut());
            }
        }
    }

    pub(crate) fn update_working_details(
        &mut self,
        editor: &mut Editor,
        completer: &mut dyn Completer,
        history: &dyn History,
        painter: &Painter,
    ) {
        match self {
            Self::EngineCompleter(menu) => {
                menu.update_working_details(editor, completer, painter);
            }
            Self::HistoryMenu(menu) => {
                let mut history_completer = HistoryCompleter::new(history);
                menu.update_working_details(editor, &mut history_completer, painter);
            }
            Self::WithCompleter {
                menu,
                completer: own_completer,
            } => {
                menu.update_working_details(editor, own_completer.as_mut(), painter);
            }
        }
    }
}

impl Menu for ReedlineMenu {
    fn settings(&self) -> &MenuSettings {
        self.as_ref().settings()
    }

    fn name(&self) -> &str {
        self.as_ref().name()
    }

    fn indicator(&self) -> &str {
        self.as_ref().indicator()
    }

    fn is_active(&self) -> bool {
        self.as_ref().is_active()
    }

    fn set_active(&mut self, active: bool) {
        self.as_mut().set_active(active);
    }

    fn clear_input(&mut self) {
        self.as_mut().clear_input();
    }

    fn menu_event(&mut self, event: MenuEvent) {
        self.as_mut().menu_event(event);
    }

    fn can_quick_complete(&self) -> bool {
        self.as_ref().can_quick_complete()
    }

    fn can_partially_complete(
        &mut self,
        values_updated: bool,
        editor: &mut Editor,
        completer: &mut dyn Completer,
    ) -> bool {
        match self {
            Self::EngineCompleter(menu) | Self::HistoryMenu(menu) => {
                menu.can_partially_complete(values_updated, editor, completer)
            }
            Self::WithCompleter {
                menu,
                completer: own_completer,
            } => menu.can_partially_complete(values_updated, editor, own_completer.as_mut()),
        }
    }

    fn update_values(&mut self, editor: &mut Editor, completer: &mut dyn Completer) {
        match self {
            Self::EngineCompleter(menu) | Self::HistoryMenu(menu) => {
                menu.update_values(editor, completer);
            }
            Self::WithCompleter {
                menu,
                completer: own_completer,
            } => {
                menu.update_values(editor, own_completer.as_mut());
            }
        }
    }

    fn reset_position(&mut self) {
        self.as_mut().reset_position();
    }

    fn update_working_details(
        &mut self,
        editor: &mut Editor,
        completer: &mut dyn Completer,
        painter: &Painter,
    ) {
        match self {
            Self::EngineCompleter(menu) | Self::HistoryMenu(menu) => {
                menu.update_working_details(editor, completer, painter);
            }
            Self::WithCompleter {
                menu,
                completer: own_completer,
            } => {
                menu.update_working_details(editor, own_completer.as_mut(), painter);
            }
        }
    }

    fn replace_in_buffer(&self, editor: &mut Editor) {
        self.as_ref().replace_in_buffer(editor);
    }

    fn menu_required_lines(&self, terminal_columns: u16) -> u16 {
        self.as_ref().menu_required_lines(terminal_columns)
    }

    fn menu_string(&self, available_lines: u16, use_ansi_coloring: bool) -> String {
        self.as_ref()
            .menu_string(available_lines, use_ansi_coloring)
    }

    fn min_rows(&self) -> u16 {
        self.as_ref().min_rows()
    }

    fn get_values(&self) -> &[Suggestion] {
        self.as_ref().get_values()
    }

    fn results_are_provisional(&self) -> bool {
        self.as_ref().results_are_provisional()
    }

    fn is_awaiting_first_answer(&self) -> bool {
        self.as_ref().is_awaiting_first_answer()
    }

    fn set_cursor_pos(&mut self, pos: (u16, u16)) {
        self.as_mut().set_cursor_pos(pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DefaultCompleter;
    use rstest::rstest;

    /// The prompt anchor is only re-verified for menus that can run host code, since
    /// that is the only thing reedline cannot see past. A history menu is answered
    /// in-process, so it must not pay a `cursor::position()` round-trip per keystroke.
    /// See #1130.
    #[test]
    fn only_a_host_completer_can_have_scrolled_the_terminal() {
        let menu = || Box::new(ColumnarMenu::default()) as Box<dyn Menu>;

        assert!(ReedlineMenu::EngineCompleter(menu()).queries_host_completer());
        assert!(ReedlineMenu::WithCompleter {
            menu: menu(),
            completer: Box::<DefaultCompleter>::default(),
        }
        .queries_host_completer());

        assert!(!ReedlineMenu::HistoryMenu(menu()).queries_host_completer());
    }

    #[rstest]
    #[case::bool_only_false(false, None, InputMode::CursorPrefix)]
    #[case::bool_only_true(true, None, InputMode::Diff)]
    #[case::enum_overrides_false_bool(false, Some(InputMode::Diff), InputMode::Diff)]
    #[case::enum_overrides_true_bool(true, Some(InputMode::CursorPrefix), InputMode::CursorPrefix)]
    #[case::full_buffer(true, Some(InputMode::FullBuffer), InputMode::FullBuffer)]
    fn test_effective_input_mode(
        #[case] only_buffer_difference: bool,
        #[case] input_mode: Option<InputMode>,
        #[case] expected: InputMode,
    ) {
        let mut settings =
            MenuSettings::default().with_only_buffer_difference(only_buffer_difference);
        if let Some(mode) = input_mode {
            settings = settings.with_input_mode(mode);
        }
        assert_eq!(settings.effective_input_mode(), expected);
    }
}
