// The trace viewer: one recorded run, stepped through turn by turn (course/viewer.py makes the data).
// Every element is made with createElement and filled with textContent: nothing a model or a tool
// wrote is ever parsed as HTML, so markup in a run is shown as the text it is.
(function () {
  "use strict";
  // The page's language (course/viewer.py writes <html lang="ja"> for the runs the Japanese pages link to):
  // the viewer's own labels follow it; what the model, the tools and the harness wrote is shown as it is.
  var japanese = document.documentElement.lang === "ja";
  function t(english, inJapanese) { return japanese ? inJapanese : english; }
  var root = document.getElementById("viewer");
  var run;
  try {
    run = JSON.parse(document.getElementById("run-data").textContent);
  } catch (error) {
    run = null;
  }
  if (!run || run.format !== 1 || !Array.isArray(run.turns) || !run.end) {
    root.appendChild(el("p", "v-warning", t("This page holds no run the viewer can read.", "このページには、ビューアーが読める実行がありません。")));
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
    if (typeof x !== "number") return t("not priced", "料金なし");
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
  add(head, el("p", "v-kicker", t("Run viewer · ", "実行ビューアー · ") + run.stage + " · " + run.model + (run.source ? " · " + run.source : "")));
  if (run.ladder) add(head, el("p", "v-ladder", t("ladder cell · scenario ", "ラダーのセル · シナリオ ") + run.ladder.scenario + " · " + run.ladder.outcome));
  add(head, el("h1", "v-task", run.task || t("(no task)", "（タスクなし）")));
  var outcome = add(head, el("p", "v-outcome"));
  var state = run.end.state;
  var badge = add(outcome, el("span", "v-badge v-state-" + state.replace(/[^a-z]/g, ""),
                               run.end.reason || state));
  badge.id = "stop-reason";
  add(outcome, el("span", "v-outcome-text", " " + t(count + " turn" + (count === 1 ? "" : "s"), count + " ターン")
      + (run.resumed ? t(" · resumed", " · 再開") : "") + (state !== "stopped" ? " · " + state : "")));
  (run.warnings || []).forEach(function (warning) { add(head, el("p", "v-warning", warning)); });

  var totals = add(root, el("section", "v-totals"));
  totals.setAttribute("aria-label", t("totals up to this turn", "このターンまでの合計"));
  function total(label, id) {
    var box = add(totals, el("div", "v-total"));
    add(box, el("span", "v-label", label));
    var value = add(box, el("span", "v-value"));
    value.id = id;
    return value;
  }
  var position = total(t("turn", "ターン"), "turn-position");
  var tokensIn = total(t("input tokens so far", "ここまでの入力トークン"), "tokens-in");
  var tokensOut = total(t("output tokens so far", "ここまでの出力トークン"), "tokens-out");
  var spent = total(run.priced_as ? t("dollars so far", "ここまでの料金（ドル）") : t("dollars", "料金（ドル）"), "dollars");

  var nav = add(root, el("nav", "v-nav"));
  nav.setAttribute("aria-label", t("turns", "ターン"));
  function button(label, title, go) {
    var b = add(nav, el("button", "v-button", label));
    b.type = "button";
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", go);
    return b;
  }
  var first = button(t("« first", "« 最初"), t("first turn (Home)", "最初のターン（Home）"), function () { show(0); });
  var previous = button(t("◀ previous", "◀ 前へ"), t("previous turn (← or k)", "前のターン（← か k）"), function () { show(current - 1); });
  var next = button(t("next ▶", "次へ ▶"), t("next turn (→ or j)", "次のターン（→ か j）"), function () { show(current + 1); });
  var last = button(t("last »", "最後 »"), t("last turn (End)", "最後のターン（End）"), function () { show(count - 1); });
  add(nav, el("span", "v-keys", t("keys: ← → · Home End", "キー: ← → · Home End")));

  var body = add(root, el("div", "v-body"));
  var list = add(body, el("ol", "v-list"));
  list.id = "turn-list";
  list.setAttribute("aria-label", t("every turn", "すべてのターン"));
  var items = turns.map(function (turn, index) {
    var item = add(list, el("li"));
    var jump = add(item, el("button", "v-jump"));
    jump.type = "button";
    add(jump, el("span", "v-jump-number", turn.number));
    var names = turn.blocks.filter(function (b) { return b.type === "tool_use"; }).map(function (b) { return b.name; });
    add(jump, el("span", "v-jump-label", names.length ? names.join(", ") : (index === count - 1 ? t("answer", "答え") : t("text", "テキスト"))));
    var bar = add(jump, el("span", "v-jump-bar"));
    bar.style.width = Math.max(2, Math.round(100 * (turn.sent.total || 0) / largest)) + "%";
    jump.title = t("turn " + turn.number + ": " + number(turn.sent.total) + " tokens sent",
                   "ターン " + turn.number + ": 送信 " + number(turn.sent.total) + " トークン");
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
      var marks = { transition: t("↻ continue: ", "↻ 続行: "), gate: t("gate: ", "ゲート: ") };
      add(ul, el("li", "v-event v-event-" + String(event.kind).replace(/[^a-z]/g, ""),
                 (marks[event.kind] || "· ") + event.text));
    });
  }

  function sent(parent, turn) {
    var section = add(parent, el("section", "v-section v-sent"));
    add(section, el("h3", "", t("Sent: the prompt of this call", "送信: この呼び出しのプロンプト")));
    var s = turn.sent;
    var bar = add(section, el("div", "v-bar"));
    bar.setAttribute("role", "img");
    bar.setAttribute("aria-label", t(number(s.cache_read) + " read from the cache, " + number(s.cache_write)
                     + " written to it, " + number(s.uncached) + " uncached",
                     "キャッシュから読み込み " + number(s.cache_read) + "、キャッシュへ書き込み " + number(s.cache_write)
                     + "、キャッシュなし " + number(s.uncached)));
    [["cache_read", "v-read"], ["cache_write", "v-write"], ["uncached", "v-uncached"]].forEach(function (part) {
      var segment = add(bar, el("span", "v-segment " + part[1]));
      segment.style.width = (s.total ? 100 * s[part[0]] / s.total : 0) + "%";
    });
    var legend = add(section, el("dl", "v-legend"));
    function row(term, value, className) {
      add(legend, el("dt", className, term));
      add(legend, el("dd", "", value));
    }
    row(t("read from the cache", "キャッシュから読み込み"), number(s.cache_read), "v-key-read");
    row(t("written to the cache", "キャッシュへ書き込み"), number(s.cache_write), "v-key-write");
    row(t("uncached input", "キャッシュなしの入力"), number(s.uncached), "v-key-uncached");
    row(t("prompt in all", "プロンプト全体"), number(s.total) + (s.grew === null ? t(" (the first call)", "（最初の呼び出し）")
        : t(" (" + signed(s.grew) + " since the call before)", "（前の呼び出しから " + signed(s.grew) + "）")), "");
    row(t("reply", "返答"), number(turn.output) + t(" output tokens", " 出力トークン"), "");
    if (turn.calls > 1) row(t("model calls this turn", "このターンのモデル呼び出し"), turn.calls + t(" (with a summary or a cut reply asked again)", "（要約、または途中で切れた返答の再要求を含む）"), "");
    row(t("this turn cost", "このターンの料金"), dollars(turn.cost), "");
  }

  function reply(parent, turn) {
    var section = add(parent, el("section", "v-section v-reply"));
    add(section, el("h3", "", t("Reply", "返答")));
    if (!turn.blocks.length) add(section, el("p", "v-empty", t("(an empty reply)", "（空の返答）")));
    turn.blocks.forEach(function (block) {
      var box = add(section, el("div", "v-block v-block-" + String(block.type).replace(/[^a-z_]/g, "")));
      if (block.type === "tool_use") {
        add(box, el("p", "v-block-title", t("→ calls ", "→ 呼び出し ") + block.name));
        add(box, el("pre", "v-text", block.text));
      } else if (block.type === "thinking") {
        var details = add(box, el("details"));
        add(details, el("summary", "v-block-title", t("thinking", "思考")));
        add(details, el("pre", "v-text", block.text));
      } else if (block.type === "text") {
        add(box, el("pre", "v-text v-prose", block.text || t("(no text)", "（テキストなし）")));
      } else {
        add(box, el("p", "v-block-title", block.name || t("block", "ブロック")));
        add(box, el("pre", "v-text", block.text));
      }
    });
  }

  function results(parent, turn) {
    if (!turn.results.length) return;
    var section = add(parent, el("section", "v-section v-results"));
    add(section, el("h3", "", t("Tool results, written back", "書き戻したツール結果")));
    turn.results.forEach(function (result) {
      var box = add(section, el("div", "v-block v-result" + (result.error ? " v-error" : "")));
      add(box, el("p", "v-block-title", (result.error ? "✗ " : "← ") + result.name + (result.error ? t(" · error", " · エラー") : "")));
      add(box, el("pre", "v-text", result.text));
    });
  }

  function stop(parent) {
    var section = add(parent, el("section", "v-section v-stop"));
    section.id = "stop";
    add(section, el("h3", "", t("Stop", "停止")));
    var line = add(section, el("p", "v-stop-line"));
    add(line, el("span", "v-badge v-state-" + state.replace(/[^a-z]/g, ""), run.end.reason || state));
    if (run.end.explanation) add(line, el("span", "", " " + run.end.explanation));
    if (run.end.answer) {
      add(section, el("p", "v-block-title", t("answer", "答え")));
      add(section, el("pre", "v-text v-prose", run.end.answer));
    }
  }

  function show(index) {
    if (count === 0) {
      panel.textContent = "";
      add(panel, el("h2", "", t("No model call was recorded", "モデル呼び出しは記録されていません")));
      stop(panel);
      position.textContent = t("0 of 0", "0 / 0");
      tokensIn.textContent = tokensOut.textContent = "0";
      spent.textContent = dollars(run.priced_as ? 0 : null);
      [first, previous, next, last].forEach(function (b) { b.disabled = true; });
      return;
    }
    current = Math.max(0, Math.min(count - 1, index));
    var turn = turns[current];
    panel.textContent = "";
    var title = add(panel, el("h2", "", t("Turn " + turn.number + " of " + count, "ターン " + turn.number + " / " + count)));
    title.id = "turn-title";
    events(panel, t("Before this call, the harness", "この呼び出しの前に、ハーネスは"), turn.before, "v-before");
    sent(panel, turn);
    reply(panel, turn);
    results(panel, turn);
    events(panel, t("Then the harness", "そのあと、ハーネスは"), turn.after, "v-after");
    if (current === count - 1) stop(panel);
    position.textContent = (current + 1) + t(" of ", " / ") + count;
    tokensIn.textContent = number(sums[current].input);
    tokensOut.textContent = number(sums[current].output);
    spent.textContent = run.priced_as ? dollars(sums[current].cost) : t("not priced (" + run.model + ")", "料金なし（" + run.model + "）");
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
