"use strict";
// The Details screen: /api/details?id=N drawn by showPrescription; Load is the
// Prescriptions screen's Use, shown when the entry is not the active one.
const entryID = Number(new URLSearchParams(location.search).get("id"));
let busy = false;

async function refresh() {
  try {
    const response = await session.api("/api/details?id=" + entryID);
    if (!response.ok) {
      $("connection").textContent = "No such prescription";
      $("connection").classList.add("down");
      showMessage((await response.text()).trim());
      return;
    }
    const data = await response.json();
    showPrescription($("rx-view"), data);
    $("connection").textContent = data.entry.active ? "The active prescription" : "Not the active one";
    $("connection").classList.remove("down");
    $("use").hidden = data.entry.active;
  } catch {
    showMessage(unreachable);
  }
}

$("use").addEventListener("click", async () => {
  if (busy) return;
  busy = true;
  try {
    const response = await postJSON("/api/use", { id: entryID });
    showMessage(response.ok ? "" : (await response.text()).trim());
    await refresh();
    if (response.ok) $("connection").textContent = "Now using it";
  } catch {
    showMessage(unreachable);
  } finally {
    busy = false;
  }
});

refresh();

