//! Headless Chromium driven over the DevTools protocol, for the web playground's test.
//! The protocol runs over `--remote-debugging-pipe`: two FIFOs wired to the browser's fds
//! 3 and 4 by `bash`, carrying NUL-terminated JSON messages. Needs the Debian `chromium`
//! package (`.ci/run` installs it when missing).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A headless browser with one page; killed when dropped.
pub struct Browser {
    child: Child,
    to: std::fs::File,
    from: BufReader<std::fs::File>,
    next: u64,
    session: String,
    _dir: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn chromium() -> &'static str {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new("which")
            .arg(name)
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return name;
        }
    }
    panic!("no Chromium (Debian package `chromium`; .ci/run installs it)");
}

impl Browser {
    /// Starts Chromium and attaches to its page.
    pub fn start() -> Browser {
        let dir = tempfile::tempdir().unwrap();
        let (to_path, from_path) = (dir.path().join("in"), dir.path().join("out"));
        for fifo in [&to_path, &from_path] {
            assert!(Command::new("mkfifo").arg(fifo).status().unwrap().success());
        }
        let profile = dir.path().join("profile");
        let script = format!(
            "exec {} --headless=new --no-sandbox --disable-gpu --no-first-run \
             --user-data-dir='{}' --remote-debugging-pipe about:blank 3<'{}' 4>'{}'",
            chromium(),
            profile.display(),
            to_path.display(),
            from_path.display()
        );
        let child = Command::new("bash")
            .args(["-c", &script])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Same order as the shell opens them.
        let to = std::fs::OpenOptions::new()
            .write(true)
            .open(&to_path)
            .unwrap();
        let from = BufReader::new(std::fs::File::open(&from_path).unwrap());
        let mut browser = Browser {
            child,
            to,
            from,
            next: 0,
            session: String::new(),
            _dir: dir,
        };
        let targets = browser.call("Target.getTargets", json!({}), None);
        let page = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .expect("a page")["targetId"]
            .clone();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({"targetId": page, "flatten": true}),
            None,
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser
    }

    fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        self.next += 1;
        let id = self.next;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        self.to.flush().unwrap();
        loop {
            let mut raw = Vec::new();
            let n = self.from.read_until(0, &mut raw).unwrap();
            assert!(n > 0, "the browser went away");
            raw.pop();
            let reply: Value = serde_json::from_slice(&raw).unwrap();
            if reply["id"] == id {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// Opens `url` in the page.
    pub fn open(&mut self, url: &str) {
        let session = self.session.clone();
        self.call("Page.navigate", json!({"url": url}), Some(&session));
    }

    /// Evaluates `expression` in the page (promises awaited); its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let session = self.session.clone();
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            Some(&session),
        );
        result["result"]["value"].clone()
    }

    /// Evaluates `expression` until it is truthy (or panics after 15 s); its value.
    pub fn wait_for(&mut self, expression: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let value = self.eval(expression);
            let truthy = !matches!(value, Value::Null | Value::Bool(false))
                && value != json!("")
                && value != json!(0);
            if truthy {
                return value;
            }
            assert!(Instant::now() < deadline, "waited in vain for {expression}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
