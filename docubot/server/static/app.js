// DocuBot web chat: plain JS over the HTTP API, no build step, nothing loaded from elsewhere.
// Text from users and the model goes in with textContent. The one exception is the `html` the server
// renders from markdown (markdown-it-py: raw HTML escaped, only http(s), relative and # links); the
// page's Content-Security-Policy would still block any script in it.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  key: localStorage.getItem("docubot.key") || "",
  session: null, // null: a new conversation, created on its first question
  sessions: [],
  examples: [],
  streaming: null, // the AbortController of the answer being streamed
};

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

// Thumb icons as inline SVG (paths from Feather icons, MIT): no emoji font needed.
const THUMBS = {
  up: "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3",
  down: "M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17",
};

function icon(path) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [name, value] of Object.entries({ viewBox: "0 0 24 24", width: "16", height: "16", "aria-hidden": "true" })) {
    svg.setAttribute(name, value);
  }
  const line = document.createElementNS(ns, "path");
  line.setAttribute("d", path);
  svg.append(line);
  return svg;
}

function notice(text) {
  $("notice").textContent = text || "";
}

async function api(method, path, body, signal) {
  const response = await fetch(path, {
    method,
    signal,
    headers: { Authorization: `Bearer ${state.key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    throw new Error(data.error || `HTTP ${response.status}`);
  }
  return response;
}

const sessionPath = (id) => `/v1/sessions/${encodeURIComponent(id)}`;

// -- logging in -----------------------------------------------------------------------------------
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
  $("welcome").hidden = true;
  $("logout").hidden = false;
  $("sidebar").hidden = false;
  notice("");
  await Promise.all([loadExamples(), refreshSessions()]);
  startNewConversation();
}

function logout() {
  localStorage.removeItem("docubot.key");
  location.reload();
}

async function loadExamples() {
  try {
    state.examples = (await (await api("GET", "/v1/examples")).json()).questions;
  } catch {
    state.examples = []; // the examples are a convenience: the page works without them
  }
  const list = $("examples");
  list.replaceChildren();
  for (const question of state.examples) {
    const button = el("button", { type: "button", class: "example" }, question);
    button.addEventListener("click", () => ask(question));
    const item = el("li");
    item.append(button);
    list.append(item);
  }
}

// -- the conversation list ------------------------------------------------------------------------
async function refreshSessions() {
  state.sessions = await (await api("GET", "/v1/sessions")).json();
  const list = $("sessions");
  list.replaceChildren();
  for (const session of state.sessions) list.append(sessionItem(session));
  filterSessions();
}

function sessionItem(session) {
  const title = session.title || "Conversa nova";
  const item = el("li", { "data-id": session.id });
  if (state.session === session.id) item.classList.add("active");
  const open = el("button", { class: "open", type: "button", title }, title);
  open.addEventListener("click", () => openSession(session.id));
  const rename = el("button", { class: "rename", type: "button", "aria-label": "Canvia el nom", title: "Canvia el nom" }, "✎");
  rename.addEventListener("click", () => startRename(item, session));
  const remove = el("button", { class: "delete", type: "button", "aria-label": "Esborra la conversa", title: "Esborra" }, "✕");
  remove.addEventListener("click", () => deleteSession(session.id));
  item.append(open, rename, remove);
  return item;
}

function startRename(item, session) {
  const form = el("form", { class: "rename-form" });
  const input = el("input", { type: "text", "aria-label": "Nom de la conversa", maxlength: "80" });
  input.value = session.title;
  form.append(input, el("button", { type: "submit" }, "Desa"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const title = input.value.trim();
    try {
      if (title && title !== session.title) await api("PATCH", sessionPath(session.id), { title });
      await refreshSessions();
    } catch (error) {
      notice(`No s'ha pogut canviar el nom: ${error.message}`);
    }
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Escape") item.replaceWith(sessionItem(session));
  });
  item.replaceChildren(form);
  input.focus();
  input.select();
}

// Client-side search over the titles; accents and case do not matter.
const folded = (text) => text.normalize("NFD").replace(/\p{Diacritic}/gu, "").toLowerCase();

function filterSessions() {
  const query = folded($("session-search").value.trim());
  let shown = 0;
  for (const item of $("sessions").children) {
    const session = state.sessions.find((s) => s.id === item.dataset.id);
    const match = !query || folded(session ? session.title || "Conversa nova" : "").includes(query);
    item.hidden = !match;
    shown += match ? 1 : 0;
  }
  $("no-match").hidden = !(query && shown === 0);
}

// -- opening and erasing conversations ------------------------------------------------------------
function startNewConversation() {
  state.session = null;
  $("chat").hidden = false;
  $("messages").replaceChildren();
  $("empty").hidden = false;
  markActive();
  $("question").focus();
}

async function openSession(id) {
  const session = await (await api("GET", sessionPath(id))).json();
  state.session = id;
  $("chat").hidden = false;
  $("messages").replaceChildren();
  $("empty").hidden = session.messages.length > 0;
  for (const turn of session.messages) {
    addMessage("user", turn.question);
    renderAnswer(answerBox(), turn.answer, id, turn.turn, turn.feedback || null);
  }
  markActive();
  $("question").focus();
}

