#!/usr/bin/env node
// Driver for the MCP conformance suite's client scenarios (scripts/mcp-conformance).
//
// The suite runs `node mcp-conformance-client.mjs <server-url>` with MCP_CONFORMANCE_*
// variables set. loki is an LLM CLI, not an MCP library, so this driver plays both the
// model and the user: it serves a fake OpenAI-compatible model on 127.0.0.1 whose first
// answer asks for the scenario's tool calls, writes a throwaway loki config pointing at
// the scenario's server, signs in with `loki --mcp-login conf` for auth scenarios (this
// script is also the "browser": `browse URL`) and once more when the run says to,
// answers MCP forms over stream-json, and exits with loki's exit code. No npm deps.
//
// Env: LOKI_BIN (the binary), MCP_CONFORMANCE_WORKDIR (keep loki's dirs there instead of
// a temp dir), MCP_CONFORMANCE_DRIVER_TIMEOUT (seconds per loki run, default 100).

import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
const SERVER = 'conf';
const log = (...a) => {
  const line = `[driver] ${a.join(' ')}\n`;
  // The browser runs with loki's stdio closed: it logs to a file the driver prints.
  if (process.argv[2] === 'browse' && process.env.MCP_CONFORMANCE_BROWSE_LOG) {
    fs.appendFileSync(process.env.MCP_CONFORMANCE_BROWSE_LOG, line);
  } else process.stderr.write(line);
};

// ---- `browse URL`: a browser whose user is signed in and consents at once ----
async function browse(url) {
  log('browse', url);
  let res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (!location) {
    log(`authorization page answered ${res.status} without a redirect:`, (await res.text()).slice(0, 500));
    process.exit(1);
  }
  const next = new URL(location, url).href;
  log('redirected to', next);
  res = await fetch(next, { redirect: 'manual' });
  log(`loopback answered ${res.status}:`, (await res.text()).replace(/\s+/g, ' ').slice(0, 300));
}

