// loki's web playground: picks a model, role, agent or knowledge base, chats with
// streamed answers (Markdown and highlighted code), shows tool calls and lets you approve
// them, lists and reopens sessions. Everything the model sends is untrusted: it is
// escaped before any formatting, and links are only http(s).
"use strict";

const $ = (id) => document.getElementById(id);
const log = $("log");
$("key").value = sessionStorage.getItem("loki-key") || "";
$("key").addEventListener("change", () => {
  sessionStorage.setItem("loki-key", $("key").value);
  load();
});

function headers() {
  const h = { "content-type": "application/json" };
  if ($("key").value) h.authorization = "Bearer " + $("key").value;
  return h;
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: headers(),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const value = text ? JSON.parse(text) : {};
  if (!response.ok) throw new Error((value.error && value.error.message) || response.statusText);
  return value;
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

const KEYWORDS = new Set(("fn let mut pub struct enum impl use mod match if else for while loop return " +
  "async await const static def class import from as in is not and or None True False self " +
  "function var new this typeof interface type export default package func go defer " +
  "select insert update delete where join create table null true false").split(" "));

// Colours one line of code (already escaped is not assumed: it escapes what it emits).
function highlight(code) {
  const token = /(\/\/.*$|#.*$|--.*$)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/gm;
  let out = "";
  let last = 0;
  code.replace(token, (match, comment, string, number, word, at) => {
    out += escapeHtml(code.slice(last, at));
    const cls = comment ? "com" : string ? "str" : number ? "num" : KEYWORDS.has(word) ? "kw" : "";
    out += cls ? `<span class="${cls}">${escapeHtml(match)}</span>` : escapeHtml(match);
    last = at + match.length;
    return match;
  });
  return out + escapeHtml(code.slice(last));
}

function inline(text) {
  let html = escapeHtml(text);
  html = html.replace(/`([^`]+)`/g, "<code>$1</code>");
  html = html.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  html = html.replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>");
  html = html.replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g,
    '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
  return html;
}

// A small Markdown renderer: fenced code, headings, lists, quotes, paragraphs.
function markdown(text) {
  const lines = text.split("\n");
  let html = "";
  let list = null;
  const closeList = () => { if (list) { html += `</${list}>`; list = null; } };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^```\s*([\w+-]*)/);
    if (fence) {
      closeList();
      const body = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) body.push(lines[i]);
      html += `<pre><code class="lang-${escapeHtml(fence[1])}">${body.map(highlight).join("\n")}</code></pre>`;
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    const bullet = line.match(/^\s*[-*]\s+(.*)$/);
    const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
    if (heading) { closeList(); const n = heading[1].length; html += `<h${n}>${inline(heading[2])}</h${n}>`; }
    else if (bullet || numbered) {
      const kind = bullet ? "ul" : "ol";
      if (list !== kind) { closeList(); html += `<${kind}>`; list = kind; }
      html += `<li>${inline((bullet || numbered)[1])}</li>`;
    } else if (line.startsWith("> ")) { closeList(); html += `<blockquote>${inline(line.slice(2))}</blockquote>`; }
    else if (line.trim() === "") { closeList(); }
    else { closeList(); html += `<p>${inline(line)}</p>`; }
  }
  closeList();
  return html;
}

function add(kind, html) {
  const div = document.createElement("div");
  div.className = kind;
  div.innerHTML = html;
  log.appendChild(div);
  log.scrollTop = log.scrollHeight;
  return div;
}

function say(kind, text) {
  const div = add(kind, "");
  div.textContent = text;
  return div;
}

async function load() {
  try {
    const models = await api("GET", "/v1/models");
    const select = $("model");
    const kept = select.value;
    select.innerHTML = "";
    for (const m of models.data) {
      const option = document.createElement("option");
      option.value = option.textContent = m.id;
      select.appendChild(option);
    }
    if (kept) select.value = kept;
    const sessions = await api("GET", "/v1/sessions");
    const current = $("session").value;
    $("session").innerHTML = '<option value="">(none)</option>';
    for (const s of sessions.sessions) {
      const option = document.createElement("option");
      option.value = s.id || s.name;
      option.textContent = s.name;
      $("session").appendChild(option);
    }
    $("session").value = current;
  } catch (e) {
    say("note error", "loki: " + e.message);
  }
}

