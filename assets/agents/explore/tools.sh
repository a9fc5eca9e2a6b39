#!/usr/bin/env bash
# Tools of the explore agent. Each `# @cmd` function is one tool; `@option` lines are
# its parameters (loki passes them as argc_<name> variables). Output goes to
# $LLM_OUTPUT when set, else stdout.
set -euo pipefail

_out() {
    if [[ -n "${LLM_OUTPUT:-}" ]]; then cat >>"$LLM_OUTPUT"; else cat; fi
}

# Directories skipped by every search.
_prune=(-name .git -o -name node_modules -o -name target -o -name .venv -o -name __pycache__)

# @cmd Show the project's directory tree, three levels deep, without build and VCS folders
get_structure() {
    find . \( "${_prune[@]}" \) -prune -o -maxdepth 3 -print 2>/dev/null | sort | head -n 400 | _out
}

# @cmd Find files whose name matches a shell pattern
# @option --pattern! The file name pattern, e.g. *.rs or config*
search_files() {
    find . \( "${_prune[@]}" \) -prune -o -type f -name "$argc_pattern" -print 2>/dev/null | sort | head -n 200 | _out
}

# @cmd Search file contents for a regular expression; prints file:line:text
# @option --pattern! The extended regular expression to look for
# @option --file-type Only files with this extension, e.g. py
search_content() {
    local include=()
    if [[ -n "${argc_file_type:-}" ]]; then include=(--include "*.${argc_file_type}"); fi
    grep -rnE "${include[@]}" --exclude-dir=.git --exclude-dir=node_modules --exclude-dir=target \
        -e "$argc_pattern" . 2>/dev/null | head -n 200 | _out || true
}
