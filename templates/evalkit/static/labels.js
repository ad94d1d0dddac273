/* evalkit labelling page: mark each statement pass or fail, export the labels CSV.
   Offline, no network; embedded in the report page and allowed by its Content-Security-Policy
   through its hash. It reads text and sets text and attributes only: nothing it handles is
   turned into markup. */
(function () {
  "use strict";
  var STATEMENT_COLUMNS = ["item_key", "case_id", "condition", "trial", "component", "expectation",
                 "prompt", "answer", "label"];

  var PAIR_COLUMNS = ["pair_id", "case_id", "trial", "task", "response_1", "response_2",
                      "label"];

  function cellText(row, column) {
    var cell = row.querySelector("td.ek-l-" + column);
    if (!cell) {
      return "";
    }
    var inner = cell.querySelector("pre, strong");
    return ((inner || cell).textContent || "").replace(/\r\n/g, "\n");
  }

  function quote(value) {
    /* A spreadsheet runs a cell starting with = + - @ (or a tab, a CR) as a formula: write it
       after a ' (shown as text); evalkit removes that ' when it reads the file back. */
    if (/^'*[=+\-@\t\r]/.test(value)) {
      value = "'" + value;
    }
    if (/[",\r\n]/.test(value) || /^\s|\s$/.test(value)) {
      return "\"" + value.replace(/"/g, "\"\"") + "\"";
    }
    return value;
  }

  function setup(root) {
    // a pairwise sheet (its table has class ek-pair-labels): two answers, labels 1, 2 or tie
    var pairwise = root.querySelector("table.ek-pair-labels") !== null;
    var COLUMNS = pairwise ? PAIR_COLUMNS : STATEMENT_COLUMNS;
    var VALUES = pairwise ? ["1", "2", "tie"] : ["pass", "fail"];
    var noun = pairwise ? "pairs" : "statements";
    var rows = Array.prototype.slice.call(root.querySelectorAll("tr.ek-label-row"));
    var status = root.querySelector(".ek-labels-status");
    var labels = rows.map(function (row) {
      return (cellText(row, "label") || "").trim();
    });
    root.classList.add("ek-js");

    function refresh() {
      var done = labels.filter(function (v) { return v !== ""; }).length;
      status.textContent = done + " of " + rows.length + " " + noun + " labelled";
    }

    rows.forEach(function (row, index) {
      var cell = row.querySelector("td.ek-l-label");
      cell.textContent = "";
      var buttons = {};
      VALUES.forEach(function (value) {
        var button = document.createElement("button");
        button.type = "button";
        button.className = "ek-label-button ek-label-" + value;
        button.textContent = value;
        button.setAttribute("aria-pressed", labels[index] === value ? "true" : "false");
        button.setAttribute("aria-label", value + ": " + (cellText(row, "expectation") ||
                                                           cellText(row, "pair_id")));
        button.addEventListener("click", function () {
          labels[index] = labels[index] === value ? "" : value;
          Object.keys(buttons).forEach(function (key) {
            buttons[key].setAttribute("aria-pressed", labels[index] === key ? "true" : "false");
          });
          row.className = "ek-label-row" + (labels[index] ? " ek-labelled-" + labels[index] : "");
          refresh();
        });
        buttons[value] = button;
        cell.appendChild(button);
      });
      if (labels[index]) {
        row.className = "ek-label-row ek-labelled-" + labels[index];
      }
    });

    var bar = document.createElement("div");
    bar.className = "ek-labels-controls";
    var exportButton = document.createElement("button");
    exportButton.type = "button";
    exportButton.className = "ek-labels-export";
    exportButton.textContent = "Export labels CSV";
    exportButton.addEventListener("click", function () {
      var lines = [COLUMNS.join(",")];
      rows.forEach(function (row, index) {
        lines.push(COLUMNS.map(function (column) {
          return quote(column === "label" ? labels[index] : cellText(row, column));
        }).join(","));
      });
      var blob = new Blob([lines.join("\r\n") + "\r\n"], { type: "text/csv;charset=utf-8" });
      var link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = root.getAttribute("title") || "labels.csv";
      document.body.appendChild(link);
      link.click();
      document.body.removeChild(link);
    });
    bar.appendChild(exportButton);
    root.insertBefore(bar, root.querySelector("table"));
    refresh();
  }

  Array.prototype.forEach.call(document.querySelectorAll("section.ek-labels"), setup);
})();
