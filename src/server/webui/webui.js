// skiff's chat page: conversations kept in localStorage, replies streamed from
// v1/chat/completions (SSE read from fetch's ReadableStream) and rendered by
// markdown.js. Every URL is relative (never "/v1/..."), so the page works
// behind a reverse proxy that serves it under a path prefix.
"use strict";

const $ = (id) => document.getElementById(id);
const SAMPLING_FIELDS = ["temperature", "top_p", "top_k", "min_p", "max_tokens", "presence_penalty",
                         "frequency_penalty", "seed"];

// localStorage under "skiff.*"; what cannot be read is the default.
const store = {
  load(key, fallback) {
    try {
      const value = localStorage.getItem("skiff." + key);
      return value === null ? fallback : JSON.parse(value);
    } catch {
      return fallback;
    }
  },
  save(key, value) {
    try {
      localStorage.setItem("skiff." + key, JSON.stringify(value));
    } catch (e) {
      showError("could not save to the browser's storage: " + e.message);
    }
  },
};

// A conversation: {id, title, updated, messages: [{role, content, reasoning?, stats?, error?}]}.
let conversations = store.load("conversations", []);
let currentId = store.load("current", null);
let settings = store.load("settings", {system: ""});
let apiKey = store.load("apiKey", "");
let modelName = null;
let streaming = null;  // {controller} while a reply streams

function current() {
  return conversations.find((c) => c.id === currentId) || null;
}

function saveConversations() {
  store.save("conversations", conversations);
  store.save("current", currentId);
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

function authHeaders() {
  return apiKey ? {Authorization: "Bearer " + apiKey} : {};
}

// ---- the API key: asked for when the server answers 401 ----

let keyAsked = null;  // one dialog for every request that met a 401
function askForKey(refused) {
  if (!keyAsked) {
    keyAsked = new Promise((resolve) => {
      const dialog = $("key-dialog");
      $("key-title").textContent = refused && apiKey ? "API key refused: enter it again" : "API key";
      $("api-key").value = "";
      $("key-form").onsubmit = (event) => {
        event.preventDefault();
        apiKey = $("api-key").value.trim();
        store.save("apiKey", apiKey);
        dialog.close();
        keyAsked = null;
        resolve();
      };
      dialog.oncancel = (event) => event.preventDefault();  // Escape: nothing works without the key
      dialog.showModal();
    });
  }
  return keyAsked;
}

// A request with the key; a 401 asks for the key and tries again.
async function apiFetch(path, options = {}) {
  for (;;) {
    const response = await fetch(path, {...options, headers: {...options.headers, ...authHeaders()}});
    if (response.status !== 401) return response;
    await askForKey(true);
  }
}

async function errorMessage(response) {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    return (body.error && body.error.message) || text;
  } catch {
    return `${response.status} ${response.statusText}: ${text.slice(0, 200)}`;
  }
}

// ---- the model's name, from v1/models (503 while it loads) ----

