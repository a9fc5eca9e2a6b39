"""An editor driving `loki --acp` through the official ACP Python SDK
(`pip install agent-client-protocol`), as tests/suite/acp.rs asks.

It keeps the connection open and waits for every answer before it sends the next
request, answers permission requests as a person would, and prints one JSON report of
everything it saw. Usage: acp_client.py LOKI_BIN WORK_DIR SCENARIO [SESSION_ID]
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
    EnvVariable,
    FileSystemCapabilities,
    McpServerStdio,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextContentBlock,
)


class Editor:
    """The client side: records updates, answers permission requests from a script."""

    def __init__(self, answers, buffers=None):
        self.updates = []
        self.permissions = []
        self.answers = list(answers)
        # Unsaved editor buffers: what the agent must see instead of the disk.
        self.buffers = buffers or {}
        self.reads = []
        self.writes = []

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(
            {
                "session": session_id,
                "tool_call": tool_call.model_dump(by_alias=True, exclude_none=True),
                "options": [o.option_id for o in options],
            }
        )
        answer = self.answers.pop(0) if self.answers else "cancelled"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))

    async def write_text_file(self, session_id, path, content, **kwargs):
        if not self.buffers:
            raise RuntimeError("not offered")
        self.writes.append({"path": path, "content": content})
        self.buffers[path] = content
        return None

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        if path not in self.buffers:
            raise RuntimeError("not offered")
        self.reads.append(path)
        from acp.schema import ReadTextFileResponse
        return ReadTextFileResponse(content=self.buffers[path])

    def take(self):
        updates, self.updates = self.updates, []
        return updates


def text_of(updates, kind="agent_message_chunk"):
    return "".join(
        u["content"].get("text", "") for u in updates if u.get("sessionUpdate") == kind
    )


async def prompt(conn, editor, session_id, text):
    response = await conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)])
    return {"stop": response.stop_reason, "updates": editor.take()}


async def main():
    loki, work, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
    report = {}
    editor = Editor(["allow_once", "reject_once"])
    env = json.loads(os.environ["LOKI_TEST_ENV"])
    offers_fs = scenario == "buffers"
    if offers_fs:
        editor = Editor(["allow_once"], {os.path.join(work, "notes.md"): "unsaved buffer text\n"})
    async with acp.spawn_agent_process(editor, loki, "--acp", cwd=work, env=env) as (conn, process):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=offers_fs, write_text_file=offers_fs)),
        )
        report["initialize"] = init.model_dump(by_alias=True, exclude_none=True)
        if scenario == "work":
            session = await conn.new_session(cwd=work, mcp_servers=[])
            report["new"] = session.model_dump(by_alias=True, exclude_none=True)
            sid = session.session_id
            report["hello"] = await prompt(conn, editor, sid, "hello there")
            report["command"] = await prompt(conn, editor, sid, "make a file")
            report["write"] = await prompt(conn, editor, sid, "write the notes")
            # A slow answer, cancelled once its first words arrived.
            task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text="a slow one")]))
            for _ in range(200):
                if text_of(editor.updates):
                    break
                await asyncio.sleep(0.05)
            await conn.cancel(session_id=sid)
            slow = await asyncio.wait_for(task, 30)
            report["slow"] = {"stop": slow.stop_reason, "updates": editor.take()}
            report["permissions"] = editor.permissions
        elif scenario == "buffers":
            session = await conn.new_session(cwd=work, mcp_servers=[])
            sid = session.session_id
            report["read"] = await prompt(conn, editor, sid, "read the notes")
            report["write"] = await prompt(conn, editor, sid, "write the notes")
            report["reads"] = editor.reads
            report["writes"] = editor.writes
        elif scenario == "mcp":
            # The editor brings an MCP server of its own (argv[4] is its binary).
            server = McpServerStdio(
                name="editor",
                command=sys.argv[4],
                args=[],
                env=[EnvVariable(name="SECRET_TOKEN", value="from-the-editor")],
            )
            session = await conn.new_session(cwd=work, mcp_servers=[server])
            report["ask"] = await prompt(conn, editor, session.session_id, "ask the editor's server")
        elif scenario == "project":
            # A session in another directory: its project's rules apply (argv[4]).
            session = await conn.new_session(cwd=sys.argv[4], mcp_servers=[])
            report["remove"] = await prompt(conn, editor, session.session_id, "remove the file")
        elif scenario == "link":
            # Linked files whose names the editor percent-encodes: a space, and brackets
            # (a route file, `[id].tsx`) that are no glob here.
            session = await conn.new_session(cwd=work, mcp_servers=[])
            link = lambda encoded, name: ResourceContentBlock(
                type="resource_link", uri="file://" + os.path.join(work, encoded), name=name
            )
            blocks = [
                TextContentBlock(type="text", text="summarize the link"),
                link("my%20notes.txt", "my notes.txt"),
                link("pages/%5Bid%5D.tsx", "[id].tsx"),
            ]
            try:
                response = await conn.prompt(session_id=session.session_id, prompt=blocks)
                report["link"] = {"stop": response.stop_reason, "updates": editor.take()}
            except Exception as e:  # the agent's JSON-RPC error
                report["link"] = {"error": str(e)}
        elif scenario == "mention":
            # `@path` in a prompt's text attaches the file, as in the CLI.
            session = await conn.new_session(cwd=work, mcp_servers=[])
            report["mention"] = await prompt(conn, editor, session.session_id, sys.argv[4])
        elif scenario == "edit":
            # An approved write: every update of its card, the last one included.
            editor.answers = ["allow_once"]
            session = await conn.new_session(cwd=work, mcp_servers=[])
            report["write"] = await prompt(conn, editor, session.session_id, "write the notes")
        elif scenario == "role":
            # A role command (offered in available_commands) once the session has messages.
            session = await conn.new_session(cwd=work, mcp_servers=[])
            sid = session.session_id
            await asyncio.sleep(0.2)
            report["offered"] = editor.take()
            report["hello"] = await prompt(conn, editor, sid, "hello there")
            try:
                report["role"] = await prompt(conn, editor, sid, "/pirate say hi")
            except Exception as e:
                report["role"] = {"error": str(e)}
            report["after"] = await prompt(conn, editor, sid, "hello again")
        elif scenario == "plan":
            # The model keeps a todo list; the editor's plan follows it.
            session = await conn.new_session(cwd=work, mcp_servers=[])
            sid = session.session_id
            await asyncio.sleep(0.2)
            editor.take()
            report["plan"] = await prompt(conn, editor, sid, "make a plan")
            report["hello"] = await prompt(conn, editor, sid, "hello there")
            report["clear"] = await prompt(conn, editor, sid, "clear the plan")
        elif scenario == "load":
            sid = sys.argv[4]
            await conn.load_session(cwd=work, session_id=sid, mcp_servers=[])
            await asyncio.sleep(0.2)
            report["replayed"] = editor.take()
            report["again"] = await prompt(conn, editor, sid, "what came first?")
            try:
                await conn.load_session(cwd=work, session_id="no-such-session", mcp_servers=[])
                report["unknown"] = "loaded"
            except Exception as e:  # the agent's JSON-RPC error
                report["unknown"] = str(e)
    report["exit"] = process.returncode
    print(json.dumps(report))


asyncio.run(main())
