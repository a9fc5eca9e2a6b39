//! A token count estimated from characters: cheap, tokenizer-independent, used per chunk
//! when a knowledge base is split and per message when a conversation is measured.

/// The character-based estimate: ⌈ASCII chars / 4⌉ + other chars.
pub fn estimate(text: &str) -> usize {
    let (ascii, other) = text.chars().fold((0usize, 0usize), |(a, o), c| {
        if c.is_ascii() { (a + 1, o) } else { (a, o + 1) }
    });
    ascii.div_ceil(4) + other
}
