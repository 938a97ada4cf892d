"use strict";
// The Prescriptions screen: the history from /api/history, grouped by environment; Use
// and Remove (after a confirmation in the page); the downloads open through one-use links.
let busy = false;

function pad(n) { return String(n).padStart(2, "0"); }
function localDate(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes());
}

function entryCard(entry) {
  const item = el("li", { class: "card entry" + (entry.active ? " active" : ""), id: "entry-" + entry.id });
  const name = el("h4", { class: "name", text: entry.name });
  if (entry.active) name.append(el("span", { class: "badge", text: "Active" }));
  item.append(name);
  item.append(el("dl", {},
    el("dt", { text: "Rule" }), el("dd", { text: entry.rule || "–" }),
    el("dt", { text: "Audiologist" }), el("dd", { text: entry.audiologist || "–" }),
    el("dt", { text: "Loaded" }), el("dd", {}, el("time", { datetime: entry.loadedAt, text: localDate(entry.loadedAt) })),
    el("dt", { text: "Signature" }), el("dd", { text: entry.signature }),
    el("dt", { text: "History id" }), el("dd", { text: String(entry.id) })));
  const actions = el("div", { class: "actions" });
  if (!entry.active) {
    const use = el("button", { type: "button", class: "use", text: "Use" });
    use.addEventListener("click", () => post("/api/use", { id: entry.id }, "Now using " + entry.name + "."));
    actions.append(use);
  }
  actions.append(el("a", { href: "/details?id=" + entry.id, text: "Details" }));
  actions.append(needsSession(el("a", { href: "/api/history/" + entry.id + ".rx", download: "", text: "Export .rx" }), true));
  actions.append(needsSession(el("a", { href: "/api/history/" + entry.id + ".png", download: "", text: "QR PNG" }), true));
  if (!entry.active) {
    const remove = el("button", { type: "button", class: "danger", "aria-expanded": "false", text: "Remove" });
    remove.addEventListener("click", () => confirmRemove(entry, actions, remove));
    actions.append(remove);
  }
  item.append(actions);
  return item;
}

function confirmRemove(entry, actions, remove) {
  const open = actions.querySelector(".confirm-box");
  if (open) { open.remove(); remove.setAttribute("aria-expanded", "false"); return; }
  const yes = el("button", { type: "button", class: "danger confirm", text: "Yes, remove it" });
  const no = el("button", { type: "button", text: "Cancel" });
  const box = el("div", { class: "confirm-box", role: "group", "aria-label": "Confirm removal" },
    el("p", { text: "Remove " + entry.name + " from the history? This cannot be undone." }), yes, no);
  yes.addEventListener("click", () => post("/api/remove", { id: entry.id }, "Removed " + entry.name + "."));
  no.addEventListener("click", () => { box.remove(); remove.setAttribute("aria-expanded", "false"); remove.focus(); });
  actions.append(box);
  remove.setAttribute("aria-expanded", "true");
  no.focus();
}

function render(entries) {
  const list = $("history");
  list.replaceChildren();
  $("connection").textContent = entries.length === 1 ? "1 prescription" : entries.length + " prescriptions";
  $("connection").classList.remove("down");
  if (entries.length === 0) {
    list.append(el("p", { class: "name", text: "No prescriptions yet: `ribbitd load RX` adds one." }));
    return;
  }
  // The active one's environment first, then the others by their newest; newest first in each.
  const groups = new Map();
  const active = entries.find((entry) => entry.active);
  if (active) groups.set(active.environment, []);
  for (const entry of entries.slice().reverse()) {
    if (!groups.has(entry.environment)) groups.set(entry.environment, []);
    groups.get(entry.environment).push(entry);
  }
  for (const [environment, members] of groups) {
    const id = "env-" + environment.replace(/[^A-Za-z0-9-]/g, "_");
    list.append(el("section", { class: "env", "aria-labelledby": id },
      el("h3", { id: id, text: environment }),
      el("ul", { class: "entries" }, ...members.map(entryCard))));
  }
}

async function load() {
  try {
    const response = await session.api("/api/history");
    if (!response.ok) {
      $("connection").textContent = "Cannot read the history";
      $("connection").classList.add("down");
      showMessage((await response.text()).trim());
      return;
    }
    render(await response.json());
  } catch {
    showMessage(unreachable);
  }
}

async function post(path, body, done) {
  if (busy) return;
  busy = true;
  try {
    const response = await postJSON(path, body);
    showMessage(response.ok ? "" : (await response.text()).trim());
    await load();
    if (response.ok) $("connection").textContent = done;
  } catch {
    showMessage(unreachable);
  } finally {
    busy = false;
  }
}

load();

