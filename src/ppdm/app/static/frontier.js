// The frontier: utility against the chosen risk test, one point per candidate, the released one marked.
// Filters by mechanism family and formal guarantee act on the chart and the table alike.
(function () {
  "use strict";
  var chart = document.getElementById("chart");
  if (!chart) return;
  var objective = chart.dataset.objective;
  var points = [];

  function checked(name) {
    return Array.prototype.map.call(document.querySelectorAll("input[name=" + name + "]:checked"),
                                    function (el) { return el.value; });
  }

  function spec(test, label, data) {
    return {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: 640, height: 360,
      data: {values: data},
      layer: [
        {mark: {type: "point", filled: true, size: 90, opacity: 0.85},
         encoding: {
           x: {field: test, type: "quantitative", title: label + " (%)"},
           y: {field: "utility", type: "quantitative", title: objective, scale: {zero: false}},
           color: {field: "family", type: "nominal", title: "mechanism"},
           shape: {field: "mark", type: "nominal", title: "point",
                   scale: {domain: ["released", "policy's choice", "candidate"],
                           range: ["diamond", "square", "circle"]}},
           tooltip: [{field: "name", title: "candidate"}, {field: "utility", title: objective, format: ".2f"},
                     {field: "reidentification", title: "re-identification %", format: ".2f"},
                     {field: "within_5pct", title: "values within 5 % %", format: ".2f"},
                     {field: "singling_out", title: "singling out %", format: ".2f"},
                     {field: "linkability", title: "linkability %", format: ".2f"},
                     {field: "guarantee", title: "formal guarantee"}, {field: "verdict", title: "verdict"}],
           href: {field: "href"}}},
        {mark: {type: "point", size: 420, strokeWidth: 2.5, color: "#c00"},
         transform: [{filter: "datum.mark === 'released'"}],
         encoding: {x: {field: test, type: "quantitative"}, y: {field: "utility", type: "quantitative"}}}
      ]
    };
  }

  function draw() {
    var select = document.getElementById("risk-test");
    var test = select.value;
    var label = select.options[select.selectedIndex].text;
    var families = checked("family"), guarantees = checked("guarantee");
    var keep = function (p) { return families.indexOf(p.family) >= 0 && guarantees.indexOf(p.guarantee) >= 0; };
    var data = points.filter(keep).filter(function (p) { return p[test] !== null; });
    document.querySelectorAll("#candidates tbody tr").forEach(function (row) {
      row.hidden = families.indexOf(row.dataset.family) < 0 || guarantees.indexOf(row.dataset.guarantee) < 0;
    });
    var status = document.getElementById("chart-status");
    status.textContent = data.length + " of " + points.length + " candidates shown" +
      (points.filter(keep).length > data.length ? " (the others were not measured by this test)" : "");
    vegaEmbed("#chart", spec(test, label, data), {actions: false, renderer: "svg"}).then(function () {
      chart.dataset.drawn = String(data.length);
    }).catch(function (e) { status.textContent = "The chart could not be drawn: " + e; });
  }

  fetch("/api/frontier", {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (answer) {
    points = answer.points.map(function (p) { p.href = "/candidate/" + p.index; return p; });
    draw();
    document.getElementById("frontier-filters").addEventListener("change", draw);
  });
})();
