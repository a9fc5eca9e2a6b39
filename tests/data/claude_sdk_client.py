"""A program using the Claude Agent SDK (`pip install claude-agent-sdk`) with loki as its
CLI (`cli_path`), as tests/suite/claude_sdk.rs asks. Prints one JSON report.

Usage: claude_sdk_client.py LOKI_BIN WORK_DIR SCENARIO [SESSION_ID]
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
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)


def describe(message):
    if isinstance(message, SystemMessage):
        return {"kind": "system", "subtype": message.subtype, "data": message.data}
    if isinstance(message, AssistantMessage):
        blocks = []
        for block in message.content:
            if isinstance(block, TextBlock):
                blocks.append({"text": block.text})
            elif isinstance(block, ToolUseBlock):
                blocks.append({"tool_use": block.name, "id": block.id, "input": block.input})
        return {"kind": "assistant", "model": message.model, "blocks": blocks}
    if isinstance(message, UserMessage):
        results = []
        if isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    results.append({"id": block.tool_use_id, "content": block.content, "is_error": block.is_error})
        return {"kind": "user", "results": results}
    if isinstance(message, ResultMessage):
        return {
            "kind": "result",
            "subtype": message.subtype,
            "is_error": message.is_error,
            "result": message.result,
            "session_id": message.session_id,
            "num_turns": message.num_turns,
        }
    if isinstance(message, StreamEvent):
        return {"kind": "stream", "event": message.event}
    return {"kind": type(message).__name__}


async def collect(messages):
    return [describe(m) async for m in messages]


async def main():
    loki, work, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
    env = json.loads(os.environ["LOKI_TEST_ENV"])
    report = {}
    if scenario == "query":
        options = ClaudeAgentOptions(cli_path=loki, cwd=work, env=env)
        report["messages"] = await collect(query(prompt="hello there", options=options))
    elif scenario == "client":
        asked, hooked = [], []

        async def can_use_tool(tool_name, tool_input, context):
            asked.append({"tool": tool_name, "input": tool_input})
            if tool_name == "Bash":
                return PermissionResultAllow()
            return PermissionResultDeny(message="not that file")

        async def pre_tool_use(hook_input, tool_use_id, context):
            hooked.append({"event": hook_input["hook_event_name"], "tool": hook_input.get("tool_name")})
            return {}

        async def on_prompt(hook_input, tool_use_id, context):
            hooked.append({"event": hook_input["hook_event_name"], "prompt": hook_input.get("prompt")})
            if "forbidden" in hook_input.get("prompt", ""):
                return {"decision": "block", "reason": "no forbidden prompts"}
            return {}

        async def on_stop(hook_input, tool_use_id, context):
            hooked.append({"event": hook_input["hook_event_name"]})
            return {}

        options = ClaudeAgentOptions(
            cli_path=loki,
            cwd=work,
            env=env,
            can_use_tool=can_use_tool,
            include_partial_messages=True,
            hooks={
                "PreToolUse": [HookMatcher(matcher="Bash", hooks=[pre_tool_use])],
                "UserPromptSubmit": [HookMatcher(hooks=[on_prompt])],
                "Stop": [HookMatcher(hooks=[on_stop])],
            },
        )
        async with ClaudeSDKClient(options=options) as client:
            for name, prompt in [("command", "make a file"), ("write", "write the notes"), ("blocked", "a forbidden thing")]:
                await client.query(prompt)
                report[name] = await collect(client.receive_response())
            await client.query("a slow one")
            slow = []
            interrupted = False
            async for message in client.receive_response():
                slow.append(describe(message))
                if not interrupted and isinstance(message, StreamEvent):
                    interrupted = True
                    await client.interrupt()
            report["slow"] = slow
            await client.query("what came first?")
            report["again"] = await collect(client.receive_response())
        report["asked"] = asked
        report["hooked"] = hooked
    elif scenario == "servers":
        # A server living in the program, one loki starts (argv[4]), hooks around every
        # call, and can_use_tool changing what runs.
        seen = []

        @tool("add", "Adds two numbers", {"a": int, "b": int})
        async def add(args):
            seen.append(args)
            return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

        async def before(hook_input, tool_use_id, context):
            seen.append({"pre": hook_input["tool_name"], "input": hook_input["tool_input"]})
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"a": 40, "b": 2}}}

        async def after(hook_input, tool_use_id, context):
            seen.append({"post": hook_input["tool_name"], "response": hook_input["tool_response"]})
            return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "checked by the program"}}

        async def can_use_tool(tool_name, tool_input, context):
            seen.append({"asked": tool_name, "input": tool_input})
            return PermissionResultAllow(updated_input={"command": "touch edited"})

        options = ClaudeAgentOptions(
            cli_path=loki,
            cwd=work,
            env=env,
            can_use_tool=can_use_tool,
            mcp_servers={
                "calc": create_sdk_mcp_server("calc", tools=[add]),
                "ext": {"type": "stdio", "command": sys.argv[4], "env": {"SECRET_TOKEN": "from-the-program"}},
            },
            hooks={
                "PreToolUse": [HookMatcher(matcher="mcp__calc__add", hooks=[before])],
                "PostToolUse": [HookMatcher(matcher="mcp__calc__add", hooks=[after])],
            },
        )
        async with ClaudeSDKClient(options=options) as client:
            for name, prompt in [("calc", "use the calculator"), ("ext", "ask the other server"), ("command", "make a file")]:
                await client.query(prompt)
                report[name] = await collect(client.receive_response())
            report["status"] = await client.get_mcp_status()
        report["seen"] = seen
    elif scenario == "resume":
        options = ClaudeAgentOptions(cli_path=loki, cwd=work, env=env, resume=sys.argv[4])
        report["messages"] = await collect(query(prompt="what came first?", options=options))
    print(json.dumps(report))


asyncio.run(main())
