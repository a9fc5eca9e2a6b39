//! Knowledge bases (RAG): building from files, code, URLs and loaders, hybrid search with
//! fusion and reranking, incremental rebuilds, and what survives failures. The fake
//! provider serves deterministic bag-of-words embeddings and a reranker
//! (`fake_llm::embeddings`).

use std::time::Duration;

use serde_json::Value;

use crate::common::fake_llm::{Reply, embeddings};
use crate::common::{TestEnv, stderr};

fn config(base_url: &str, extra: &str) -> String {
    format!(
        r#"model: fake:gpt-4o-mini
{extra}
clients:
  - type: openai-compatible
    name: fake
    api_base: {base_url}
    api_key: test-key
    models:
      - name: gpt-4o-mini
      - name: emb
        type: embedding
        max_batch_size: 4
      - name: rr
        type: reranker
    extra:
      max_retries: 1
      retry_base_delay_ms: 10
"#
    )
}

/// A test environment with the fake embedding model as `rag_embedding_model` and `extra`
/// config lines.
fn rag_env(extra: &str) -> TestEnv {
    let env = TestEnv::bare();
    env.write_config(&config(
        &env.server.base_url(),
        &format!("rag_embedding_model: fake:emb\n{extra}"),
    ));
    embeddings::install(&env.server);
    env
}

fn chat_requests(env: &TestEnv) -> Vec<Value> {
    env.server
        .requests()
        .iter()
        .filter(|r| r.path_only() == "/v1/chat/completions")
        .map(crate::common::fake_llm::Recorded::json)
        .collect()
}

/// The user message of the last chat request.
fn prompt(env: &TestEnv) -> String {
    let requests = chat_requests(env);
    let last = requests.last().expect("a chat request");
    let messages = last["messages"].as_array().expect("messages");
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .expect("user text")
        .to_string()
}

