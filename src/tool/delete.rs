//! What `fs_rm` may remove, and how a delete is shown for approval.
//!
//! The working directory and its ancestors are never removed (`""`, `.`, `sub/..`, `..`,
//! `/`, the absolute path), not even with yolo. A directory with something in it is a
//! recursive delete: its approval line says how many files and directories go and names
//! the first few, the preview lists more, and neither "always" nor `auto_approve_tools`
//! covers it (see `check` in the parent module).

use std::path::Path;

use serde_json::Value;

use super::ToolError;
use super::paths;

/// Entries counted for a recursive delete's approval at most.
const MAX_COUNTED: usize = 100_000;
/// Paths named in a recursive delete's approval line.
const SAMPLES: usize = 5;
/// Paths listed in a recursive delete's preview.
const PREVIEW_PATHS: usize = 50;

/// What `fs_rm` would remove, as shown for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RmPlan {
    /// A directory with something in it: never covered by "always" or
    /// `auto_approve_tools`.
    pub recursive: bool,
    /// The approval line, with the count and a few paths for a recursive delete.
    pub summary: String,
    /// The first paths that would go, for a recursive delete.
    pub preview: Option<String>,
}

/// Refuses to delete the working directory, the home directory, loki's config and cache
/// directories (`protected`), or anything containing one of them — whatever the
/// approval mode.
pub(super) fn refuse_tree_delete(
    cwd: &Path,
    arg: &str,
    protected: &[&Path],
) -> Result<(), ToolError> {
    let shown = if arg.is_empty() { "." } else { arg };
    if paths::contains_tree(cwd, arg) {
        return Err(ToolError::Failed(format!(
            "refused: `{shown}` is the working directory or contains it; delete the entries \
             inside it one by one instead"
        )));
    }
    let home = dirs::home_dir();
    let guarded = home.as_deref().into_iter().chain(protected.iter().copied());
    for dir in guarded {
        if paths::contains_path(cwd, arg, dir) {
            return Err(ToolError::Failed(format!(
                "refused: `{shown}` is or contains {}, which is never deleted",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Looks at what deleting the `path` argument would remove.
pub(super) fn rm_plan(args: &Value, cwd: &Path) -> Result<RmPlan, ToolError> {
    let arg = super::builtin::str_arg(args, "path")?;
    refuse_tree_delete(cwd, arg, &[])?;
    let target = paths::resolve_entry(cwd, arg);
    let shown = paths::display(cwd, &target.path);
    let plain = |summary: String| RmPlan {
        recursive: false,
        summary,
        preview: None,
    };
    match std::fs::symlink_metadata(&target.path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Ok(plain(format!(
                "delete the symlink {shown} (not what it points to)"
            )));
        }
        Ok(meta) if meta.is_dir() => {}
        _ => return Ok(plain(format!("delete {shown}"))),
    }
    let (mut files, mut dirs, mut more) = (0usize, 0usize, false);
    let mut listed = Vec::new();
    for entry in walkdir::WalkDir::new(&target.path)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if files + dirs >= MAX_COUNTED {
            more = true;
            break;
        }
        let is_dir = entry.file_type().is_dir();
        if is_dir {
            dirs += 1;
        } else {
            files += 1;
        }
        if listed.len() < PREVIEW_PATHS {
            let mut name = paths::display(cwd, entry.path());
            if is_dir {
                name.push('/');
            }
            listed.push(name);
        }
    }
    if files + dirs == 0 {
        return Ok(plain(format!("delete the empty directory {shown}")));
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let count = if more {
        format!("more than {MAX_COUNTED} entries")
    } else {
        format!(
            "{} and {}",
            plural(files, "file", "files"),
            plural(dirs, "directory", "directories")
        )
    };
    let mut samples = listed
        .iter()
        .take(SAMPLES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if files + dirs > SAMPLES || more {
        samples.push_str(", …");
    }
    let mut preview: String = listed.iter().map(|p| format!("  {p}\n")).collect();
    if files + dirs > listed.len() || more {
        preview.push_str(&format!(
            "  … and {} more\n",
            if more {
                "many".to_string()
            } else {
                (files + dirs - listed.len()).to_string()
            }
        ));
    }
    Ok(RmPlan {
        recursive: true,
        summary: format!("delete the directory {shown} and everything in it: {count} ({samples})"),
        preview: Some(format!("would delete:\n{preview}")),
    })
}
