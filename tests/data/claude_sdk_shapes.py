"""A program using the Claude Agent SDK with loki as its CLI, written as Claude's docs
write one: it reads tools by Claude's names in Claude's shapes (`Write` with
`file_path`, `content`). tests/suite/claude_sdk.rs runs it. Prints one JSON report.

Usage: claude_sdk_shapes.py LOKI_BIN WORK_DIR SCENARIO

Scenarios:
  env_hook   Claude's documented PreToolUse hook that keeps writes off `.env`
             (matcher "Write|Edit", reads tool_input["file_path"]); edits are accepted
             without asking (permission_mode acceptEdits), so only the hook stands in
             the way.
  redirect   can_use_tool sees a Write's input and allows it with a changed file_path;
             a PostToolUse hook records the tool_response.
"""

import asyncio
import json
import os
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
    ToolUseBlock,
)


async def tool_uses(client):
    """The tool_use blocks of one response, by name and input."""
    uses = []
    async for message in client.receive_response():
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    uses.append({"name": block.name, "input": block.input})
        elif isinstance(message, ResultMessage):
            break
    return uses


async def env_hook(loki, work, env):
    seen = []

    # As in Claude's hook documentation.
    async def protect_env_files(input_data, tool_use_id, context):
        file_path = input_data["tool_input"].get("file_path", "")
        seen.append({"tool": input_data["tool_name"], "file_path": file_path})
        file_name = file_path.split("/")[-1]
        if file_name == ".env":
            return {
                "hookSpecificOutput": {
                    "hookEventName": input_data["hook_event_name"],
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "Cannot modify .env files",
                }
            }
        return {}

    options = ClaudeAgentOptions(
        cli_path=loki,
        cwd=work,
        env=env,
        permission_mode="acceptEdits",
        hooks={"PreToolUse": [HookMatcher(matcher="Write|Edit", hooks=[protect_env_files])]},
    )
    async with ClaudeSDKClient(options=options) as client:
        await client.query("write the env file")
        uses = await tool_uses(client)
    return {"seen": seen, "uses": uses}


async def redirect(loki, work, env):
    asked, responses = [], []

    async def can_use_tool(tool_name, tool_input, context):
        asked.append({"tool": tool_name, "input": tool_input})
        if tool_name == "Write":
            changed = dict(tool_input)
            changed["file_path"] = "changed.txt"
            return PermissionResultAllow(updated_input=changed)
        return PermissionResultAllow()

    async def post_tool_use(input_data, tool_use_id, context):
        responses.append({"tool": input_data["tool_name"], "input": input_data["tool_input"], "response": input_data["tool_response"]})
        return {}

    options = ClaudeAgentOptions(
        cli_path=loki,
        cwd=work,
        env=env,
        can_use_tool=can_use_tool,
        hooks={"PostToolUse": [HookMatcher(matcher="Write", hooks=[post_tool_use])]},
    )
    async with ClaudeSDKClient(options=options) as client:
        await client.query("write the original file")
        uses = await tool_uses(client)
    return {"asked": asked, "responses": responses, "uses": uses}


async def main():
    loki, work, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
    env = json.loads(os.environ["LOKI_TEST_ENV"])
    run = {"env_hook": env_hook, "redirect": redirect}[scenario]
    report = await run(loki, work, env)
    print(json.dumps(report))


asyncio.run(main())
