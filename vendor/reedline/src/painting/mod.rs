mod painter;
mod prompt_lines;
mod styled_text;
mod utils;

pub use painter::{Painter, PainterSuspendedState, RenderSnapshot, W};
pub(crate) use prompt_lines::PromptLines;
pub use styled_text::StyledText;
pub(crate) use utils::estimate_single_line_wraps;
