/* evalkit view: fills the runs index from /api/runs every 2 s. Same origin, no inline script.
   Every value is set as text (textContent, option labels): nothing from a run becomes markup. */
(function () {
  "use strict";
  var body = document.getElementById("ek-view-runs");
  if (!body) {
    return;
  }
  var updated = document.getElementById("ek-view-updated");
  var pickers = [document.getElementById("ek-view-baseline"),
                 document.getElementById("ek-view-candidate")];

  function cell(row, value, className) {
    var td = document.createElement("td");
    td.textContent = value === null || value === undefined ? "" : String(value);
    if (className) {
      td.className = className;
    }
    row.appendChild(td);
    return td;
  }

  function line(parent, text, className) {
    var div = document.createElement("div");
    div.textContent = text;
    div.className = className;
    parent.appendChild(div);
    return div;
  }

  /* The resume command of an interrupted or stopped run, on a line of its own under it. */
  function resumeRow(run) {
    var tr = document.createElement("tr");
    tr.className = "ek-view-resume-row ek-view-state-" + String(run.state).replace(/[^a-z]/g, "");
    tr.setAttribute("data-resume-for", run.run_id);
    var td = cell(tr, "", "ek-view-resume");
    td.colSpan = 10;
    var marker = " (left out of the resume command:";
    var cut = run.resume.indexOf(marker);
    var command = cut < 0 ? run.resume : run.resume.slice(0, cut);
    td.appendChild(document.createTextNode("resume with: "));
    var code = document.createElement("code");
    code.textContent = command;
    td.appendChild(code);
    if (cut >= 0) {
      line(td, run.resume.slice(cut + 2, -1), "ek-view-state-note");
    }
    return tr;
  }

  function percent(value) {
    return typeof value === "number" ? (100 * value).toFixed(1) + " %" : "—";
  }

  function render(runs) {
    var rows = document.createDocumentFragment();
    runs.forEach(function (run) {
      var tr = document.createElement("tr");
      tr.className = "ek-view-run ek-view-state-" + String(run.state || run.status || "unknown").replace(/[^a-z]/g, "");
      tr.setAttribute("data-run", run.run_id);
      var first = cell(tr, "");
      var link = document.createElement("a");
      link.href = "/run/" + encodeURIComponent(run.run_id);
      link.textContent = run.run_id;
      first.appendChild(link);
      if (run.error) {
        cell(tr, run.error, "ek-view-error").colSpan = 9;
        rows.appendChild(tr);
        return;
      }
      cell(tr, run.suite);
      cell(tr, (run.providers || []).join(", "));
      cell(tr, (run.conditions || []).join(", "));
      cell(tr, run.trials, "num");
      cell(tr, (run.done === null ? "?" : run.done) + " / " + (run.planned === null ? "?" : run.planned), "num ek-view-progress");
      var state = cell(tr, run.state || run.status, "ek-view-status");
      if (run.state_note) {
        state.title = run.state_note;
        line(state, run.state_note, "ek-view-state-note");
      }
      cell(tr, String(run.started_at || "").replace("T", " ").replace(/(:\d\d)?\+00:00$/, " UTC"), "ek-view-started");
      var cached = cell(tr, run.cached === null || run.cached === undefined ? "—" : run.cached, "num ek-view-cached");
      if (run.cache_from && run.cache_from.length) {
        line(cached, "from " + run.cache_from.join(", "), "ek-view-cache-from");
      }
      var rates = cell(tr, "", "ek-view-rates");
      (run.rates || []).forEach(function (rate) {
        line(rates, rate.condition + " " + percent(rate.rate) + " (" + rate.passed + "/" + rate.graded + ")", "ek-view-rate");
      });
      if (run.rates_cover) {
        line(rates, "over " + run.rates_cover, "ek-view-rates-cover");
      } else if (!(run.rates || []).length) {
        rates.textContent = "—";
      }
      rows.appendChild(tr);
      if (run.resume) {
        rows.appendChild(resumeRow(run));
      }
    });
    body.replaceChildren(rows);
    pickers.forEach(function (select) {
      if (!select) {
        return;
      }
      var chosen = select.value;
      var options = document.createDocumentFragment();
      runs.forEach(function (run) {
        if (!run.error) {
          options.appendChild(new Option(run.run_id, run.run_id, false, run.run_id === chosen));
        }
      });
      select.replaceChildren(options);
    });
    if (pickers[0] && pickers[1] && !pickers[1].dataset.touched && runs.length > 1) {
      pickers[0].selectedIndex = 1;
      pickers[1].selectedIndex = 0;
    }
  }

  pickers.forEach(function (select) {
    if (select) {
      select.addEventListener("change", function () { select.dataset.touched = "1"; });
    }
  });

  function refresh() {
    fetch("/api/runs", {credentials: "same-origin", cache: "no-store"})
      .then(function (answer) { return answer.ok ? answer.json() : Promise.reject(answer.status); })
      .then(function (data) {
        render(data.runs || []);
        if (updated) {
          updated.textContent = "Updated " + new Date().toLocaleTimeString() + ".";
        }
      })
      .catch(function (why) {
        if (updated) {
          updated.textContent = "Could not refresh (" + String(why) + ").";
        }
      })
      .finally(function () { window.setTimeout(refresh, 2000); });
  }
  refresh();
}());
