//! Token counting.
//!
//! OpenAI-family models are counted exactly with the `o200k_base` byte-pair encoding (the
//! vocabulary of GPT-4o, GPT-4.1, GPT-5 and the o-series; within a few percent of
//! `cl100k_base` for older GPT-4 models). The vocabulary is embedded as
//! `assets/tokenizer/o200k_base.pairs.zlib`: every token but the single bytes is two
//! tokens of lower rank, so the file holds those two ranks per token, as byte planes,
//! zlib-compressed (0.73 MB; the tokens themselves compressed to 1.05 MB). It is rebuilt
//! and indexed on first use, which takes a few milliseconds; runs that never count exactly
//! do not touch it. `scripts/tokenizer-vocab` writes the file.
//!
//! Other models get an estimate: about four characters per token for ASCII text and one
//! per character in other scripts. Both add four tokens per message for the chat framing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, OnceLock};

/// Texts at least this long have their exact counts remembered.
const MEMO_MIN_BYTES: usize = 256;

/// Per-message overhead of the chat format (role markers and separators).
pub const PER_MESSAGE: usize = 4;

/// The vocabulary's parts: for each rank, the ranks of the two tokens it joins, as six
/// byte planes (low, middle and high byte of every left part, then of every right part),
/// zlib-compressed. A single byte has its value as the left part and [`SINGLE`] as the
/// right.
static VOCAB_PAIRS_ZLIB: &[u8] = include_bytes!("../assets/tokenizer/o200k_base.pairs.zlib");

/// The right part of a single-byte token.
const SINGLE: u32 = 0xFF_FFFF;

/// The vocabulary, each token's bytes after one length byte, in rank order; kept for the
/// life of the process (the rank table borrows it).
fn vocab() -> &'static [u8] {
    use std::io::Read;
    let mut planes = Vec::with_capacity(1_200_000);
    // The asset is part of the build and checked by the tests; a failure leaves the
    // vocabulary empty (or short) rather than aborting.
    if flate2::read::ZlibDecoder::new(VOCAB_PAIRS_ZLIB)
        .read_to_end(&mut planes)
        .is_err()
    {
        planes.clear();
    }
    Box::leak(join_pairs(&planes).into_boxed_slice())
}

/// The length-prefixed tokens from their parts' ranks; stops at the first token that does
/// not join two earlier ones.
fn join_pairs(planes: &[u8]) -> Vec<u8> {
    let n = planes.len() / 6;
    let rank_at = |plane: usize, r: usize| {
        let byte = |j: usize| u32::from(planes[(plane + j) * n + r]);
        byte(0) | byte(1) << 8 | byte(2) << 16
    };
    let mut bytes = Vec::with_capacity(1_600_000);
    // Where each token's bytes start in `bytes`, and how many there are.
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n);
    for r in 0..n {
        let (left, right) = (rank_at(0, r), rank_at(3, r));
        let start = bytes.len() + 1;
        if right == SINGLE {
            let Ok(byte) = u8::try_from(left) else { break };
            bytes.extend([1, byte]);
            spans.push((start, 1));
            continue;
        }
        let part = |rank: u32| spans.get(rank as usize).copied();
        let (Some((l_at, l_len)), Some((r_at, r_len))) = (part(left), part(right)) else {
            break;
        };
        let Ok(len) = u8::try_from(l_len + r_len) else {
            break;
        };
        bytes.push(len);
        bytes.extend_from_within(l_at..l_at + l_len);
        bytes.extend_from_within(r_at..r_at + r_len);
        spans.push((start, usize::from(len)));
    }
    bytes
}

/// The pre-tokenizer of `o200k_base`, minus its one look-ahead branch (`\s+(?!\S)`),
/// which [`pieces`] applies by hand so the fast `regex` engine can be used.
const SPLIT: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// How a model's tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Exact, with `o200k_base`.
    O200k,
    /// The character-based estimate.
    Estimate,
}

