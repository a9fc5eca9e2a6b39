//! Changes to a conversation that are not a prompt — a dot-command or a flag, normalised
//! ([`Command`]) — and what applying one did ([`Applied`]): lines for the user and, when
//! it saved, the session written ([`SavedSession`] at a [`Version`]).

/// A change to the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Switch model (`.model`).
    SetModel(String),
    /// Use a temporary role made of this prompt (`.prompt`).
    UsePrompt(String),
    /// Activate a role by name (`.role`).
    UseRole(String),
    /// Activate a role by name even in a session that already has messages (the shell
    /// assistant's `shell` role, which frames every request of `-e`).
    ForceRole(String),
    /// Leave the active role (`.exit role`).
    ExitRole,
    /// Change a runtime setting (`.set key value`).
    Set {
        /// Setting name.
        key: String,
        /// New value; `null` resets it to the configured default.
        value: String,
    },
    /// Forget the conversation so far (`.empty session`, `--empty-session`).
    ClearConversation,
    /// Write the active role to `roles/<name>.md` (`.save role [name]`).
    SaveRole(Option<String>),
    /// Delete `roles/<name>.md` (`.delete role`).
    DeleteRole(String),
    /// Delete what an agent keeps — its sessions and its knowledge base — leaving its
    /// definition (`.delete agent-data <name>`).
    DeleteAgentData(String),
    /// Open (or start) a session by name or id (`.session`, `-s`); `temp` starts an
    /// unsaved one.
    OpenSession(String),
    /// Open a session that does not exist yet, carrying the conversation so far into it
    /// (`.session <new name>` after answering yes to "carry the conversation").
    OpenSessionWithHistory(String),
    /// Save the open session, optionally under a new name (`.save session [name]`).
    SaveSession(Option<String>),
    /// Go on in a new session (named, else `<name>-fork-<time>`) holding a copy of the
    /// open one and the conversation so far (`.fork [name]`, `--fork-session`); the
    /// stored original is not written.
    ForkSession(Option<String>),
    /// Drop the conversation from its `user_message`-th prompt (1-based) on, a fork
    /// point (`.edit message N`, which then sends the edited prompt); the files stay.
    CutConversation {
        /// Which prompt, counting the user's messages from 1.
        user_message: usize,
    },
    /// Close the open session, saving it first when `save` (`.exit session`; the save
    /// policy or the user decided).
    CloseSession {
        /// Save before closing.
        save: bool,
        /// The name to save a temporary session under.
        rename: Option<String>,
    },
    /// Summarise the older part of the session now (`.compress session`).
    CompressSession,
    /// Delete a saved session (`.delete session`).
    DeleteSession(String),
    /// Use a built knowledge base (`.rag <name>`, `--rag`); an open session remembers it.
    UseRag(String),
    /// Use no knowledge base, whatever the session or role say (`.exit rag`).
    ExitRag,
    /// Use an agent (`-a`, `.agent`): its instructions, model and tools, with values for
    /// its variables (`--agent-variable`, `name=value`).
    UseAgent {
        /// The agent.
        name: String,
        /// Values given for its variables.
        variables: Vec<(String, String)>,
        /// The session to open in the agent's directory; `None`: its `agent_session`,
        /// if it names one.
        session: Option<String>,
    },
    /// Stop using the agent (`.exit agent`).
    ExitAgent,
    /// Empty the agent's todo list (`.clear todo`).
    ClearTodo,
    /// Replace the open session's content with an edited copy (`.edit session`: the YAML
    /// the user changed), written through the session store — files or PostgreSQL — and
    /// read again. `base` is the YAML the edit started from: if the session is no longer
    /// that (another loki wrote it meanwhile), nothing is replaced.
    ReplaceSession {
        /// The edited YAML.
        yaml: String,
        /// The YAML it was edited from.
        base: String,
    },
    /// Undo the last `count` turns (`.rewind`, `--rewind`): the files loki's tools changed
    /// in them, the conversation, or both; a file changed since by someone else is not
    /// overwritten unless `force`.
    Rewind {
        /// How many turns, from the last.
        count: usize,
        /// What is put back.
        what: Restore,
        /// Overwrite files changed since.
        force: bool,
    },
    /// Read the open session `name` again from the store, dropping what is held in
    /// memory (after `.edit session` changed it).
    ReloadSession(String),
    /// Go off the record (`.otr`): nothing is written from now on, in this conversation
    /// and every descendant. Refused while a session is open.
    OffTheRecord,
    /// Let commands and file tools write one more directory (`.add-dir DIR`, as
    /// `--add-dir`): file tools treat it as part of the working tree and the sandbox makes
    /// it writable. Only the user at the root of a tree may widen what it reaches.
    AddDir(String),
    /// Record `owner` as the open session's owner, unless it has one (a session the
    /// server creates for an API key belongs to that key's subject), and `approvals`
    /// (`ask`, `auto`, `deny`) as how the server decides its tool calls.
    ClaimSession {
        /// The subject, when the server has keys.
        owner: Option<String>,
        /// The server's approval policy for the session.
        approvals: String,
    },
}

/// One line of what a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A confirmation (`model: openai:gpt-4o`).
    Note(String),
    /// Something the user must see (a session saved under a new name, a session's model
    /// that is not available).
    Warning(String),
}

/// What applying a command did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Confirmations and warnings, in order.
    pub lines: Vec<Line>,
    /// The session written, when the command saved one.
    pub saved: Option<SavedSession>,
}

impl Applied {
    /// One confirmation line.
    pub fn note(text: impl Into<String>) -> Self {
        Self {
            lines: vec![Line::Note(text.into())],
            saved: None,
        }
    }

    /// The confirmation lines.
    pub fn notes(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|l| match l {
            Line::Note(text) => Some(text.as_str()),
            Line::Warning(_) => None,
        })
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|l| match l {
            Line::Warning(text) => Some(text.as_str()),
            Line::Note(_) => None,
        })
    }

    /// Appends what `other` did.
    pub fn extend(&mut self, other: Self) {
        self.lines.extend(other.lines);
        if other.saved.is_some() {
            self.saved = other.saved;
        }
    }
}

/// What a rewind puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restore {
    /// Files and the conversation.
    Both,
    /// Only the files.
    Files,
    /// Only the conversation.
    Conversation,
}

impl Restore {
    /// `both`, `files` or `conversation`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "both" | "" => Some(Self::Both),
            "files" => Some(Self::Files),
            "conversation" | "messages" => Some(Self::Conversation),
            _ => None,
        }
    }

    /// Whether files are restored.
    pub fn files(self) -> bool {
        self != Self::Conversation
    }

    /// Whether the conversation is cut.
    pub fn conversation(self) -> bool {
        self != Self::Files
    }
}

/// What a save of the conversation's session stored.
#[derive(Debug, Clone)]
pub struct SavedSession {
    /// Where, for the user (the file written, for the YAML store).
    pub location: String,
    /// The version now stored.
    pub version: Version,
    /// Set when the conversation could not be merged into its session because another
    /// writer changed it meanwhile: it was saved as a new session instead. A one-line
    /// explanation for the user.
    pub forked: Option<String>,
}

/// Identifies one stored content of a session (a hash of the file, a row version).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version(String);

impl Version {
    /// A version named by the store.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The store's name for it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
