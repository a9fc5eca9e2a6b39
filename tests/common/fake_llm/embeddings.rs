//! Deterministic embeddings and reranking for RAG tests.
//!
//! [`vector_for`] hashes every lowercase word of a text into one of [`DIMS`] buckets (a
//! bag of words), so texts that share words are similar and the same text always gets the
//! same vector. [`install`] answers `/v1/embeddings` (OpenAI shape) with such vectors and
//! `/v1/rerank` with [`rerank_scores`]: documents containing `[priority]` first, then the
//! order they were given in.

use serde_json::json;

use super::{FakeLlm, Recorded, Reply};

/// Vector dimensions.
pub const DIMS: usize = 64;

fn fnv(word: &str) -> u64 {
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in word.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x100000001b3);
    }
    hash
}

/// The lowercase words of `text`.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The (unnormalised) vector of `text`.
pub fn vector_for(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMS];
    for word in words(text) {
        v[(fnv(&word) % DIMS as u64) as usize] += 1.0;
    }
    v
}

/// Cosine similarity.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// An OpenAI embeddings response for the request's `input`.
pub fn embeddings_reply(request: &Recorded) -> Reply {
    let body = request.json();
    let inputs: Vec<String> = match &body["input"] {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap_or_default().to_string())
            .collect(),
        _ => Vec::new(),
    };
    let data: Vec<_> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": vector_for(text)}))
        .collect();
    Reply::json(
        200,
        json!({"object": "list", "data": data, "model": body["model"]}),
    )
}

/// The fake reranker's scores: `[priority]` documents 1.0, others by position.
pub fn rerank_scores(documents: &[String]) -> Vec<(usize, f64)> {
    let mut scored: Vec<(usize, f64)> = documents
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let score = if d.contains("[priority]") {
                1.0
            } else {
                0.5 / (i as f64 + 1.0)
            };
            (i, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored
}

/// A rerank response (`results` with `index` and `relevance_score`, cut to `top_n`).
pub fn rerank_reply(request: &Recorded) -> Reply {
    let body = request.json();
    let documents: Vec<String> = body["documents"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|x| x.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    let top_n = body["top_n"].as_u64().unwrap_or(documents.len() as u64) as usize;
    let results: Vec<_> = rerank_scores(&documents)
        .into_iter()
        .take(top_n)
        .map(|(index, score)| json!({"index": index, "relevance_score": score}))
        .collect();
    Reply::json(200, json!({"results": results}))
}

/// Serves deterministic embeddings and reranking under `/v1`.
pub fn install(server: &FakeLlm) {
    server.respond_for("/v1/embeddings", embeddings_reply);
    server.respond_for("/v1/rerank", rerank_reply);
}