async function loadModel() {
  for (;;) {
    try {
      const response = await apiFetch("v1/models");
      if (response.ok) {
        modelName = (await response.json()).data[0].id;
        $("model-name").textContent = modelName;
        return;
      }
      $("model-name").textContent = response.status === 503 ? "loading the model…" : await errorMessage(response);
    } catch (e) {
      $("model-name").textContent = "server unreachable";
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// ---- the sidebar ----

function renderSidebar() {
  const list = $("conversations");
  list.replaceChildren();
  for (const conversation of [...conversations].sort((a, b) => b.updated - a.updated)) {
    const item = document.createElement("li");
    item.classList.toggle("current", conversation.id === currentId);
    const open = document.createElement("button");
    open.type = "button";
    open.className = "open";
    open.textContent = conversation.title;
    open.title = conversation.title;
    if (conversation.id === currentId) open.setAttribute("aria-current", "true");
    open.onclick = () => switchTo(conversation.id);
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "delete";
    remove.textContent = "×";
    remove.setAttribute("aria-label", "Delete conversation " + conversation.title);
    remove.onclick = () => deleteConversation(conversation.id);
    item.append(open, remove);
    list.append(item);
  }
}

function switchTo(id) {
  if (streaming) streaming.controller.abort();
  currentId = id;
  saveConversations();
  render();
}

function newConversation() {
  if (streaming) streaming.controller.abort();
  currentId = null;  // made when its first message is sent
  saveConversations();
  render();
  $("prompt").focus();
}

function deleteConversation(id) {
  if (streaming && id === currentId) streaming.controller.abort();
  conversations = conversations.filter((c) => c.id !== id);
  if (id === currentId) currentId = null;
  saveConversations();
  render();
}

// ---- the messages ----

function render() {
  renderSidebar();
  renderMessages();
}

function renderMessages() {
  const container = $("messages");
  container.replaceChildren();
  const conversation = current();
  if (!conversation) return;
  conversation.messages.forEach((message, index) => container.append(messageView(conversation, message, index)));
  container.scrollTop = container.scrollHeight;
}

function button(text, className, onclick, label) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = className;
  b.textContent = text;
  if (label) b.setAttribute("aria-label", label);
  b.onclick = onclick;
  return b;
}

function messageView(conversation, message, index) {
  const view = document.createElement("article");
  view.className = "message " + message.role;
  const role = document.createElement("div");
  role.className = "role";
  role.textContent = message.role === "user" ? "You" : modelName || "assistant";
  const body = document.createElement("div");
  body.className = "body";
  const meta = document.createElement("div");
  meta.className = "meta";
  view.append(role, body, meta);
  if (message.role === "user") {
    body.textContent = message.content;
    if (!streaming) meta.append(button("Edit", "edit", () => editTurn(view, conversation, index), "Edit this message"));
    return view;
  }
  fillReply(view, message);
  const last = index === conversation.messages.length - 1;
  if (last && !streaming) meta.append(button("Regenerate", "regenerate", regenerate, "Regenerate this reply"));
  return view;
}

// A reply's reasoning (collapsed), text and figures; called again as it streams.
function fillReply(view, message) {
  const body = view.querySelector(".body");
  let details = view.querySelector("details.reasoning");
  if (message.reasoning && !details) {
    details = document.createElement("details");
    details.className = "reasoning";
    const summary = document.createElement("summary");
    summary.textContent = "Reasoning";
    const text = document.createElement("div");
    text.className = "text";
    details.append(summary, text);
    view.insertBefore(details, body);
  }
  if (details) details.querySelector(".text").textContent = message.reasoning;
  body.className = "body markdown";
  body.replaceChildren(renderMarkdown(message.content));
  const figures = view.querySelector(".meta .stats") || document.createElement("span");
  figures.className = "stats";
  figures.textContent = [statsText(message.stats), message.error ? "error: " + message.error : ""]
      .filter(Boolean).join(" · ");
  view.querySelector(".meta").prepend(figures);
}

function statsText(stats) {
  if (!stats) return "";
  const parts = [`${stats.approximate ? "~" : ""}${stats.tokens} tokens`];
  if (stats.tokensPerSecond) parts.push(`${stats.tokensPerSecond.toFixed(1)} tok/s`);
  if (stats.firstTokenSeconds !== undefined) parts.push(`first token ${stats.firstTokenSeconds.toFixed(2)} s`);
  if (stats.stopped) parts.push("stopped");
  else if (stats.finish === "length") parts.push("cut at max_tokens");
  return parts.join(" · ");
}

function editTurn(view, conversation, index) {
  const body = view.querySelector(".body");
  const editor = document.createElement("form");
  editor.className = "edit";
  const label = document.createElement("label");
  label.className = "visually-hidden";
  label.textContent = "Edit message";
  const area = document.createElement("textarea");
  area.id = "edit-" + index;
  label.htmlFor = area.id;
  area.value = conversation.messages[index].content;
  area.rows = Math.min(12, area.value.split("\n").length + 1);
  const save = button("Send", "primary save", null);
  save.type = "submit";
  const cancel = button("Cancel", "cancel", renderMessages);
  editor.append(label, area, save, cancel);
  editor.onsubmit = (event) => {
    event.preventDefault();
    const text = area.value.trim();
    if (!text || streaming) return;
    // The conversation goes on from the edited turn: what followed it is dropped.
    conversation.messages = conversation.messages.slice(0, index);
    conversation.messages.push({role: "user", content: text});
    generate(conversation);
  };
  onEnterSubmit(area, editor);
  area.addEventListener("keydown", (event) => event.key === "Escape" && renderMessages());
  body.replaceWith(editor);
  view.querySelector(".meta").replaceChildren();
  area.focus();
}

function regenerate() {
  const conversation = current();
  if (!conversation || streaming) return;
  if (conversation.messages.at(-1).role === "assistant") conversation.messages.pop();
  generate(conversation);
}

// ---- sending and streaming ----

function send(text) {
  let conversation = current();
  if (!conversation) {
    conversation = {id: Date.now().toString(36) + Math.random().toString(36).slice(2, 8),
                    title: text.split("\n")[0].slice(0, 48), updated: Date.now(), messages: []};
    conversations.push(conversation);
    currentId = conversation.id;
  }
  conversation.messages.push({role: "user", content: text});
  generate(conversation);
}

function requestBody(conversation) {
  // A reply that failed before any text is not part of the conversation.
  const messages = conversation.messages.slice(0, -1).filter((m) => m.content || !m.error)
      .map((m) => ({role: m.role, content: m.content}));
  if (settings.system && settings.system.trim()) messages.unshift({role: "system", content: settings.system});
  const body = {messages, stream: true, stream_options: {include_usage: true}};
  if (modelName) body.model = modelName;
  for (const field of SAMPLING_FIELDS) {
    if (settings[field] !== undefined && settings[field] !== "") body[field] = Number(settings[field]);
  }
  return body;
}

// A reply that opens with <think> (a template whose reasoning the server did
// not split off) shows that part as reasoning.
function splitThink(text) {
  const m = /^\s*<think>([\s\S]*?)(?:<\/think>|$)/.exec(text);
  return m ? {reasoning: m[1].trim(), content: text.slice(m[0].length).replace(/^\s+/, "")}
           : {reasoning: "", content: text};
}

async function generate(conversation) {
  showError("");
  const reply = {role: "assistant", content: "", reasoning: ""};
  conversation.messages.push(reply);
  conversation.updated = Date.now();
  streaming = {controller: new AbortController()};
  setStreaming(true);
  saveConversations();
  render();
  const view = $("messages").lastElementChild;
  let raw = "", reasoning = "", deltas = 0, finish = null, usage = null, firstAt, pending = false;
  const started = performance.now();
  const update = () => {
    const think = splitThink(raw);
    reply.content = think.content;
    reply.reasoning = [reasoning, think.reasoning].filter(Boolean).join("\n");
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {  // one render per frame, however fast the deltas come
      pending = false;
      if (!view.isConnected) return;  // the whole conversation was drawn again since
      const messages = $("messages");
      const atBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
      fillReply(view, reply);
      if (atBottom) messages.scrollTop = messages.scrollHeight;
    });
  };
  try {
    const response = await apiFetch("v1/chat/completions", {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(requestBody(conversation)),
      signal: streaming.controller.signal,
    });
    if (!response.ok) throw new Error(await errorMessage(response));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true}).replace(/\r\n/g, "\n");
      for (let cut; (cut = buffer.indexOf("\n\n")) >= 0; buffer = buffer.slice(cut + 2)) {
        for (const line of buffer.slice(0, cut).split("\n")) {
          if (!line.startsWith("data:")) continue;  // comments (keep-alives), other fields
          const data = line.slice(5).trim();
          if (data === "[DONE]") continue;
          const chunk = JSON.parse(data);
          if (chunk.error) throw new Error(chunk.error.message || JSON.stringify(chunk.error));
          if (chunk.usage) usage = chunk.usage;
          const choice = chunk.choices && chunk.choices[0];
          if (!choice) continue;
          const delta = choice.delta || {};
          if (delta.content || delta.reasoning_content) {
            firstAt = firstAt || performance.now();
            deltas++;
            raw += delta.content || "";
            reasoning += delta.reasoning_content || "";
            update();
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      }
    }
  } catch (e) {
    if (e.name === "AbortError") reply.stopped = true;
    else reply.error = e.message;
  }
  update();
  reply.stats = replyStats(usage, deltas, started, firstAt, finish, reply.stopped);
  streaming = null;
  setStreaming(false);
  saveConversations();
  render();
}

