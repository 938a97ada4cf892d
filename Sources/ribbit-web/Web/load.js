"use strict";
// The Load screen: the chosen file goes to /api/preview as it is; Load sends it again to
// /api/load (the server keeps nothing between the two), with ?trial=900 for a trial.
let chosen = null;
let busy = false;

function upload(path, file, extra) {
  return session.api(path + "?name=" + encodeURIComponent(file.name) + (extra || ""), {
    method: "POST",
    headers: { "Content-Type": "application/octet-stream" },
    body: file,
  });
}

function setStatus(text, down) {
  $("connection").textContent = text;
  $("connection").classList.toggle("down", !!down);
}

async function preview(file) {
  chosen = null;
  $("preview").hidden = true;
  showMessage("");
  if (!file) return;
  setStatus("Checking " + file.name + "…");
  try {
    const response = await upload("/api/preview", file);
    if (!response.ok) {
      setStatus("Not loaded", true);
      showMessage((await response.text()).trim());
      return;
    }
    const data = await response.json();
    chosen = file;
    showPrescription($("rx-view"), data);
    $("preview").hidden = false;
    setStatus("Checked: " + data.prescription.name);
    // Focus moves to what came, so a screen reader reads on from there; it starts the screen.
    $("preview-title").focus({ preventScroll: true });
    $("preview-title").scrollIntoView({ block: "start" });
  } catch {
    showMessage(unreachable);
  }
}

async function load(trial) {
  if (busy || !chosen) return;
  busy = true;
  try {
    const response = await upload("/api/load", chosen, trial ? "&trial=900" : "");
    if (!response.ok) {
      showMessage((await response.text()).trim());
      return;
    }
    const status = await response.json();
    const name = status.prescription ? status.prescription.name : chosen.name;
    showMessage("");
    setStatus("Now using " + name + (trial ? " for 15 min: Home shows the trial" : ""));
    $("preview").hidden = true;
    $("file").value = "";
    chosen = null;
  } catch {
    showMessage(unreachable);
  } finally {
    busy = false;
  }
}

$("file").addEventListener("change", () => preview($("file").files[0]));
$("load").addEventListener("click", () => load(false));
$("trial").addEventListener("click", () => load(true));
$("cancel").addEventListener("click", () => { $("file").value = ""; preview(null); setStatus("Choose a prescription"); $("file").focus(); });

