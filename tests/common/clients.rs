//! The third-party clients the tests drive loki with, pinned in `tests/clients/`
//! (`package.json` for npm, `requirements.txt` for pip) and installed by `.ci/run`.
//! A client that is missing fails the test that needs it, with the command that installs it.

use std::path::PathBuf;

/// The directory holding the pinned clients.
pub fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients"))
}

/// An npm package's directory under `tests/clients/node_modules`; panics with the install
/// command when it is not there.
pub fn npm_package(name: &str) -> PathBuf {
    let path = dir().join("node_modules").join(name);
    assert!(
        path.join("package.json").is_file(),
        "the npm client {name} is not installed: run `npm ci --prefix tests/clients` (or .ci/run)"
    );
    path
}

/// An executable of the pinned npm packages (`node_modules/.bin/NAME`); panics with the
/// install command when it is not there.
pub fn npm_bin(name: &str) -> PathBuf {
    let path = dir().join("node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "the npm client `{name}` is not installed: run `npm ci --prefix tests/clients` (or .ci/run)"
    );
    path
}

/// Panics with the install command when a pinned Python module cannot be imported.
pub fn require_python_module(module: &str) {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        ok,
        "the Python client module `{module}` is not installed: run \
         `python3 -m pip install -r tests/clients/requirements.txt` (or .ci/run)"
    );
}
