//! A real PostgreSQL server in a temporary directory, for the session-store tests.
//! Uses the Debian `postgresql` package's binaries (`.ci/run` installs it when missing).
//! `initdb` refuses to run as root, so as root the cluster belongs to the `postgres` user
//! and its commands run through `runuser`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running server; stopped (and its directory removed) when dropped.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// The server's `-o` options (port, socket directory).
    options: String,
    pub url: String,
}

fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed (Debian package `postgresql`; .ci/run installs it)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("initdb").exists())
        .collect();
    found.sort();
    found
        .pop()
        .expect("no /usr/lib/postgresql/*/bin/initdb (install the `postgresql` package)")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn run(program: &Path, args: &[&str]) {
    let mut command = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let out = command
        .args(args)
        .output()
        .expect("run a PostgreSQL command");
    assert!(
        out.status.success(),
        "{} {args:?}: {}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Postgres {
    /// Starts a fresh cluster on a free port.
    pub fn start() -> Postgres {
        Self::start_with(false)
    }

    /// Starts a fresh cluster that takes TCP connections only over TLS, with a
    /// certificate for 127.0.0.1 from a CA of its own; the CA's PEM file is `ca_file()`.
    pub fn start_tls() -> Postgres {
        Self::start_with(true)
    }

    /// The CA that signed a TLS cluster's certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn start_with(tls: bool) -> Postgres {
        let bin = bin_dir();
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
        let data = dir.path().join("data");
        let data_text = data.to_str().unwrap().to_string();
        run(
            &bin.join("initdb"),
            &[
                "-D",
                &data_text,
                "-U",
                "loki",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let socket = dir.path().to_str().unwrap().to_string();
        let mut options =
            format!("-p {port} -k {socket} -c listen_addresses=127.0.0.1 -c fsync=off");
        if tls {
            make_certificates(dir.path(), &data);
            options.push_str(" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key");
        }
        let log = dir.path().join("log").to_str().unwrap().to_string();
        run(
            &bin.join("pg_ctl"),
            &["-D", &data_text, "-o", &options, "-l", &log, "-w", "start"],
        );
        Postgres {
            url: format!("postgres://loki@127.0.0.1:{port}/postgres"),
            dir,
            bin,
            options,
        }
    }

    /// Stops the server (its connections are closed); [`Postgres::start_again`] brings
    /// it back with the same data and port.
    pub fn stop(&self) {
        let data = self.dir.path().join("data");
        run(
            &self.bin.join("pg_ctl"),
            &["-D", data.to_str().unwrap(), "-m", "fast", "-w", "stop"],
        );
    }

    /// Starts the stopped server again.
    pub fn start_again(&self) {
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("log");
        run(
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &self.options,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        );
    }
}

/// A CA and a certificate for 127.0.0.1 it signed (in `data`, owned by the server's
/// user, the key 0600); TCP connections without TLS are refused.
fn make_certificates(dir: &Path, data: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (Debian package `openssl`) makes the test certificates");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=loki test CA",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    for file in ["server.crt", "server.key"] {
        std::fs::copy(dir.join(file), data.join(file)).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        data.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", "postgres"])
            .arg(data)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"])
                .arg(self.bin.join("pg_ctl"));
            c
        } else {
            Command::new(self.bin.join("pg_ctl"))
        };
        let _ = command
            .args([
                "-D",
                data.to_str().unwrap_or_default(),
                "-m",
                "immediate",
                "stop",
            ])
            .output();
    }
}
