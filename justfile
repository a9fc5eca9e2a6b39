# Convenience recipes; each is the exact cargo command CI or a contributor runs.
# `just` is optional: every line below works when pasted into a shell.

build:
    cargo build --release

test:
    cargo test --locked

fmt:
    cargo fmt --all

lint:
    cargo fmt --all -- --check
    cargo clippy --all-targets --locked -- -D warnings

doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items

snap:
    cargo insta review

bench:
    scripts/bench

link-layout:
    scripts/link-layout

ci: lint test
