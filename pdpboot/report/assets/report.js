// pdpboot report: feature and output pickers, and the numbers under the pointer. No network, no libraries.
(function () {
  "use strict";
  var tip = document.getElementById("tip");

  function show(lines, ev) {
    tip.textContent = "";
    lines.forEach(function (text) { var d = document.createElement("div"); d.textContent = text; tip.appendChild(d); });
    tip.hidden = false;
    var w = tip.offsetWidth, h = tip.offsetHeight, x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + w > window.innerWidth - 4) { x = Math.max(4, ev.clientX - w - 14); }
    if (y + h > window.innerHeight - 4) { y = Math.max(4, ev.clientY - h - 14); }
    tip.style.left = x + "px"; tip.style.top = y + "px";
  }
  function hide() { tip.hidden = true; }

  function local(svg, ev) {  // pointer position in the chart's viewBox units
    var p = svg.createSVGPoint(); p.x = ev.clientX; p.y = ev.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  }
  function nearest(values, v) {
    var best = 0;
    for (var i = 1; i < values.length; i++) { if (Math.abs(values[i] - v) < Math.abs(values[best] - v)) { best = i; } }
    return best;
  }
  function cellOf(edges, v, descending) {
    for (var i = 0; i < edges.length - 1; i++) {
      var a = edges[i], b = edges[i + 1];
      if ((!descending && v >= a && v <= b) || (descending && v <= a && v >= b)) { return i; }
    }
    return -1;
  }

  function curveLines(d, i) {
    var lines = [d.xname + " = " + d.x[i], d.what + ": " + d.est[i]];
    if (d.lo) { lines.push(d.band + ": [" + d.lo[i] + ", " + d.hi[i] + "]"); }
    if (d.olo) { lines.push(d.outer + ": [" + d.olo[i] + ", " + d.ohi[i] + "]"); }
    if (d.ice) { lines.push("ICE curves (" + d.nice + " rows): " + d.ice[i]); }
    return lines;
  }
  function surfaceLines(d, i, j) {
    var lines = [d.xname + " = " + d.x[i] + ", " + d.yname + " = " + d.y[j], d.what + ": " + d.est[i][j]];
    if (d.lo) { lines.push(d.band + ": [" + d.lo[i][j] + ", " + d.hi[i][j] + "]", "width of the band: " + d.width[i][j]); }
    return lines;
  }

  function wire(panel) {
    var data = null;
    function get() { if (!data) { data = JSON.parse(panel.getAttribute("data-hover")); } return data; }
    panel.querySelectorAll("rect.hit").forEach(function (hit) {
      var svg = hit.ownerSVGElement;
      if (hit.hasAttribute("data-px")) {
        var px = JSON.parse(hit.getAttribute("data-px"));
        var py = JSON.parse(hit.getAttribute("data-py"));
        var guide = svg.querySelector(".guide"), mark = svg.querySelector(".mark");
        hit.addEventListener("pointermove", function (ev) {
          var i = nearest(px, local(svg, ev).x);
          guide.setAttribute("x1", px[i]); guide.setAttribute("x2", px[i]); guide.setAttribute("visibility", "visible");
          if (py[i] !== null) {
            mark.setAttribute("cx", px[i]); mark.setAttribute("cy", py[i]); mark.setAttribute("visibility", "visible");
          }
          show(curveLines(get(), i), ev);
        });
        hit.addEventListener("pointerleave", function () {
          guide.setAttribute("visibility", "hidden"); mark.setAttribute("visibility", "hidden"); hide();
        });
      } else {
        var edges = JSON.parse(hit.getAttribute("data-edges"));
        hit.addEventListener("pointermove", function (ev) {
          var p = local(svg, ev), i = cellOf(edges.x, p.x, false), j = cellOf(edges.y, p.y, true);
          if (i < 0 || j < 0) { hide(); return; }
          panel.querySelectorAll(".cell-mark").forEach(function (m) {
            m.setAttribute("x", edges.x[i]); m.setAttribute("width", edges.x[i + 1] - edges.x[i]);
            m.setAttribute("y", edges.y[j + 1]); m.setAttribute("height", edges.y[j] - edges.y[j + 1]);
            m.setAttribute("visibility", "visible");
          });
          show(surfaceLines(get(), i, j), ev);
        });
        hit.addEventListener("pointerleave", function () {
          panel.querySelectorAll(".cell-mark").forEach(function (m) { m.setAttribute("visibility", "hidden"); });
          hide();
        });
      }
    });
  }

  function pick() {
    var feature = document.getElementById("feature"), output = document.getElementById("output");
    var f = feature ? feature.value : "", o = output ? output.value : null;
    document.querySelectorAll(".fig[data-key]").forEach(function (fig) {
      fig.hidden = !(f === "" || fig.getAttribute("data-key") === f);
    });
    if (o !== null) {
      document.querySelectorAll(".panel[data-output]").forEach(function (p) { p.hidden = p.getAttribute("data-output") !== o; });
    }
  }

  document.querySelectorAll(".panel[data-hover]").forEach(wire);
  ["feature", "output"].forEach(function (id) {
    var el = document.getElementById(id);
    if (el) { el.addEventListener("change", pick); }
  });
  window.addEventListener("scroll", hide, { passive: true });
  document.documentElement.setAttribute("data-ready", "1");
})();
