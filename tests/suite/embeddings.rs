//! Embeddings and reranking through the provider trait, against the fake server speaking
//! each API (OpenAI, Cohere v2, Gemini, Voyage), with batching by `max_batch_size`.

use serde_json::json;

use loki::client::ProviderRegistry;
use loki::client::embed::{Purpose, Ranked, embed_all};
use loki::config::Env;
use loki::config::clients::ModelKind;

use crate::common::TestEnv;
use crate::common::fake_llm::{Reply, cohere};

fn registry(yaml: &str) -> ProviderRegistry {
    let loaded =
        loki::config::load::parse(yaml, std::path::Path::new("config.yaml"), &Env::default())
            .unwrap();
    ProviderRegistry::new(&loaded.config, &Env::default(), None)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("text {i}")).collect()
}

#[test]
fn openai_embeddings_are_batched_by_max_batch_size() {
    let env = TestEnv::new();
    let reg = registry(&format!(
        "clients:\n  - type: openai-compatible\n    name: local\n    api_base: {}\n    api_key: k\n    models:\n      - name: emb\n        type: embedding\n        max_batch_size: 2\n",
        env.server.base_url()
    ));
    for batch in [vec![0, 1], vec![2, 3], vec![4]] {
        let data: Vec<_> = batch
            .iter()
            .enumerate()
            .rev() // out of order on purpose: `index` decides
            .map(|(i, n)| json!({"object": "embedding", "index": i, "embedding": [*n as f32, 1.0]}))
            .collect();
        env.server
            .push(Reply::json(200, json!({"object": "list", "data": data})));
    }
    let model = reg.resolve("local:emb", ModelKind::Embedding).unwrap();
    let provider = reg.provider("local").unwrap();
    let vectors = runtime()
        .block_on(embed_all(
            provider.as_ref(),
            &model,
            &texts(5),
            Purpose::Document,
        ))
        .unwrap();
    let firsts: Vec<f32> = vectors.iter().map(|v| v[0]).collect();
    assert_eq!(firsts, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    let requests = env.server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].path_only(), "/v1/embeddings");
    assert_eq!(requests[0].header("authorization"), Some("Bearer k"));
    assert_eq!(requests[2].json()["input"], json!(["text 4"]));
}

#[test]
fn cohere_embeds_and_reranks() {
    let env = TestEnv::new();
    let reg = registry(&format!(
        "clients:\n  - type: cohere\n    api_base: {}/v2\n    api_key: co\n    models:\n      - name: embed-v4.0\n        type: embedding\n      - name: rerank-v3.5\n        type: reranker\n",
        env.server.root_url()
    ));
    env.server
        .push(cohere::embed_json(&[vec![0.1, 0.2], vec![0.3, 0.4]]));
    env.server.push(cohere::rerank_json(&[(1, 0.9), (0, 0.2)]));
    let provider = reg.provider("cohere").unwrap();
    let rt = runtime();
    let emb = reg
        .resolve("cohere:embed-v4.0", ModelKind::Embedding)
        .unwrap();
    let vectors = rt
        .block_on(embed_all(
            provider.as_ref(),
            &emb,
            &texts(2),
            Purpose::Query,
        ))
        .unwrap();
    assert_eq!(vectors, vec![vec![0.1, 0.2], vec![0.3, 0.4]]);
    let body = env.server.requests()[0].json();
    assert_eq!(env.server.requests()[0].path_only(), "/v2/embed");
    assert_eq!(body["input_type"], "search_query");
    assert_eq!(body["embedding_types"], json!(["float"]));
    let rr = reg
        .resolve("cohere:rerank-v3.5", ModelKind::Reranker)
        .unwrap();
    let ranked = rt
        .block_on(provider.rerank(&rr, "q", &texts(2), 2))
        .unwrap();
    assert_eq!(
        ranked[0],
        Ranked {
            index: 1,
            score: 0.9
        }
    );
    let body = env.server.last_request().json();
    assert_eq!(body["top_n"], 2);
    assert_eq!(body["query"], "q");
}

#[test]
fn gemini_and_voyage_shapes_and_unsupported_clients() {
    let env = TestEnv::new();
    let reg = registry(&format!(
        "clients:\n  - type: gemini\n    api_base: {root}/v1beta\n    api_key: g\n    models:\n      - name: gemini-embedding-001\n        type: embedding\n  - type: openai-compatible\n    name: voyageai\n    api_base: {root}/v1\n    api_key: v\n    models:\n      - name: rerank-2.5\n        type: reranker\n  - type: claude\n    api_base: {root}/v1\n    api_key: c\n    models:\n      - name: emb\n        type: embedding\n",
        root = env.server.root_url()
    ));
    env.server.push(Reply::json(
        200,
        json!({"embeddings": [{"values": [1.0]}, {"values": [2.0]}]}),
    ));
    env.server.push(Reply::json(
        200,
        json!({"object": "list", "data": [{"index": 0, "relevance_score": 0.5}]}),
    ));
    let rt = runtime();
    let gemini = reg.provider("gemini").unwrap();
    let emb = reg
        .resolve("gemini:gemini-embedding-001", ModelKind::Embedding)
        .unwrap();
    let vectors = rt
        .block_on(embed_all(
            gemini.as_ref(),
            &emb,
            &texts(2),
            Purpose::Document,
        ))
        .unwrap();
    assert_eq!(vectors, vec![vec![1.0], vec![2.0]]);
    let request = env.server.requests()[0].clone();
    assert_eq!(
        request.path_only(),
        "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    );
    assert_eq!(request.header("x-goog-api-key"), Some("g"));
    assert_eq!(
        request.json()["requests"][0]["taskType"],
        "RETRIEVAL_DOCUMENT"
    );

    let voyage = reg.provider("voyageai").unwrap();
    let rr = reg
        .resolve("voyageai:rerank-2.5", ModelKind::Reranker)
        .unwrap();
    let ranked = rt.block_on(voyage.rerank(&rr, "q", &texts(1), 1)).unwrap();
    assert_eq!(
        ranked,
        vec![Ranked {
            index: 0,
            score: 0.5
        }]
    );
    assert_eq!(env.server.last_request().json()["top_k"], 1);

    let claude = reg.provider("claude").unwrap();
    let emb = reg.resolve("claude:emb", ModelKind::Embedding).unwrap();
    let err = rt
        .block_on(embed_all(
            claude.as_ref(),
            &emb,
            &texts(1),
            Purpose::Document,
        ))
        .unwrap_err()
        .to_string();
    assert!(err.contains("offers no embeddings"), "{err}");
}
