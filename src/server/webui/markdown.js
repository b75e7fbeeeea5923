// A small Markdown renderer for model replies: headings, emphasis, lists,
// block quotes, tables, links, inline code and fenced code blocks (with a copy
// button). It builds DOM nodes and puts every piece of the text in with
// textContent, never as HTML, so a reply can never inject markup or script;
// links keep only http(s) and mailto targets. An unclosed fence (a reply still
// streaming) renders as code up to the end.
"use strict";

function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  renderBlocks(text.replace(/\r\n?/g, "\n").split("\n"), fragment);
  return fragment;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function startsBlock(line, next) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || LIST_ITEM.test(line) ||
      QUOTE.test(line) || (line.includes("|") && next !== undefined && TABLE_RULE.test(next));
}

function renderBlocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) {
      i++;
    } else if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const code = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence); i++) code.push(lines[i]);
      i++;  // the closing fence
      parent.append(codeBlock(code.join("\n"), m[2]));
    } else if ((m = HEADING.exec(line))) {
      parent.append(inline(element("h" + m[1].length), m[2]));
      i++;
    } else if (RULE.test(line)) {
      parent.append(element("hr"));
      i++;
    } else if (QUOTE.test(line)) {
      const quoted = [];
      for (; i < lines.length && (m = QUOTE.exec(lines[i])); i++) quoted.push(m[1]);
      const quote = element("blockquote");
      renderBlocks(quoted, quote);
      parent.append(quote);
    } else if (LIST_ITEM.test(line)) {
      i = renderList(lines, i, parent);
    } else if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
      i = renderTable(lines, i, parent);
    } else {
      const paragraph = [line];
      for (i++; i < lines.length && lines[i].trim() && !startsBlock(lines[i], lines[i + 1]); i++) {
        paragraph.push(lines[i]);
      }
      const p = element("p");
      paragraph.forEach((text, k) => {
        if (k) p.append(element("br"));
        inline(p, text);
      });
      parent.append(p);
    }
  }
}

// Items by their indentation: a deeper item opens a list inside the last item;
// lines indented under an item continue it.
function renderList(lines, i, parent) {
  const stack = [];  // {indent, list}
  let item = null;
  for (; i < lines.length; i++) {
    const m = LIST_ITEM.exec(lines[i]);
    if (!m) {
      if (!lines[i].trim() || !item || !/^\s/.test(lines[i])) break;
      item.append(element("br"));
      inline(item, lines[i].trim());
      continue;
    }
    const indent = m[1].length;
    while (stack.length && indent < stack[stack.length - 1].indent) stack.pop();
    const top = stack[stack.length - 1];
    if (!top || indent > top.indent) {
      const ordered = /\d/.test(m[2]);
      const list = element(ordered ? "ol" : "ul");
      if (ordered && parseInt(m[2], 10) !== 1) list.start = parseInt(m[2], 10);
      (item && top ? item : parent).append(list);
      stack.push({indent, list});
    }
    item = inline(element("li"), m[3]);
    stack[stack.length - 1].list.append(item);
  }
  return i;
}

function tableCells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
}

function renderTable(lines, i, parent) {
  const table = element("table");
  const head = element("tr");
  for (const cell of tableCells(lines[i])) head.append(inline(element("th"), cell));
  table.append(element("thead"));
  table.firstChild.append(head);
  const body = element("tbody");
  for (i += 2; i < lines.length && lines[i].includes("|"); i++) {
    const row = element("tr");
    for (const cell of tableCells(lines[i])) row.append(inline(element("td"), cell));
    body.append(row);
  }
  table.append(body);
  parent.append(table);
  return i;
}

function codeBlock(code, language) {
  const block = element("div", "code-block");
  const head = element("div", "code-head");
  head.append(element("span", "", language || "code"));
  const copy = element("button", "copy", "Copy");
  copy.type = "button";
  copy.setAttribute("aria-label", "Copy code");
  copy.addEventListener("click", () => copyText(code).then(() => {
    copy.textContent = "Copied";
    setTimeout(() => (copy.textContent = "Copy"), 1500);
  }));
  head.append(copy);
  const pre = element("pre");
  const codeNode = element("code", language ? "language-" + language : "", code);
  pre.append(codeNode);
  block.append(head, pre);
  return block;
}

// navigator.clipboard exists only in secure contexts (https, localhost); a
// page opened over plain http from another machine copies through a selection.
function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = element("textarea");
  area.value = text;
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  document.execCommand("copy");
  area.remove();
  return Promise.resolve();
}

// Inline spans, earliest first: code, links, strong, emphasis.
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)|(\*\*|__)(?=\S)([\s\S]*?\S)\5|(\*|_)(?=[^\s*_])([\s\S]*?[^\s\\])\7(?![\w*])|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;
const SAFE_URL = /^(https?:|mailto:)/i;

function inline(parent, text) {
  let last = 0;
  INLINE.lastIndex = 0;
  for (let m; (m = INLINE.exec(text));) {
    // A _ inside a word (snake_case) is text, not emphasis.
    if (m[7] === "_" && m.index > 0 && /\w/.test(text[m.index - 1])) {
      INLINE.lastIndex = m.index + 1;
      continue;
    }
    parent.append(text.slice(last, m.index));
    if (m[1]) {
      parent.append(element("code", "", m[2].replace(/^ (.*) $/, "$1")));
    } else if (m[3] !== undefined) {
      parent.append(link(m[3] || m[4], m[4]));
    } else if (m[5]) {
      parent.append(inlineIn(element("strong"), m[6]));
    } else if (m[7]) {
      parent.append(inlineIn(element("em"), m[8]));
    } else {
      parent.append(link(m[9], m[9]));
    }
    last = INLINE.lastIndex;
  }
  parent.append(text.slice(last));
  return parent;
}

// The spans inside a span: the pattern is global, so its position is kept.
function inlineIn(parent, text) {
  const resume = INLINE.lastIndex;
  inline(parent, text);
  INLINE.lastIndex = resume;
  return parent;
}

function link(label, url) {
  if (!SAFE_URL.test(url)) return document.createTextNode(label);
  const a = element("a");
  a.href = url;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  inlineIn(a, label);
  return a;
}
