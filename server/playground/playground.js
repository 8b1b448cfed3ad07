// Stepbox playground. Plain JavaScript, no dependencies, no build step.
//
// It calls the unary Run RPC over HTTP+JSON, exactly as curl would
// (POST stepbox.v1.StepboxService/Run, see server/README.md), and shows the
// answer. Everything it renders from the server or the user goes through
// textContent: nothing is ever parsed as HTML.
"use strict";

(() => {
  const RUN_PATH = "stepbox.v1.StepboxService/Run"; // relative: works under a path prefix too
  const CONFIG_PATH = "playground/config.json";
  const KEY_STORAGE = "stepbox.playground.apiKey"; // sessionStorage only
  const DRAFT_STORAGE = "stepbox.playground.draft"; // sessionStorage too
  const MAX_INT32 = 2147483647;

  const EXAMPLE_INPUT = '{"id": 7}';
  const EXAMPLE_DATA = '{\n  "user": {"name": "Ada", "orders": [{"amount": 12.5}, {"amount": 30}]}\n}';
  const EXAMPLES = {
    javascript: [
      'reportStatus({ stage: "start" });',
      'const user = await dataProxy.request("user", { id: input.id });',
      'console.log("hello", user.name);',
      'console.info("orders:", user.orders);',
      "const total = user.orders.reduce((sum, o) => sum + o.amount, 0);",
      "return { greeting: `hi ${user.name}`, total };",
      "",
    ].join("\n"),
    typescript: [
      "interface Order { amount: number }",
      "interface User { name: string; orders: Order[] }",
      "",
      'reportStatus({ stage: "start" });',
      'const user = (await dataProxy.request("user", { id: input.id })) as User;',
      'console.log("hello", user.name);',
      "const total: number = user.orders.reduce((sum, o) => sum + o.amount, 0);",
      "return { greeting: `hi ${user.name}`, total };",
      "",
    ].join("\n"),
    python: [
      'report_status({"stage": "start"})',
      'user = await data_proxy.request("user", {"id": input["id"]})',
      'print("hello", user["name"])',
      'total = sum(o["amount"] for o in user["orders"])',
      'return {"greeting": "hi " + user["name"], "total": total}',
      "",
    ].join("\n"),
  };

  // STATS are the rows of the stats table: the field of Stats, its label,
  // its unit.
  const STATS = [
    ["wallMs", "wall time", "ms"],
    ["cpuMs", "CPU time", "ms"],
    ["codeMs", "code time", "ms"],
    ["queueMs", "queued", "ms"],
    ["heapMb", "heap", "MB"],
    ["dataRequests", "data requests", ""],
    ["dataBytes", "data bytes", "B"],
    ["fetchRequests", "fetches", ""],
    ["fetchBytes", "fetch bytes", "B"],
    ["statusEvents", "status events", ""],
    ["consoleEvents", "console events", ""],
    ["consoleDropped", "console dropped", ""],
  ];

  // STATS_BY_LANGUAGE says, per language, which stats its runs do not
  // measure, and what a field holds when it is something else than the
  // label says (README, "Limits": Stats). Python's heapMb is the run
  // process's peak resident set above the zygote's, not a heap: the heap
  // row says "not measured" and the figure gets a row of its own.
  const STATS_BY_LANGUAGE = {
    python: {
      notMeasured: { heapMb: "Python's heap is not measured: see the peak RSS growth" },
      extra: { after: "heapMb", row: ["heapMb", "peak RSS growth", "MB", "rssMb",
        "the run process's peak resident set above the zygote's (wait4's maxrss)"] },
    },
  };

  const $ = (id) => document.getElementById(id);
  const form = $("run-form");
  const code = $("code");
  const gutter = $("gutter");
  const language = $("language");
  const inputEl = $("input");
  const dataEl = $("data");
  const wallEl = $("wallMs");
  const memEl = $("memoryMb");
  const apiKey = $("apiKey");
  const modulesEl = $("modules");
  const egressSel = $("egress");
  const hostsEl = $("egressHosts");
  const runBtn = $("run");
  const stopBtn = $("stop");

  let controller = null; // the AbortController of the run in flight
  let runs = 0; // requests sent, for tests and curiosity

  // h builds an element: h("li", {className: "x"}, "text", child, ...).
  // Strings become text nodes; nothing is interpreted as HTML.
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "dataset") Object.assign(el.dataset, v);
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
      else el[k] = v;
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }

  // ---------- the wire's JSON values ----------

  // ---------- JSON helpers (lossless: numbers are never reparsed) ----------

  // prettyJSON re-indents JSON text without parsing its numbers, so that
  // 12345678901234567890 or 0.1 come out exactly as the step returned them.
  function prettyJSON(text) {
    if (typeof text !== "string") return String(text);
    try { JSON.parse(text); } catch { return text; }
    let out = "";
    let depth = 0;
    const nl = () => "\n" + "  ".repeat(depth);
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '"') {
        let j = i + 1;
        while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
        out += text.slice(i, j + 1);
        i = j;
      } else if (c === "{" || c === "[") {
        let j = i + 1;
        while (j < text.length && " \t\r\n".includes(text[j])) j++;
        if (text[j] === (c === "{" ? "}" : "]")) {
          out += c + text[j];
          i = j;
        } else {
          depth++;
          out += c + nl();
        }
      } else if (c === "}" || c === "]") {
        depth--;
        out += nl() + c;
      } else if (c === ",") {
        out += "," + nl();
      } else if (c === ":") {
        out += ": ";
      } else if (!" \t\r\n".includes(c)) {
        out += c;
      }
    }
    return out;
  }

  // compactJSON is JSON text on one line (lossless, like prettyJSON).
  function compactJSON(text) {
    return prettyJSON(text).replace(/\n\s*/g, (m, off, s) => (s[off - 1] === "," ? " " : ""));
  }

  // skipJSON returns the index just past the JSON value starting at i
  // (after whitespace) in text, which is known to be valid JSON.
  function skipJSON(text, i) {
    while (" \t\r\n".includes(text[i])) i++;
    let depth = 0;
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === '"') {
        i++;
        while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
        if (depth === 0) return i + 1;
      } else if (c === "{" || c === "[") {
        depth++;
      } else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) return i + 1;
        if (depth < 0) return i;
      } else if (depth === 0 && (c === "," || " \t\r\n".includes(c))) {
        return i;
      }
    }
    return i;
  }

  // objectMembers returns the members of the JSON object text as
  // [key, raw value text] pairs, values byte for byte as written.
  function objectMembers(text) {
    const members = [];
    let i = text.indexOf("{") + 1;
    for (;;) {
      while (" \t\r\n,".includes(text[i])) i++;
      if (text[i] === "}" || i >= text.length) return members;
      const keyEnd = skipJSON(text, i);
      const key = JSON.parse(text.slice(i, keyEnd));
      i = text.indexOf(":", keyEnd) + 1;
      while (" \t\r\n".includes(text[i])) i++;
      const end = skipJSON(text, i);
      members.push([key, text.slice(i, end)]);
      i = end;
    }
  }

  // jsonProblem explains why text is not JSON, with a line and column.
  function jsonProblem(text, err) {
    let msg = err.message;
    const m = /position (\d+)/.exec(msg);
    if (m && !/line \d+/.test(msg)) {
      const before = text.slice(0, Number(m[1])).split("\n");
      msg += ` (line ${before.length}, column ${before[before.length - 1].length + 1})`;
    }
    return msg;
  }

  // ---------- the editor ----------

  const indentUnit = () => (language.value === "python" ? "    " : "  ");

  function replaceRange(start, end, text, selStart, selEnd) {
    code.focus();
    code.setSelectionRange(start, end);
    // insertText keeps the browser's undo history; setRangeText where it
    // is not supported.
    if (!document.execCommand || !document.execCommand("insertText", false, text)) {
      code.setRangeText(text, start, end, "end");
    }
    code.setSelectionRange(selStart, selEnd);
    codeChanged();
  }

  // selectedLines returns the start and end offsets of the lines the
  // selection touches.
  function selectedLines() {
    const v = code.value;
    const { selectionStart: s, selectionEnd: e } = code;
    const start = v.lastIndexOf("\n", s - 1) + 1;
    let end = e > s && v[e - 1] === "\n" ? e - 1 : e;
    const nl = v.indexOf("\n", end);
    end = nl === -1 ? v.length : nl;
    return [start, end];
  }

  function indent() {
    const { selectionStart: s, selectionEnd: e, value: v } = code;
    const unit = indentUnit();
    if (s === e) {
      replaceRange(s, e, unit, s + unit.length, s + unit.length);
      return;
    }
    const [start, end] = selectedLines();
    const block = v.slice(start, end).replace(/^/gm, unit);
    replaceRange(start, end, block, start, start + block.length);
  }

  function dedent() {
    const { selectionStart: s, selectionEnd: e, value: v } = code;
    const unit = indentUnit();
    const [start, end] = selectedLines();
    const lines = v.slice(start, end).split("\n");
    let removedFirst = 0;
    const out = lines.map((line, i) => {
      const m = line.startsWith("\t") ? 1 : Math.min(unit.length, line.length - line.trimStart().length);
      if (i === 0) removedFirst = m;
      return line.slice(m);
    });
    const block = out.join("\n");
    if (block === v.slice(start, end)) return;
    if (s === e) {
      const caret = Math.max(start, s - removedFirst);
      replaceRange(start, end, block, caret, caret);
    } else {
      replaceRange(start, end, block, start, start + block.length);
    }
  }

  function newline() {
    const { selectionStart: s, selectionEnd: e, value: v } = code;
    const lineStart = v.lastIndexOf("\n", s - 1) + 1;
    const line = v.slice(lineStart, s);
    let lead = /^[ \t]*/.exec(line)[0];
    const opens = language.value === "python" ? /:\s*$/ : /[{[(]\s*$/;
    if (opens.test(line)) lead += indentUnit();
    const text = "\n" + lead;
    replaceRange(s, e, text, s + text.length, s + text.length);
  }

  let escaped = false; // Esc, then Tab moves the focus out of the editor
  code.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      escaped = true;
      return;
    }
    const plain = !ev.ctrlKey && !ev.altKey && !ev.metaKey;
    if (ev.key === "Tab" && plain && !escaped) {
      ev.preventDefault();
      if (ev.shiftKey) dedent();
      else indent();
    } else if (ev.key === "Enter" && plain && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      newline();
    }
    escaped = false;
  });

  function updateGutter() {
    const n = code.value.split("\n").length;
    if (gutter.dataset.n !== String(n)) {
      const nums = [];
      for (let i = 1; i <= n; i++) {
        if (i > 1) nums.push("\n");
        nums.push(errorLines.includes(i) ? h("span", { className: "error-line", title: "the error is on this line" }, String(i)) : String(i));
      }
      gutter.replaceChildren(...nums);
      gutter.dataset.n = String(n);
    }
    gutter.scrollTop = code.scrollTop;
    if (errorLines.length) placeErrorMarks();
  }

  function updateCaret() {
    const before = code.value.slice(0, code.selectionStart).split("\n");
    $("caret").textContent = `Ln ${before.length}, Col ${before[before.length - 1].length + 1}`;
  }

  // goTo selects line:column of the editor (1-based), to show where an
  // error arose.
  function goTo(line, column) {
    const lines = code.value.split("\n");
    line = Math.min(Math.max(1, line), lines.length);
    let off = 0;
    for (let i = 0; i < line - 1; i++) off += lines[i].length + 1;
    const col = Math.min(Math.max(1, column || 1), lines[line - 1].length + 1);
    code.focus();
    code.setSelectionRange(off + col - 1, off + lines[line - 1].length);
    const lh = parseFloat(getComputedStyle(code).lineHeight) || 19;
    code.scrollTop = Math.max(0, (line - 1) * lh - code.clientHeight / 3);
    updateGutter();
    updateCaret();
  }

  // ---------- the error's lines in the editor ----------

  let errorLines = []; // 1-based lines marked by the last run's error

  const lineHeight = () => parseFloat(getComputedStyle(code).lineHeight) || 19;

  // markErrorLines marks the lines where the error e arose (its position
  // and its TypeScript diagnostics) in the gutter and with a band over the
  // editor, and scrolls the first into view. It keeps the focus where it
  // is: goTo (the links in the error) moves it.
  function markErrorLines(e) {
    const lines = [];
    const add = (p) => {
      const n = p && Number(p.line);
      if (Number.isInteger(n) && n >= 1 && !lines.includes(n)) lines.push(n);
    };
    add(e.position);
    for (const d of e.diagnostics || []) add(d);
    errorLines = lines.sort((a, b) => a - b);
    $("editor").dataset.errorLines = errorLines.join(",");
    gutter.dataset.n = ""; // redraw
    updateGutter();
    if (errorLines.length) {
      const lh = lineHeight();
      const top = (errorLines[0] - 1) * lh;
      if (top < code.scrollTop || top + lh > code.scrollTop + code.clientHeight) {
        code.scrollTop = Math.max(0, top - code.clientHeight / 3);
      }
    }
    placeErrorMarks();
  }

  function clearErrorLines() {
    if (!errorLines.length) return;
    errorLines = [];
    delete $("editor").dataset.errorLines;
    gutter.dataset.n = "";
    updateGutter();
    placeErrorMarks();
  }

  // placeErrorMarks puts one band over each marked line, where the editor
  // shows it now (it follows the scroll).
  function placeErrorMarks() {
    const box = $("error-marks");
    const lines = code.value.split("\n").length;
    const lh = lineHeight();
    const top0 = code.offsetTop + (parseFloat(getComputedStyle(code).paddingTop) || 0) - code.scrollTop;
    box.replaceChildren(...errorLines.filter((n) => n <= lines).map((n) => {
      const band = h("div", { dataset: { line: String(n) } });
      band.style.top = `${top0 + (n - 1) * lh}px`; // CSSOM: allowed by the CSP
      band.style.height = `${lh}px`;
      band.style.left = `${code.offsetLeft}px`;
      return band;
    }));
  }

  function codeChanged() {
    updateGutter();
    updateCaret();
    saveDraft();
  }
  code.addEventListener("input", codeChanged);
  code.addEventListener("scroll", () => {
    gutter.scrollTop = code.scrollTop;
    if (errorLines.length) placeErrorMarks();
  });
  for (const ev of ["keyup", "click", "select", "focus"]) code.addEventListener(ev, updateCaret);

  // Ctrl+Enter runs from any field.
  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      if (!runBtn.disabled) form.requestSubmit(runBtn);
    }
  });

  // ---------- drafts, language, the API key ----------

  let draftTimer = 0;
  let wantedModules = []; // the draft's modules, checked once the boxes exist
  function saveDraft() {
    clearTimeout(draftTimer);
    draftTimer = setTimeout(() => {
      const d = {
        language: language.value, code: code.value, input: inputEl.value,
        data: dataEl.value, wallMs: wallEl.value, memoryMb: memEl.value,
        modules: checkedModules(), egress: egressSel.value, egressHosts: hostsEl.value,
      };
      try { sessionStorage.setItem(DRAFT_STORAGE, JSON.stringify(d)); } catch { /* storage off: no drafts */ }
    }, 300);
  }

  function loadDraft() {
    let d = null;
    try { d = JSON.parse(sessionStorage.getItem(DRAFT_STORAGE) || "null"); } catch { d = null; }
    if (d && EXAMPLES[d.language] !== undefined) {
      language.value = d.language;
      code.value = d.code || "";
      inputEl.value = d.input || "";
      dataEl.value = d.data || "";
      wallEl.value = d.wallMs || "";
      memEl.value = d.memoryMb || "";
      // The modules' boxes come with the server's config: init checks them.
      wantedModules = Array.isArray(d.modules) ? d.modules : [];
      if ([...egressSel.options].some((o) => o.value === d.egress)) egressSel.value = d.egress;
      hostsEl.value = d.egressHosts || "";
    } else {
      code.value = EXAMPLES.javascript;
      inputEl.value = EXAMPLE_INPUT;
      dataEl.value = EXAMPLE_DATA;
    }
    language.dataset.previous = language.value;
  }

  // Switching language swaps the example in, unless the code was edited.
  language.addEventListener("change", () => {
    const prev = language.dataset.previous;
    if (code.value.trim() === "" || code.value === EXAMPLES[prev]) {
      code.value = EXAMPLES[language.value];
      clearErrorLines();
    }
    language.dataset.previous = language.value;
    codeChanged();
  });
  $("reset").addEventListener("click", () => {
    code.value = EXAMPLES[language.value];
    clearErrorLines();
    if (inputEl.value.trim() === "") inputEl.value = EXAMPLE_INPUT;
    if (dataEl.value.trim() === "") dataEl.value = EXAMPLE_DATA;
    codeChanged();
  });
  for (const el of [inputEl, dataEl, wallEl, memEl, hostsEl]) el.addEventListener("input", saveDraft);
  modulesEl.addEventListener("change", saveDraft);
  egressSel.addEventListener("change", () => {
    hostsEl.hidden = egressSel.value !== "hosts";
    showProblem("egress-problem", hostsEl, "");
    saveDraft();
  });

  try { apiKey.value = sessionStorage.getItem(KEY_STORAGE) || ""; } catch { /* storage off */ }
  apiKey.addEventListener("input", () => {
    apiKey.classList.remove("invalid");
    try {
      if (apiKey.value) sessionStorage.setItem(KEY_STORAGE, apiKey.value);
      else sessionStorage.removeItem(KEY_STORAGE);
    } catch { /* storage off: the key lives in the field only */ }
  });

  // ---------- modules and the egress preset ----------

  const checkedModules = () => [...modulesEl.querySelectorAll("input:checked")].map((b) => b.value);

  // showModules offers the modules the server lists, checking those of
  // the draft.
  function showModules(names) {
    if (!names.length) return; // "none offered" stays
    modulesEl.replaceChildren(...names.map((m) => h("label", {},
      h("input", { type: "checkbox", value: m, checked: wantedModules.includes(m) }), " " + m)));
  }

  // hostsPolicy turns the hosts the user typed ("api.example.com",
  // "*.example.org", "127.0.0.1:8080", "[::1]:8080", "http://host:port/")
  // into an egress policy that narrows the server's to them: the server's
  // schemes, the ports typed (with 80 and 443 for a host typed without
  // one), and for an IP literal the server's exemption from the SSRF rules
  // for that address, if it has one (a request only keeps the server's
  // holes). It returns {policy} or {problem}.
  function hostsPolicy(text) {
    const entries = text.split(/[\s,]+/).filter(Boolean);
    if (!entries.length) return { problem: 'List the hosts the step may fetch from, or pick "no network".' };
    const hosts = [];
    const ports = [];
    const unsafe = [];
    let defaultPorts = false;
    for (const entry of entries) {
      const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(entry);
      if (scheme && !/^https?$/i.test(scheme[1])) return { problem: `"${entry}": fetch speaks http and https only.` };
      // A URL counts for its host and port: the scheme, path and query go.
      const hostPort = entry.slice(scheme ? scheme[0].length : 0).replace(/[/?#].*$/, "");
      const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d*))?$/i.exec(hostPort);
      if (!m) return { problem: `"${entry}" is not a host, host:port or URL (write an IPv6 address in brackets: [::1]:8080).` };
      let host = m[1];
      const port = m[2] === undefined ? "" : m[2];
      if (m[2] === "") return { problem: `"${entry}": the port is missing after ":".` };
      if (port !== "") {
        const n = Number(port);
        if (!Number.isInteger(n) || n < 1 || n > 65535) return { problem: `"${entry}": ${port} is not a port (1 to 65535).` };
        if (!ports.includes(n)) ports.push(n);
      } else {
        defaultPorts = true;
      }
      host = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
      if (!/^(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|[0-9a-f:.]*:[0-9a-f:.]*)$/.test(host)) {
        return { problem: `"${entry}": "${host}" is not a host name, a *.domain pattern or an IP address.` };
      }
      if (!hosts.includes(host)) hosts.push(host);
      if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) unsafe.push(host + "/32");
      else if (host.includes(":")) unsafe.push(host + "/128");
    }
    const policy = { schemes: ["http", "https"], hosts };
    if (ports.length) {
      if (defaultPorts) for (const n of [80, 443]) if (!ports.includes(n)) ports.push(n);
      policy.ports = ports;
    }
    if (unsafe.length) policy.unsafeAllowAddresses = [...new Set(unsafe)];
    return { policy };
  }

  // egressFor is the request's egress field for the preset: "none" denies
  // every fetch (an empty host list narrows the server's to nothing),
  // "hosts" narrows to the hosts typed, "server" leaves the server's policy
  // as it is. Without fetch on the server, nothing is sent.
  function egressFor() {
    if (egressSel.disabled) return {};
    switch (egressSel.value) {
      case "hosts": return hostsPolicy(hostsEl.value);
      case "server": return {};
      default: return { policy: { hosts: [] } };
    }
  }

  // ---------- validation ----------

  function showProblem(id, field, msg) {
    const p = $(id);
    p.textContent = msg || "";
    p.hidden = !msg;
    if (field) field.classList.toggle("invalid", Boolean(msg));
  }

  // validate builds the Run request, or reports every problem of the form
  // next to its field and returns null.
  function validate() {
    let ok = true;
    const req = { language: language.value, code: code.value };

    showProblem("code-problem", code, code.value.trim() === "" ? "The code is empty." : "");
    if (code.value.trim() === "") ok = false;

    const inText = inputEl.value.trim();
    let inMsg = "";
    if (inText !== "") {
      try {
        JSON.parse(inText);
        req.inputJson = inText; // as written: lossless (see jsonOf)
      } catch (err) {
        inMsg = "Input is not valid JSON: " + jsonProblem(inText, err);
      }
    }
    showProblem("input-problem", inputEl, inMsg);
    if (inMsg) ok = false;

    const dataText = dataEl.value.trim();
    let dataMsg = "";
    if (dataText !== "") {
      let parsed;
      try {
        parsed = JSON.parse(dataText);
      } catch (err) {
        dataMsg = "Data fixtures are not valid JSON: " + jsonProblem(dataText, err);
      }
      if (!dataMsg && (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))) {
        dataMsg = 'Data fixtures must be a JSON object mapping a method to its answer, e.g. {"user": {"name": "Ada"}}.';
      }
      if (!dataMsg) {
        req.dataJson = {};
        for (const [k, v] of objectMembers(dataText)) req.dataJson[k] = v;
      }
    }
    showProblem("data-problem", dataEl, dataMsg);
    if (dataMsg) ok = false;

    const limits = {};
    const limitMsgs = [];
    for (const [el, name] of [[wallEl, "wallMs"], [memEl, "memoryMb"]]) {
      const raw = el.value.trim();
      // A number input holds "" for text it cannot parse; validity tells.
      const bad = el.validity && el.validity.badInput;
      let msg = "";
      if (bad) msg = `${name} must be a whole number.`;
      else if (raw !== "") {
        const n = Number(raw);
        if (!Number.isInteger(n) || n < 1 || n > MAX_INT32) msg = `${name} must be a whole number from 1 to ${MAX_INT32}; leave it empty for the plan's.`;
        else limits[name] = n;
      }
      el.classList.toggle("invalid", Boolean(msg));
      if (msg) limitMsgs.push(msg);
    }
    showProblem("limits-problem", null, limitMsgs.join("\n"));
    if (limitMsgs.length) ok = false;
    if (Object.keys(limits).length) req.limits = limits;

    const modules = checkedModules();
    if (modules.length) req.modules = modules;
    const eg = egressFor();
    showProblem("egress-problem", hostsEl, eg.problem || "");
    if (eg.problem) ok = false;
    else if (eg.policy) req.egress = eg.policy;

    if (!ok) {
      const first = form.querySelector(".invalid");
      if (first) first.focus();
      return null;
    }
    return req;
  }

  // ---------- rendering ----------

  function setOutcome(state, ...parts) {
    const o = $("outcome");
    o.dataset.state = state;
    o.replaceChildren(...parts.filter((p) => p !== null && p !== undefined));
  }

  function clearOutput() {
    for (const id of ["result-box", "error-box", "events-box", "stats-box"]) $(id).hidden = true;
    $("result").textContent = "";
    $("error").replaceChildren();
    $("events").replaceChildren();
    $("stats").tBodies[0].replaceChildren();
  }

  const ms = (v) => (v < 10 ? v.toFixed(2) : v < 1000 ? v.toFixed(1) : Math.round(v).toString());

  function renderEvents(events, req) {
    const list = $("events");
    const fixtures = req.dataJson || {};
    events.forEach((ev, i) => {
      let kind = "?";
      let cls = "";
      let body;
      if (ev.status !== undefined) {
        kind = "status";
        cls = "status";
        body = jsonBlock(jsonOf(ev.status, ev.statusJson));
      } else if (ev.console) {
        const level = ev.console.level || "log";
        kind = "console." + level;
        cls = level;
        body = ev.console.text || "";
      } else if (ev.dataRequest) {
        const dr = ev.dataRequest;
        kind = "data";
        cls = "data";
        const answered = Object.prototype.hasOwnProperty.call(fixtures, dr.method);
        body = h("span", {},
          `request(${JSON.stringify(dr.method)}, ${compactJSON(jsonOf(dr.params, dr.paramsJson))})`,
          h("span", { className: "note" }, answered ? "  → answered from the fixtures" : "  → refused: no fixture for this method"));
      } else if (ev.fetch !== undefined) {
        kind = "fetch";
        cls = "fetch";
        body = fetchBody(jsonOf(ev.fetch));
      } else {
        body = JSON.stringify(ev);
      }
      list.append(h("li", { className: cls === "warn" || cls === "error" ? cls : "" },
        h("span", { className: "n" }, String(i + 1)),
        h("span", { className: "kind " + cls }, kind),
        h("div", { className: "body" }, body)));
    });
    $("events-count").textContent = `(${events.length})`;
    $("events-box").hidden = false;
  }

  // jsonOf is the JSON text of a value of the answer: its exact twin
  // (valueJson, statusJson, paramsJson) when the server sent one, because
  // a number in it does not survive a double, else the value itself, whose
  // numbers JSON.parse read exactly.
  function jsonOf(value, twin) {
    if (typeof twin === "string" && twin !== "") return twin;
    return JSON.stringify(value === undefined ? null : value);
  }

  // jsonBlock shows JSON text on one line when short, pretty otherwise.
  function jsonBlock(text) {
    const flat = compactJSON(text);
    return flat.length <= 100 ? flat : h("pre", {}, prettyJSON(text));
  }

  function fetchBody(text) {
    let a = null;
    try { a = JSON.parse(text); } catch { return text; }
    const parts = [a.decision || "?", a.method || "GET", a.url || ""];
    if (a.status) parts.push(`→ ${a.status}`);
    if (a.bytes_in !== undefined) parts.push(`${a.bytes_in} B in`);
    if (a.duration_ms !== undefined) parts.push(`${ms(Number(a.duration_ms))} ms`);
    if (a.redirects) parts.push(`${a.redirects} redirects`);
    const reason = [a.kind, a.limit, a.reason].filter(Boolean).join(": ");
    return h("span", {},
      parts.join(" "),
      reason ? h("span", { className: "note" }, "  (" + reason + ")") : null,
      h("details", {}, h("summary", {}, "audit record"), h("pre", {}, prettyJSON(text))));
  }

  function renderError(e) {
    const dl = $("error");
    const row = (name, ...value) => dl.append(h("dt", {}, name), h("dd", {}, ...value));
    dl.append(h("dt", {}, "code"), h("dd", { className: "code" }, e.code || "?"));
    if (e.limit) row("limit", e.limit);
    row("message", e.message || "");
    if (e.position && e.position.line) {
      const { line, column } = e.position;
      row("position", h("button", {
        type: "button", className: "link", title: "Show in the editor",
        on: { click: () => goTo(line, column) },
      }, `line ${line}, column ${column || 1}`));
    }
    if (e.diagnostics && e.diagnostics.length) {
      row("diagnostics", h("ul", {}, ...e.diagnostics.map((d) => h("li", {},
        h("button", {
          type: "button", className: "link", title: "Show in the editor",
          on: { click: () => goTo(d.line, d.column) },
        }, `${d.line || "?"}:${d.column || "?"}`),
        " " + (d.message || "")))));
    }
    if (e.stack) row("stack", h("pre", {}, e.stack));
    $("error-box").hidden = false;
    markErrorLines(e);
  }

  function renderStats(stats, roundTrip, lang) {
    const tb = $("stats").tBodies[0];
    const s = stats || {};
    const per = STATS_BY_LANGUAGE[lang] || {};
    const notMeasured = per.notMeasured || {};
    const row = (key, label, unit, id, title) => {
      if (notMeasured[key] !== undefined && id === key) {
        tb.append(h("tr", { className: "not-measured", title: notMeasured[key], dataset: { stat: id } },
          h("th", {}, label), h("td", {}, "not measured"), h("td", { className: "unit" }, "")));
        return;
      }
      const v = Number(s[key] || 0); // protojson leaves zeros out
      const text = unit === "ms" ? ms(v) : unit === "MB" ? v.toFixed(2) : String(v);
      tb.append(h("tr", { title: title || "", dataset: { stat: id } },
        h("th", {}, label), h("td", {}, text), h("td", { className: "unit" }, unit)));
    };
    for (const [key, label, unit] of STATS) {
      row(key, label, unit, key);
      if (per.extra && per.extra.after === key) row(...per.extra.row);
    }
    tb.append(h("tr", { dataset: { stat: "roundTripMs" } },
      h("th", {}, "round trip (browser)"), h("td", {}, ms(roundTrip)), h("td", { className: "unit" }, "ms")));
    $("stats-box").hidden = false;
  }

  function renderRun(body, req, roundTrip) {
    const runId = body.runId || "";
    renderEvents(body.events || [], req);
    if (body.result) {
      const r = body.result;
      $("result").textContent = prettyJSON(jsonOf(r.value, r.valueJson));
      $("result-box").hidden = false;
      renderStats(r.stats, roundTrip, req.language);
      setOutcome("ok", "✓ ok ", h("span", { className: "muted" },
        `· ${ms(Number((r.stats && r.stats.wallMs) || 0))} ms · ${runId}`));
    } else if (body.error) {
      const e = body.error;
      renderError(e);
      renderStats(e.stats, roundTrip, req.language);
      setOutcome("failed", `✗ ${e.code || "ERROR"}${e.limit ? " (" + e.limit + ")" : ""} `,
        h("span", { className: "muted" }, `· ${e.message || ""} · ${runId}`));
    } else {
      setOutcome("failed", "The answer has neither result nor error.");
    }
  }

  const HINTS = {
    401: "The server wants an API key: enter it above.",
    403: "Your key's tenant may not use this plan.",
    413: "The request is larger than the server accepts (maxRequestBytes).",
    429: "Your tenant has as many runs in flight as it may: retry when one has ended.",
    501: "This language is not available on this server.",
    503: "The server is busy or shutting down: retry shortly.",
  };

  // renderRefusal shows a request the server did not run: an HTTP error
  // with Connect's JSON body, whose "error" member is the contract's Error
  // as plain JSON.
  function renderRefusal(status, body, text) {
    const rpcCode = (body && body.code) || "";
    const message = (body && body.message) || text.slice(0, 500) || "(no message)";
    const detail = (body && body.error) || null;
    setOutcome("refused", `✗ HTTP ${status}${rpcCode ? " " + rpcCode : ""} `,
      h("span", { className: "muted" }, "· " + message));
    renderError(detail || { code: rpcCode || `HTTP ${status}`, message });
    if (HINTS[status]) $("error").append(h("dt", {}, "hint"), h("dd", {}, HINTS[status]));
    if (status === 401) {
      $("auth").hidden = false;
      apiKey.classList.add("invalid");
      apiKey.focus();
    }
  }

  // ---------- running ----------

  async function run() {
    clearOutput();
    clearErrorLines();
    const req = validate();
    if (!req) {
      setOutcome("invalid", "Fix the problems marked in the form: nothing was sent.");
      return;
    }
    const headers = { "Content-Type": "application/json" };
    const key = apiKey.value.trim();
    if (key) headers.Authorization = "Bearer " + key;

    controller = new AbortController();
    runBtn.disabled = true;
    stopBtn.disabled = false;
    setOutcome("running", "Running…");
    runs++;
    document.body.dataset.runs = String(runs);
    const t0 = performance.now();
    try {
      const resp = await fetch(RUN_PATH, {
        method: "POST", headers, body: JSON.stringify(req),
        signal: controller.signal, cache: "no-store", credentials: "omit",
      });
      const text = await resp.text();
      const roundTrip = performance.now() - t0;
      let body = null;
      try { body = JSON.parse(text); } catch { body = null; }
      if (resp.ok && body) renderRun(body, req, roundTrip);
      else renderRefusal(resp.status, body, text);
    } catch (err) {
      if (err && err.name === "AbortError") {
        setOutcome("failed", "■ Stopped ", h("span", { className: "muted" },
          "· the connection was closed, so the server aborts the run"));
      } else {
        setOutcome("refused", "✗ Network error ", h("span", { className: "muted" }, "· " + String(err && err.message || err)));
      }
    } finally {
      controller = null;
      runBtn.disabled = false;
      stopBtn.disabled = true;
    }
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!controller) run();
  });
  stopBtn.addEventListener("click", () => { if (controller) controller.abort(); });

  // ---------- start ----------

  async function init() {
    loadDraft();
    codeChanged();
    try {
      const resp = await fetch(CONFIG_PATH, { cache: "no-store", credentials: "omit" });
      const cfg = await resp.json();
      if (cfg.auth === "keys") $("auth").hidden = false;
      showModules(Array.isArray(cfg.modules) ? cfg.modules : []);
      if (!cfg.fetch) {
        egressSel.disabled = true;
        hostsEl.hidden = true;
        $("egress-note").textContent = "fetch is off on this server";
      }
      $("server-info").textContent = [
        cfg.version ? "server " + cfg.version : "",
        cfg.auth === "keys" ? "API key required" : "no authentication",
      ].filter(Boolean).join(" · ");
    } catch {
      $("auth").hidden = false; // cannot tell: offer the field
    }
    hostsEl.hidden = egressSel.disabled || egressSel.value !== "hosts";
    document.body.dataset.ready = "1";
  }
  init();
})();
