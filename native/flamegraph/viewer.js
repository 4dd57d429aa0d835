/*
 * viewer.js: the script embedded in every flame graph SVG written by vor (see svg.c).
 *
 * It runs when the .svg file is opened in a browser, with no network and no other file.
 * The writer puts `vorFlamegraphConfig` (numbers only) before this script, and one group per
 * frame in the group with id "frames": a title "NAME (DETAILS)", a rect, and a text label when
 * the name fits. Frame names are read from the document, never written into script text.
 *
 *   hover         the frame's name and details in the bottom line (#details)
 *   click         zoom: the frame fills the width, its descendants scale with it, its ancestors
 *                 stay visible at full width (faded), everything else is hidden
 *   Reset Zoom    (#unzoom, or Escape) back to the whole graph
 *   Search        (#search, Ctrl+F or F3) a regular expression, or plain text when it is not a
 *                 valid one; matches turn magenta and #matched shows their share of the total
 *                 (a match inside another match is counted once); ?s=TERM in the URL searches
 *                 on load
 *
 * Geometry is kept as written (pixels) in one array; zoom and search loop over it, so the cost
 * is one pass over the frames per click, with no layout reads from the DOM.
 */
(function () {
  "use strict";

  var config = vorFlamegraphConfig;
  var SVG_NS = "http://www.w3.org/2000/svg";
  var EPSILON = 0.02; /* pixels: x and width are written with two decimals */
  var charWidth = config.fontSize * config.fontWidth;

  var frames = [];
  var details, unzoomButton, searchButton, matchedText;
  var zoomed = null;
  var searching = false;

  /* The label for a frame `width` pixels wide: whole name, or its start and "..", or nothing
   * (the same rule as the writer's, counting characters, not UTF-16 units). */
  function labelFor(name, width) {
    var fit = Math.floor((width - 2 * config.labelPad) / charWidth);
    if (fit < 3) return "";
    var chars = Array.from(name);
    if (chars.length <= fit) return name;
    return chars.slice(0, fit - 2).join("") + "..";
  }

  function readFrame(group) {
    var title = group.getElementsByTagName("title")[0].textContent;
    var rect = group.getElementsByTagName("rect")[0];
    var cut = title.lastIndexOf(" (");
    return {
      group: group,
      rect: rect,
      text: group.getElementsByTagName("text")[0] || null,
      name: cut >= 0 ? title.slice(0, cut) : title,
      details: title,
      x: parseFloat(rect.getAttribute("x")),
      width: parseFloat(rect.getAttribute("width")),
      y: parseFloat(rect.getAttribute("y")),
      fill: rect.getAttribute("fill")
    };
  }

  function frameOf(node) {
    while (node && node.parentNode && node.parentNode.id !== "frames") node = node.parentNode;
    if (!node || !node.parentNode) return null;
    return frames[node.__vorFrameIndex];
  }

  /* Places a frame and refreshes its label. */
  function place(frame, x, width) {
    frame.rect.setAttribute("x", x.toFixed(2));
    frame.rect.setAttribute("width", width.toFixed(2));
    var label = labelFor(frame.name, width);
    if (label && !frame.text) {
      frame.text = document.createElementNS(SVG_NS, "text");
      frame.text.setAttribute("y", (frame.y + config.textOffset).toFixed(2));
      frame.group.appendChild(frame.text);
    }
    if (frame.text) {
      frame.text.setAttribute("x", (x + config.labelPad).toFixed(2));
      frame.text.textContent = label;
    }
  }

  function show(frame, visible) {
    frame.group.classList.toggle("hide", !visible);
  }

  /* Is `a` an ancestor of `b`? Closer to the root, and spanning b's extent. */
  function isAncestor(a, b) {
    var closerToRoot = config.inverted ? a.y < b.y : a.y > b.y;
    return closerToRoot && a.x <= b.x + EPSILON && a.x + a.width >= b.x + b.width - EPSILON;
  }

  /* Is `a` the frame `b` or one of its descendants? */
  function isInside(a, b) {
    var sameOrDeeper = config.inverted ? a.y >= b.y : a.y <= b.y;
    return sameOrDeeper && a.x >= b.x - EPSILON && a.x + a.width <= b.x + b.width + EPSILON;
  }

  function zoom(target) {
    var scale = config.frameWidth / target.width;
    for (var i = 0; i < frames.length; i++) {
      var frame = frames[i];
      if (isAncestor(frame, target)) {
        frame.group.classList.add("parent");
        show(frame, true);
        place(frame, config.sidePad, config.frameWidth);
      } else if (isInside(frame, target)) {
        frame.group.classList.remove("parent");
        show(frame, true);
        place(frame, config.sidePad + (frame.x - target.x) * scale, frame.width * scale);
      } else {
        show(frame, false);
      }
    }
    zoomed = target;
    unzoomButton.classList.remove("hide");
  }

  function unzoom() {
    for (var i = 0; i < frames.length; i++) {
      var frame = frames[i];
      frame.group.classList.remove("parent");
      show(frame, true);
      place(frame, frame.x, frame.width);
    }
    zoomed = null;
    unzoomButton.classList.add("hide");
  }

  function matcher(term) {
    try {
      var pattern = new RegExp(term);
      return function (name) { return pattern.test(name); };
    } catch (notARegex) {
      return function (name) { return name.indexOf(term) !== -1; };
    }
  }

  function search(term) {
    if (!term) { resetSearch(); return; }
    var matches = matcher(term);
    var hits = [];
    for (var i = 0; i < frames.length; i++) {
      var frame = frames[i];
      if (matches(frame.name)) {
        frame.rect.setAttribute("fill", config.searchColor);
        hits.push(frame);
      } else {
        frame.rect.setAttribute("fill", frame.fill);
      }
    }
    /* Union of the matched extents, in unzoomed pixels: nested matches count once. */
    hits.sort(function (a, b) { return a.x - b.x || b.width - a.width; });
    var covered = 0, end = -Infinity;
    for (var k = 0; k < hits.length; k++) {
      var hit = hits[k];
      if (hit.x >= end - EPSILON) {
        covered += hit.width;
        end = hit.x + hit.width;
      } else if (hit.x + hit.width > end) {
        covered += hit.x + hit.width - end;
        end = hit.x + hit.width;
      }
    }
    var percent = Math.min(100, covered / config.frameWidth * 100);
    matchedText.textContent = "Matched: " + percent.toFixed(1) + "%";
    searchButton.textContent = "Reset Search";
    searching = true;
  }

  function resetSearch() {
    for (var i = 0; i < frames.length; i++) frames[i].rect.setAttribute("fill", frames[i].fill);
    matchedText.textContent = " ";
    searchButton.textContent = "Search";
    searching = false;
  }

  function askSearch() {
    var term = window.prompt("Search frames (regular expression or plain text):", "");
    if (term !== null) search(term);
  }

  function init() {
    details = document.getElementById("details");
    unzoomButton = document.getElementById("unzoom");
    searchButton = document.getElementById("search");
    matchedText = document.getElementById("matched");
    var container = document.getElementById("frames");
    var groups = container.children;
    for (var i = 0; i < groups.length; i++) {
      groups[i].__vorFrameIndex = i;
      frames.push(readFrame(groups[i]));
    }

    container.addEventListener("mouseover", function (event) {
      var frame = frameOf(event.target);
      if (frame) details.textContent = frame.details;
    });
    container.addEventListener("mouseout", function () { details.textContent = " "; });
    container.addEventListener("click", function (event) {
      var frame = frameOf(event.target);
      if (frame) zoom(frame);
    });
    unzoomButton.addEventListener("click", unzoom);
    searchButton.addEventListener("click", function () {
      if (searching) resetSearch(); else askSearch();
    });
    window.addEventListener("keydown", function (event) {
      if ((event.key === "f" && (event.ctrlKey || event.metaKey)) || event.key === "F3") {
        event.preventDefault();
        askSearch();
      } else if (event.key === "Escape") {
        if (zoomed) unzoom();
        if (searching) resetSearch();
      }
    });

    var query = /[?&]s=([^&]*)/.exec(window.location.search || "");
    if (query) search(decodeURIComponent(query[1].replace(/\+/g, " ")));
  }

  window.addEventListener("load", init);
})();
