//! `deploy/`: the container image, the compose file, the proxy's config and loki's config
//! agree with the README, with each other and with loki itself (docs/deploy.md). No
//! container runs here: the files are read as the tools would read them, and loki's
//! config is served by the real binary on a PostgreSQL of the test's own.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_yaml::Value;

use crate::common::postgres::Postgres;
use crate::common::{LOKI, TestEnv, http};

/// The musl target the image's binary is built for.
const MUSL: &str = "x86_64-unknown-linux-musl";

fn repo_file(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The one `cargo …` line of the README's Install section, as words.
fn readme_install_command(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Install"))
        .expect("the README has an Install section");
    let commands: Vec<&str> = section
        .split("```")
        .skip(1)
        .step_by(2)
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| l.starts_with("cargo "))
        .collect();
    assert_eq!(
        commands.len(),
        1,
        "one cargo command in the Install section: {commands:?}"
    );
    commands[0].split_whitespace().map(str::to_string).collect()
}

/// The Containerfile's instructions, continuation lines joined and comments dropped.
fn instructions(containerfile: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in containerfile.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

/// The one `cargo …` command a `RUN` instruction runs, as words (RUN's own `--mount`
/// flags left out).
fn containerfile_cargo_command(containerfile: &str) -> Vec<String> {
    let commands: Vec<Vec<String>> = instructions(containerfile)
        .iter()
        .filter_map(|i| i.strip_prefix("RUN "))
        .map(|rest| {
            rest.split_whitespace()
                .skip_while(|w| w.starts_with("--"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|words| words.first().is_some_and(|w| w == "cargo"))
        .collect();
    assert_eq!(commands.len(), 1, "one RUN cargo …: {commands:?}");
    commands[0].clone()
}

/// `(major, minor)` of a `1.88`-style version.
fn version(text: &str) -> (u32, u32) {
    let mut parts = text.trim().trim_matches('"').split('.');
    let mut next = || {
        parts
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("not a version: {text:?}"))
    };
    (next(), next())
}

#[test]
fn the_image_is_built_with_the_readme_install_command_for_static_musl_and_runs_as_non_root() {
    let readme = readme_install_command(&repo_file("README.md"));
    let containerfile = repo_file("deploy/Containerfile");
    let mut image = containerfile_cargo_command(&containerfile);
    let at = image
        .iter()
        .position(|w| w == "--target")
        .expect("the image's cargo command names a --target");
    let target: Vec<String> = image.drain(at..at + 2).collect();
    assert_eq!(target[1], MUSL);
    assert_eq!(
        image, readme,
        "deploy/Containerfile must build with the README's install command (plus --target {MUSL})"
    );

    let instructions = instructions(&containerfile);
    // The toolchain is one the crate accepts.
    let rust = instructions
        .iter()
        .find_map(|i| i.strip_prefix("ARG RUST_VERSION="))
        .expect("ARG RUST_VERSION=…");
    let manifest = repo_file("Cargo.toml");
    let minimum = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("rust-version in Cargo.toml");
    assert!(version(rust) >= version(minimum), "{rust} < {minimum}");

    // The final stage: nothing but the binary on scratch or distroless static, as a
    // numeric non-root user.
    let last = instructions
        .iter()
        .rposition(|i| i.starts_with("FROM "))
        .unwrap();
    let base = &instructions[last];
    assert!(
        base == "FROM scratch" || base.contains("gcr.io/distroless/static"),
        "{base}"
    );
    let user = instructions[last..]
        .iter()
        .find_map(|i| i.strip_prefix("USER "))
        .expect("the final stage sets USER");
    let uid: u32 = user
        .split(':')
        .next()
        .and_then(|u| u.parse().ok())
        .unwrap_or_else(|| panic!("USER {user} is not numeric"));
    assert_ne!(uid, 0);
    assert!(
        !instructions[last..]
            .iter()
            .any(|i| i.starts_with("HEALTHCHECK")),
        "no shell or HTTP client in the image to run a HEALTHCHECK"
    );
    assert!(
        instructions[last..]
            .iter()
            .any(|i| i.starts_with("ENTRYPOINT") && i.contains("loki"))
    );
}

/// compose.yaml, with `<<: *loki` merged.
fn compose() -> Value {
    let mut compose: Value =
        serde_yaml::from_str(&repo_file("deploy/compose.yaml")).expect("compose.yaml is YAML");
    compose.apply_merge().expect("merge keys");
    compose
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .map(|s| {
            s.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The compose services that run `loki --serve`, by name.
fn loki_services(compose: &Value) -> Vec<(String, Value)> {
    compose["services"]
        .as_mapping()
        .expect("services")
        .iter()
        .filter(|(_, s)| strings(&s["command"]).iter().any(|c| c == "--serve"))
        .map(|(name, s)| (name.as_str().unwrap().to_string(), s.clone()))
        .collect()
}

/// The service whose image is `image` (`docker.io/library/postgres:…` is `postgres`).
fn service_by_image<'a>(compose: &'a Value, image: &str) -> (&'a str, &'a Value) {
    let found: Vec<(&str, &Value)> = compose["services"]
        .as_mapping()
        .unwrap()
        .iter()
        .filter(|(_, s)| {
            s["image"]
                .as_str()
                .and_then(|i| i.rsplit('/').next())
                .is_some_and(|i| i.split(':').next() == Some(image))
        })
        .map(|(n, s)| (n.as_str().unwrap(), s))
        .collect();
    assert_eq!(found.len(), 1, "one {image} service");
    found[0]
}

/// loki's config in deploy/.
fn loki_config() -> Value {
    serde_yaml::from_str(&repo_file("deploy/loki/config.yaml")).expect("config.yaml is YAML")
}

#[test]
fn compose_runs_two_read_only_non_root_lokis_on_one_postgres_behind_a_trusted_proxy() {
    let compose = compose();
    let lokis = loki_services(&compose);
    assert_eq!(
        lokis.len(),
        2,
        "{:?}",
        lokis.iter().map(|l| &l.0).collect::<Vec<_>>()
    );
    let (postgres_name, postgres) = service_by_image(&compose, "postgres");
    let (proxy_name, proxy) = service_by_image(&compose, "caddy");

    for (name, service) in lokis
        .iter()
        .map(|(n, s)| (n.as_str(), s))
        .chain([(postgres_name, postgres), (proxy_name, proxy)])
    {
        assert_eq!(
            service["read_only"].as_bool(),
            Some(true),
            "{name}: read_only"
        );
        let user = service["user"].as_str().unwrap_or_default();
        let uid: u32 = user
            .split(':')
            .next()
            .and_then(|u| u.parse().ok())
            .unwrap_or_else(|| panic!("{name}: user `{user}` is not a numeric uid"));
        assert_ne!(uid, 0, "{name} runs as root");
        assert!(
            strings(&service["tmpfs"])
                .iter()
                .any(|t| t.starts_with("/tmp")),
            "{name}: a tmpfs on /tmp"
        );
        // Secrets come from files, never from the compose file's own text.
        if let Some(vars) = service["environment"].as_mapping() {
            for (key, value) in vars {
                let key = key.as_str().unwrap_or_default();
                let secretish = ["PASSWORD", "KEY", "TOKEN", "SECRET"]
                    .iter()
                    .any(|w| key.contains(w));
                assert!(
                    !secretish || key.ends_with("_FILE"),
                    "{name}: {key}={value:?} puts a secret in compose.yaml"
                );
            }
        }
    }
    for (name, service) in &lokis {
        assert_eq!(service["image"], lokis[0].1["image"], "{name}");
        assert_eq!(
            service["environment"]["LOKI_CONFIG_DIR"].as_str(),
            Some("/etc/loki")
        );
        assert!(
            strings(&service["volumes"]).contains(&"./loki:/etc/loki:ro".to_string()),
            "{name}: the config directory, read-only"
        );
        assert_eq!(
            service["depends_on"][postgres_name]["condition"].as_str(),
            Some("service_healthy"),
            "{name}"
        );
        assert!(
            strings(&service["secrets"]).contains(&"loki_env".to_string()),
            "{name}"
        );
    }
    for (name, service) in [(postgres_name, postgres), (proxy_name, proxy)] {
        assert!(
            !strings(&service["healthcheck"]["test"]).is_empty(),
            "{name}: a healthcheck"
        );
    }
    assert!(
        strings(&postgres["volumes"])
            .iter()
            .any(|v| v.ends_with(":/var/lib/postgresql/data")),
        "PostgreSQL's data on a volume"
    );
    // Every secret the services name is a file compose mounts (kept out of git).
    let files: Vec<String> = compose["secrets"]
        .as_mapping()
        .unwrap()
        .values()
        .map(|s| s["file"].as_str().unwrap().to_string())
        .collect();
    assert!(
        files.iter().all(|f| f.starts_with("./secrets/")),
        "{files:?}"
    );
    assert!(
        repo_file("deploy/.gitignore")
            .lines()
            .any(|l| l == "secrets/")
    );

    // The proxy's network is the one loki trusts for X-Forwarded-For, and the lokis are
    // on it; the database's network is not the proxy's.
    let proxy_networks = strings(&proxy["networks"]);
    assert_eq!(proxy_networks.len(), 1, "{proxy_networks:?}");
    let edge = &compose["networks"][proxy_networks[0].as_str()];
    let subnets: Vec<String> = edge["ipam"]["config"]
        .as_sequence()
        .expect("the proxy's network has a fixed subnet")
        .iter()
        .map(|c| c["subnet"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        strings(&loki_config()["api"]["trusted_proxies"]),
        subnets,
        "api.trusted_proxies must be the proxy's network"
    );
    let db_networks = strings(&postgres["networks"]);
    for (name, service) in &lokis {
        let networks = strings(&service["networks"]);
        assert!(
            networks.contains(&proxy_networks[0]),
            "{name}: {networks:?}"
        );
        assert!(db_networks.iter().all(|n| networks.contains(n)), "{name}");
    }
    assert!(!db_networks.contains(&proxy_networks[0]));
}

#[test]
fn the_caddyfile_balances_the_compose_lokis_on_their_port_and_listens_where_compose_publishes() {
    let compose = compose();
    let caddyfile = repo_file("deploy/Caddyfile");
    let config = loki_config();
    let port = config["api"]["listen_addr"]
        .as_str()
        .and_then(|a| a.rsplit(':').next())
        .expect("api.listen_addr");
    let mut expected: Vec<String> = loki_services(&compose)
        .into_iter()
        .map(|(name, _)| format!("{name}:{port}"))
        .collect();
    expected.sort();
    let mut upstreams: Vec<String> = caddyfile
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("reverse_proxy "))
        .expect("a reverse_proxy directive")
        .split_whitespace()
        .take_while(|w| *w != "{")
        .map(str::to_string)
        .collect();
    upstreams.sort();
    assert_eq!(upstreams, expected);
    assert!(caddyfile.contains("health_uri /healthz/ready"));

    // The site's port is the container port compose publishes, and the one the proxy's
    // healthcheck asks.
    let site = caddyfile
        .lines()
        .find_map(|l| l.strip_prefix(':')?.strip_suffix(" {"))
        .expect("a `:PORT {` site");
    let (_, proxy) = service_by_image(&compose, "caddy");
    let published: Vec<String> = strings(&proxy["ports"])
        .iter()
        .filter_map(|p| p.rsplit(':').next().map(str::to_string))
        .collect();
    assert_eq!(published, vec![site.to_string()]);
    assert!(
        strings(&proxy["healthcheck"]["test"])
            .iter()
            .any(|w| w.contains(&format!("127.0.0.1:{site}/"))),
        "the proxy's healthcheck asks its own site"
    );
    assert!(
        strings(&proxy["volumes"]).contains(&"./Caddyfile:/etc/caddy/Caddyfile:ro".to_string())
    );
}

/// A `key:` line and the `id`/`key_hash` of a new key from `loki --api-key-hash`.
fn new_key(env: &TestEnv) -> (String, String, String) {
    let out = env.loki().arg("--api-key-hash").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(|v| v.trim().trim_matches('"').to_string())
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    (field("key:"), field("id:"), field("key_hash:"))
}

/// Copies the files of deploy/loki into `to`.
fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_deploy_config_is_served_by_loki_with_its_secrets_from_the_env_file() {
    let pg = Postgres::start();
    let env = TestEnv::bare();
    let deployed: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/loki");
    copy_dir(&deployed, &env.config_dir());
    let (key, id, hash) = new_key(&env);
    // The compose secret `loki_env`, as deploy/loki.env.example describes it.
    let secrets = env.root().join("loki.env");
    std::fs::write(
        &secrets,
        format!(
            "PG_PASSWORD=unused\nLOKI_KEY_ID={id}\nLOKI_KEY_HASH={hash}\nOPENAI_API_KEY=sk-test\n"
        ),
    )
    .unwrap();
    // The file's database is compose's `postgres` host; here it is the test's own.
    let mut child = std::process::Command::new(LOKI)
        .env_clear()
        .envs(env.env_pairs())
        .env("LOKI_ENV_FILE", &secrets)
        .env("LOKI_SESSION_STORE", &pg.url)
        .current_dir(env.work_dir())
        .args(["--serve", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut before = Vec::new();
    let addr = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("loki --serve stopped: {before:?}");
        };
        if let Some(rest) = line.split("serving on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
        before.push(line);
    };
    // Nothing was ignored or guessed: no unknown key, no unfilled placeholder.
    assert!(before.is_empty(), "{before:?}");
    std::thread::spawn(move || for _ in lines {});

    let deadline = Instant::now() + Duration::from_secs(20);
    let ready = loop {
        let ready = http::request(&addr, "GET", "/healthz/ready", None, None);
        if ready.status == 200 || Instant::now() > deadline {
            break ready;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let live = http::request(&addr, "GET", "/healthz/live", None, None);
    let with_key = http::request(&addr, "GET", "/v1/info", Some(&key), None);
    let without = http::request(&addr, "GET", "/v1/info", None, None);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(live.status, 200, "{}", live.body);
    assert_eq!(with_key.status, 200, "{}", with_key.body);
    assert_eq!(without.status, 401, "{}", without.body);
}

/// The README's Test section leads with `.ci/run`, and the commands it says `.ci/run`
/// runs are the ones `.ci/run` runs, in order.
#[test]
fn the_readme_test_section_leads_with_ci_run_and_lists_what_it_runs() {
    let readme = repo_file("README.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Test\n"))
        .expect("the README has a Test section");
    let blocks: Vec<Vec<&str>> = section
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|b| {
            b.lines()
                .skip(1)
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(blocks.first(), Some(&vec![".ci/run"]), "{blocks:?}");
    let ci = repo_file(".ci/run");
    let ran: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo "))
        .collect();
    assert!(
        blocks.contains(&ran),
        ".ci/run runs {ran:?}; the README lists {blocks:?}"
    );
    assert_eq!(blocks.last(), Some(&vec!["cargo test --locked"]));
}
