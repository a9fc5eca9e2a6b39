"""One prompt from a Claude Agent SDK program (`pip install claude-agent-sdk`) with loki as
its CLI (`cli_path`) and the options given, as tests/suite/claude_sdk.rs asks: the
session options (`continue_conversation`, `resume`, `session_id`), `max_turns` and
`permission_mode`. Prints one JSON report: every message, and the calls `can_use_tool`
was asked about (it allows them).

Usage: claude_sdk_details.py LOKI_BIN WORK_DIR PROMPT OPTIONS_JSON
"""

import asyncio
import json
import os
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    ResultMessage,
    SystemMessage,
    TextBlock,
)


def describe(message):
    if isinstance(message, SystemMessage):
        return {"kind": "system", "subtype": message.subtype, "data": message.data}
    if isinstance(message, AssistantMessage):
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        return {"kind": "assistant", "text": "".join(texts)}
    if isinstance(message, ResultMessage):
        return {
            "kind": "result",
            "subtype": message.subtype,
            "is_error": message.is_error,
            "result": message.result,
            "session_id": message.session_id,
            "num_turns": message.num_turns,
            "stop_reason": message.stop_reason,
            "usage": message.usage,
            "model_usage": message.model_usage,
            "errors": message.errors,
        }
    return {"kind": type(message).__name__}


async def main():
    loki, work, prompt, given = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    env = json.loads(os.environ["LOKI_TEST_ENV"])
    asked = []

    async def can_use_tool(tool_name, tool_input, context):
        asked.append({"tool": tool_name, "input": tool_input})
        return PermissionResultAllow()

    options = ClaudeAgentOptions(cli_path=loki, cwd=work, env=env, can_use_tool=can_use_tool, **given)
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        messages = [describe(m) async for m in client.receive_response()]
    print(json.dumps({"messages": messages, "asked": asked}))


asyncio.run(main())
