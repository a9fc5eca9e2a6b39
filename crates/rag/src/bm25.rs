//! BM25 keyword search over chunks (k1 = 1.2, b = 0.75).
//!
//! Terms are lowercase runs of letters and digits; very common English words and
//! one-letter terms are dropped. Postings are flat arrays (chunk id, term frequency) so
//! the index is written and read in bulk, without per-posting parsing.

use std::collections::HashMap;

use super::index_bytes::{ByteReader, ByteWriter, IndexError};

const K1: f32 = 1.2;
const B: f32 = 0.75;

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "our", "so", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "you", "your",
];

/// The terms of `text`, in order.
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() > 1 && !STOPWORDS.contains(&w.as_str()))
}

/// A keyword index.
#[derive(Debug, Default, Clone)]
pub struct Bm25 {
    /// term → (first posting, number of postings).
    dictionary: HashMap<String, (u32, u32)>,
    posting_chunks: Vec<u32>,
    posting_counts: Vec<u16>,
    lengths: Vec<u32>,
    average_length: f32,
}

impl Bm25 {
    /// Indexes `texts`; chunk ids are their positions.
    /// (A `dyn` iterator, so that this is compiled here at full optimisation whatever the
    /// caller iterates.)
    pub fn build(texts: &mut dyn Iterator<Item = &str>) -> Self {
        let mut per_term: HashMap<String, Vec<(u32, u16)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (id, text) in texts.enumerate() {
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            let mut counts: HashMap<String, u16> = HashMap::new();
            let mut length = 0u32;
            for term in terms(text) {
                length += 1;
                let c = counts.entry(term).or_insert(0);
                *c = c.saturating_add(1);
            }
            lengths.push(length);
            for (term, count) in counts {
                per_term.entry(term).or_default().push((id, count));
            }
        }
        let mut sorted: Vec<(String, Vec<(u32, u16)>)> = per_term.into_iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut index = Self {
            lengths,
            ..Self::default()
        };
        for (term, mut postings) in sorted {
            postings.sort_unstable_by_key(|p| p.0);
            let start = u32::try_from(index.posting_chunks.len()).unwrap_or(u32::MAX);
            let len = u32::try_from(postings.len()).unwrap_or(u32::MAX);
            for (id, count) in postings {
                index.posting_chunks.push(id);
                index.posting_counts.push(count);
            }
            index.dictionary.insert(term, (start, len));
        }
        index.update_average();
        index
    }

    fn update_average(&mut self) {
        let total: u64 = self.lengths.iter().map(|l| u64::from(*l)).sum();
        self.average_length = if self.lengths.is_empty() {
            0.0
        } else {
            (total as f32 / self.lengths.len() as f32).max(1.0)
        };
    }

    /// Number of indexed chunks.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// The best `limit` chunks for `query`, best first, with their scores.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(u32, f32)> {
        let n = self.lengths.len();
        if n == 0 || limit == 0 {
            return Vec::new();
        }
        let mut query_terms: Vec<String> = terms(query).collect();
        query_terms.sort();
        query_terms.dedup();
        let mut scores = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for term in &query_terms {
            let Some(&(start, len)) = self.dictionary.get(term) else {
                continue;
            };
            let df = len as f32;
            let idf = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
            let (start, end) = (start as usize, (start + len) as usize);
            let (Some(ids), Some(counts)) = (
                self.posting_chunks.get(start..end),
                self.posting_counts.get(start..end),
            ) else {
                continue;
            };
            for (&id, &count) in ids.iter().zip(counts) {
                let Some(&length) = self.lengths.get(id as usize) else {
                    continue;
                };
                let tf = f32::from(count);
                let norm = K1 * (1.0 - B + B * length as f32 / self.average_length);
                let slot = &mut scores[id as usize];
                if *slot == 0.0 {
                    touched.push(id);
                }
                *slot += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut hits: Vec<(u32, f32)> = touched
            .into_iter()
            .map(|id| (id, scores[id as usize]))
            .collect();
        super::vector::top_k(&mut hits, limit);
        hits
    }

    /// Appends the index to `out`.
    pub fn write(&self, out: &mut ByteWriter) {
        let mut terms: Vec<(&String, &(u32, u32))> = self.dictionary.iter().collect();
        terms.sort_by(|a, b| a.0.cmp(b.0));
        out.u32(u32::try_from(terms.len()).unwrap_or(u32::MAX));
        for (term, (start, len)) in terms {
            out.str(term);
            out.u32(*start);
            out.u32(*len);
        }
        out.u32(u32::try_from(self.posting_chunks.len()).unwrap_or(u32::MAX));
        out.u32s(&self.posting_chunks);
        out.u16s(&self.posting_counts);
        out.u32(u32::try_from(self.lengths.len()).unwrap_or(u32::MAX));
        out.u32s(&self.lengths);
    }

    /// Reads an index written by [`Bm25::write`].
    pub fn read(input: &mut ByteReader<'_>) -> Result<Self, IndexError> {
        let terms = input.u32()? as usize;
        let mut dictionary = HashMap::with_capacity(terms);
        for _ in 0..terms {
            let term = input.str()?;
            let start = input.u32()?;
            let len = input.u32()?;
            dictionary.insert(term, (start, len));
        }
        let postings = input.u32()? as usize;
        let posting_chunks = input.u32s(postings)?;
        let posting_counts = input.u16s(postings)?;
        let n = input.u32()? as usize;
        let lengths = input.u32s(n)?;
        let mut index = Self {
            dictionary,
            posting_chunks,
            posting_counts,
            lengths,
            average_length: 0.0,
        };
        index.update_average();
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_rare_terms_and_round_trips() {
        let texts = [
            "the cat sat on the mat",
            "error E4071 means the disk is full",
            "cats and dogs and cats",
        ];
        let index = Bm25::build(&mut texts.iter().copied());
        let hits = index.search("what is E4071?", 3);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 1);
        let hits = index.search("cats", 3);
        assert_eq!(hits[0].0, 2);
        let mut w = ByteWriter::default();
        index.write(&mut w);
        let bytes = w.into_inner();
        let back = Bm25::read(&mut ByteReader::new(&bytes)).unwrap();
        assert_eq!(back.search("e4071", 1), index.search("e4071", 1));
        assert!(Bm25::read(&mut ByteReader::new(&bytes[..5])).is_err());
    }
}