// Tokens a second over the decode: from the first token to the last, so the
// prompt's time counts once, as time to the first token.
function replyStats(usage, deltas, started, firstAt, finish, stopped) {
  const tokens = usage ? usage.completion_tokens : deltas;
  const stats = {tokens, approximate: !usage, finish, stopped: !!stopped};
  if (firstAt) {
    stats.firstTokenSeconds = (firstAt - started) / 1000;
    const seconds = (performance.now() - firstAt) / 1000;
    if (tokens > 1 && seconds > 0) stats.tokensPerSecond = (tokens - 1) / seconds;
  }
  return stats;
}

function setStreaming(on) {
  $("send").hidden = on;
  $("stop").hidden = !on;
  $("messages").setAttribute("aria-busy", on ? "true" : "false");
}

// ---- settings and theme ----

function openSettings() {
  $("set-system").value = settings.system || "";
  for (const field of SAMPLING_FIELDS) $("set-" + field).value = settings[field] ?? "";
  $("settings").showModal();
}

function saveSettings(event) {
  event.preventDefault();
  settings = {system: $("set-system").value};
  for (const field of SAMPLING_FIELDS) settings[field] = $("set-" + field).value;
  store.save("settings", settings);
  $("settings").close();
}

function applyTheme(theme) {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

function toggleTheme() {
  const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === "dark"
      : matchMedia("(prefers-color-scheme: dark)").matches;
  const theme = dark ? "light" : "dark";
  applyTheme(theme);
  store.save("theme", theme);
}

// Enter submits the form; Shift+Enter (or an input method composing) is a new line.
function onEnterSubmit(area, form) {
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}

function start() {
  applyTheme(store.load("theme", null));
  $("composer").onsubmit = (event) => {
    event.preventDefault();
    const text = $("prompt").value.trim();
    if (!text || streaming) return;
    $("prompt").value = "";
    send(text);
  };
  onEnterSubmit($("prompt"), $("composer"));
  $("stop").onclick = () => streaming && streaming.controller.abort();
  $("new-chat").onclick = newConversation;
  $("theme-toggle").onclick = toggleTheme;
  $("open-settings").onclick = openSettings;
  $("settings-form").onsubmit = saveSettings;
  $("settings-cancel").onclick = () => $("settings").close();
  // Another tab changed the conversations: show them (unless a reply streams here).
  window.addEventListener("storage", (event) => {
    if (event.key !== "skiff.conversations" || streaming) return;
    conversations = store.load("conversations", []);
    render();
  });
  render();
  loadModel();
  $("prompt").focus();
}

start();
