// memdir ui: the only script. Live reload when files change, "/" to search, and a guard that
// never throws away what the user is typing. No network access beyond this server.
(function () {
  "use strict";
  var POLL_MS = 1000;
  var known = null;
  var dirty = false;

  document.addEventListener("input", function (event) {
    if (event.target.closest && event.target.closest("form[method=post]")) { dirty = true; }
  });
  document.addEventListener("submit", function () { dirty = false; });

  function announce(text) {
    var live = document.getElementById("live");
    if (live) { live.textContent = text; }
  }

  function poll() {
    fetch("/api/version", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        if (known === null) { known = data.version; return; }
        if (data.version !== known) {
          known = data.version;
          if (dirty) {
            announce("Files changed on disk. Save or reload to see them.");
          } else {
            var y = window.scrollY;
            sessionStorage.setItem("memdir-scroll", String(y));
            location.reload();
          }
        }
      })
      .catch(function () { announce("memdir ui is not answering (stopped?)"); })
      .then(function () { window.setTimeout(poll, POLL_MS); });
  }

  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    if (event.key === "/" && tag !== "input" && tag !== "textarea" && tag !== "select") {
      var box = document.getElementById("filter");
      if (box) { event.preventDefault(); box.focus(); box.select(); }
    }
  });

  window.addEventListener("DOMContentLoaded", function () {
    var y = sessionStorage.getItem("memdir-scroll");
    if (y !== null) { sessionStorage.removeItem("memdir-scroll"); window.scrollTo(0, Number(y)); }
    document.documentElement.setAttribute("data-live", "on");
    poll();
  });
})();
