//! Background jobs: `execute_command` with `background: true` returns a job id at once;
//! `job_output` reads what the job printed since the last read (with a filter) and
//! `job_kill` stops it, process group and all; jobs still running when the conversation
//! closes are stopped; `.jobs` lists them in the REPL.

use std::time::Duration;

use serde_json::Value;

use super::tools::{tool_results, tools_env};
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::stdout;

/// The names of the tools a request declared.
fn declared(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The process id in a `started job N, process PID: …` result.
fn job_pid(result: &str) -> i32 {
    let after = result
        .split_once("process ")
        .unwrap_or_else(|| panic!("no process id in {result:?}"))
        .1;
    after
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no process id in {result:?}"))
}

/// Waits until process group `pgid` is gone.
fn group_gone(pgid: i32) -> bool {
    let group = rustix::process::Pid::from_raw(pgid).unwrap();
    for _ in 0..250 {
        if rustix::process::test_kill_process_group(group).is_err() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_job_runs_on_its_output_is_read_filtered_and_job_kill_stops_its_group() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "execute_command",
        r#"{"command":"echo ready-marker; echo noise; sleep 60 & sleep 60","background":true}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "c2",
        "execute_command",
        r#"{"command":"sleep 0.4"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "c3",
        "job_output",
        r#"{"id":1,"filter":"^ready"}"#,
    )]));
    env.server.push(openai::tool_call_stream(&[(
        "c4",
        "job_kill",
        r#"{"id":1}"#,
    )]));
    env.server
        .push(openai::text_stream(&["The server is stopped."]));
    let started = std::time::Instant::now();
    let out = env
        .loki()
        .args(["--yolo", "start the server"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "The server is stopped.\n");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the turn waited for the job"
    );
    let requests = env.server.requests();
    assert_eq!(requests.len(), 5);
    // The job tools are declared once a job runs, not before.
    let first = declared(&requests[0].json());
    assert!(first.iter().any(|t| t == "execute_command"), "{first:?}");
    assert!(!first.iter().any(|t| t.starts_with("job_")), "{first:?}");
    let second = declared(&requests[1].json());
    assert!(
        second.iter().any(|t| t == "job_output") && second.iter().any(|t| t == "job_kill"),
        "{second:?}"
    );
    let results = tool_results(&requests[4].json());
    let by_id = |id: &str| {
        results
            .iter()
            .find(|(call, _)| call == id)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("no result for {id}: {results:?}"))
    };
    let start = by_id("c1");
    assert!(start.starts_with("started job 1, process "), "{start}");
    let pid = job_pid(&start);
    let output = by_id("c3");
    assert!(output.contains("[job 1: running]"), "{output}");
    assert!(
        output.contains("ready-marker") && !output.contains("noise"),
        "{output}"
    );
    let killed = by_id("c4");
    assert!(
        killed.contains("job 1") && killed.contains("stopped"),
        "{killed}"
    );
    assert!(group_gone(pid), "job_kill left process group {pid} running");
}

#[test]
fn jobs_still_running_are_stopped_when_the_conversation_closes() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "execute_command",
        r#"{"command":"sleep 60","background":true}"#,
    )]));
    env.server.push(openai::text_stream(&["Started."]));
    let temp = env.dir.path().join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    env.loki()
        .env("TMPDIR", &temp)
        .args(["--yolo", "start it"])
        .timeout(Duration::from_secs(30))
        .assert()
        .success();
    let results = tool_results(&env.server.last_request().json());
    let pid = job_pid(&results[0].1);
    assert!(group_gone(pid), "process group {pid} outlived loki");
    // The logs went with it.
    let leftover: Vec<_> = std::fs::read_dir(&temp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("loki-jobs-"))
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
}

#[test]
fn a_background_command_is_not_started_without_approval() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "execute_command",
        r#"{"command":"sleep 60","background":true}"#,
    )]));
    env.server.push(openai::text_stream(&["Not started."]));
    // No terminal to ask on, no --yolo: the command is refused, nothing starts.
    env.loki().arg("start it").assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert!(!results[0].1.starts_with("started job"), "{results:?}");
}

#[test]
fn the_repl_lists_jobs() {
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "execute_command",
        r#"{"command":"sleep 60","background":true}"#,
    )]));
    env.server.push(openai::text_stream(&["Started the job."]));
    // Each line is typed once the prompt is back: keys sent while the REPL is busy can
    // be lost.
    let mut pty = Pty::spawn(&env, &["--yolo"], &[("NO_COLOR", "1")]);
    pty.expect(")> ");
    pty.send(".jobs\r");
    pty.expect("no background jobs");
    pty.expect(")> ");
    pty.send("start a job\r");
    pty.expect("Started the job.");
    pty.expect(")> ");
    pty.send(".jobs\r");
    let listed = pty.expect("sleep 60");
    assert!(listed.contains("running pid "), "{listed:?}");
    pty.expect(")> ");
    let results = tool_results(&env.server.last_request().json());
    let pid = job_pid(&results[0].1);
    pty.send(".exit\r");
    assert_eq!(pty.exit_code(), 0);
    assert!(group_gone(pid), "process group {pid} outlived the REPL");
}
