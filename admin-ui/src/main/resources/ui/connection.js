// When an htmx request cannot reach the platform (or it answers with an error), the page keeps showing its
// last data: a banner says so, with the time of the last answer that arrived. The next good answer removes it.
(function () {
  "use strict";
  var lastGood = new Date();
  function time(d) { return d.toTimeString().slice(0, 8); }
  function banner() {
    var b = document.getElementById("connection-lost");
    if (!b) {
      b = document.createElement("p");
      b.id = "connection-lost";
      b.className = "connection-lost";
      b.setAttribute("role", "alert");
      document.body.insertBefore(b, document.body.firstChild);
    }
    return b;
  }
  function lost() { banner().textContent = "Connection lost - data as of " + time(lastGood); }
  document.addEventListener("htmx:sendError", lost);
  document.addEventListener("htmx:responseError", lost);
  document.addEventListener("htmx:afterRequest", function (e) {
    if (e.detail && e.detail.successful) {
      lastGood = new Date();
      var b = document.getElementById("connection-lost");
      if (b) { b.remove(); }
    }
  });
})();
