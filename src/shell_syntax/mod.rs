//! Reading a shell command line the way the shell will run it, to decide about it
//! before it runs: which programs it starts, whether all of that can be known, whether
//! it writes files. Permission rules (`execute_command(rm:*)`, `Bash(git diff:*)`) are
//! matched against what [`analyze`] finds, so `/bin/rm`, `\rm`, `env rm`, `xargs rm`,
//! `find -delete` or `sh -c 'rm …'` are all `rm`.
//!
//! Nothing here runs or expands anything. The lexer and parser cover POSIX sh and the
//! bash syntax a command line meets; text they cannot read with certainty makes the
//! analysis uncertain, and an uncertain command is never allowed by a rule (it is asked).

mod analyze;
mod lexer;
mod parser;

pub use analyze::{Analysis, Invocation, analyze};