impl Counter {
    /// The counter for a model, from the name sent upstream (`gpt-4o`, `openai/gpt-5`).
    pub fn for_model(model_name: &str) -> Self {
        let name = model_name.rsplit('/').next().unwrap_or(model_name);
        let openai_family = ["gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-3"]
            .iter()
            .any(|prefix| name.starts_with(prefix));
        if openai_family && !name.starts_with("gpt-oss") {
            Self::O200k
        } else {
            Self::Estimate
        }
    }

    /// Tokens in `text`. Exact counts of longer texts are remembered for the life of the
    /// process, so recounting a growing conversation (the REPL prompt shows its size)
    /// only tokenizes the new messages.
    pub fn count(self, text: &str) -> usize {
        match self {
            Self::O200k if text.len() >= MEMO_MIN_BYTES => {
                static MEMO: OnceLock<Mutex<HashMap<u64, usize>>> = OnceLock::new();
                let key = {
                    let mut hasher = std::collections::hash_map::DefaultHasher::new();
                    std::hash::Hash::hash(text, &mut hasher);
                    hasher.finish()
                };
                let memo = MEMO.get_or_init(Mutex::default);
                let known = memo
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&key)
                    .copied();
                known.unwrap_or_else(|| {
                    let n = count_o200k(text);
                    memo.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .insert(key, n);
                    n
                })
            }
            Self::O200k => count_o200k(text),
            Self::Estimate => estimate(text),
        }
    }
}

use loki_wire::token_estimate::estimate;

/// Exact `o200k_base` token count (no special tokens).
pub fn count_o200k(text: &str) -> usize {
    let bpe = Bpe::get();
    pieces(&bpe.split, text)
        .map(|piece| bpe.count_piece(piece.as_bytes()))
        .sum()
}

/// The pre-tokenizer's pieces of `text`.
fn pieces<'t>(split: &'t regex::Regex, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
    let mut at = 0;
    std::iter::from_fn(move || {
        let found = split.find_at(text, at)?;
        let mut end = found.end();
        let piece = found.as_str();
        // `\s+(?!\S)`: a run of spaces before a word leaves its last space to the word.
        let all_space = piece.chars().all(char::is_whitespace);
        let ends_in_newline = piece.ends_with(['\r', '\n']);
        let before_word = text[end..]
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace());
        if all_space && !ends_in_newline && before_word && piece.chars().nth(1).is_some() {
            let last = piece.chars().last().map_or(0, char::len_utf8);
            end -= last;
        }
        at = end;
        Some(&text[found.start()..end])
    })
}

/// FNV-1a: the vocabulary's keys are short byte strings, for which it beats SipHash.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

struct Bpe {
    ranks: HashMap<&'static [u8], u32, BuildHasherDefault<Fnv>>,
    split: regex::Regex,
}

