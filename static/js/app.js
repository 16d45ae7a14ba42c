// Small behaviours shared by every page. Loaded with the page's CSP nonce; no inline script,
// no inline handlers and no hx-on (htmx runs with allowEval off): everything is a listener here.
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const page = () => document.body.dataset.page || "";

  // --- toast --------------------------------------------------------------------------------
  let toastTimer = null;
  function toast(text, kind) {
    const el = $("#toast");
    if (!el) return;
    el.textContent = text;
    el.className = "toast " + (kind || "info");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => el.classList.add("hidden"), 4500);
  }

  // --- dialogs ------------------------------------------------------------------------------
  function openHelp() {
    const help = $("#help");
    if (help && !help.open) help.showModal();
  }
  document.addEventListener("click", (event) => {
    const helpButton = event.target.closest("[data-help]");
    if (helpButton) { event.preventDefault(); openHelp(); return; }
    const close = event.target.closest("[data-close]");
    if (close) { const dialog = close.closest("dialog"); if (dialog) dialog.close(); return; }
    if (event.target.tagName === "DIALOG") event.target.close(); // click on the backdrop
  });

  // --- tabs on the task page ----------------------------------------------------------------
  const TABS = ["tests", "reference", "testpatch", "trajectories", "history"];
  let currentTab = null;
  function showTab(name) {
    if (!$("[data-tab]")) return;
    currentTab = name;
    $$("[data-tab]").forEach((b) => {
      const on = b.dataset.tab === name;
      b.classList.toggle("active", on);
      b.setAttribute("aria-selected", on ? "true" : "false");
    });
    $$(".tab-panel").forEach((p) => p.classList.toggle("active", p.dataset.panel === name));
    try { sessionStorage.setItem("specloom-tab", name); } catch (e) { /* private mode */ }
  }
  document.addEventListener("click", (event) => {
    const tab = event.target.closest("[data-tab]");
    if (tab) { showTab(tab.dataset.tab); return; }
    const jump = event.target.closest("[data-goto-tab]");
    if (jump) {
      showTab(jump.dataset.gotoTab);
      const target = document.getElementById((jump.getAttribute("href") || "").slice(1));
      if (target) { event.preventDefault(); focusItem(target); }
    }
  });

  // --- diffs: unified or split, remembered ---------------------------------------------------
  function diffMode() {
    try { return localStorage.getItem("specloom-diff") || "unified"; } catch (e) { return "unified"; }
  }
  function applyDiffMode(root) {
    const mode = diffMode();
    $$("[data-diff]", root).forEach((d) => {
      d.classList.toggle("split", mode === "split");
      $$("[data-diff-mode]", d).forEach((b) => b.classList.toggle("active", b.dataset.diffMode === mode));
    });
  }
  function setDiffMode(mode) {
    try { localStorage.setItem("specloom-diff", mode); } catch (e) { /* private mode */ }
    applyDiffMode(document);
  }
  document.addEventListener("click", (event) => {
    const b = event.target.closest("[data-diff-mode]");
    if (b) setDiffMode(b.dataset.diffMode);
  });

  // --- the specs' graph: zoom, drag to pan, enlarge ----------------------------------------
  // The SVG is drawn at a readable natural size; zoom changes its pixel size inside a
  // scrolling viewport (no transform tricks), so links and tooltips keep working.
  let graphScale = null; // null: fit the viewport's width (never above 100%)
  function applyGraph() {
    const viewport = $("[data-graph-viewport]");
    const svg = viewport && $("svg.depgraph", viewport);
    if (!svg) return;
    const w = Number(svg.dataset.width), h = Number(svg.dataset.height);
    // Fit the width, but never below 85%: past that, labels get small; the viewport scrolls.
    // Enlarged, it fills the window (up to 2.5 times its size).
    const enlarged = viewport.closest("[data-graph]").classList.contains("enlarged");
    const fit = enlarged
      ? Math.max(0.85, Math.min(2.5, (viewport.clientWidth - 4) / w, (viewport.clientHeight - 4) / h))
      : Math.max(0.85, Math.min(1, (viewport.clientWidth - 2) / w));
    const scale = graphScale === null ? fit : graphScale;
    svg.style.width = Math.round(w * scale) + "px";
    svg.style.height = Math.round(h * scale) + "px";
    const label = $("[data-graph-scale]");
    if (label) label.textContent = Math.round(scale * 100) + "%";
  }
  function zoomGraph(step) {
    const svg = $("[data-graph-viewport] svg.depgraph");
    if (!svg) return;
    if (step === 0) { graphScale = null; applyGraph(); return; }
    const current = svg.getBoundingClientRect().width / Number(svg.dataset.width);
    graphScale = Math.max(0.4, Math.min(4, current * (step > 0 ? 1.25 : 0.8)));
    applyGraph();
  }
  function enlargeGraph(on) {
    const card = $("[data-graph]");
    if (!card) return;
    card.classList.toggle("enlarged", on);
    const button = $("[data-graph-enlarge]", card);
    if (button) {
      button.setAttribute("aria-pressed", on ? "true" : "false");
      button.textContent = on ? "✕ Close" : "⤢ Enlarge";
    }
    graphScale = null;
    applyGraph();
  }
  document.addEventListener("click", (event) => {
    const view = event.target.closest("[data-graph-view]");
    if (view) {
      view.closest("[data-graph]").dataset.view = view.dataset.graphView;
      applyGraph();
      return;
    }
    const zoom = event.target.closest("[data-graph-zoom]");
    if (zoom) { zoomGraph(Number(zoom.dataset.graphZoom)); return; }
    const enlarge = event.target.closest("[data-graph-enlarge]");
    if (enlarge) { enlargeGraph(!enlarge.closest("[data-graph]").classList.contains("enlarged")); return; }
    // A spec in the graph, the matrix or the list: close the enlarged view, focus its card.
    const link = event.target.closest("[data-graph] a[href^='#spec-']");
    if (link) {
      event.preventDefault();
      if (dragMoved) return; // the end of a drag is not a click
      enlargeGraph(false);
      const id = link.getAttribute("href").slice(1);
      const card = document.getElementById(id);
      if (card) { focusItem(card); history.replaceState(null, "", "#" + id); }
    }
  });
  let drag = null, dragMoved = false;
  document.addEventListener("pointerdown", (event) => {
    const viewport = event.target.closest("[data-graph-viewport]");
    if (!viewport || event.button !== 0) return;
    drag = { viewport, x: event.clientX, y: event.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
    dragMoved = false;
  });
  document.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (!dragMoved && Math.abs(dx) + Math.abs(dy) < 5) return;
    dragMoved = true;
    drag.viewport.classList.add("dragging");
    drag.viewport.scrollLeft = drag.left - dx;
    drag.viewport.scrollTop = drag.top - dy;
  });
  document.addEventListener("pointerup", () => {
    if (drag) drag.viewport.classList.remove("dragging");
    drag = null;
    setTimeout(() => { dragMoved = false; }, 0);
  });
  document.addEventListener("wheel", (event) => {
    if (!(event.ctrlKey || event.metaKey) || !event.target.closest("[data-graph-viewport]")) return;
    event.preventDefault(); // zoom the graph, not the page
    zoomGraph(event.deltaY < 0 ? 1 : -1);
  }, { passive: false });
  window.addEventListener("resize", () => { if (graphScale === null) applyGraph(); });

  // --- long problem statements fold, so the specs and their graph stay near the top -------
  function foldStatements(root) {
    $$("[data-collapsible]", root).forEach((body) => {
      if (body.dataset.folded) return;
      body.dataset.folded = "1";
      const button = body.parentElement && $("[data-expand]", body.parentElement);
      if (!button || body.scrollHeight <= 420) return;
      body.classList.add("collapsed");
      button.classList.remove("hidden");
    });
  }
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-expand]");
    if (!button) return;
    const body = $("[data-collapsible]", button.parentElement);
    const open = body.classList.toggle("collapsed") === false;
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.textContent = open ? "Fold the statement" : "Show the whole statement";
  });

  // --- comments -----------------------------------------------------------------------------
  document.addEventListener("click", (event) => {
    const toggle = event.target.closest("[data-comment-toggle]");
    if (toggle) {
      const form = document.getElementById(toggle.dataset.commentToggle);
      if (form) {
        form.classList.toggle("hidden");
        if (!form.classList.contains("hidden")) { const t = $("textarea", form); if (t) t.focus(); }
      }
      return;
    }
    const line = event.target.closest("[data-line-comment]");
    const dialog = $("#line-comment");
    if (line && dialog) {
      const diff = line.closest("[data-diff]");
      const form = $("form", dialog);
      form.elements.patch.value = diff ? diff.dataset.patch : "";
      form.elements.file_path.value = line.dataset.file;
      form.elements.line.value = line.dataset.line;
      $("[data-line-label]", dialog).textContent = line.dataset.file + ":" + line.dataset.line;
      dialog.showModal();
      form.elements.body.focus();
    }
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt;
    if (!form || !form.matches) return;
    if (form.matches("[data-line-comment-form]") && event.detail.successful) {
      form.reset();
      form.closest("dialog").close();
      toast("Comment added.", "ok");
    }
    if (form.matches(".comment-form") && event.detail.successful) {
      form.reset();
      if (form.id) form.classList.add("hidden");
    }
  });

  // --- selects that submit their form ---------------------------------------------------------
  document.addEventListener("change", (event) => {
    if (event.target.matches("[data-autosubmit]")) event.target.form.submit();
  });

  // --- queue rows and task items: j/k focus ---------------------------------------------------
  let focused = null;
  function focusItem(el) {
    if (!el) return;
    if (focused) focused.classList.remove("item-focus", "focused");
    focused = el;
    el.classList.add(el.matches("tr") ? "focused" : "item-focus");
    el.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }
  function items() {
    if (page() === "queue" || page() === "adjudication") return $$("tr[data-row]");
    if (page() === "trajectory") return $$(".step[data-item]");
    // The task page: the left zone, then the active tab; hidden things are skipped.
    return $$(".zone-left [data-item], .tab-panel.active [data-item]").filter((el) => el.offsetParent !== null);
  }
  function move(delta) {
    const list = items();
    if (!list.length) return;
    let i = list.indexOf(focused);
    i = i < 0 ? (delta > 0 ? 0 : list.length - 1) : Math.max(0, Math.min(list.length - 1, i + delta));
    focusItem(list[i]);
  }
  document.addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-row]");
    if (row && !event.target.closest("a, button, input, select")) window.location = row.dataset.href;
  });

  // --- keyboard -------------------------------------------------------------------------------
  function typing(target) {
    // Radio buttons and checkboxes (the rubric) keep the shortcuts working.
    const field = target.closest("input, textarea, select, [contenteditable]");
    return field !== null && !(field.matches("input[type=radio], input[type=checkbox]"));
  }
  function clickShortcut(key) {
    const b = $(`[data-shortcut="${CSS.escape(key)}"]`);
    if (b) { b.click(); return true; }
    return false;
  }
  function decide(decision) {
    const button = $(`button[data-decision="${decision}"]`);
    if (!button) { toast("Claim the task first to decide.", "warn"); return; }
    if (button.disabled) {
      const note = $(".approve-note");
      toast(note ? note.textContent : "Not available now.", "warn");
      return;
    }
    const form = button.form;
    if (form && !form.checkValidity()) {
      form.reportValidity();
      toast("Fill in the rubric first.", "warn");
      return;
    }
    button.click();
  }
  function editFocused() {
    const scope = focused && document.body.contains(focused) ? focused : $("#statement");
    const edit = scope && (scope.matches("[data-edit]") ? scope : $("[data-edit]", scope));
    if (edit) edit.click();
    else toast("Nothing to edit here (claim the task to edit it).", "warn");
  }

  let pendingG = false;
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.key === "Escape") {
      if ($("[data-graph].enlarged")) { event.preventDefault(); enlargeGraph(false); return; }
      const form = target.closest && target.closest("[data-edit-form]");
      const cancel = form ? $("[data-cancel]", form) : null;
      if (cancel) { event.preventDefault(); cancel.click(); }
      return;
    }
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && typing(target)) {
      const form = target.closest("form");
      if (form) { event.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(target)) return;
    if ($("dialog[open]")) return;

    if (pendingG) {
      pendingG = false;
      if (event.key === "d") { window.location = "/"; return; }
      if (event.key === "q") { window.location = "/review/queue/"; return; }
    }
    const key = event.key;
    if (key === "?") { event.preventDefault(); openHelp(); return; }
    if (key === "g") { pendingG = true; setTimeout(() => { pendingG = false; }, 1000); return; }
    if (key === "/") {
      const search = $("[data-search]");
      if (search) { event.preventDefault(); search.focus(); search.select(); }
      return;
    }
    if (key === "j") { event.preventDefault(); move(1); return; }
    if (key === "k") { event.preventDefault(); move(-1); return; }
    if ((key === "Enter" || key === "o") && focused && focused.dataset.href) {
      window.location = focused.dataset.href;
      return;
    }
    if (key === "n") { clickShortcut("n"); return; }
    if (key === "[" || key === "]") { clickShortcut(key); return; }
    if (page() !== "task") return;
    if (key === "a") { event.preventDefault(); decide("approve"); return; }
    if (key === "c") { event.preventDefault(); decide("request_changes"); return; }
    if (key === "r") { event.preventDefault(); decide("reject"); return; }
    if (key === "e") { event.preventDefault(); editFocused(); return; }
    if (key === "u") { setDiffMode(diffMode() === "split" ? "unified" : "split"); return; }
    if (/^[1-5]$/.test(key)) {
      showTab(TABS[Number(key) - 1]);
      // On a narrow screen the tabs sit below the specs: bring the chosen one into view.
      const bar = $(".tabs");
      if (bar && (bar.getBoundingClientRect().top > window.innerHeight || bar.getBoundingClientRect().bottom < 0)) {
        bar.scrollIntoView({ block: "start" });
      }
    }
  });

  // --- htmx glue ------------------------------------------------------------------------------
  document.addEventListener("htmx:beforeRequest", (event) => {
    // A background refresh must never wipe an edit or a comment someone is typing.
    const elt = event.detail.elt;
    if (elt && elt.matches && elt.matches("[data-refresh-panel]")) {
      const busy = $$("[data-edit-form], .comment-form:not(.hidden) textarea", elt).some(
        (el) => el.matches("[data-edit-form]") || el.value.trim() !== ""
      );
      if (busy) event.preventDefault();
    }
  });
  document.addEventListener("htmx:afterSwap", () => {
    applyDiffMode(document);
    if (currentTab) showTab(currentTab);
    applyGraph();
    foldStatements(document);
  });
  // A freshly opened (or re-rendered) edit form takes the focus once, after the settle: htmx
  // binds the new content's hx-* attributes only then, so Esc pressed at once still finds
  // the Cancel button working.
  document.addEventListener("htmx:afterSettle", () => {
    const form = $("[data-edit-form]:not([data-focused])");
    if (form) {
      form.dataset.focused = "1";
      const auto = $("[data-autofocus]", form);
      if (auto) auto.focus();
      focusItem(form);
    }
  });
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    const messages = { 403: "You may not do that.", 404: "Not found (or not yours to see).", 405: "Not allowed." };
    const text = (xhr && messages[xhr.status]) || `Something went wrong (${xhr ? xhr.status : "?"}).`;
    toast(text, "error");
  });
  document.addEventListener("htmx:sendError", () => toast("The server did not answer. Are you offline?", "error"));
  // Events named in HX-Trigger headers bubble up from the element that asked.
  document.addEventListener("lease-lost", () => toast("Your lease on this task ended.", "warn"));
  // The tab bar is not re-rendered after a save; its History label follows the revision.
  document.addEventListener("task-updated", (event) => {
    const label = $("[data-history-count]");
    const revision = event.detail && event.detail.revision;
    if (label && revision) {
      label.textContent = "r" + revision;
      label.title = revision + " revisions";
    }
  });
  document.addEventListener("task-validated", () => toast("Validation finished: the page is up to date.", "ok"));

  // --- import forms on the repositories page: one tab per kind of source -----------------------
  function showImport(kind) {
    $$("[data-import-tab]").forEach((a) => a.classList.toggle("active", a.dataset.importTab === kind));
    $$("[data-import-panel]").forEach((f) => f.classList.toggle("active", f.dataset.importPanel === kind));
  }
  document.addEventListener("click", (event) => {
    const tab = event.target.closest("[data-import-tab]");
    if (tab) { event.preventDefault(); showImport(tab.dataset.importTab); }
  });

  // --- start ----------------------------------------------------------------------------------
  function start() {
    applyDiffMode(document);
    applyGraph();
    foldStatements(document);
    if ($("[data-tab]")) {
      let tab = "tests";
      try { tab = sessionStorage.getItem("specloom-tab") || "tests"; } catch (e) { /* private mode */ }
      showTab(TABS.includes(tab) ? tab : "tests");
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
