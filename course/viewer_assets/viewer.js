// The trace viewer: one recorded run, stepped through turn by turn (course/viewer.py makes the data).
// Every element is made with createElement and filled with textContent: nothing a model or a tool
// wrote is ever parsed as HTML, so markup in a run is shown as the text it is.
(function () {
  "use strict";
  var root = document.getElementById("viewer");
  var run;
  try {
    run = JSON.parse(document.getElementById("run-data").textContent);
  } catch (error) {
    run = null;
  }
  if (!run || run.format !== 1 || !Array.isArray(run.turns) || !run.end) {
    root.appendChild(el("p", "v-warning", "This page holds no run the viewer can read."));
    return;
  }
  var turns = run.turns;
  var count = turns.length;
  var current = 0;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function number(n) { return (typeof n === "number" ? n : 0).toLocaleString("en-US"); }
  function dollars(x) {
    if (typeof x !== "number") return "not priced";
    return "$" + x.toFixed(x < 0.1 ? 4 : 2);
  }
  function signed(n) { return (n >= 0 ? "+" : "−") + number(Math.abs(n)); }

  // What was spent up to and including each turn: the running totals.
  var sums = [];
  var inputSoFar = 0, outputSoFar = 0, costSoFar = 0;
  turns.forEach(function (turn) {
    inputSoFar += turn.input_all || 0;
    outputSoFar += turn.output_all || 0;
    costSoFar += turn.cost || 0;
    sums.push({ input: inputSoFar, output: outputSoFar, cost: costSoFar });
  });
  var largest = Math.max.apply(null, [1].concat(turns.map(function (t) { return t.sent.total || 0; })));

  // ---------------------------------------------------------------- what stays on screen
  var head = add(root, el("header", "v-head"));
  add(head, el("p", "v-kicker", "Run viewer · " + run.stage + " · " + run.model + (run.source ? " · " + run.source : "")));
  if (run.ladder) add(head, el("p", "v-ladder", "ladder cell · scenario " + run.ladder.scenario + " · " + run.ladder.outcome));
  add(head, el("h1", "v-task", run.task || "(no task)"));
  var outcome = add(head, el("p", "v-outcome"));
  var state = run.end.state;
  var badge = add(outcome, el("span", "v-badge v-state-" + state.replace(/[^a-z]/g, ""),
                               run.end.reason || state));
  badge.id = "stop-reason";
  add(outcome, el("span", "v-outcome-text", " " + count + " turn" + (count === 1 ? "" : "s")
      + (run.resumed ? " · resumed" : "") + (state !== "stopped" ? " · " + state : "")));
  (run.warnings || []).forEach(function (warning) { add(head, el("p", "v-warning", warning)); });

  var totals = add(root, el("section", "v-totals"));
  totals.setAttribute("aria-label", "totals up to this turn");
  function total(label, id) {
    var box = add(totals, el("div", "v-total"));
    add(box, el("span", "v-label", label));
    var value = add(box, el("span", "v-value"));
    value.id = id;
    return value;
  }
  var position = total("turn", "turn-position");
  var tokensIn = total("input tokens so far", "tokens-in");
  var tokensOut = total("output tokens so far", "tokens-out");
  var spent = total(run.priced_as ? "dollars so far" : "dollars", "dollars");

  var nav = add(root, el("nav", "v-nav"));
  nav.setAttribute("aria-label", "turns");
  function button(label, title, go) {
    var b = add(nav, el("button", "v-button", label));
    b.type = "button";
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", go);
    return b;
  }
  var first = button("« first", "first turn (Home)", function () { show(0); });
  var previous = button("◀ previous", "previous turn (← or k)", function () { show(current - 1); });
  var next = button("next ▶", "next turn (→ or j)", function () { show(current + 1); });
  var last = button("last »", "last turn (End)", function () { show(count - 1); });
  add(nav, el("span", "v-keys", "keys: ← → · Home End"));

  var body = add(root, el("div", "v-body"));
  var list = add(body, el("ol", "v-list"));
  list.id = "turn-list";
  list.setAttribute("aria-label", "every turn");
  var items = turns.map(function (turn, index) {
    var item = add(list, el("li"));
    var jump = add(item, el("button", "v-jump"));
    jump.type = "button";
    add(jump, el("span", "v-jump-number", turn.number));
    var names = turn.blocks.filter(function (b) { return b.type === "tool_use"; }).map(function (b) { return b.name; });
    add(jump, el("span", "v-jump-label", names.length ? names.join(", ") : (index === count - 1 ? "answer" : "text")));
    var bar = add(jump, el("span", "v-jump-bar"));
    bar.style.width = Math.max(2, Math.round(100 * (turn.sent.total || 0) / largest)) + "%";
    jump.title = "turn " + turn.number + ": " + number(turn.sent.total) + " tokens sent";
    jump.addEventListener("click", function () { show(index); });
    return jump;
  });
  var panel = add(body, el("article", "v-turn"));
  panel.id = "turn-panel";

  // ---------------------------------------------------------------- one turn
  function events(parent, title, list, className) {
    if (!list || !list.length) return;
    var section = add(parent, el("section", "v-section " + className));
    add(section, el("h3", "", title));
    var ul = add(section, el("ul", "v-events"));
    list.forEach(function (event) {
      var marks = { transition: "↻ continue: ", gate: "gate: " };
      add(ul, el("li", "v-event v-event-" + String(event.kind).replace(/[^a-z]/g, ""),
                 (marks[event.kind] || "· ") + event.text));
    });
  }

  function sent(parent, turn) {
    var section = add(parent, el("section", "v-section v-sent"));
    add(section, el("h3", "", "Sent: the prompt of this call"));
    var s = turn.sent;
    var bar = add(section, el("div", "v-bar"));
    bar.setAttribute("role", "img");
    bar.setAttribute("aria-label", number(s.cache_read) + " read from the cache, " + number(s.cache_write)
                     + " written to it, " + number(s.uncached) + " uncached");
    [["cache_read", "v-read"], ["cache_write", "v-write"], ["uncached", "v-uncached"]].forEach(function (part) {
      var segment = add(bar, el("span", "v-segment " + part[1]));
      segment.style.width = (s.total ? 100 * s[part[0]] / s.total : 0) + "%";
    });
    var legend = add(section, el("dl", "v-legend"));
    function row(term, value, className) {
      add(legend, el("dt", className, term));
      add(legend, el("dd", "", value));
    }
    row("read from the cache", number(s.cache_read), "v-key-read");
    row("written to the cache", number(s.cache_write), "v-key-write");
    row("uncached input", number(s.uncached), "v-key-uncached");
    row("prompt in all", number(s.total) + (s.grew === null ? " (the first call)" : " (" + signed(s.grew) + " since the call before)"), "");
    row("reply", number(turn.output) + " output tokens", "");
    if (turn.calls > 1) row("model calls this turn", turn.calls + " (with a summary or a cut reply asked again)", "");
    row("this turn cost", dollars(turn.cost), "");
  }

  function reply(parent, turn) {
    var section = add(parent, el("section", "v-section v-reply"));
    add(section, el("h3", "", "Reply"));
    if (!turn.blocks.length) add(section, el("p", "v-empty", "(an empty reply)"));
    turn.blocks.forEach(function (block) {
      var box = add(section, el("div", "v-block v-block-" + String(block.type).replace(/[^a-z_]/g, "")));
      if (block.type === "tool_use") {
        add(box, el("p", "v-block-title", "→ calls " + block.name));
        add(box, el("pre", "v-text", block.text));
      } else if (block.type === "thinking") {
        var details = add(box, el("details"));
        add(details, el("summary", "v-block-title", "thinking"));
        add(details, el("pre", "v-text", block.text));
      } else if (block.type === "text") {
        add(box, el("pre", "v-text v-prose", block.text || "(no text)"));
      } else {
        add(box, el("p", "v-block-title", block.name || "block"));
        add(box, el("pre", "v-text", block.text));
      }
    });
  }

  function results(parent, turn) {
    if (!turn.results.length) return;
    var section = add(parent, el("section", "v-section v-results"));
    add(section, el("h3", "", "Tool results, written back"));
    turn.results.forEach(function (result) {
      var box = add(section, el("div", "v-block v-result" + (result.error ? " v-error" : "")));
      add(box, el("p", "v-block-title", (result.error ? "✗ " : "← ") + result.name + (result.error ? " · error" : "")));
      add(box, el("pre", "v-text", result.text));
    });
  }

  function stop(parent) {
    var section = add(parent, el("section", "v-section v-stop"));
    section.id = "stop";
    add(section, el("h3", "", "Stop"));
    var line = add(section, el("p", "v-stop-line"));
    add(line, el("span", "v-badge v-state-" + state.replace(/[^a-z]/g, ""), run.end.reason || state));
    if (run.end.explanation) add(line, el("span", "", " " + run.end.explanation));
    if (run.end.answer) {
      add(section, el("p", "v-block-title", "answer"));
      add(section, el("pre", "v-text v-prose", run.end.answer));
    }
  }

  function show(index) {
    if (count === 0) {
      panel.textContent = "";
      add(panel, el("h2", "", "No model call was recorded"));
      stop(panel);
      position.textContent = "0 of 0";
      tokensIn.textContent = tokensOut.textContent = "0";
      spent.textContent = dollars(run.priced_as ? 0 : null);
      [first, previous, next, last].forEach(function (b) { b.disabled = true; });
      return;
    }
    current = Math.max(0, Math.min(count - 1, index));
    var turn = turns[current];
    panel.textContent = "";
    var title = add(panel, el("h2", "", "Turn " + turn.number + " of " + count));
    title.id = "turn-title";
    events(panel, "Before this call, the harness", turn.before, "v-before");
    sent(panel, turn);
    reply(panel, turn);
    results(panel, turn);
    events(panel, "Then the harness", turn.after, "v-after");
    if (current === count - 1) stop(panel);
    position.textContent = (current + 1) + " of " + count;
    tokensIn.textContent = number(sums[current].input);
    tokensOut.textContent = number(sums[current].output);
    spent.textContent = run.priced_as ? dollars(sums[current].cost) : "not priced (" + run.model + ")";
    first.disabled = previous.disabled = current === 0;
    next.disabled = last.disabled = current === count - 1;
    items.forEach(function (item, i) {
      item.classList.toggle("v-current", i === current);
      if (i === current) item.setAttribute("aria-current", "step"); else item.removeAttribute("aria-current");
    });
    // The current turn kept in sight in the list (a column on a wide screen, a strip on a phone).
    var item = items[current].parentNode;
    if (item.offsetTop < list.scrollTop || item.offsetTop + item.offsetHeight > list.scrollTop + list.clientHeight)
      list.scrollTop = item.offsetTop - list.clientHeight / 2;
    if (item.offsetLeft < list.scrollLeft || item.offsetLeft + item.offsetWidth > list.scrollLeft + list.clientWidth)
      list.scrollLeft = item.offsetLeft - list.clientWidth / 2;
    var wanted = "#turn=" + (current + 1);
    if (window.location.hash !== wanted && window.history && window.history.replaceState) {
      try { window.history.replaceState(null, "", wanted); } catch (error) { /* a file:// page may refuse */ }
    }
  }

  function fromHash() {
    var found = /(?:^#|&)turn=(\d+)/.exec(window.location.hash);
    return found ? parseInt(found[1], 10) - 1 : 0;
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var go = { ArrowRight: 1, j: 1, n: 1, ArrowLeft: -1, k: -1, p: -1 }[event.key];
    if (go) { show(current + go); event.preventDefault(); }
    else if (event.key === "Home") { show(0); event.preventDefault(); }
    else if (event.key === "End") { show(count - 1); event.preventDefault(); }
  });
  window.addEventListener("hashchange", function () { show(fromHash()); });
  show(fromHash());
})();
