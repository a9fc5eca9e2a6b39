//! `-f`: files, directories, globs, URLs and images become the user message.

use serde_json::json;

use crate::common::fake_llm::{Reply, openai};
use crate::common::{TestEnv, stderr};

fn sent_text(env: &TestEnv) -> String {
    env.server.last_request().json()["messages"][0]["content"]
        .as_str()
        .expect("text content")
        .to_string()
}

#[test]
fn one_file_without_text_is_sent_as_is() {
    let env = TestEnv::new();
    env.write("a.txt", "only this\n");
    env.loki().args(["-f", "a.txt"]).assert().success();
    assert_eq!(sent_text(&env), "only this\n");
}

#[test]
fn files_and_text_are_wrapped_in_headers() {
    let env = TestEnv::new();
    env.write("a.txt", "alpha");
    env.write("b.md", "# beta\n");
    env.loki()
        .args(["-f", "a.txt", "--file", "b.md", "compare", "them"])
        .assert()
        .success();
    assert_eq!(
        sent_text(&env),
        "compare them\n\n============ FILE: a.txt ============\nalpha\n\n============ FILE: b.md ============\n# beta"
    );
}

#[test]
fn directories_are_walked_and_binaries_skipped() {
    let env = TestEnv::new();
    env.write("proj/src/main.rs", "fn main() {}\n");
    env.write("proj/README.md", "readme\n");
    env.write("proj/logo.bin", [0u8, 159, 146, 150]);
    env.write("proj/.git/HEAD", "ref: x\n");
    let out = env
        .loki()
        .args(["-f", "proj", "explain"])
        .assert()
        .success();
    let text = sent_text(&env);
    assert!(text.contains("FILE: proj/README.md"), "{text}");
    assert!(text.contains("FILE: proj/src/main.rs"), "{text}");
    assert!(
        !text.contains("logo.bin") && !text.contains(".git"),
        "{text}"
    );
    assert!(stderr(&out).contains("skipped 1 binary or image file(s): proj/logo.bin"));
}

#[test]
fn globs_select_files() {
    let env = TestEnv::new();
    env.write("docs/a.md", "A");
    env.write("docs/deep/b.txt", "B");
    env.write("docs/c.rs", "C");
    env.write("docs/node_modules/dep/readme.md", "dependency");
    env.loki()
        .args(["-f", "docs/**/*.{md,txt}", "go"])
        .assert()
        .success();
    let text = sent_text(&env);
    assert!(
        text.contains("FILE: docs/a.md") && text.contains("FILE: docs/deep/b.txt"),
        "{text}"
    );
    assert!(
        !text.contains("c.rs") && !text.contains("dependency"),
        "{text}"
    );

    let out = env
        .loki()
        .args(["-f", "docs/*.none", "go"])
        .assert()
        .failure();
    assert!(stderr(&out).contains("matches no files"));
}

#[test]
fn images_become_data_urls_for_vision_models() {
    let env = TestEnv::new();
    env.write("shot.png", [137u8, 80, 78, 71, 13, 10, 26, 10]);
    env.loki()
        .args(["-f", "shot.png", "what is this?"])
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().json()["messages"][0]["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ])
    );

    let before = env.server.requests().len();
    let out = env
        .loki()
        .args(["-m", "fake:text-only", "-f", "shot.png", "what?"])
        .assert()
        .code(1);
    assert!(
        stderr(&out).contains("does not accept images"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.server.requests().len(), before);
}

#[test]
fn urls_are_fetched_and_html_becomes_markdown() {
    let env = TestEnv::new();
    env.server.push_for(
        "/page",
        Reply::raw(
            200,
            "text/html; charset=utf-8",
            "<html><body><h1>Title</h1><p>Some <strong>bold</strong> text.</p></body></html>",
        ),
    );
    let url = format!("{}/page", env.server.root_url());
    env.loki()
        .args(["-f", &url, "summarise"])
        .assert()
        .success();
    let requests = env.server.requests();
    let fetch = &requests[0];
    assert_eq!(
        (fetch.method.as_str(), fetch.path.as_str()),
        ("GET", "/page")
    );
    let text = sent_text(&env);
    assert!(text.contains(&format!("URL: {url}")), "{text}");
    assert!(
        text.contains("# Title") && text.contains("**bold**"),
        "{text}"
    );
}

#[test]
fn a_failing_url_is_a_clear_error() {
    let env = TestEnv::new();
    env.server
        .push_for("/gone", openai::error(404, "nope", "not_found"));
    let url = format!("{}/gone", env.server.root_url());
    let out = env.loki().args(["-f", &url, "x"]).assert().code(1);
    assert!(
        stderr(&out).contains(&format!("cannot fetch {url}: HTTP 404")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn missing_and_binary_files_are_errors() {
    let env = TestEnv::new();
    let out = env.loki().args(["-f", "nope.txt", "x"]).assert().code(1);
    assert!(stderr(&out).contains("nope.txt: no such file or directory"));
    env.write("blob.dat", [0u8, 1, 2, 3]);
    let out = env.loki().args(["-f", "blob.dat", "x"]).assert().code(1);
    assert!(stderr(&out).contains("looks like a binary file"));
    assert!(env.server.requests().is_empty());
}
