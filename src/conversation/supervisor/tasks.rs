//! The task queue of one supervising agent (`agent__task_*`): tasks with dependencies,
//! each optionally naming an agent and a prompt to start as soon as nothing blocks it.
//! Dependencies can only name tasks that already exist, so the graph has no cycles.

use serde_json::{Value, json};

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    /// Waiting (for its dependencies, or to be done).
    Pending,
    /// Its agent is working on it.
    Running,
    /// Completed.
    Done,
    /// Failed; its dependents stay blocked.
    Failed,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "completed",
            Self::Failed => "failed",
        }
    }
}

/// One task.
#[derive(Debug, Clone)]
pub(super) struct Task {
    pub id: String,
    pub subject: String,
    pub description: String,
    pub blocked_by: Vec<String>,
    pub status: Status,
    /// The agent to start on it, and its prompt.
    pub dispatch: Option<(String, String)>,
    /// The sub-agent working on it.
    pub assigned: Option<String>,
    pub note: Option<String>,
}

/// A task to start now: its id, the agent and the prompt.
pub(super) type Dispatch = (String, String, String);

/// The queue.
#[derive(Debug, Default)]
pub(super) struct TaskQueue {
    tasks: Vec<Task>,
}

/// A task-queue operation that could not be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// A dependency names no task.
    #[error("no task `{0}` to depend on")]
    UnknownDependency(String),
    /// No task has that id.
    #[error("no task `{0}`")]
    Unknown(String),
    /// The task is completed already.
    #[error("task `{0}` is already completed")]
    AlreadyDone(String),
}

impl TaskQueue {
    /// Adds a task; an unknown dependency is an error.
    pub fn create(
        &mut self,
        subject: String,
        description: String,
        blocked_by: Vec<String>,
        dispatch: Option<(String, String)>,
    ) -> Result<String, TaskError> {
        if let Some(unknown) = blocked_by
            .iter()
            .find(|id| !self.tasks.iter().any(|t| &t.id == *id))
        {
            return Err(TaskError::UnknownDependency(unknown.clone()));
        }
        let id = format!("task_{}", self.tasks.len() + 1);
        self.tasks.push(Task {
            id: id.clone(),
            subject,
            description,
            blocked_by,
            status: Status::Pending,
            dispatch,
            assigned: None,
            note: None,
        });
        Ok(id)
    }

    fn task_mut(&mut self, id: &str) -> Result<&mut Task, TaskError> {
        self.tasks
            .iter_mut()
            .find(|t| t.id == id)
            .ok_or_else(|| TaskError::Unknown(id.to_string()))
    }

    fn unblocked(&self, task: &Task) -> bool {
        task.blocked_by.iter().all(|dep| {
            self.tasks
                .iter()
                .any(|t| &t.id == dep && t.status == Status::Done)
        })
    }

    /// Marks `id` completed; the ids of the tasks that became unblocked.
    pub fn complete(&mut self, id: &str) -> Result<Vec<String>, TaskError> {
        let before: Vec<String> = self.runnable_ids();
        let task = self.task_mut(id)?;
        if task.status == Status::Done {
            return Err(TaskError::AlreadyDone(id.to_string()));
        }
        task.status = Status::Done;
        Ok(self
            .runnable_ids()
            .into_iter()
            .filter(|t| !before.contains(t))
            .collect())
    }

    /// Marks `id` failed.
    pub fn fail(&mut self, id: &str, reason: Option<String>) -> Result<(), TaskError> {
        let task = self.task_mut(id)?;
        task.status = Status::Failed;
        task.note = reason;
        Ok(())
    }

    fn runnable_ids(&self) -> Vec<String> {
        self.tasks
            .iter()
            .filter(|t| t.status == Status::Pending && self.unblocked(t))
            .map(|t| t.id.clone())
            .collect()
    }

    /// Up to `slots` unblocked tasks with an agent that has not been started yet, marked
    /// running.
    pub fn take_dispatches(&mut self, slots: usize) -> Vec<Dispatch> {
        // Collected first: choosing reads the queue, starting changes it.
        #[allow(clippy::needless_collect)]
        let ready: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| {
                let t = &self.tasks[i];
                t.status == Status::Pending
                    && t.dispatch.is_some()
                    && t.assigned.is_none()
                    && self.unblocked(t)
            })
            .take(slots)
            .collect();
        ready
            .into_iter()
            .filter_map(|i| {
                let task = &mut self.tasks[i];
                task.status = Status::Running;
                let (agent, prompt) = task.dispatch.clone()?;
                Some((task.id.clone(), agent, prompt))
            })
            .collect()
    }

    /// Records that sub-agent `child` works on task `id`; `None` when it could not start
    /// (the task waits again).
    pub fn assign(&mut self, id: &str, child: Option<String>, error: Option<String>) {
        if let Ok(task) = self.task_mut(id) {
            match child {
                Some(child) => task.assigned = Some(child),
                None => {
                    task.status = Status::Failed;
                    task.note = error;
                }
            }
        }
    }

    /// The task sub-agent `child` works on.
    pub fn of_child(&self, child: &str) -> Option<String> {
        self.tasks
            .iter()
            .find(|t| t.assigned.as_deref() == Some(child) && t.status == Status::Running)
            .map(|t| t.id.clone())
    }

    /// The queue for the model.
    pub fn list(&self) -> Value {
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .map(|t| {
                let mut task = json!({
                    "id": t.id,
                    "subject": t.subject,
                    "status": t.status.name(),
                    "blocked_by": t.blocked_by,
                });
                if !t.description.is_empty() {
                    task["description"] = json!(t.description);
                }
                if let Some((agent, _)) = &t.dispatch {
                    task["agent"] = json!(agent);
                }
                if let Some(child) = &t.assigned {
                    task["assigned_to"] = json!(child);
                }
                if let Some(note) = &t.note {
                    task["note"] = json!(note);
                }
                task
            })
            .collect();
        json!({ "tasks": tasks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completing_a_task_unblocks_and_dispatches_its_dependents() {
        let mut queue = TaskQueue::default();
        let explore = queue
            .create("explore".into(), String::new(), Vec::new(), None)
            .unwrap();
        let build = queue
            .create(
                "build".into(),
                String::new(),
                vec![explore.clone()],
                Some(("coder".into(), "build it".into())),
            )
            .unwrap();
        let test = queue
            .create("test".into(), String::new(), vec![build.clone()], None)
            .unwrap();
        assert!(
            queue
                .create("x".into(), String::new(), vec!["task_9".into()], None)
                .is_err()
        );
        assert!(queue.take_dispatches(4).is_empty(), "build is blocked");
        assert_eq!(
            queue.complete(&explore).unwrap(),
            std::slice::from_ref(&build)
        );
        let dispatched = queue.take_dispatches(4);
        assert_eq!(
            dispatched,
            [(build.clone(), "coder".into(), "build it".into())]
        );
        queue.assign(&build, Some("agent_coder_1".into()), None);
        assert_eq!(queue.of_child("agent_coder_1"), Some(build.clone()));
        assert!(queue.take_dispatches(4).is_empty(), "started once");
        assert_eq!(queue.complete(&build).unwrap(), std::slice::from_ref(&test));
        queue.fail(&test, Some("flaky".into())).unwrap();
        let listed = queue.list();
        assert_eq!(listed["tasks"][2]["status"], "failed");
        assert_eq!(listed["tasks"][1]["assigned_to"], "agent_coder_1");
    }
}
