// DocuBot web chat: plain JS over the HTTP API. All text goes in with textContent, never innerHTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { key: localStorage.getItem("docubot.key") || "", session: null };

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

function notice(text) {
  $("notice").textContent = text || "";
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${state.key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    throw new Error(data.error || `HTTP ${response.status}`);
  }
  return response;
}

async function login(key) {
  state.key = key;
  try {
    await api("GET", "/v1/sessions");
  } catch (error) {
    state.key = "";
    localStorage.removeItem("docubot.key");
    notice(`No s'ha pogut entrar: ${error.message}`);
    return;
  }
  localStorage.setItem("docubot.key", key);
  $("key-form").hidden = true;
  $("logout").hidden = false;
  $("sidebar").hidden = false;
  notice("");
  await refreshSessions();
}

function logout() {
  localStorage.removeItem("docubot.key");
  location.reload();
}

async function refreshSessions() {
  const sessions = await (await api("GET", "/v1/sessions")).json();
  const list = $("sessions");
  list.replaceChildren();
  for (const session of sessions) {
    const item = el("li", { "data-id": session.id });
    if (state.session === session.id) item.classList.add("active");
    const open = el("button", { class: "open", type: "button", title: session.title || "Conversa nova" },
      session.title || "Conversa nova");
    open.addEventListener("click", () => openSession(session.id));
    const remove = el("button", { class: "delete", type: "button", "aria-label": "Esborra la conversa" }, "✕");
    remove.addEventListener("click", () => deleteSession(session.id));
    item.append(open, remove);
    list.append(item);
  }
}

async function newSession() {
  const session = await (await api("POST", "/v1/sessions", {})).json();
  await openSession(session.id);
}

async function openSession(id) {
  const session = await (await api("GET", `/v1/sessions/${encodeURIComponent(id)}`)).json();
  state.session = id;
  $("chat").hidden = false;
  $("messages").replaceChildren();
  for (const turn of session.messages) {
    addMessage("user", turn.question);
    renderAnswer(addMessage("bot", ""), turn.answer);
  }
  await refreshSessions();
  $("question").focus();
}

async function deleteSession(id) {
  await api("DELETE", `/v1/sessions/${encodeURIComponent(id)}`);
  if (state.session === id) {
    state.session = null;
    $("chat").hidden = true;
  }
  await refreshSessions();
}

function addMessage(role, text) {
  const box = el("div", { class: `msg ${role}` });
  box.append(el("div", { class: "text" }, text));
  $("messages").append(box);
  box.scrollIntoView({ block: "end" });
  return box;
}

function renderAnswer(box, answer) {
  box.querySelector(".text").textContent = answer.resposta;
  const meta = el("div", { class: "meta" });
  meta.append(el("span", { class: `badge ${answer.confianca}` }, `confiança ${answer.confianca}`));
  meta.append(el("span", {}, answer.categoria));
  if (answer.cache) meta.append(el("span", {}, `(de la memòria cau: ${answer.cache})`));
  box.append(meta);
  const sources = el("ul", { class: "sources" });
  const shown = new Set();
  for (const source of answer.sources || []) {
    const key = `${source.url}|${source.section}|${source.version}`;
    if (shown.has(key)) continue; // two fragments of one section: one link
    shown.add(key);
    const item = el("li");
    const href = /^https?:\/\//.test(source.url) ? source.url : `#${source.url}`;
    item.append(el("a", { href, target: "_blank", rel: "noopener" }, `[${source.section}]`));
    item.append(document.createTextNode(` · ${source.url} · v${source.version}`));
    sources.append(item);
  }
  if (sources.children.length) box.append(sources);
}

async function ask(question) {
  addMessage("user", question);
  const box = addMessage("bot", "");
  const text = box.querySelector(".text");
  $("send").disabled = true;
  try {
    const response = await api("POST", `/v1/sessions/${encodeURIComponent(state.session)}/messages`, {
      content: question,
    });
    for await (const [name, data] of events(response)) {
      if (name === "token") text.textContent += data.text;
      else if (name === "done") renderAnswer(box, data);
      else if (name === "error") throw new Error(data.error);
    }
    await refreshSessions();
  } catch (error) {
    text.textContent = `Error: ${error.message}`;
  } finally {
    $("send").disabled = false;
  }
}

// Server-Sent Events over a POST response (EventSource can only GET).
async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      yield [name, JSON.parse(data.join("\n"))];
    }
  }
}

$("key-form").addEventListener("submit", (e) => {
  e.preventDefault();
  login($("api-key").value.trim());
});
$("logout").addEventListener("click", logout);
$("new-session").addEventListener("click", () => newSession().catch((e) => notice(e.message)));
$("ask-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const question = $("question").value.trim();
  if (!question || !state.session) return;
  $("question").value = "";
  ask(question);
});
$("question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    $("ask-form").requestSubmit();
  }
});
if (state.key) login(state.key);
