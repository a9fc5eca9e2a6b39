//! `load_skills`: the conversation tool that reads skills (see [`crate::skill`]) on
//! demand — the system prompt lists them by name and description only.

use std::sync::Arc;

use serde_json::{Value, json};

use super::ToolError;
use crate::client::ToolSpec;
use crate::skill::Skill;

/// The skills a conversation may load.
#[derive(Debug, Clone)]
pub struct SkillsTool {
    skills: Arc<Vec<Skill>>,
    /// What the user should hear about how the skills were found (some left out).
    notes: Arc<Vec<String>>,
}

/// The function name.
pub const NAME: &str = "load_skills";

impl SkillsTool {
    /// The tool for `skills` (those the model may load).
    pub fn new(skills: Vec<Skill>) -> Self {
        Self {
            skills: Arc::new(
                skills
                    .into_iter()
                    .filter(|s| !s.disable_model_invocation)
                    .collect(),
            ),
            notes: Arc::new(Vec::new()),
        }
    }

    /// The tool, with lines for the user about how its skills were found.
    pub fn with_notes(mut self, notes: Vec<String>) -> Self {
        self.notes = Arc::new(notes);
        self
    }

    /// Lines for the user about how the skills were found.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The index for the system prompt.
    pub fn index(&self) -> Option<String> {
        crate::skill::index(&self.skills)
    }

    /// Whether there is anything to load.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The declaration sent to the model.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Read the full instructions of one or more skills listed in the system prompt, before doing a task they cover.".into(),
            parameters: json!({"type": "object", "properties": {
                "names": {"type": "array", "items": {"type": "string"}, "description": "Skill names"}
            }, "required": ["names"]}),
        }
    }

    /// The skills' instructions.
    pub fn run(&self, args: &Value) -> Result<String, ToolError> {
        let names = super::name_list(args, "names", "skill names")?;
        let mut out = Vec::new();
        for name in names {
            match self.skills.iter().find(|s| s.name == name) {
                Some(skill) => out.push(format!(
                    "# Skill: {}\n\n{}",
                    skill.name,
                    skill.body.trim_end()
                )),
                None => {
                    let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
                    return Err(ToolError::BadArguments(format!(
                        "no skill `{name}`; known: {}",
                        known.join(", ")
                    )));
                }
            }
        }
        Ok(out.join("\n\n---\n\n"))
    }
}