impl Bpe {
    fn get() -> &'static Self {
        static BPE: OnceLock<Bpe> = OnceLock::new();
        BPE.get_or_init(|| {
            let mut ranks = HashMap::with_capacity_and_hasher(200_000, Default::default());
            let vocab = vocab();
            let mut at = 0;
            let mut rank = 0u32;
            while let Some(&len) = vocab.get(at) {
                let end = at + 1 + usize::from(len);
                let Some(token) = vocab.get(at + 1..end) else {
                    break;
                };
                ranks.insert(token, rank);
                rank += 1;
                at = end;
            }
            Self {
                ranks,
                // The pattern is a constant; its validity is checked by the tests.
                split: regex::Regex::new(SPLIT).unwrap_or_else(|_| {
                    regex::Regex::new(r"\S+|\s+").unwrap_or_else(|_| unreachable!())
                }),
            }
        })
    }

    /// Tokens in one piece: byte-pair merges by lowest rank until none apply.
    fn count_piece(&self, piece: &[u8]) -> usize {
        if self.ranks.contains_key(piece) {
            return 1;
        }
        // Boundaries of the current parts; merge the adjacent pair with the lowest rank.
        let mut bounds: Vec<usize> = (0..=piece.len()).collect();
        loop {
            let mut best: Option<(u32, usize)> = None;
            for i in 0..bounds.len().saturating_sub(2) {
                if let Some(&rank) = self.ranks.get(&piece[bounds[i]..bounds[i + 2]])
                    && best.is_none_or(|(r, _)| rank < r)
                {
                    best = Some((rank, i));
                }
            }
            match best {
                Some((_, i)) => {
                    bounds.remove(i + 1);
                }
                None => return bounds.len() - 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_is_rebuilt_whole() {
        // The fingerprint `scripts/tokenizer-vocab` prints: FNV-1a of the length-prefixed
        // tokens of o200k_base, 199,998 of them.
        let vocab = vocab();
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in vocab {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(format!("{hash:016x}"), "c7ba5f0328781837");
        assert_eq!(Bpe::get().ranks.len(), 199_998);
    }

    #[test]
    fn a_part_that_comes_later_ends_the_vocabulary() {
        // Three tokens: "a", "b", then one joining token 0 with token 5 (not yet built).
        let planes = [
            [b'a', b'b', 0],
            [0, 0, 0],
            [0, 0, 0],
            [0xFF, 0xFF, 5],
            [0xFF, 0xFF, 0],
            [0xFF, 0xFF, 0],
        ]
        .concat();
        assert_eq!(join_pairs(&planes), [1, b'a', 1, b'b']);
    }

    #[test]
    fn the_split_pattern_compiles() {
        regex::Regex::new(SPLIT).unwrap();
    }

    #[test]
    fn o200k_counts_match_tiktoken() {
        // Reference counts from tiktoken's o200k_base.
        let cases = [
            ("hello world", 2),
            ("Hello, world!", 4),
            ("", 0),
            ("    indented = True", 5),
            ("fn main() {\n    println!(\"hi\");\n}\n", 10),
            ("The quick brown fox jumps over the lazy dog.", 10),
            ("I'm sure they'll say we've done it", 7),
            ("1234567", 3),
            ("こんにちは世界", 2),
            ("tabs\tand  double  spaces", 6),
        ];
        let more = [
            ("HTTPServer and XMLHttpRequest", 5),
            ("DON'T STOP, I'LL GO", 7),
            ("line one\r\nline two\r\n\r\n", 6),
            ("price: $1,234.56 (≈ €1.100)", 15),
            ("emoji 🎉🎉 party 👩\u{200d}💻", 11),
            ("https://example.com/a/b?c=d&e=f", 11),
            ("    if x:\n        return  y  \n\n\n", 9),
            ("混合 text 和 English", 5),
            ("def f(a,b):\n\treturn a+b", 8),
            ("trailing spaces   ", 4),
            ("Straße naïve café", 5),
        ];
        for (text, expected) in more {
            assert_eq!(count_o200k(text), expected, "{text:?}");
        }
        for (text, expected) in cases {
            assert_eq!(count_o200k(text), expected, "{text:?}");
        }
    }

    #[test]
    fn pieces_follow_the_lookahead_rule() {
        let split = regex::Regex::new(SPLIT).unwrap();
        let got: Vec<_> = pieces(&split, "a   b  \n c ").collect();
        assert_eq!(got, ["a", "  ", " b", "  \n", " c", " "]);
    }

    #[test]
    fn models_pick_their_counter() {
        assert_eq!(Counter::for_model("gpt-4o-mini"), Counter::O200k);
        assert_eq!(Counter::for_model("openai/gpt-5"), Counter::O200k);
        assert_eq!(Counter::for_model("o3-mini"), Counter::O200k);
        assert_eq!(Counter::for_model("llama3.1:8b"), Counter::Estimate);
        assert_eq!(Counter::for_model("claude-sonnet-4"), Counter::Estimate);
    }

    #[test]
    fn estimates_scale_with_text() {
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("abcde"), 2);
        assert_eq!(estimate("日本"), 2);
    }
}
