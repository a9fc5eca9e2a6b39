//! How a build reports what it is doing. The front end decides how it looks (a progress
//! bar on a terminal, plain lines when piped); the build never prints.

/// One step of a build.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Loading document source `index` of `total`.
    Loading {
        /// 1-based.
        index: usize,
        /// Sources.
        total: usize,
        /// Path, glob, URL or `loader:resource`.
        source: String,
    },
    /// Chunks embedded so far.
    Embedding {
        /// Embedded.
        done: usize,
        /// To embed.
        total: usize,
    },
    /// Something worth a line: a skipped file, a fallback.
    Note(String),
    /// A problem that did not stop the build.
    Warning(String),
}

/// Receives build steps.
pub trait Progress: Send + Sync {
    /// Called for every step, from the build's task.
    fn report(&self, step: Step);
}

/// Ignores every step.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {
    fn report(&self, _step: Step) {}
}

/// Collects steps (for tests and callers that show them later).
#[derive(Debug, Default)]
pub struct Collect(pub std::sync::Mutex<Vec<Step>>);

impl Progress for Collect {
    fn report(&self, step: Step) {
        if let Ok(mut steps) = self.0.lock() {
            steps.push(step);
        }
    }
}