function markActive() {
  for (const item of $("sessions").children) item.classList.toggle("active", item.dataset.id === state.session);
}

async function deleteSession(id) {
  await api("DELETE", sessionPath(id));
  if (state.session === id) startNewConversation();
  await refreshSessions();
}

// -- messages ---------------------------------------------------------------------------------------
function addMessage(role, text) {
  const box = el("div", { class: `msg ${role}` });
  box.append(el("div", { class: "text" }, text));
  $("messages").append(box);
  box.scrollIntoView({ block: "end" });
  return box;
}

function answerBox() {
  const box = addMessage("bot", "");
  box.prepend(el("div", { class: "status", hidden: "" }));
  return box;
}

function setStatus(box, text, kind = "working") {
  const line = box.querySelector(".status");
  line.textContent = text;
  line.className = `status ${kind}`;
  line.hidden = !text;
}

// The server's status events, in the page's language (an unknown one is shown as it comes).
function statusText(text) {
  const rules = [
    [/^retrieval: (\d+) chunks/, (m) => `${m[1]} fragments trobats; preparant la resposta…`],
    [/^generating/, () => "Generant la resposta…"],
    [/^answer from the \w+ cache/, () => "Resposta trobada a la memòria cau…"],
    [/^standalone question: (.*)/, (m) => `Cercant: «${m[1]}»…`],
    [/^provider error, retry (\d+)/, (m) => `El model ha fallat; reintent ${m[1]}…`],
    [/asking again/, () => "La resposta no era vàlida; tornant-ho a provar…"],
    [/^translating the answer/, () => "Traduint la resposta a l'idioma de la pregunta…"],
    [/answering from the fragments instead/, () => "El model ha fallat; responent amb els fragments…"],
  ];
  for (const [pattern, say] of rules) {
    const match = text.match(pattern);
    if (match) return say(match);
  }
  return text;
}

function renderAnswer(box, answer, sessionId, turn, feedback) {
  setStatus(box, "");
  const text = box.querySelector(".text");
  if (typeof answer.html === "string") {
    text.innerHTML = answer.html;
    text.classList.add("rendered");
    decorateRendered(text);
  } else {
    text.textContent = answer.resposta;
  }
  const meta = el("div", { class: "meta" });
  meta.append(el("span", { class: `badge ${answer.confianca}` }, `confiança ${answer.confianca}`));
  meta.append(el("span", {}, answer.categoria));
  if (answer.cache) meta.append(el("span", {}, `(de la memòria cau: ${answer.cache})`));
  box.append(meta);
  const sources = sourceList(answer.sources || []);
  if (sources.children.length) box.append(sources);
  if (turn) box.append(feedbackBar(sessionId, turn, feedback));
}

// Copy buttons on code blocks; wide tables scroll sideways inside the bubble.
function decorateRendered(root) {
  for (const pre of root.querySelectorAll("pre")) {
    const wrap = el("div", { class: "code" });
    pre.replaceWith(wrap);
    const copy = el("button", { type: "button", class: "copy" }, "Copia");
    copy.addEventListener("click", () => copyText(pre.textContent, copy));
    wrap.append(copy, pre);
  }
  for (const table of root.querySelectorAll("table")) {
    const wrap = el("div", { class: "table" });
    table.replaceWith(wrap);
    wrap.append(table);
  }
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (a plain-http address other than localhost): copy through a selection.
    const area = el("textarea", { class: "offscreen" });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.textContent = "Copiat!";
  setTimeout(() => (button.textContent = "Copia"), 1500);
}

function sourceList(sources) {
  const list = el("ul", { class: "sources" });
  const shown = new Set();
  for (const source of sources) {
    const key = `${source.url}|${source.section}|${source.version}`;
    if (shown.has(key)) continue; // two fragments of one section: one entry
    shown.add(key);
    const item = el("li");
    if (source.href && /^https?:\/\//i.test(source.href)) {
      item.append(el("a", { href: source.href, target: "_blank", rel: "noopener noreferrer" }, `[${source.section}]`));
      item.append(document.createTextNode(` · v${source.version}`));
    } else {
      item.append(sectionPanel(source)); // no published docs to link to: show the section itself
    }
    list.append(item);
  }
  return list;
}

function sectionPanel(source) {
  const panel = el("details");
  const summary = el("summary", {}, `[${source.section}]`);
  summary.append(el("span", { class: "where" }, ` · ${source.url} · v${source.version}`));
  const body = el("div", { class: "section-text" }, "Carregant…");
  panel.append(summary, body);
  panel.addEventListener("toggle", async () => {
    if (!panel.open || panel.dataset.loaded) return;
    panel.dataset.loaded = "1";
    const query = new URLSearchParams({ url: source.url, section: source.section, version: source.version });
    try {
      const data = await (await api("GET", `/v1/sources/text?${query}`)).json();
      body.innerHTML = data.html;
      decorateRendered(body);
    } catch (error) {
      body.textContent = `No s'ha pogut carregar la secció: ${error.message}`;
      delete panel.dataset.loaded;
    }
  });
  return panel;
}

