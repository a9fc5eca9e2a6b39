"""An editor driving Zed's Claude adapter (`@zed-industries/claude-agent-acp`, pinned in
tests/clients) through the official ACP Python SDK, the adapter running loki as its
Claude Code CLI (`CLAUDE_CODE_EXECUTABLE`), as tests/suite/zed_adapter.rs asks.

It keeps the connection open and waits for every answer before it sends the next
request, answers permission requests as a person would, and prints one JSON report of
everything it saw. Usage: zed_adapter_client.py ADAPTER_BIN WORK_DIR
(the environment, loki's included, in LOKI_TEST_ENV).
"""

import asyncio
import json
import os
import sys

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    RequestPermissionResponse,
    TextContentBlock,
)


class Editor:
    """The client side: records updates, allows the first permission request."""

    def __init__(self):
        self.updates = []
        self.permissions = []

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(
            {
                "tool_call": tool_call.model_dump(by_alias=True, exclude_none=True),
                "options": [o.option_id for o in options],
            }
        )
        if "allow" in [o.option_id for o in options]:
            return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))

    def take(self):
        updates, self.updates = self.updates, []
        return updates


def text_of(updates):
    return "".join(
        u["content"].get("text", "") for u in updates if u.get("sessionUpdate") == "agent_message_chunk"
    )


async def prompt(conn, editor, session_id, text):
    response = await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)]), 60
    )
    return {"stop": response.stop_reason, "updates": editor.take()}


async def main():
    adapter, work = sys.argv[1], sys.argv[2]
    env = json.loads(os.environ["LOKI_TEST_ENV"])
    editor = Editor()
    report = {}
    async with acp.spawn_agent_process(editor, adapter, cwd=work, env=env) as (conn, process):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False)),
        )
        report["initialize"] = init.model_dump(by_alias=True, exclude_none=True)
        session = await asyncio.wait_for(conn.new_session(cwd=work, mcp_servers=[]), 60)
        report["new"] = session.model_dump(by_alias=True, exclude_none=True)
        sid = session.session_id
        report["hello"] = await prompt(conn, editor, sid, "hello there")
        report["write"] = await prompt(conn, editor, sid, "write the notes")
        report["permissions"] = editor.permissions
        # A slow answer, cancelled once its first words arrived.
        task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text="a slow one")]))
        for _ in range(400):
            if text_of(editor.updates):
                break
            await asyncio.sleep(0.05)
        await conn.cancel(session_id=sid)
        slow = await asyncio.wait_for(task, 60)
        report["slow"] = {"stop": slow.stop_reason, "updates": editor.take()}
    print(json.dumps(report))


asyncio.run(main())