// ---- what the fake model asks for, per scenario ----
const fnName = (tool) => `${SERVER}_${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);

/** The function loki offers for the server's `tool`, or undefined. */
function findFn(tools, tool) {
  const want = fnName(tool);
  const names = (tools || []).map((t) => t.function?.name ?? t.name);
  return names.find((n) => n === want) ?? names.find((n) => n.endsWith(`_${tool}`));
}
const fnSchema = (tools, name) =>
  (tools || []).find((t) => (t.function?.name ?? t.name) === name)?.function?.parameters;

/** [{tool, args}] the model calls in its first answer. */
function plan(scenario, ctx, tools) {
  const offered = (tools || []).map((t) => t.function?.name ?? t.name);
  switch (scenario) {
    case 'initialize':
    case 'request-metadata':
    case 'json-schema-ref-no-deref':
      return [];
    case 'tools_call':
      return [{ tool: 'add_numbers', args: { a: 2, b: 3 } }];
    case 'elicitation-sep1034-client-defaults':
      return [{ tool: 'test_client_elicitation_defaults', args: {} }];
    case 'sse-retry':
      return [{ tool: 'test_reconnection', args: {} }];
    case 'sep-2322-client-request-state':
      return ['test_mrtr_echo_state', 'test_mrtr_unrelated', 'test_mrtr_no_state', 'test_mrtr_no_result_type'].map(
        (tool) => ({ tool, args: {} })
      );
    case 'http-standard-headers':
      return [
        { tool: 'test_headers', args: {} },
        { tool: 'my-hyphenated-tool', args: {} },
      ];
    case 'http-custom-headers':
      return (ctx.toolCalls || []).map((c) => ({ tool: c.name, args: c.arguments }));
    case 'http-invalid-tool-headers': {
      // A model calls whatever it is offered: valid_tool, plus any invalid tool loki let through.
      const calls = [{ tool: 'valid_tool', args: { region: 'us-west1' } }];
      for (const n of offered) {
        const m = n.match(/^conf_(invalid_.*)$/);
        if (m) calls.push({ tool: m[1], args: { value: 'x', data: {}, items: ['a'], nil: null, field1: 'a', field2: 'b' } });
      }
      return calls;
    }
    case 'json-schema-2020-12-preservation': {
      const focal = findFn(tools, 'json_schema_2020_12_tool');
      return [{ tool: 'json_schema_echo', args: { schema: fnSchema(tools, focal) ?? null } }];
    }
    default:
      if (scenario.startsWith('auth/')) return [{ tool: 'test-tool', args: {} }];
      return offered.map((n) => ({ fn: n, args: {} }));
  }
}

// ---- the fake OpenAI-compatible model ----
function chunk(delta, finish) {
  return { id: 'chatcmpl-conf', object: 'chat.completion.chunk', created: 0, model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finish ?? null }] };
}

function startModel(scenario, ctx) {
  let calls = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      let request = {};
      try { request = JSON.parse(body); } catch { /* empty */ }
      const messages = request.messages || [];
      const tools = request.tools || [];
      const firstRound = !messages.some((m) => m.role === 'tool');
      log(`model request: stream=${!!request.stream} tools=[${tools.map((t) => t.function?.name).join(', ')}] ` +
        `tool results=${messages.filter((m) => m.role === 'tool').length}`);
      for (const m of messages.filter((x) => x.role === 'tool')) {
        log('  tool result:', String(m.content).slice(0, 400));
        server.toolResults += `${m.content}\n`;
      }
      let toolCalls = [];
      if (firstRound) {
        for (const step of plan(scenario, ctx, tools)) {
          const name = step.fn ?? findFn(tools, step.tool);
          if (!name) { log(`tool ${step.tool} is not offered by loki; skipping it`); continue; }
          toolCalls.push({ id: `call_${++calls}`, type: 'function',
            function: { name, arguments: JSON.stringify(step.args ?? {}) } });
        }
        log('model asks for:', toolCalls.map((c) => `${c.function.name} ${c.function.arguments}`).join(' | ') || '(no calls)');
      }
      const text = toolCalls.length ? null : 'done';
      if (request.stream) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        const send = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
        if (toolCalls.length) {
          send(chunk({ role: 'assistant', content: null, tool_calls: toolCalls.map((c, index) => ({ index, ...c })) }));
          send(chunk({}, 'tool_calls'));
        } else {
          send(chunk({ role: 'assistant', content: '' }));
          send(chunk({ content: text }));
          send(chunk({}, 'stop'));
        }
        send({ id: 'chatcmpl-conf', object: 'chat.completion.chunk', created: 0, model: 'gpt-4o-mini', choices: [],
          usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
        res.end('data: [DONE]\n\n');
      } else {
        const message = { role: 'assistant', content: text, ...(toolCalls.length && { tool_calls: toolCalls }) };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-conf', object: 'chat.completion', created: 0, model: 'gpt-4o-mini',
          choices: [{ index: 0, message, finish_reason: toolCalls.length ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
      }
    });
  });
  server.toolResults = ''; // what the tools answered, as the model saw it
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// ---- running loki ----
const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** Runs loki; with `answerForms`, over stream-json, answering every question.
 *  Resolves to {code, out} (out: its stdout and stderr). */
function runLoki(args, env, cwd, { answerForms = false } = {}) {
  const bin = process.env.LOKI_BIN || 'loki';
  const limit = Number(process.env.MCP_CONFORMANCE_DRIVER_TIMEOUT || 100) * 1000;
  log('run:', bin, args.join(' '));
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const timer = setTimeout(() => { log(`loki still running after ${limit / 1000}s; killing it`); child.kill('SIGKILL'); }, limit);
    let out = '';
    child.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
    let buf = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
      if (!answerForms) return;
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let ev;
        try { ev = JSON.parse(line); } catch { continue; }
        if (ev.type === 'question_asked') {
          const answer = answerFor(ev);
          log(`answering ${ev.question_id} (${ev.kind}: ${ev.prompt}) with ${JSON.stringify(answer)}`);
          child.stdin.write(JSON.stringify({ type: 'answer', question_id: ev.question_id, answer }) + '\n');
        } else if (ev.type === 'turn_finished' || ev.type === 'turn_aborted') {
          child.stdin.end();
        }
      }
    });
    if (answerForms) {
      child.stdin.write(JSON.stringify({ type: 'user', message: { role: 'user', content: 'use the tools' } }) + '\n');
    } else {
      child.stdin.end();
    }
    child.on('error', (e) => { log('cannot run loki:', e.message); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      log(`loki ${args[0]} exited with ${code ?? signal}`);
      resolve({ code: code ?? 1, out });
    });
  });
}

/** A user who accepts the form and takes every default: "" for each field that shows
 *  one (loki then fills in the field's default), else yes / the first option. */
function answerFor(ev) {
  const hasDefault = /\[default: .*\]\s*$/.test(String(ev.prompt));
  if (hasDefault) return '';
  if (ev.kind === 'confirm') return 'yes';
  if (ev.kind === 'select') return (ev.options || [])[0] ?? '';
  return '';
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === 'browse') return browse(argv[argv.length - 1]);
  const url = argv[argv.length - 1];
  if (!url) { log('usage: mcp-conformance-client.mjs <server-url> | browse <url>'); process.exit(2); }
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO || '';
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  let ctx = {};
  try { ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}'); } catch { /* empty */ }
  log(`scenario ${scenario} version ${version ?? '-'} url ${url}`);

  const model = await startModel(scenario, ctx);
  const port = model.address().port;
  const root = process.env.MCP_CONFORMANCE_WORKDIR || fs.mkdtempSync(path.join(os.tmpdir(), 'loki-conf-'));
  const dirs = { config: path.join(root, 'config'), home: path.join(root, 'home'), cache: path.join(root, 'cache'), work: path.join(root, 'work') };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.mkdirSync(path.join(dirs.config, 'functions'), { recursive: true });
  fs.writeFileSync(path.join(dirs.config, 'config.yaml'), `model: fake:gpt-4o-mini
