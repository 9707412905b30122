// stratbench's report: draws the charts and the tables from the data in
// #data. Text from the data only ever goes through textContent.
(function () {
  "use strict";
  var t0 = performance.now();
  var data = JSON.parse(document.getElementById("data").textContent);
  var colors = ["#2f6fde", "#8a8f99", "#e07b39", "#2f9a5b", "#9b59b6", "#c8372d", "#17a2b8"];
  var drawn = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function num(v, d) {
    if (v === null || v === undefined || typeof v !== "number" || !isFinite(v)) return "–";
    return v.toLocaleString("en-US", { maximumFractionDigits: d === undefined ? 4 : d });
  }
  function pct(v) { return (v === null || v === undefined || !isFinite(v)) ? "–" : num(v * 100, 2) + " %"; }
  function when(s) {
    if (s === null || s === undefined) return "–";
    return new Date(s * 1000).toISOString().replace("T", " ").replace(/\.000Z$|Z$/, "");
  }
  function dur(s) {
    if (!isFinite(s)) return "–";
    if (s < 60) return num(s, 1) + " s";
    if (s < 3600) return num(s / 60, 1) + " min";
    if (s < 86400) return num(s / 3600, 1) + " h";
    return num(s / 86400, 1) + " d";
  }
  function done(node) { node.setAttribute("data-drawn", "1"); drawn++; }
  function width(node) { return Math.max(320, node.clientWidth || 800); }

  // chart draws a uPlot line chart of xs and series ys into node.
  function chart(node, xs, ys, labels, opts) {
    opts = opts || {};
    var series = [{ label: "time", value: function (u, v) { return when(v); } }];
    for (var i = 0; i < ys.length; i++) {
      series.push({
        label: labels[i], stroke: colors[i % colors.length], width: 1.25, spanGaps: true,
        points: { show: false },
        value: opts.fmt || function (u, v) { return num(v); }
      });
    }
    var cfg = {
      width: width(node), height: opts.height || 280,
      scales: { x: { time: true } },
      series: series,
      axes: [{}, { size: 70 }],
      cursor: { drag: { x: true, y: false } }
    };
    if (opts.extra) opts.extra(cfg);
    var u = new uPlot(cfg, [xs].concat(ys), node);
    done(node);
    return u;
  }

  function sortRows(rows, col, dir) {
    rows.sort(function (a, b) {
      var x = a[col], y = b[col];
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      if (typeof x === "number" && typeof y === "number") return dir * (x - y);
      return dir * String(x).localeCompare(String(y));
    });
  }

  // table draws a sortable, paged table of rows into node; cols are
  // {title, cell(row) -> text, cls, key (index of the sort value)}.
  function table(node, pager, cols, allRows, opts) {
    opts = opts || {};
    var pageSize = opts.pageSize || 50, page = 0, sortCol = -1, dir = 1, rows = allRows.slice();
    var head = el("thead"), body = el("tbody"), tr = el("tr"), ths = [];
    cols.forEach(function (c, i) {
      var th = el("th", null, c.title);
      th.addEventListener("click", function () {
        dir = sortCol === i ? -dir : 1;
        sortCol = i;
        ths.forEach(function (t) { t.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(dir > 0 ? "sorted-asc" : "sorted-desc");
        sortRows(rows, c.key, dir);
        page = 0;
        render();
      });
      ths.push(th);
      tr.appendChild(th);
    });
    head.appendChild(tr);
    node.textContent = "";
    node.appendChild(head);
    node.appendChild(body);
    function render() {
      body.textContent = "";
      var start = page * pageSize, end = Math.min(rows.length, start + pageSize);
      for (var r = start; r < end; r++) {
        var row = el("tr");
        cols.forEach(function (c) { row.appendChild(el("td", c.cls, c.cell(rows[r]))); });
        body.appendChild(row);
      }
      pager.textContent = "";
      var pages = Math.max(1, Math.ceil(rows.length / pageSize));
      var prev = el("button", null, "‹ previous"), next = el("button", null, "next ›");
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      prev.addEventListener("click", function () { page--; render(); });
      next.addEventListener("click", function () { page++; render(); });
      pager.appendChild(prev);
      pager.appendChild(el("span", "hint", "page " + (page + 1) + " of " + pages + " · " + rows.length + " rows"));
      pager.appendChild(next);
    }
    render();
    done(node);
    return {
      filter: function (keep) { rows = allRows.filter(keep); if (sortCol >= 0) sortRows(rows, cols[sortCol].key, dir); page = 0; render(); return rows.length; }
    };
  }

  function byId(id) { return document.getElementById(id); }

  // fan draws the Monte Carlo paths' percentiles over their steps: the
  // median, and bands between the 25th and 75th and the 5th and 95th.
  function fan(node, f) {
    var shade = ["rgba(47,111,222,0.12)", "rgba(47,111,222,0.28)"];
    var series = [{ label: f.of, value: function (u, v) { return num(v, 0); } }];
    f.labels.forEach(function (l, i) {
      series.push({ label: l, stroke: i === 2 ? colors[0] : "rgba(47,111,222,0.5)", width: i === 2 ? 2 : 1,
        points: { show: false }, value: function (u, v) { return num(v, 2); } });
    });
    new uPlot({
      width: width(node), height: 300,
      scales: { x: { time: false } },
      series: series,
      bands: [{ series: [5, 1], fill: shade[0] }, { series: [4, 2], fill: shade[1] }],
      axes: [{}, { size: 70 }],
      cursor: { drag: { x: true, y: false } }
    }, [f.x].concat(f.y), node);
    done(node);
  }

  // histogram draws bars of h.counts over the bins h.edges (their lower
  // ends, of equal width), the x values scaled by k.
  function histogram(node, h, k, xlabel, ylabel, fmtx) {
    var e = h.edges, w = e.length > 1 ? e[1] - e[0] : 1, xs = e.map(function (v) { return (v + w / 2) * k; });
    new uPlot({
      width: width(node), height: 240,
      scales: { x: { time: false } },
      series: [{ label: xlabel, value: function (u, v) { return fmtx(v); } },
        { label: ylabel, stroke: colors[0], fill: "rgba(47,111,222,0.35)", paths: uPlot.paths.bars({ size: [0.95, 80] }), points: { show: false } }],
      axes: [{ values: function (u, vals) { return vals.map(fmtx); } }, { size: 60 }]
    }, [xs, h.counts], node);
    done(node);
  }

  function jobCharts(d) {
    if (d.equity && byId("chart-equity")) {
      chart(byId("chart-equity"), d.equity.t, d.equity.y, d.equity.labels);
      var pos = d.equity.y.every(function (s) { return s.every(function (v) { return v === null || v > 0; }); });
      if (pos) {
        // log10 of the values on a linear scale, labelled in the values.
        var logs = d.equity.y.map(function (s) { return s.map(function (v) { return v === null ? null : Math.log10(v); }); });
        chart(byId("chart-equity-log"), d.equity.t, logs, d.equity.labels, {
          fmt: function (u, v) { return v === null ? "–" : num(Math.pow(10, v), 2); },
          extra: function (cfg) { cfg.axes[1].values = function (u, vals) { return vals.map(function (v) { return num(Math.pow(10, v), 0); }); }; }
        });
      } else {
        var n = byId("chart-equity-log");
        n.appendChild(el("p", "note", "The equity is not positive throughout: no log scale."));
        done(n);
      }
    }
    if (d.drawdown && byId("chart-drawdown")) {
      chart(byId("chart-drawdown"), d.drawdown.t, d.drawdown.y, d.drawdown.labels, {
        fmt: function (u, v) { return v === null ? "–" : num(v, 2) + " %"; },
        extra: function (cfg) { cfg.series[1].fill = "rgba(200,55,45,0.15)"; cfg.series[1].stroke = "#c8372d"; }
      });
    }
    if (d.rolling && byId("chart-rolling")) {
      byId("rolling-window").textContent = "over " + d.window;
      chart(byId("chart-rolling"), d.rolling.t, d.rolling.y, d.rolling.labels);
    }
    if (d.hist && byId("chart-hist")) {
      histogram(byId("chart-hist"), d.hist, 100, "return %", "periods", function (v) { return num(v, 3) + "%"; });
    }
    if (d.fan && byId("chart-fan")) fan(byId("chart-fan"), d.fan);
    (d.prices || []).forEach(function (p, i) {
      var node = byId("chart-price-" + i);
      if (!node) return;
      // One time axis: the closes' and the fills' times merged.
      var xs = [], close = [], buy = [], sell = [], a = 0, b = 0;
      while (a < p.t.length || b < p.fill_t.length) {
        if (b >= p.fill_t.length || (a < p.t.length && p.t[a] <= p.fill_t[b])) {
          xs.push(p.t[a]); close.push(p.close[a]); buy.push(null); sell.push(null); a++;
        } else {
          xs.push(p.fill_t[b]); close.push(null);
          buy.push(p.fill_buy[b] ? p.fill_p[b] : null); sell.push(p.fill_buy[b] ? null : p.fill_p[b]); b++;
        }
      }
      chart(node, xs, [close, buy, sell], ["close", "buy", "sell"], {
        extra: function (cfg) {
          cfg.series[1].stroke = "#5b6475";
          [[2, "#1f8a4c"], [3, "#c8372d"]].forEach(function (s) {
            cfg.series[s[0]].stroke = s[1]; cfg.series[s[0]].fill = s[1];
            cfg.series[s[0]].paths = function () { return null; };
            cfg.series[s[0]].points = { show: true, size: 7, fill: s[1], stroke: s[1] };
            cfg.series[s[0]].spanGaps = false;
          });
        }
      });
    });
    if (d.trades && byId("trade-table")) {
      var t = d.trades, c = function (title, k, f, cls) { return { title: title, key: k, cell: function (r) { return f(r[k]); }, cls: cls }; };
      var id = function (v) { return v; };
      table(byId("trade-table"), byId("trade-pager"), [
        c("#", 0, id, "num"), c("symbol", 1, id), c("side", 2, id), c("qty", 3, num, "num"),
        c("entry", 4, when), c("entry price", 5, num, "num"), c("exit", 6, when), c("exit price", 7, num, "num"),
        c("fees", 8, function (v) { return num(v, 2); }, "num"), c("P&L", 9, function (v) { return num(v, 2); }, "num"),
        c("return", 10, pct, "num"), c("held", 11, dur, "num")
      ], t.rows);
    }
  }

  function sweepPage(d) {
    var np = d.params.length, col = {};
    d.columns.forEach(function (name, i) { col[name] = np + i; });
    var cols = [];
    var k = function (v) { return v === null || v === undefined ? "–" : v; };
    cols.push({ title: "run", key: col.index, cell: function (r) { return r[col.index]; }, cls: "num" });
    if (data.kind === "walkforward") {
      cols.push({ title: "fold", key: col.fold, cell: function (r) { return k(r[col.fold]); }, cls: "num" });
      cols.push({ title: "phase", key: col.phase, cell: function (r) { return k(r[col.phase]); } });
    }
    d.params.forEach(function (p, i) { cols.push({ title: p, key: i, cell: function (r) { return JSON.stringify(r[i]); } }); });
    cols.push({ title: "status", key: col.status, cell: function (r) { return r[col.status]; } });
    var isPct = { total_return: 1, max_drawdown: 1, win_rate: 1, cagr: 1, volatility: 1, exposure: 1, buy_and_hold_return: 1 };
    var fmtM = function (m) { return isPct[m] ? pct : function (v) { return num(v); }; };
    var seen = {};
    [d.metric].concat(["total_return", "sharpe", "max_drawdown", "trades", "win_rate"]).forEach(function (m, i) {
      var key = np + 4 + i;
      if (seen[m]) return;
      seen[m] = 1;
      cols.push({ title: m + (i === 0 ? " (objective)" : ""), key: key, cell: function (r) { return fmtM(m)(r[key]); }, cls: "num" });
    });
    cols.push({ title: "took", key: col.duration_ms, cell: function (r) { return dur(r[col.duration_ms] / 1000); }, cls: "num" });
    cols.push({ title: "failure", key: col.failure, cell: function (r) { return k(r[col.failure]); } });
    cols.push({ title: "message", key: col.message, cell: function (r) { return r[col.message] || ""; }, cls: "msg" });
    cols.push({ title: "job", key: col.job, cell: function (r) { return r[col.job]; }, cls: "mono" });
    var runs = table(byId("run-table"), byId("run-pager"), cols, d.rows);
    var text = d.rows.map(function (r) { return r.map(function (v) { return v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v); }).join(" ").toLowerCase(); });
    var index = new Map(d.rows.map(function (r, i) { return [r, i]; }));
    function refilter() {
      var q = byId("run-filter").value.toLowerCase(), st = byId("run-status").value;
      var n = runs.filter(function (r) { return (!st || r[col.status] === st) && (!q || text[index.get(r)].indexOf(q) >= 0); });
      byId("run-count").textContent = n + " of " + d.rows.length + " runs";
    }
    byId("run-filter").addEventListener("input", refilter);
    byId("run-status").addEventListener("change", refilter);
    refilter();
    if (d.curves && byId("chart-curves")) chart(byId("chart-curves"), d.curves.t, d.curves.y, d.curves.labels, { height: 320 });
    if (d.lambdas && byId("chart-lambdas")) histogram(byId("chart-lambdas"), d.lambdas, 1, "λ", "splits", function (v) { return num(v, 2); });
    if (byId("sweep-heat")) heat(d, col);
  }

  // heat draws the objective over two params, the others held at the
  // best run's values.
  function heat(d, col) {
    var sx = byId("heat-x"), sy = byId("heat-y"), np = d.params.length;
    d.params.forEach(function (p, i) { sx.appendChild(el("option", null, p)).value = i; sy.appendChild(el("option", null, p)).value = i; });
    sy.value = 0;
    sx.value = np > 1 ? 1 : 0;
    var key = function (v) { return JSON.stringify(v); };
    function cmp(a, b) { return (typeof a === "number" && typeof b === "number") ? a - b : String(a).localeCompare(String(b)); }
    function render() {
      var ix = +sx.value, iy = +sy.value, node = byId("sweep-heat");
      var rows = d.rows.filter(function (r) {
        if (r[col.phase] === "test") return false;
        if (d.best_fold !== null && d.best_fold !== undefined && r[col.fold] !== d.best_fold) return false;
        for (var i = 0; i < np; i++) {
          if (i === ix || i === iy || !d.best_params) continue;
          if (key(r[i]) !== key(d.best_params[i])) return false;
        }
        return true;
      });
      var xv = [], yv = [], seenX = {}, seenY = {}, cells = {};
      rows.forEach(function (r) {
        var x = r[ix], y = r[iy];
        if (!seenX[key(x)]) { seenX[key(x)] = 1; xv.push(x); }
        if (!seenY[key(y)]) { seenY[key(y)] = 1; yv.push(y); }
        if (r[col.status] === "passed") cells[key(x) + "|" + key(y)] = r[np + 4];
      });
      xv.sort(cmp); yv.sort(cmp);
      var vals = Object.keys(cells).map(function (c) { return cells[c]; }).filter(function (v) { return v !== null; });
      var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
      node.textContent = "";
      var head = el("tr");
      head.appendChild(el("th", null, d.params[iy] + " \\ " + d.params[ix]));
      xv.forEach(function (x) { head.appendChild(el("th", null, JSON.stringify(x))); });
      node.appendChild(el("thead")).appendChild(head);
      var body = node.appendChild(el("tbody"));
      yv.forEach(function (y) {
        var tr = el("tr");
        tr.appendChild(el("th", null, JSON.stringify(y)));
        xv.forEach(function (x) {
          var v = cells[key(x) + "|" + key(y)];
          var td = el("td", null, v === undefined || v === null ? "" : num(v, 3));
          if (v !== undefined && v !== null && hi > lo) {
            var s = (v - lo) / (hi - lo);
            if (d.minimize) s = 1 - s;
            td.style.backgroundColor = "hsl(" + Math.round(s * 130) + ", 60%, " + Math.round(88 - s * 30) + "%)";
          }
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      done(node);
    }
    sx.addEventListener("change", render);
    sy.addEventListener("change", render);
    render();
  }

  try {
    if (data.job) jobCharts(data.job);
    if (data.sweep) sweepPage(data.sweep);
  } finally {
    document.body.setAttribute("data-drawn", String(drawn));
    document.body.setAttribute("data-draw-ms", String(Math.round(performance.now() - t0)));
    document.body.setAttribute("data-ready", "1");
  }
})();
