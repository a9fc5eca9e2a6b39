//! Knowledge base benchmarks without a provider (synthetic text and random vectors):
//!
//! * indexing 10,000 chunks: splitting the documents, BM25, writing the index;
//! * opening a 100,000-chunk knowledge base (YAML) and loading its index on first search;
//! * hybrid search latency over it (vector scan + BM25 + fusion + reading the top texts);
//! * resident memory added by the loaded index.
//!
//! Usage: `rag_bench [index_chunks] [search_chunks] [dims]`. Prints one `key value` line
//! per measurement.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use loki::rag::search;
use loki::rag::store::{self, ChunkInfo, FileEntry, KnowledgeBase, NewIndex, RagMeta};
use loki_rag::splitter::{self, Language};
use loki_rag::vector;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Zipf-like words: a few very common, a long tail of rare ones.
fn words(rng: &mut fastrand::Rng, n: usize) -> String {
    let mut out = String::new();
    for _ in 0..n {
        let r = rng.f64();
        let id = (20_000f64.powf(r * r)) as u32;
        out.push_str(&format!("w{id} "));
    }
    out
}

fn chunks(n: usize, dims: usize, rng: &mut fastrand::Rng) -> (Vec<String>, Vec<f32>) {
    let texts: Vec<String> = (0..n).map(|_| words(rng, 120)).collect();
    let mut vectors = Vec::with_capacity(n * dims);
    for _ in 0..n {
        let mut v: Vec<f32> = (0..dims).map(|_| rng.f32() - 0.5).collect();
        vector::normalize(&mut v);
        vectors.extend(v);
    }
    (texts, vectors)
}

fn write(dir: &std::path::Path, name: &str, texts: &[String], vectors: Vec<f32>, dims: usize) {
    let files = 1 + texts.len() / 20;
    let meta = RagMeta {
        embedding_model: Some("bench:emb".into()),
        chunk_size: 200,
        top_k: 5,
        files: (0..files)
            .map(|i| FileEntry {
                path: format!("docs/file{i}.md"),
                hash: String::new(),
                chunks: 20,
            })
            .collect(),
        ..RagMeta::default()
    };
    let table = (0..texts.len())
        .map(|i| ChunkInfo {
            file: (i / 20) as u32,
            start_line: 1,
            end_line: 10,
            hash: i as u64,
            ..ChunkInfo::default()
        })
        .collect();
    store::write(
        dir,
        name,
        meta,
        NewIndex {
            chunks: table,
            texts: texts.iter().map(String::as_str).collect(),
            vectors,
            dims,
        },
    )
    .unwrap();
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("search") {
        let dir = std::path::PathBuf::from(&raw[1]);
        search_phase(&dir, raw[2].parse().unwrap(), raw[3].parse().unwrap());
        return;
    }
    let args: Vec<usize> = raw.iter().map(|a| a.parse().unwrap()).collect();
    let index_n = args.first().copied().unwrap_or(10_000);
    let search_n = args.get(1).copied().unwrap_or(100_000);
    let dims = args.get(2).copied().unwrap_or(384);
    let dir = std::env::temp_dir().join(format!("loki-rag-bench-{}", std::process::id()));
    let mut rng = fastrand::Rng::with_seed(42);

    // Indexing: documents of ~20 chunks each, split, then written with BM25.
    let docs: Vec<String> = (0..index_n / 20)
        .map(|_| {
            (0..20)
                .map(|i| format!("# Section {i}\n\n{}\n", words(&mut rng, 120)))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let t = Instant::now();
    let mut texts = Vec::new();
    for doc in &docs {
        texts.extend(
            splitter::split(doc, Language::Markdown, 200, 10)
                .into_iter()
                .map(|p| p.text),
        );
    }
    let split_ms = t.elapsed().as_secs_f64() * 1000.0;
    let (_, vectors) = chunks(texts.len(), dims, &mut rng);
    let t = Instant::now();
    write(&dir, "index", &texts, vectors, dims);
    let write_ms = t.elapsed().as_secs_f64() * 1000.0;
    println!("index_chunks {}", texts.len());
    println!("index_split_ms {split_ms:.1}");
    println!("index_write_ms {write_ms:.1}");
    println!("index_total_ms {:.1}", split_ms + write_ms);

    // A large knowledge base.
    let (texts, vectors) = chunks(search_n, dims, &mut rng);
    write(&dir, "big", &texts, vectors, dims);
    drop(texts);
    // Loading is measured in a fresh process, so memory freed by the writes above does
    // not hide what the index takes.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "search",
            &dir.to_string_lossy(),
            &search_n.to_string(),
            &dims.to_string(),
        ])
        .output()
        .unwrap();
    print!("{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

fn search_phase(dir: &std::path::Path, search_n: usize, dims: usize) {
    let mut rng = fastrand::Rng::with_seed(7);
    let before = rss_kib();
    let t = Instant::now();
    let kb = KnowledgeBase::open(dir, "big").unwrap();
    let open_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    let index = kb.index().unwrap();
    let load_ms = t.elapsed().as_secs_f64() * 1000.0;
    let loaded_kib = rss_kib().saturating_sub(before);
    println!("open_yaml_ms {open_ms:.2}");
    println!("first_search_load_ms {load_ms:.1}");
    println!("loaded_index_rss_mib {:.1}", loaded_kib as f64 / 1024.0);

    let mut times = Vec::new();
    // The two scans apart: the vector scan's inner loop is hand-vectorised (loki-rag's
    // kernels), the keyword scan's is not.
    let (mut vector_times, mut keyword_times) = (Vec::new(), Vec::new());
    for i in 0..220 {
        let mut q: Vec<f32> = (0..dims).map(|_| rng.f32() - 0.5).collect();
        vector::normalize(&mut q);
        let query = words(&mut rng, 8);
        let t = Instant::now();
        let v = index.vectors.search(&q, 20);
        let vector_ms = t.elapsed().as_secs_f64() * 1000.0;
        let k = index.bm25.search(&query, 20);
        let keyword_ms = t.elapsed().as_secs_f64() * 1000.0 - vector_ms;
        if i >= 20 {
            vector_times.push(vector_ms);
            keyword_times.push(keyword_ms);
        }
        let fused = search::fuse(&[&v, &k]);
        for (id, _) in fused.iter().take(5) {
            index.text(*id as usize).unwrap();
        }
        if i >= 20 {
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    times.sort_by(f64::total_cmp);
    vector_times.sort_by(f64::total_cmp);
    keyword_times.sort_by(f64::total_cmp);
    println!("search_chunks {search_n}");
    println!("search_dims {dims}");
    println!("search_p50_ms {:.2}", percentile(&times, 0.5));
    println!("search_p99_ms {:.2}", percentile(&times, 0.99));
    println!("search_vector_p50_ms {:.2}", percentile(&vector_times, 0.5));
    println!(
        "search_keyword_p50_ms {:.2}",
        percentile(&keyword_times, 0.5)
    );
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}
