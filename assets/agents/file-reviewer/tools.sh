#!/usr/bin/env bash
# Tools of the code-reviewer agent (and of file-reviewer, which has a copy).
set -euo pipefail
# @meta require-tools git

_out() {
    if [[ -n "${LLM_OUTPUT:-}" ]]; then cat >>"$LLM_OUTPUT"; else cat; fi
}

# @cmd Show the changes against a base: without a file, the list of changed files; with one, its diff
# @option --file A changed file to show the diff of
# @option --base What to compare with (default HEAD)
get_diff() {
    local base="${argc_base:-HEAD}"
    if [[ -z "${argc_file:-}" ]]; then
        git diff --stat "$base" -- . 2>&1 | _out
    else
        git diff "$base" -- "$argc_file" 2>&1 | head -n 2000 | _out
    fi
}
