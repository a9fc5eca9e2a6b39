//! Which of the kernel's confinement layers a sandbox got, and what a missing one leaves
//! open — for `.info`, the note at start, and the SDK mode's `system/init`.

use serde::{Deserialize, Serialize};

/// The layers one confined process ended up under.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layers {
    /// User, mount and pid namespaces (and a network namespace when the network is off):
    /// the read-only view of the filesystem, the fresh `/proc`, hidden sockets and
    /// credentials.
    pub namespaces: bool,
    /// The Landlock ABI version in force (0: none).
    pub landlock: u8,
    /// The seccomp filter.
    pub seccomp: bool,
}

impl Layers {
    /// Whether the mode can be honoured at all: writes must be held to the writable
    /// roots by a read-only view or by Landlock.
    pub fn confines(&self) -> bool {
        self.namespaces || self.landlock > 0
    }

    /// `namespaces, Landlock v7, seccomp`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.namespaces {
            parts.push("namespaces".to_string());
        }
        if self.landlock > 0 {
            parts.push(format!("Landlock v{}", self.landlock));
        }
        if self.seccomp {
            parts.push("seccomp".to_string());
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }

    /// One line per missing layer: what it is and what is not stopped without it.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if !self.namespaces {
            missing.push(
                "no user namespaces: the filesystem is held by Landlock alone (credential files \
                 inside the working tree stay readable), chmod, chown, utime and xattr calls are \
                 refused everywhere, Unix sockets are off, and /proc shows other processes",
            );
        }
        if self.landlock == 0 {
            missing.push(
                "no Landlock: paths are held by the read-only view alone, and processes outside \
                 the sandbox can be signalled",
            );
        } else if self.landlock < 6 {
            missing.push(
                "Landlock before v6 (Linux 6.12): abstract Unix sockets and signals to other \
                 processes are not scoped",
            );
        }
        if !self.seccomp {
            missing.push(
                "no seccomp: TIOCSTI, ptrace and io_uring are not filtered (the command still has \
                 no terminal)",
            );
        }
        missing
    }
}
