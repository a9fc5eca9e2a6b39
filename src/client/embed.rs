//! Embeddings and reranking (used by RAG): the request and response shapes of each API,
//! and batching by the model's `max_batch_size`.

use serde_json::{Value, json};

use super::wire::Outgoing;
use super::{Model, Provider, ProviderError};

/// Texts per request when the model does not say (Cohere's limit, the lowest common one).
pub const DEFAULT_BATCH: usize = 96;

/// What the vectors are for (some APIs embed queries and documents differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Text to be searched.
    Document,
    /// A search query.
    Query,
}

/// One rerank result: the document's position in the input and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// Index into the documents given.
    pub index: usize,
    /// Relevance, higher is better.
    pub score: f64,
}

/// The wire format of an embeddings/rerank API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `/embeddings` with `input`, `/rerank` with `top_n` (OpenAI, Jina, most vendors).
    OpenAi,
    /// Like OpenAI, but rerank takes `top_k` (Voyage AI).
    Voyage,
    /// Cohere v2 `/embed` and `/rerank`.
    Cohere,
    /// Gemini `:batchEmbedContents`.
    Gemini,
}

/// An embeddings or rerank answer that is not in the API's shape; each quotes its start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedResponseError {
    /// No vectors where the dialect puts them.
    #[error("unexpected embeddings response: {0}")]
    Embeddings(String),
    /// No `results` (or `data`) list.
    #[error("unexpected rerank response: {0}")]
    Rerank(String),
}

/// Embeds `texts` with `provider`, in batches of the model's `max_batch_size`.
pub async fn embed_all(
    provider: &dyn Provider,
    model: &Model,
    texts: &[String],
    purpose: Purpose,
) -> Result<Vec<Vec<f32>>, ProviderError> {
    let batch = model
        .config
        .max_batch_size
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_BATCH);
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(batch) {
        let vectors = provider.embed(model, chunk, purpose).await?;
        if vectors.len() != chunk.len() {
            return Err(ProviderError::Protocol {
                client: provider.name().to_string(),
                message: format!(
                    "asked for {} embeddings, got {}",
                    chunk.len(),
                    vectors.len()
                ),
            });
        }
        out.extend(vectors);
    }
    Ok(out)
}

/// The embeddings request for `dialect`; `url` is the API base (or the model URL for
/// Gemini).
pub fn embed_request(
    dialect: Dialect,
    url: &str,
    model: &Model,
    texts: &[String],
    purpose: Purpose,
) -> Outgoing {
    match dialect {
        Dialect::OpenAi | Dialect::Voyage => Outgoing::new(
            format!("{url}/embeddings"),
            json!({"model": model.real_name(), "input": texts}),
        ),
        Dialect::Cohere => Outgoing::new(
            format!("{url}/embed"),
            json!({
                "model": model.real_name(),
                "texts": texts,
                "input_type": if purpose == Purpose::Query { "search_query" } else { "search_document" },
                "embedding_types": ["float"],
            }),
        ),
        Dialect::Gemini => {
            let task = if purpose == Purpose::Query {
                "RETRIEVAL_QUERY"
            } else {
                "RETRIEVAL_DOCUMENT"
            };
            let requests: Vec<Value> = texts
                .iter()
                .map(|t| json!({"model": format!("models/{}", model.real_name()), "content": {"parts": [{"text": t}]}, "taskType": task}))
                .collect();
            Outgoing::new(
                format!("{url}/models/{}:batchEmbedContents", model.real_name()),
                json!({"requests": requests}),
            )
        }
    }
}

/// Reads the vectors out of an embeddings response.
pub fn parse_embeddings(
    dialect: Dialect,
    value: &Value,
) -> Result<Vec<Vec<f32>>, EmbedResponseError> {
    let floats = |v: &Value| -> Option<Vec<f32>> {
        v.as_array()?
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect()
    };
    let bad = || EmbedResponseError::Embeddings(preview(value));
    match dialect {
        Dialect::OpenAi | Dialect::Voyage => {
            let mut items: Vec<(u64, Vec<f32>)> = value["data"]
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let index = d["index"].as_u64().unwrap_or(i as u64);
                    floats(&d["embedding"]).map(|v| (index, v)).ok_or_else(bad)
                })
                .collect::<Result<_, _>>()?;
            items.sort_by_key(|(i, _)| *i);
            Ok(items.into_iter().map(|(_, v)| v).collect())
        }
        Dialect::Cohere => value["embeddings"]["float"]
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|v| floats(v).ok_or_else(bad))
            .collect(),
        Dialect::Gemini => value["embeddings"]
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|v| floats(&v["values"]).ok_or_else(bad))
            .collect(),
    }
}

/// The rerank request for `dialect` (not Gemini, which has none).
pub fn rerank_request(
    dialect: Dialect,
    url: &str,
    model: &Model,
    query: &str,
    documents: &[String],
    top_n: usize,
) -> Outgoing {
    let top = if dialect == Dialect::Voyage {
        "top_k"
    } else {
        "top_n"
    };
    let mut body = json!({"model": model.real_name(), "query": query, "documents": documents});
    body[top] = json!(top_n);
    Outgoing::new(format!("{url}/rerank"), body)
}

/// Reads `results` (`data` for Voyage) of a rerank response, best first.
pub fn parse_rerank(value: &Value) -> Result<Vec<Ranked>, EmbedResponseError> {
    let items = value["results"]
        .as_array()
        .or_else(|| value["data"].as_array())
        .ok_or_else(|| EmbedResponseError::Rerank(preview(value)))?;
    let mut out: Vec<Ranked> = items
        .iter()
        .filter_map(|r| {
            Some(Ranked {
                index: usize::try_from(r["index"].as_u64()?).ok()?,
                score: r["relevance_score"].as_f64()?,
            })
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(out)
}

fn preview(value: &Value) -> String {
    let text = value.to_string();
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_per_dialect() {
        let model = Model::named("c", "emb");
        let texts = vec!["a".to_string(), "b".to_string()];
        let r = embed_request(
            Dialect::Cohere,
            "https://x/v2",
            &model,
            &texts,
            Purpose::Query,
        );
        assert_eq!(r.url, "https://x/v2/embed");
        assert_eq!(r.body["input_type"], "search_query");
        let r = embed_request(
            Dialect::Gemini,
            "https://g/v1beta",
            &model,
            &texts,
            Purpose::Document,
        );
        assert_eq!(r.url, "https://g/v1beta/models/emb:batchEmbedContents");
        assert_eq!(r.body["requests"][1]["content"]["parts"][0]["text"], "b");
        // OpenAI data may come out of order; index decides.
        let v =
            json!({"data": [{"index": 1, "embedding": [2.0]}, {"index": 0, "embedding": [1.0]}]});
        assert_eq!(
            parse_embeddings(Dialect::OpenAi, &v).unwrap(),
            vec![vec![1.0], vec![2.0]]
        );
        let v = json!({"embeddings": [{"values": [0.5]}]});
        assert_eq!(
            parse_embeddings(Dialect::Gemini, &v).unwrap(),
            vec![vec![0.5]]
        );
        assert!(parse_embeddings(Dialect::Cohere, &json!({})).is_err());
        let r = rerank_request(Dialect::Voyage, "https://v/v1", &model, "q", &texts, 1);
        assert_eq!(r.body["top_k"], 1);
        let ranked = parse_rerank(&json!({"results": [{"index": 0, "relevance_score": 0.1}, {"index": 1, "relevance_score": 0.9}]})).unwrap();
        assert_eq!(
            ranked[0],
            Ranked {
                index: 1,
                score: 0.9
            }
        );
    }
}
