// The workbench's small scripts: uploading a table, following a run. No data of the table passes here
// except the uploaded file itself, sent to this machine's server.
(function () {
  "use strict";

  function upload() {
    var form = document.getElementById("upload-form");
    if (!form) return;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var input = document.getElementById("upload");
      var status = document.getElementById("upload-status");
      if (!input.files.length) { status.textContent = "Choose a file first."; return; }
      var file = input.files[0];
      status.textContent = "Uploading " + file.name + "...";
      fetch("/upload?name=" + encodeURIComponent(file.name), {method: "POST", body: file, credentials: "same-origin"})
        .then(function (r) { return r.json(); })
        .then(function (answer) {
          if (answer.error) { status.textContent = answer.error; status.className = "error"; }
          else { window.location.href = answer.next; }
        })
        .catch(function () { status.textContent = "The upload failed; is the workbench still running?"; });
    });
  }

  function show(id, text) {
    var el = document.getElementById(id);
    if (el && el.textContent !== String(text)) el.textContent = text;
  }

  function follow() {
    var box = document.getElementById("job");
    if (!box || box.dataset.state !== "running") return;
    var cancel = document.getElementById("cancel-form");
    cancel.addEventListener("submit", function (event) {
      event.preventDefault();
      fetch("/api/cancel", {method: "POST", headers: {"Accept": "application/json"}, credentials: "same-origin"});
      document.getElementById("cancel").disabled = true;
    });
    function poll() {
      fetch("/api/job", {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (job) {
        if (!job) return;
        box.dataset.state = job.state;
        show("job-stage", job.stage);
        show("job-detail", job.detail);
        show("job-elapsed", job.elapsed);
        show("job-eta", job.eta === null ? "-" : job.eta);
        show("job-message", job.message);
        var bar = document.getElementById("job-progress");
        bar.max = job.total || 1;
        bar.value = job.done;
        if (job.state === "running") { setTimeout(poll, 500); return; }
        cancel.hidden = true;
        if (job.state === "failed") document.getElementById("job-message").className = "error";
        if (job.state === "done") document.getElementById("job-next").hidden = false;
      });
    }
    poll();
  }

  upload();
  follow();
})();
