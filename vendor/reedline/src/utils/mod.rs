mod query;

pub(crate) mod environment;
pub(crate) mod text_manipulation;

pub use query::{
    get_reedline_default_keybindings, get_reedline_keybinding_modifiers, get_reedline_keycodes,
};