// -- feedback ---------------------------------------------------------------------------------------
function feedbackBar(sessionId, turn, feedback) {
  const bar = el("div", { class: "feedback" });
  const path = `${sessionPath(sessionId)}/turns/${turn}/feedback`;
  let current = feedback; // {rating, comment, updated_at} | null
  const buttons = {};
  for (const [rating, label] of [["up", "M'ha ajudat"], ["down", "No m'ha ajudat"]]) {
    const button = el("button", { type: "button", class: `rate ${rating}`, "aria-label": label, title: label, "aria-pressed": "false" });
    button.append(icon(THUMBS[rating]));
    button.addEventListener("click", () => rate(rating));
    buttons[rating] = button;
    bar.append(button);
  }
  const comment = el("p", { class: "comment" });
  const form = el("form", { class: "comment-form", hidden: "" });
  const input = el("textarea", { rows: "2", maxlength: "2000", "aria-label": "Comentari", placeholder: "Vols afegir-hi un comentari? (opcional)" });
  form.append(input, el("button", { type: "submit" }, "Desa el comentari"));
  const saved = el("span", { class: "saved", role: "status" });
  bar.append(saved, form, comment);

  function show() {
    for (const [rating, button] of Object.entries(buttons)) {
      button.setAttribute("aria-pressed", String(current?.rating === rating));
    }
    comment.textContent = current?.comment ? `El teu comentari: ${current.comment}` : "";
    comment.hidden = !current?.comment;
  }

  async function save(rating, text) {
    try {
      current = await (await api("PUT", path, { rating, comment: text })).json();
      saved.textContent = "Gràcies!";
    } catch (error) {
      saved.textContent = `No s'ha pogut desar: ${error.message}`;
    }
    show();
  }

  async function rate(rating) {
    if (current?.rating === rating) { // pressing the chosen one again takes the rating back
      try {
        await api("DELETE", path);
        current = null;
        saved.textContent = "";
        form.hidden = true;
      } catch (error) {
        saved.textContent = `No s'ha pogut esborrar: ${error.message}`;
      }
      show();
      return;
    }
    await save(rating, current?.comment ?? null);
    input.value = current?.comment ?? "";
    form.hidden = !current;
    if (current) input.focus();
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    await save(current.rating, input.value.trim() || null);
    form.hidden = true;
  });
  show();
  return bar;
}

// -- asking -----------------------------------------------------------------------------------------
async function ask(question) {
  if (state.streaming) return;
  const controller = new AbortController();
  state.streaming = controller;
  $("send").disabled = true;
  $("stop").hidden = false;
  $("empty").hidden = true;
  const asked = addMessage("user", question);
  const box = answerBox();
  const text = box.querySelector(".text");
  setStatus(box, "Cercant a la documentació…");
  let done = false;
  try {
    if (!state.session) state.session = (await (await api("POST", "/v1/sessions", {})).json()).id;
    const sessionId = state.session;
    const response = await api("POST", `${sessionPath(sessionId)}/messages`, { content: question }, controller.signal);
    for await (const [name, data] of events(response)) {
      if (name === "token") text.textContent += data.text;
      else if (name === "status") setStatus(box, statusText(data.text));
      else if (name === "done") {
        renderAnswer(box, data, sessionId, data.turn, null);
        done = true;
      } else if (name === "error") throw new Error(data.error);
    }
    if (!done) throw new Error("la connexió s'ha tallat abans d'acabar la resposta");
  } catch (error) {
    const stopped = controller.signal.aborted;
    failed(box, asked, question, stopped ? "Resposta aturada: no s'ha desat." : `Error: ${error.message}`, stopped);
  } finally {
    state.streaming = null;
    $("send").disabled = false;
    $("stop").hidden = true;
    await refreshSessions().catch((error) => notice(error.message));
  }
}

// A stopped or failed answer: what came so far stays visible, with a button to ask again.
function failed(box, asked, question, message, stopped) {
  box.classList.add(stopped ? "stopped" : "failed");
  setStatus(box, message, stopped ? "stopped" : "error");
  const retry = el("button", { type: "button", class: "retry" }, "Torna-ho a provar");
  retry.addEventListener("click", () => {
    if (state.streaming) return;
    asked.remove();
    box.remove();
    ask(question);
  });
  box.append(retry);
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

// -- wiring -----------------------------------------------------------------------------------------
$("key-form").addEventListener("submit", (e) => {
  e.preventDefault();
  login($("api-key").value.trim());
});
$("logout").addEventListener("click", logout);
$("new-session").addEventListener("click", startNewConversation);
$("session-search").addEventListener("input", filterSessions);
$("stop").addEventListener("click", () => state.streaming?.abort());
$("ask-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const question = $("question").value.trim();
  if (!question || state.streaming) return;
  $("question").value = "";
  ask(question);
});
$("question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $("ask-form").requestSubmit();
  }
});
if (state.key) login(state.key);