async function openSession() {
  log.innerHTML = "";
  const id = $("session").value;
  if (!id) return;
  try {
    const session = await api("GET", "/v1/sessions/" + encodeURIComponent(id));
    for (const m of session.messages || []) {
      const text = typeof m.content === "string" ? m.content : "";
      if (m.role === "user") say("msg user", text);
      else if (m.role === "assistant" && text) add("msg assistant", markdown(text));
    }
  } catch (e) {
    say("note error", e.message);
  }
}

function approvalCard(event) {
  const card = add("approval", "");
  const text = document.createElement("div");
  text.textContent = event.text;
  card.appendChild(text);
  if (event.preview) {
    const pre = document.createElement("pre");
    pre.textContent = event.preview;
    card.appendChild(pre);
  }
  const decide = async (decision) => {
    card.querySelectorAll("button").forEach((b) => (b.disabled = true));
    try {
      await api("POST", "/v1/approvals/" + encodeURIComponent(event.call_id), { decision });
      card.append(" → " + decision);
    } catch (e) {
      card.append(" → " + e.message);
    }
  };
  for (const [label, decision] of [["Allow", "allow"], ["Deny", "deny"]]) {
    const button = document.createElement("button");
    button.textContent = label;
    button.className = "approve-" + decision;
    button.type = "button";
    button.addEventListener("click", () => decide(decision));
    card.appendChild(button);
  }
}

async function send(prompt) {
  say("msg user", prompt);
  const session = $("session").value;
  const model = $("model").value;
  let path = "/v1/completions";
  const body = { prompt, stream: true };
  if (session) {
    path = "/v1/sessions/" + encodeURIComponent(session) + "/completions";
  } else {
    const [kind, name] = model.includes(":") ? model.split(/:(.*)/s) : ["", model];
    if (kind === "role" || kind === "agent" || kind === "rag") body[kind] = name;
    else body.model = model;
  }
  const answer = add("msg assistant", "");
  let text = "";
  let pending = false;
  const render = () => { pending = false; answer.innerHTML = markdown(text); log.scrollTop = log.scrollHeight; };
  const response = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(body) });
  if (!response.ok) {
    const error = await response.json().catch(() => ({}));
    answer.remove();
    say("note error", (error.error && error.error.message) || response.statusText);
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let name = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line.startsWith("event: ")) { name = line.slice(7); continue; }
      if (!line.startsWith("data: ")) continue;
      const event = JSON.parse(line.slice(6));
      if (event.parent) continue; // sub-agents: not drawn here
      switch (name) {
        case "assistant_delta":
          text += event.text;
          if (!pending) { pending = true; requestAnimationFrame(render); }
          break;
        case "tool_call_started":
          say("tool", "⚙ " + event.name + " " + event.arguments);
          break;
        case "tool_call_approval_requested":
          approvalCard(event);
          break;
        case "tool_call_finished":
          say("tool", "  ↳ " + event.name + (event.ok ? " (done)" : " failed: " + ((event.error && event.error.message) || "")));
          break;
        case "turn_aborted":
          say("note error", event.error || "interrupted");
          break;
        case "error":
          say("note error", event.error.message);
          break;
      }
    }
  }
  render();
  answer.dataset.done = "true";
}

$("form").addEventListener("submit", (e) => {
  e.preventDefault();
  const prompt = $("prompt").value.trim();
  if (!prompt) return;
  $("prompt").value = "";
  send(prompt).catch((err) => say("note error", err.message));
});
$("prompt").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("form").requestSubmit(); }
});
$("session").addEventListener("change", openSession);
$("new-session").addEventListener("click", async () => {
  try {
    const created = await api("POST", "/v1/sessions", {});
    await load();
    $("session").value = created.id;
    log.innerHTML = "";
    say("note", "new session " + created.alias);
  } catch (e) {
    say("note error", e.message);
  }
});
load();
