/* evalkit item browser: filter the items table, open a row's transcript. Offline, no network.
   Embedded in the report page and allowed by its Content-Security-Policy through its hash.
   It reads text and toggles attributes only: nothing it handles is turned into markup. */
(function () {
  "use strict";
  var FILTERED = ["run", "condition", "provider", "status", "passed", "cause"];

  function text(node) {
    return (node.textContent || "").trim();
  }

  function setup(root) {
    var table = root.querySelector("table.ek-browser-table");
    if (!table || !table.tBodies.length) {
      return;
    }
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var headers = Array.prototype.map.call(table.tHead.rows[0].cells, text);
    var panels = root.querySelectorAll("details.ek-browser-item");
    root.classList.add("ek-js");

    var bar = document.createElement("div");
    bar.className = "ek-browser-controls";
    var search = document.createElement("input");
    search.type = "search";
    search.className = "ek-browser-search";
    search.placeholder = "Filter items: case, status, reason…";
    search.setAttribute("aria-label", "Filter items");
    bar.appendChild(search);

    var selects = [];
    headers.forEach(function (name, column) {
      if (FILTERED.indexOf(name) < 0) {
        return;
      }
      var values = [];
      rows.forEach(function (row) {
        var value = text(row.cells[column]);
        if (values.indexOf(value) < 0) {
          values.push(value);
        }
      });
      if (values.length < 2) {
        return;
      }
      values.sort();
      var select = document.createElement("select");
      select.className = "ek-browser-select";
      select.setAttribute("aria-label", "Filter by " + name);
      select.dataset.column = String(column);
      var all = document.createElement("option");
      all.value = "";
      all.textContent = name + ": all";
      select.appendChild(all);
      values.forEach(function (value) {
        var option = document.createElement("option");
        option.value = value;
        option.textContent = name + ": " + value;
        select.appendChild(option);
      });
      selects.push(select);
      bar.appendChild(select);
    });

    var count = document.createElement("span");
    count.className = "ek-browser-count";
    count.setAttribute("role", "status");
    bar.appendChild(count);
    root.insertBefore(bar, root.querySelector(".ek-browser-wrap"));

    function apply() {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (row) {
        var haystack = row.textContent.toLowerCase();
        var visible = words.every(function (word) {
          return haystack.indexOf(word) >= 0;
        });
        visible = visible && selects.every(function (select) {
          return !select.value || text(row.cells[Number(select.dataset.column)]) === select.value;
        });
        row.hidden = !visible;
        if (visible) {
          shown += 1;
        }
      });
      count.textContent = shown + " of " + rows.length + " items";
    }

    function open(row) {
      var link = row.querySelector("a[href^='#']");
      if (!link) {
        return;
      }
      var id = link.getAttribute("href").slice(1);
      Array.prototype.forEach.call(panels, function (panel) {
        var chosen = panel.id === id;
        panel.classList.toggle("ek-open", chosen);
        panel.open = chosen;
      });
      rows.forEach(function (other) {
        other.classList.toggle("ek-selected", other === row);
        other.setAttribute("aria-selected", other === row ? "true" : "false");
      });
      var target = document.getElementById(id);
      if (target) {
        target.scrollIntoView({ block: "nearest" });
      }
    }

    rows.forEach(function (row) {
      row.tabIndex = 0;
      row.addEventListener("click", function (event) {
        event.preventDefault();
        open(row);
      });
      row.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          open(row);
        }
      });
    });
    search.addEventListener("input", apply);
    selects.forEach(function (select) {
      select.addEventListener("change", apply);
    });
    apply();
  }

  Array.prototype.forEach.call(document.querySelectorAll("section.ek-browser"), setup);
})();
