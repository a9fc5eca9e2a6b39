// An editor driving `loki --acp` through the ACP TypeScript SDK's client
// (`@agentclientprotocol/sdk`, pinned in tests/clients), as tests/suite/acp_typescript.rs
// asks. It keeps loki's stdin open for the whole run, as an editor does: `initialize`, a
// session started with the SDK's session helper (whose queue routes the session's
// updates), prompts read from that queue until their stop, permission requests allowed,
// and a slow answer cancelled. It prints one JSON report of everything it saw.
//
// Usage: node acp_ts_client.mjs LOKI_BIN WORK_DIR CLIENTS_DIR (LOKI_TEST_ENV: loki's env)

import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [loki, work, clientsDir] = process.argv.slice(2);
// The SDK is installed in tests/clients, not next to this script: resolved from there.
const require = createRequire(join(clientsDir, "package.json"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const env = JSON.parse(process.env.LOKI_TEST_ENV);
const child = spawn(loki, ["--acp"], { cwd: work, env, stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const report = { permissions: [] };
const app = acp
  .client({ name: "loki-test-editor" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    report.permissions.push(params);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });

/** The next message of the session's queue, or `{kind: "timeout"}` after `ms`. */
function next(session, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timeout" }), ms);
  });
  return Promise.race([session.nextUpdate(), late]).finally(() => clearTimeout(timer));
}

/** One prompt: the session's updates until its stop; `onUpdate` sees each as it comes. */
async function turn(session, text, onUpdate = async () => {}) {
  session.prompt(text).catch(() => {});
  const updates = [];
  for (;;) {
    const message = await next(session, 30000);
    if (message.kind === "timeout") {
      return { stop: "timeout", updates };
    }
    if (message.kind === "stop") {
      return { stop: message.stopReason, updates };
    }
    updates.push(message.update);
    await onUpdate(message.update);
  }
}

try {
  await app.connectWith(stream, async (ctx) => {
    report.initialize = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const session = await ctx.buildSession(work).start();
    report.sessionId = session.sessionId;
    // The session's first update: the `/` commands it offers.
    const first = await next(session, 5000);
    report.first = first.kind === "timeout" ? "timeout" : first.update;
    report.hello = await turn(session, "hello there");
    report.command = await turn(session, "make a file");
    report.write = await turn(session, "write the notes");
    report.plan = await turn(session, "make a plan");
    // A slow answer, cancelled once its first words arrived.
    let cancelled = false;
    report.slow = await turn(session, "a slow one", async (update) => {
      if (!cancelled && update.sessionUpdate === "agent_message_chunk") {
        cancelled = true;
        await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
      }
    });
    session.dispose();
  });
} catch (error) {
  report.error = String(error?.stack ?? error);
}
// The connection is closed: loki reads the end of its input and exits.
child.stdin.end();
report.exit = await exited;
console.log(JSON.stringify(report));
