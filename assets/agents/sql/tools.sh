#!/usr/bin/env bash
# Tools of the sql agent: usql against $LLM_AGENT_VAR_DSN.
set -euo pipefail
# @meta require-tools usql

_out() {
    if [[ -n "${LLM_OUTPUT:-}" ]]; then cat >>"$LLM_OUTPUT"; else cat; fi
}

# @cmd List the tables of the database
list_tables() {
    usql "$LLM_AGENT_VAR_DSN" -c '\dt' 2>&1 | _out
}

# @cmd Show the columns of a table
# @option --table! The table
describe_table() {
    usql "$LLM_AGENT_VAR_DSN" -c "\\d $argc_table" 2>&1 | _out
}

# @cmd Run a read-only SQL query and show its result
# @option --query! The SQL query (SELECT … only)
run_query() {
    case "$(printf '%s' "$argc_query" | tr '[:lower:]' '[:upper:]' | sed 's/^[[:space:]]*//')" in
        SELECT*|WITH*|EXPLAIN*|SHOW*) ;;
        *) echo "refused: only SELECT, WITH, EXPLAIN and SHOW queries are run" | _out; return 0 ;;
    esac
    usql "$LLM_AGENT_VAR_DSN" -c "$argc_query" 2>&1 | head -n 500 | _out
}