/// Texts sent to the embeddings endpoint, per request.
fn embedding_batches(env: &TestEnv) -> Vec<Vec<String>> {
    env.server
        .requests()
        .iter()
        .filter(|r| r.path_only() == "/v1/embeddings")
        .map(|r| {
            r.json()["input"]
                .as_array()
                .expect("input array")
                .iter()
                .map(|t| t.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .collect()
}

/// `[Source: …]` lines of a prompt, in order.
fn sources(prompt: &str) -> Vec<String> {
    prompt
        .lines()
        .filter_map(|l| l.strip_prefix("[Source: "))
        .map(|l| l.trim_end_matches(']').to_string())
        .collect()
}

fn para(words: &str) -> String {
    format!(
        "{words} {}",
        "This sentence pads the section so it fills a chunk of its own. ".repeat(2)
    )
}

fn write_docs(env: &TestEnv) {
    env.write(
        "docs/guide.md",
        format!(
            "# Install\n\n{}\n\n# Frobnicator settings\n\n{}\n\n# Troubleshooting\n\n{}\n",
            para("Run the installer and wait for it."),
            para("The frobnicator is configured in frob.toml; set speed to 3."),
            para("Restart the machine when it hangs."),
        ),
    );
    env.write(
        "src/lib.rs",
        "fn alpha() {\n    println!(\"alpha alpha alpha alpha alpha alpha alpha alpha\");\n    println!(\"beta beta beta beta beta beta beta beta beta beta\");\n    println!(\"gamma gamma gamma gamma gamma gamma gamma gamma\");\n}\n\nfn frobnicate_speed() -> u32 {\n    // returns the default speed of the machine in rotations\n    3\n}\n",
    );
}

#[test]
fn builds_from_markdown_code_and_a_url_and_sends_the_matching_chunks() {
    let env = rag_env("rag_chunk_size: 80\nrag_chunk_overlap: 0\nrag_top_k: 2");
    write_docs(&env);
    env.server.respond_for("/site/page.html", |_| {
        Reply::raw(
            200,
            "text/html",
            "<html><body><h1>Site</h1><p>The frobnicator page talks about warp drives.</p></body></html>",
        )
    });
    let url = format!("{}/site/page.html", env.server.root_url());
    let out = env
        .loki()
        .args(["--rag", "kb", "--rag-docs", "docs;src", "--rag-docs", &url])
        .args(["how is the frobnicator configured?"])
        .assert()
        .success();
    let err = stderr(&out);
    assert!(err.contains("✓ Saved RAG to '"), "{err}");
    assert!(err.contains("hybrid search"), "{err}");

    // Markdown split at headings, code at functions; batches of at most 4.
    let batches = embedding_batches(&env);
    let documents: Vec<&String> = batches[..batches.len() - 1].iter().flatten().collect();
    assert!(batches.iter().all(|b| b.len() <= 4), "{batches:?}");
    assert!(
        documents
            .iter()
            .any(|t| t.starts_with("# Frobnicator settings"))
    );
    assert!(
        documents
            .iter()
            .any(|t| t.starts_with("fn frobnicate_speed()"))
    );
    assert!(documents.iter().any(|t| t.contains("warp drives")));
    // The last request embeds the question.
    assert_eq!(
        batches.last().unwrap(),
        &vec!["how is the frobnicator configured?".to_string()]
    );

    let text = prompt(&env);
    let used = sources(&text);
    assert_eq!(used.len(), 2, "{text}");
    assert!(used[0].ends_with("docs/guide.md:5-7"), "{used:?}");
    assert!(used[1].starts_with(&format!("{url}:")), "{used:?}");
    assert!(text.contains("frob.toml") && text.contains("warp drives"));
    assert!(!text.contains("Restart the machine"), "{text}");
    assert!(text.contains("how is the frobnicator configured?"));

    env.loki()
        .arg("--list-rags")
        .assert()
        .success()
        .stdout("kb\n");
}

#[test]
fn hybrid_fusion_finds_a_keyword_that_vector_search_alone_misses() {
    let env = rag_env("rag_top_k: 1");
    // Shares many (stop)words with the question, but no keyword.
    let decoy = "What is it and how does it go? It is what it is and how it does it.";
    let answer = "The code zq4071 signals a failed disk controller.";
    env.write("kb/decoy.txt", decoy);
    env.write("kb/answer.txt", answer);
    env.write("kb/other.txt", "Bananas grow in tropical climates.");
    let question = "what is zq4071 and how does it work";
    // The premise: by vectors alone, the decoy is the best match.
    let q = embeddings::vector_for(question);
    assert!(
        embeddings::cosine(&q, &embeddings::vector_for(decoy))
            > embeddings::cosine(&q, &embeddings::vector_for(answer))
    );
    env.loki()
        .args(["--rag", "kw", "--rag-docs", "kb", question])
        .assert()
        .success();
    let used = sources(&prompt(&env));
    assert_eq!(used.len(), 1);
    assert!(used[0].ends_with("kb/answer.txt:1"), "{used:?}");
}

#[test]
fn a_reranker_changes_the_order() {
    let env = rag_env("rag_top_k: 2");
    env.write(
        "kb/a.txt",
        "Solar panels convert sunlight into electricity for homes.",
    );
    env.write(
        "kb/b.txt",
        "Solar power: panels on homes, sunlight, electricity, solar.",
    );
    env.write(
        "kb/c.txt",
        "[priority] Wind turbines also make electricity.",
    );
    env.loki()
        .args([
            "--rag",
            "energy",
            "--rag-docs",
            "kb",
            "solar panels electricity",
        ])
        .assert()
        .success();
    let plain = sources(&prompt(&env));
    assert!(!plain[0].ends_with("c.txt:1"), "{plain:?}");

    env.write_config(&config(
        &env.server.base_url(),
        "rag_embedding_model: fake:emb\nrag_reranker_model: fake:rr\nrag_top_k: 2",
    ));
    env.loki()
        .args(["--rag", "energy", "solar panels electricity"])
        .assert()
        .success();
    let reranked = sources(&prompt(&env));
    assert!(reranked[0].ends_with("c.txt:1"), "{reranked:?}");
    assert_ne!(plain, reranked);
    let rerank = env
        .server
        .requests()
        .into_iter()
        .find(|r| r.path_only() == "/v1/rerank")
        .expect("a rerank request");
    assert_eq!(rerank.json()["top_n"], 2);
    assert_eq!(rerank.json()["query"], "solar panels electricity");
}

#[test]
fn custom_loaders_run_for_rag_and_for_dash_f() {
    let env = rag_env(
        "document_loaders:\n  shout: 'sh -c \"tr a-z A-Z < $1\"'\n  pdf: 'loki-no-such-tool $1 -'",
    );
    env.write("notes/a.shout", "quiet words about llamas\n");
    env.loki()
        .args(["--rag", "loud", "--rag-docs", "notes", "llamas"])
        .assert()
        .success();
    assert!(prompt(&env).contains("QUIET WORDS ABOUT LLAMAS"));

    // `-f` uses the loaders too (it used to send the raw text).
    env.write("b.shout", "hello there\n");
    env.loki()
        .args(["-f", "b.shout", "what?"])
        .assert()
        .success();
    assert!(prompt(&env).contains("HELLO THERE"), "{}", prompt(&env));
    env.loki()
        .args(["-f", "shout:b.shout", "again"])
        .assert()
        .success();
    assert!(prompt(&env).contains("HELLO THERE"));

    // A loader whose program is missing says so.
    env.write("doc.pdf", b"%PDF-1.4\x00binary");
    let out = env
        .loki()
        .args(["-f", "doc.pdf", "read"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("loki-no-such-tool") && err.contains("not found"),
        "{err}"
    );
}

#[test]
fn incremental_rebuild_embeds_only_the_changed_file() {
    let env = rag_env("rag_chunk_size: 40\nrag_chunk_overlap: 0");
    write_docs(&env);
    env.write(
        "docs/other.md",
        format!("# Other\n\n{}\n", para("Other things entirely.")),
    );
    env.loki()
        .args(["--rag", "inc", "--rag-docs", "docs"])
        .assert()
        .success();
    let first: usize = embedding_batches(&env).iter().map(Vec::len).sum();
    assert!(first >= 4, "{first}");
    env.server.clear_requests();

    // Unchanged: one chunk is embedded, to notice a model whose vectors changed size.
    let out = env
        .loki()
        .args(["--rag", "inc", "--rebuild-rag"])
        .assert()
        .success();
    let probe: usize = embedding_batches(&env).iter().map(Vec::len).sum();
    assert_eq!(probe, 1);
    env.server.clear_requests();
    assert!(stderr(&out).contains(&format!("{first} reused, 0 added, 0 removed")));

    // One file edited: only its chunks are embedded.
    env.write(
        "docs/other.md",
        format!("# Other\n\n{}\n", para("Completely new words now.")),
    );
    let out = env
        .loki()
        .args(["--rag", "inc", "--rebuild-rag"])
        .assert()
        .success();
    let embedded: Vec<String> = embedding_batches(&env).into_iter().flatten().collect();
    assert_eq!(embedded.len(), 1, "{embedded:?}");
    assert!(embedded[0].contains("Completely new words"));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{} reused, 1 added, 1 removed", first - 1)),
        "{err}"
    );
    // A question still works and finds the new text.
    env.loki()
        .args(["--rag", "inc", "completely new words"])
        .assert()
        .success();
    assert!(prompt(&env).contains("Completely new words"));
}

#[test]
fn a_killed_build_leaves_the_old_index_usable() {
    let env = rag_env("");
    env.write("kb/a.txt", "The answer is forty-two.");
    env.loki()
        .args(["--rag", "safe", "--rag-docs", "kb"])
        .assert()
        .success();
    // The next build hangs while embedding; kill it there.
    env.write("kb/b.txt", "Something new to embed.");
    env.server.push_for(
        "/v1/embeddings",
        Reply::json(200, serde_json::json!({})).hang_after(0),
    );
    env.server.clear_requests();
    let mut child = env
        .loki_std()
        .args(["--rag", "safe", "--rebuild-rag"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    env.server.wait_for_requests(1, Duration::from_secs(20));
    child.kill().unwrap();
    child.wait().unwrap();

    env.loki()
        .args(["--rag", "safe", "what is the answer?"])
        .assert()
        .success();
    assert!(prompt(&env).contains("forty-two"));
    assert!(!prompt(&env).contains("Something new"));
}

#[test]
fn without_an_embedding_model_search_is_keyword_only() {
    let env = TestEnv::bare();
    env.write_config(&config(&env.server.base_url(), "rag_top_k: 1"));
    env.write("kb/a.txt", "Llamas hum when they are content.");
    env.write("kb/b.txt", "Penguins cannot fly.");
    let out = env
        .loki()
        .args(["--rag", "bm", "--rag-docs", "kb", "do llamas hum?"])
        .assert()
        .success();
    assert!(stderr(&out).contains("keyword search only (BM25)"));
    assert!(embedding_batches(&env).is_empty());
    assert!(sources(&prompt(&env))[0].ends_with("kb/a.txt:1"));
}

#[test]
fn an_unreachable_embedding_model_gives_a_keyword_index_that_a_rebuild_upgrades() {
    let env = TestEnv::bare();
    let dead = "http://127.0.0.1:9/v1";
    env.write_config(&format!(
        "{}\n  - type: openai-compatible\n    name: gone\n    api_base: {dead}\n    api_key: k\n    models:\n      - name: emb\n        type: embedding\n    extra:\n      max_retries: 0\n",
        config(&env.server.base_url(), "rag_embedding_model: gone:emb").trim_end()
    ));
    env.write("kb/a.txt", "Llamas hum when they are content.");
    let out = env
        .loki()
        .args(["--rag", "up", "--rag-docs", "kb"])
        .assert()
        .success();
    let err = stderr(&out);
    assert!(
        err.contains("gone:emb") && err.contains("keyword-only"),
        "{err}"
    );
    assert!(err.contains("keyword search only (BM25)"), "{err}");
    env.loki()
        .args(["--rag", "up", "llamas"])
        .assert()
        .success();
    assert!(prompt(&env).contains("Llamas hum"));

    // With a reachable model configured, a rebuild makes it hybrid.
    env.write_config(&config(
        &env.server.base_url(),
        "rag_embedding_model: fake:emb",
    ));
    embeddings::install(&env.server);
    let out = env
        .loki()
        .args(["--rag", "up", "--rebuild-rag"])
        .assert()
        .success();
    assert!(stderr(&out).contains("hybrid search"), "{}", stderr(&out));
    let yaml = std::fs::read_to_string(env.config_dir().join("rags/up.yaml")).unwrap();
    assert!(yaml.contains("embedding_model: fake:emb"), "{yaml}");
}

#[test]
fn failures_are_clear_and_keep_the_previous_index() {
    let env = rag_env("");
    env.write("kb/a.txt", "The answer is forty-two.");
    env.loki()
        .args(["--rag", "keep", "--rag-docs", "kb"])
        .assert()
        .success();

    // A document that cannot be loaded.
    let out = env
        .loki()
        .args(["--rag", "keep", "--rag-docs", "kb;missing.md"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("missing.md") && err.contains("was not changed"),
        "{err}"
    );

    // An embedding model that answers with an error.
    env.write("kb/b.txt", "More text.");
    env.server.push_for(
        "/v1/embeddings",
        Reply::json(400, serde_json::json!({"error": {"message": "bad input"}})),
    );
    let out = env
        .loki()
        .args(["--rag", "keep", "--rebuild-rag"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("fake:emb") && err.contains("was not changed"),
        "{err}"
    );
    env.loki()
        .args(["--rag", "keep", "the answer?"])
        .assert()
        .success();
    assert!(prompt(&env).contains("forty-two"));

    // A damaged index: a clear message; a rebuild repairs it.
    let dir = env.config_dir().join("rags/keep.index");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let out = env
        .loki()
        .args(["--rag", "keep", "the answer?"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("RAG `keep` is damaged") && err.contains("--rebuild-rag"),
        "{err}"
    );
    env.loki()
        .args(["--rag", "keep", "--rebuild-rag"])
        .assert()
        .success();
    env.loki()
        .args(["--rag", "keep", "the answer?"])
        .assert()
        .success();

    // An unknown knowledge base.
    let out = env.loki().args(["--rag", "nope", "hi"]).assert().failure();
    assert!(stderr(&out).contains("unknown RAG `nope`"));
}

#[test]
fn a_site_is_crawled_under_its_prefix() {
    let env = rag_env("");
    let root = env.server.root_url();
    let page = move |body: &'static str| {
        move |_: &crate::common::fake_llm::Recorded| Reply::raw(200, "text/html", body)
    };
    env.server.respond_for(
        "/docs",
        page(r#"<p>Index page.</p><a href="/docs/one">one</a> <a href="docs/two#top">two</a> <a href="/elsewhere">x</a>"#),
    );
    env.server.respond_for(
        "/docs/one",
        page("<p>Page one mentions quokkas.</p><a href='/docs'>back</a>"),
    );
    env.server
        .respond_for("/docs/two", page("<p>Page two mentions wombats.</p>"));
    env.server
        .respond_for("/elsewhere", page("<p>Outside the prefix: platypus.</p>"));
    env.loki()
        .args(["--rag", "site", "--rag-docs", &format!("{root}/docs/**")])
        .assert()
        .success();
    let yaml = std::fs::read_to_string(env.config_dir().join("rags/site.yaml")).unwrap();
    assert!(yaml.contains(&format!("path: {root}/docs/one")), "{yaml}");
    assert!(yaml.contains(&format!("path: {root}/docs/two")), "{yaml}");
    assert!(!yaml.contains("elsewhere"), "{yaml}");
    assert_eq!(yaml.matches("path: http").count(), 3, "{yaml}");
    env.loki()
        .args(["--rag", "site", "quokkas"])
        .assert()
        .success();
    assert!(prompt(&env).contains("quokkas"));
}

#[test]
fn roles_and_sessions_carry_a_knowledge_base() {
    let env = rag_env("");
    env.write("kb/a.txt", "The answer is forty-two.");
    env.loki()
        .args(["--rag", "lore", "--rag-docs", "kb"])
        .assert()
        .success();
    std::fs::create_dir_all(env.config_dir().join("roles")).unwrap();
    std::fs::write(
        env.config_dir().join("roles/sage.md"),
        "---\nrag: lore\n---\nYou are wise.\n",
    )
    .unwrap();
    env.loki()
        .args(["-r", "sage", "what is the answer?"])
        .assert()
        .success();
    assert!(prompt(&env).contains("forty-two"));

    env.loki()
        .args(["-s", "chat", "--rag", "lore", "first question"])
        .assert()
        .success();
    let saved = std::fs::read_to_string(env.session_file("chat")).unwrap();
    assert!(saved.contains("rag: lore"), "{saved}");
    env.loki()
        .args(["-s", "chat", "what is the answer?"])
        .assert()
        .success();
    let text = prompt(&env);
    assert!(
        text.contains("forty-two") && text.contains("[Source: "),
        "{text}"
    );
}

#[test]
fn repl_commands_build_use_show_and_leave_a_knowledge_base() {
    use crate::common::pty::Pty;
    const PROMPT: &str = "fake:gpt-4o-mini)> ";
    const RAG_PROMPT: &str = "fake:gpt-4o-mini)@kb> ";
    let env = rag_env("");
    env.write("kbdocs/a.txt", "Llamas hum when they are content.");
    env.write("kbdocs/b.txt", "Penguins cannot fly.");
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    let submit = |pty: &mut Pty, line: &str, until: &str, prompt: &str| {
        pty.send(line);
        pty.send("\r");
        let mut out = pty.expect(until);
        out.push_str(&pty.expect(prompt));
        out
    };
    let out = submit(
        &mut pty,
        ".rebuild rag",
        "no knowledge base is active",
        PROMPT,
    );
    assert!(out.contains("error:"), "{out}");
    let out = submit(
        &mut pty,
        ".rag kb kbdocs",
        "rag: kb (2 chunk(s)",
        RAG_PROMPT,
    );
    assert!(out.contains("Saved RAG"), "{out}");
    // On a terminal: a progress bar with counts and rate.
    assert!(
        out.contains(&format!("Embedding [{}] 2/2 chunks", "=".repeat(30))),
        "{out}"
    );
    // NO_COLOR: redrawn with a carriage return alone, no escape sequence.
    let bar_line = out
        .lines()
        .find(|l| l.contains("Embedding ["))
        .unwrap_or_default();
    assert!(!bar_line.contains('\x1b'), "{bar_line:?}");
    submit(&mut pty, "do llamas hum?", "Hello from fake", RAG_PROMPT);
    assert!(prompt(&env).contains("Llamas hum"));
    let out = submit(&mut pty, ".sources rag", "kbdocs/a.txt:1", RAG_PROMPT);
    assert!(out.contains("kbdocs/b.txt:1"), "{out}");

    // `.continue` sends the conversation again without a new search.
    let searches = embedding_batches(&env).len();
    submit(&mut pty, ".continue", "Hello from fake", RAG_PROMPT);
    assert_eq!(embedding_batches(&env).len(), searches);

    let out = submit(&mut pty, ".info rag", "document_paths", RAG_PROMPT);
    assert!(out.contains("hybrid"), "{out}");
    submit(
        &mut pty,
        ".set rag_top_k 1",
        "saved in RAG `kb`",
        RAG_PROMPT,
    );
    let yaml = std::fs::read_to_string(env.config_dir().join("rags/kb.yaml")).unwrap();
    assert!(yaml.contains("top_k: 1"), "{yaml}");
    submit(&mut pty, "penguins?", "Hello from fake", RAG_PROMPT);
    assert_eq!(sources(&prompt(&env)).len(), 1);

    submit(&mut pty, ".exit rag", "rag: none", PROMPT);
    submit(&mut pty, "no rag now", "Hello from fake", PROMPT);
    assert_eq!(prompt(&env), "no rag now");
    submit(&mut pty, ".delete rag kb", "deleted RAG kb", PROMPT);
    assert!(!env.config_dir().join("rags/kb.yaml").exists());
    pty.send(".exit\r");
    pty.read_to_end();
}

#[test]
fn a_git_repository_is_cloned_and_indexed() {
    let env = rag_env("");
    let repo = env.work_dir().join("repo");
    env.write(
        "repo/README.md",
        "# Repo\n\nThe capybara module lives here.\n",
    );
    env.write("repo/src/main.rs", "fn main() {}\n");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&repo)
            .env("HOME", env.root())
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "init"]);
    // Uncommitted files are not part of the repository.
    env.write("repo/scratch.txt", "not committed");
    let out = env
        .loki()
        .args(["--rag", "code", "--rag-docs", "git:repo"])
        .assert()
        .success();
    // Piped stderr: plain progress lines.
    let err = stderr(&out);
    assert!(err.contains("Load git:repo [1/1]"), "{err}");
    assert!(err.contains("Embedding 2/2 chunks"), "{err}");
    let yaml = std::fs::read_to_string(env.config_dir().join("rags/code.yaml")).unwrap();
    assert!(yaml.contains("path: repo/README.md"), "{yaml}");
    assert!(yaml.contains("path: repo/src/main.rs"), "{yaml}");
    assert!(!yaml.contains("scratch"), "{yaml}");
    env.loki()
        .args(["--rag", "code", "where is the capybara module?"])
        .assert()
        .success();
    assert!(sources(&prompt(&env))[0].starts_with("repo/README.md:"));
}

#[test]
fn repl_asks_how_to_build_a_new_knowledge_base_and_edits_its_documents() {
    use crate::common::pty::Pty;
    const PROMPT: &str = "fake:gpt-4o-mini)> ";
    const RAG_PROMPT: &str = "fake:gpt-4o-mini)@fresh> ";
    let editor = env_editor();
    let env = rag_env(&format!("editor: {}", editor.display()));
    env.write("one/a.txt", "Otters hold hands while sleeping.");
    env.write("two/b.txt", "Axolotls regrow limbs.");
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    pty.send(".rag fresh\r");
    let out = pty.expect("Chunk size (tokens):");
    assert!(out.contains("Embedding model: fake:emb"), "{out}");
    // The line editor's keys edit: Ctrl-U clears a mistyped answer.
    pty.send("abc\x15");
    pty.send("\r");
    pty.expect("Chunk overlap (tokens):");
    pty.send("\r");
    pty.expect("Add documents:");
    pty.send("two/b.txtXX\x15one\r");
    pty.expect("rag: fresh (1 chunk(s) from 1 document(s)");
    pty.expect(RAG_PROMPT);
    let yaml = std::fs::read_to_string(env.config_dir().join("rags/fresh.yaml")).unwrap();
    assert!(
        yaml.contains("chunk_size: 1000") && yaml.contains("chunk_overlap: 50"),
        "{yaml}"
    );

    // The editor script adds `two` to the document list.
    pty.send(".edit rag-docs\r");
    let out = pty.expect("1 reused, 1 added, 0 removed");
    pty.expect(RAG_PROMPT);
    assert!(out.contains("Saved RAG"), "{out}");
    pty.send("axolotls?\r");
    pty.expect("Hello from fake");
    pty.expect(RAG_PROMPT);
    assert!(prompt(&env).contains("Axolotls regrow"));
    pty.send(".exit\r");
    pty.read_to_end();

    fn env_editor() -> std::path::PathBuf {
        let dir = tempfile::tempdir().unwrap().keep();
        let path = dir.join("add-two.sh");
        std::fs::write(&path, "#!/bin/sh\necho two >> \"$1\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }
}

/// A loader's output and a knowledge base's documents are bounded: a loader that floods
/// its output, or a device given as a document, is a clear error, never unbounded memory.
#[test]
fn loader_floods_and_devices_are_refused() {
    let env = rag_env(
        "max_input_size: 100000\ndocument_loaders:\n  flood: 'sh -c \"head -c 300000 /dev/zero | tr \\\\\\\\0 x\"'",
    );
    env.write("big.flood", "x\n");
    let out = env
        .loki()
        .args(["-f", "big.flood", "what?"])
        .timeout(Duration::from_secs(60))
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("max_input_size") && err.contains("document loader"),
        "{err}"
    );
    assert!(chat_requests(&env).is_empty(), "the flood was sent");

    let out = env
        .loki()
        .args(["--rag", "dev", "--rag-docs", "/dev/zero", "hi"])
        .timeout(Duration::from_secs(60))
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(err.contains("not a regular file"), "{err}");
}

/// Issue 26 item 15: `.rag` without a name builds an unsaved knowledge base: used like
/// any other, never written under `rags/`, not named by the session, gone at exit.
#[test]
fn rag_without_a_name_is_a_temporary_knowledge_base() {
    use crate::common::pty::Pty;
    let env = rag_env("");
    env.write("one/a.txt", "Otters hold hands while sleeping.");
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let tmp_text = tmp.display().to_string();
    let mut pty = Pty::spawn(
        &env,
        &["-s", "notes"],
        &[("NO_COLOR", "1"), ("TMPDIR", tmp_text.as_str())],
    );
    pty.expect("notes) ");
    pty.send(".rag\r");
    pty.expect("Chunk size (tokens):");
    pty.send("\r");
    pty.expect("Chunk overlap (tokens):");
    pty.send("\r");
    pty.expect("Add documents:");
    pty.send("one\r");
    pty.expect("rag: temp (1 chunk(s) from 1 document(s)");
    pty.expect("@temp");
    let made: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert_eq!(made.len(), 1, "{made:?}");
    pty.send("otters?\r");
    pty.expect("Hello from fake");
    pty.expect("@temp");
    assert!(prompt(&env).contains("Otters hold hands"));
    assert!(!env.config_dir().join("rags/temp.yaml").exists());
    pty.send(".exit\r");
    pty.expect("Save session `notes`?");
    pty.send("y");
    pty.read_to_end();
    let session = std::fs::read_to_string(env.session_file("notes")).unwrap();
    assert!(!session.contains("rag:"), "{session}");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    let out = env.loki().arg("--list-rags").assert().success();
    assert!(!crate::common::stdout(&out).contains("temp"));
}

/// Issue 27 item 6: a knowledge base's `index_file` must name a file in its own
/// `<name>.index/` directory; a path elsewhere or a link out of it is refused, naming the
/// damage, and nothing outside is read.
#[test]
fn index_file_is_confined_to_the_knowledge_base() {
    let env = rag_env("");
    env.write("docs/a.txt", "Otters hold hands while sleeping.");
    env.loki()
        .args(["--rag", "kb", "--rag-docs", "docs"])
        .assert()
        .success();
    let yaml_path = env.config_dir().join("rags/kb.yaml");
    let yaml = std::fs::read_to_string(&yaml_path).unwrap();
    let current = yaml
        .lines()
        .find_map(|l| l.strip_prefix("index_file: "))
        .unwrap()
        .trim()
        .to_string();
    for bad in ["../../../victim.bin", "/etc/passwd"] {
        std::fs::write(&yaml_path, yaml.replace(&current, bad)).unwrap();
        let out = env.loki().args(["--rag", "kb", "otters?"]).assert().code(1);
        let err = stderr(&out);
        assert!(err.contains("is not a file name"), "{bad}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // A link from inside the index directory to a file elsewhere is refused too.
    let index_dir = env.config_dir().join("rags/kb.index");
    std::fs::write(&yaml_path, &yaml).unwrap();
    let real = index_dir.join(&current);
    let moved = env.root().join("elsewhere.bin");
    std::fs::rename(&real, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &real).unwrap();
    let out = env.loki().args(["--rag", "kb", "otters?"]).assert().code(1);
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
}

/// Issue 27 item 4: relative links resolve against the page as served. `…/www` redirects
/// to `…/www/`, whose `a.html` is `…/www/a.html` (not `…/a.html`).
#[test]
fn a_crawl_resolves_relative_links_against_the_page_as_served() {
    let env = rag_env("");
    let root = env.server.root_url();
    env.server
        .respond_for("/www", |r: &crate::common::fake_llm::Recorded| {
            match r.path_only() {
                "/www" => Reply::raw(301, "text/plain", "").header("location", "/www/"),
                "/www/" => Reply::raw(200, "text/html", r#"<p>Home.</p><a href="a.html">a</a>"#),
                "/www/a.html" => Reply::raw(200, "text/html", "<p>Page a mentions numbats.</p>"),
                _ => Reply::raw(404, "text/plain", "no"),
            }
        });
    env.server
        .respond_for("/a.html", |_: &crate::common::fake_llm::Recorded| {
            Reply::raw(200, "text/html", "<p>The wrong page.</p>")
        });
    env.loki()
        .args(["--rag", "www", "--rag-docs", &format!("{root}/www/**")])
        .assert()
        .success();
    let yaml = std::fs::read_to_string(env.config_dir().join("rags/www.yaml")).unwrap();
    assert!(yaml.contains(&format!("path: {root}/www/a.html")), "{yaml}");
    assert!(!yaml.contains(&format!("path: {root}/a.html")), "{yaml}");
}

/// Issue 27 item 8: embeddings that change size or come back empty, and damaged
/// settings, are said plainly with a way out that works.
#[test]
fn changed_or_empty_embeddings_and_damaged_settings_are_not_silent() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let env = TestEnv::bare();
    env.write_config(&config(
        &env.server.base_url(),
        "rag_embedding_model: fake:emb",
    ));
    // The fake model's vector size, changed by the test (0: empty vectors).
    let dims = Arc::new(AtomicUsize::new(embeddings::DIMS));
    let size = Arc::clone(&dims);
    env.server.respond_for("/v1/embeddings", move |request| {
        let n = size.load(Ordering::SeqCst);
        let inputs = request.json()["input"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let mut v = embeddings::vector_for(text.as_str().unwrap_or_default());
                v.resize(n, 0.5);
                serde_json::json!({"object": "embedding", "index": i, "embedding": v})
            })
            .collect();
        Reply::json(200, serde_json::json!({"object": "list", "data": data}))
    });
    env.write("kb/a.txt", "Otters hold hands while they sleep.");
    env.loki()
        .args(["--rag", "sea", "--rag-docs", "kb"])
        .assert()
        .success();

    // The model now answers with smaller vectors: a search says so and how to fix it.
    dims.store(32, Ordering::SeqCst);
    let out = env
        .loki()
        .args(["--rag", "sea", "otters?"])
        .assert()
        .success();
    let err = stderr(&out);
    assert!(
        err.contains("32-dimensional") && err.contains("--rebuild-rag"),
        "{err}"
    );
    // The rebuild it names works: every chunk is embedded again at the new size.
    let out = env
        .loki()
        .args(["--rag", "sea", "--rebuild-rag"])
        .assert()
        .success();
    let err = stderr(&out);
    assert!(err.contains("embedding every chunk again"), "{err}");
    assert!(err.contains("hybrid search"), "{err}");
    let out = env
        .loki()
        .args(["--rag", "sea", "otters?"])
        .assert()
        .success();
    assert!(!stderr(&out).contains("dimensional"), "{}", stderr(&out));

    // The model fails while nothing changed: the rebuild keeps the vectors, and says so.
    for _ in 0..2 {
        env.server.push_for(
            "/v1/embeddings",
            Reply::json(500, serde_json::json!({"error": {"message": "down"}})),
        );
    }
    let out = env
        .loki()
        .args(["--rag", "sea", "--rebuild-rag"])
        .assert()
        .success();
    let err = stderr(&out);
    assert!(
        err.contains("did not change") && err.contains("hybrid search"),
        "{err}"
    );

    // Empty vectors fail the build instead of quietly making it keyword-only.
    dims.store(0, Ordering::SeqCst);
    let out = env
        .loki()
        .args(["--rag", "void", "--rag-docs", "kb"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(err.contains("empty embedding"), "{err}");
    assert!(!env.config_dir().join("rags/void.yaml").exists());

    // Damaged settings: the hint is not a rebuild (which reads that same file).
    std::fs::write(
        env.config_dir().join("rags/sea.yaml"),
        "document_paths: [unclosed\n",
    )
    .unwrap();
    let out = env
        .loki()
        .args(["--rag", "sea", "--rebuild-rag"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("sea.yaml") && err.contains("--rag-docs"),
        "{err}"
    );
    assert!(!err.contains("--rebuild-rag"), "{err}");
}

/// A knowledge base Loki or AIChat built (`rags/<name>.yaml` with `files` as a map and
/// the vectors inside): named as such, with the one command that adopts it; the rebuild
/// keeps its documents and settings.
#[test]
fn a_knowledge_base_built_by_loki_or_aichat_is_rebuilt_from_its_documents() {
    let env = rag_env("");
    let docs = env.write("olddocs/walrus.md", "Walruses use their tusks to climb.");
    std::fs::create_dir_all(env.config_dir().join("rags")).unwrap();
    std::fs::write(
        env.config_dir().join("rags/oldloki.yaml"),
        format!(
            "embedding_model: fake:emb\nchunk_size: 1500\nchunk_overlap: 75\nreranker_model: null\ntop_k: 3\nbatch_size: 100\nnext_file_id: 1\ndocument_paths:\n- {}\nfiles:\n  0:\n    path: {}\n    hash: abc\n    documents: []\nvectors:\n  0-0: [0.1, 0.2]\n",
            docs.parent().unwrap().display(),
            docs.display()
        ),
    )
    .unwrap();
    let out = env
        .loki()
        .args(["--rag", "oldloki", "walrus"])
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("was built by Loki or AIChat") && err.contains("--rebuild-rag"),
        "{err}"
    );
    env.loki()
        .args(["--rag", "oldloki", "--rebuild-rag", "walrus"])
        .assert()
        .success();
    assert!(
        prompt(&env).contains("Walruses use their tusks"),
        "{}",
        prompt(&env)
    );
    let yaml = std::fs::read_to_string(env.config_dir().join("rags/oldloki.yaml")).unwrap();
    assert!(
        yaml.contains("chunk_size: 1500") && yaml.contains("top_k: 3"),
        "{yaml}"
    );
}