clients:
  - type: openai-compatible
    name: fake
    api_base: http://127.0.0.1:${port}/v1
    api_key: test-key
    models:
      - name: gpt-4o-mini
        supports_function_calling: true
    extra:
      max_retries: 1
      retry_base_delay_ms: 10
enabled_mcp_servers: ${SERVER}
mcp_tool_exposure: direct
mcp_start_wait: 30
`);
  const isAuth = scenario.startsWith('auth/');
  const entry = { type: 'http', url };
  if (version) entry.protocolVersion = version;
  if (isAuth) {
    entry.oauth = ctx.client_id
      ? { client_id: ctx.client_id, ...(ctx.client_secret && { client_secret: ctx.client_secret }) }
      : { client_metadata_url: CIMD_URL };
  }
  fs.writeFileSync(path.join(dirs.config, 'functions', 'mcp.json'), JSON.stringify({ mcpServers: { [SERVER]: entry } }, null, 2));
  log('mcp.json:', JSON.stringify(entry));

  const env = {
    PATH: process.env.PATH,
    HOME: dirs.home,
    LOKI_CONFIG_DIR: dirs.config,
    XDG_CACHE_HOME: dirs.cache,
    LOKI_BROWSER: `${q(process.execPath)} ${q(SELF)} browse`,
    OLLAMA_API_BASE: 'http://127.0.0.1:9/v1',
    LLAMACPP_API_BASE: 'http://127.0.0.1:9/v1',
    NO_COLOR: '1',
    MCP_CONFORMANCE_BROWSE_LOG: path.join(root, 'browser.log'),
  };
  if (process.env.RUST_LOG) env.RUST_LOG = process.env.RUST_LOG;

  const browseLog = env.MCP_CONFORMANCE_BROWSE_LOG;
  const signIn = async () => {
    fs.rmSync(browseLog, { force: true });
    const { code } = await runLoki(['--mcp-login', SERVER], env, dirs.work);
    try { process.stderr.write(fs.readFileSync(browseLog, 'utf8')); } catch { log('the browser was never opened'); }
    if (code !== 0) {
      log('sign-in failed; not running the conversation');
      model.close();
      process.exit(code);
    }
  };
  const forms = ['elicitation-sep1034-client-defaults', 'sep-2322-client-request-state'].includes(scenario);
  const converse = () => forms
    ? runLoki(['--yolo', '--input-format', 'stream-json', '--output-format', 'stream-json'], env, dirs.work, { answerForms: true })
    : runLoki(['--yolo', 'use the tools'], env, dirs.work);

  if (isAuth) await signIn();
  let { code, out } = await converse();
  // A user does what loki says: when the run (its output, or a tool result the model
  // got) asks for `loki --mcp-login conf` (a token that lost its sign-in, a step-up to
  // more scopes), sign in again and repeat the run, once.
  if (isAuth && (out + model.toolResults).includes(`--mcp-login ${SERVER}`)) {
    log(`loki asks for a new sign-in (\`loki --mcp-login ${SERVER}\`); signing in again and repeating the run`);
    await signIn();
    ({ code } = await converse());
  }
  model.close();
  process.exit(code);
}

main().catch((e) => { log('driver error:', e?.stack || e); process.exit(1); });
