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

  function percent(value) {
    return typeof value === "number" ? (100 * value).toFixed(1) + " %" : "—";
  }

  function render(runs) {
    var rows = document.createDocumentFragment();
    runs.forEach(function (run) {
      var tr = document.createElement("tr");
      tr.className = "ek-view-run ek-view-status-" + String(run.status || "unknown").replace(/[^a-z]/g, "");
      tr.setAttribute("data-run", run.run_id);
      var first = cell(tr, "");
      var link = document.createElement("a");
      link.href = "/run/" + encodeURIComponent(run.run_id);
      link.textContent = run.run_id;
      first.appendChild(link);
      if (run.error) {
        cell(tr, run.error, "ek-view-error").colSpan = 8;
        rows.appendChild(tr);
        return;
      }
      cell(tr, run.suite);
      cell(tr, (run.providers || []).join(", "));
      cell(tr, (run.conditions || []).join(", "));
      cell(tr, run.trials, "num");
      cell(tr, (run.done === null ? "?" : run.done) + " / " + (run.planned === null ? "?" : run.planned), "num ek-view-progress");
      cell(tr, run.status, "ek-view-status");
      cell(tr, run.started_at);
      cell(tr, percent(run.pass_rate), "num");
      rows.appendChild(tr);
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
