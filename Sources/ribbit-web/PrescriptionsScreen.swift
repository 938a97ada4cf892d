import Foundation
import Hummingbird
import RibbitControl
import RibbitStore

/// The Prescriptions screen: the history by environment, drawn by /prescriptions.js from
/// /api/history; Use through the daemon as `ribbitd use` does, Remove and the downloads on the
/// history as `ribbitd remove` and `ribbitd export` do.
enum PrescriptionsScreen {
    static let path = "/prescriptions"
    static let script = "/prescriptions.js"

    static var html: String {
        Assets.screen(
            path: path, title: "ribbit: prescriptions", script: script, connecting: "Reading the history…",
            main: main)
    }

    static func addRoutes<Context: RequestContext>(
        to router: Router<Context>, daemon: DaemonBridge, history: HistoryBridge
    ) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.get("/api/history") { _, _ in
            switch await history.list() {
            case .success(let entries): return WebApp.json(HistoryEntry.json(entries))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        router.get("/api/history/:file") { _, context in
            let file = context.parameters.get("file") ?? ""
            let parts = file.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, let id = Int64(parts[0]), id > 0,
                let kind = ["rx": HistoryBridge.Download.rx, "png": .png][String(parts[1])]
            else { return WebApp.plain(.notFound, "ask for /api/history/ID.rx or /api/history/ID.png (ID from /api/history)") }
            switch await history.export(id: id, as: kind) {
            case .success(let (record, bytes)):
                var headers = HTTPFields()
                headers[.contentType] = kind == .png ? "image/png" : "text/plain; charset=utf-8"
                headers[.contentDisposition] = "attachment; filename=\"\(WebApp.downloadName(record, id: id)).\(parts[1])\""
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        router.post("/api/use") { request, context in
            let body = try await WebApp.decode(HistoryIDBody.self, from: request, context: context)
            return await WebApp.reply(daemon.send(ControlRequest(command: .use, selector: String(body.id))))
        }
        router.post("/api/remove") { request, context in
            let body = try await WebApp.decode(HistoryIDBody.self, from: request, context: context)
            switch await history.remove(id: body.id) {
            case .success:
                switch await history.list() {
                case .success(let entries): return WebApp.json(HistoryEntry.json(entries))
                case .failure(let failure): return WebApp.plain(failure)
                }
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
    }

    struct HistoryIDBody: Decodable { var id: Int64 }

    static let main = #"""
        <main class="history">
          <h2 id="history-title" class="screen-title">Prescriptions</h2>
          <p class="hint">Every prescription loaded, by environment, newest first. Use switches to one; the active one is marked.</p>
          <div id="history" aria-labelledby="history-title"></div>
        </main>

        """#

    static let javaScript = #"""
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
          } catch (error) {
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
          } catch (error) {
            showMessage(unreachable);
          } finally {
            busy = false;
          }
        }

        load();

        """#

    static let css = #"""
        .history { display: block; }
        .screen-title { font-size: 1.4rem; margin: 0.2rem 0 0; }
        .history > .hint { margin: 0.2rem 0 0.8rem; }
        .env { margin: 0 0 1.2rem; }
        .env h3 { font-size: 1.2rem; margin: 0 0 0.5rem; text-transform: capitalize; }
        .entries { list-style: none; margin: 0; padding: 0; display: grid; gap: 0.8rem; grid-template-columns: 1fr; }
        @media (min-width: 60rem) { .entries { grid-template-columns: 1fr 1fr; } }
        .entry.active { border-color: var(--accent); box-shadow: 0 0 0 3px var(--accent); }
        .entry .name { font-size: 1.3rem; margin: 0 0 0.4rem; }
        .badge { display: inline-block; margin-left: 0.4rem; padding: 0 0.5rem; border-radius: 0.4rem; background: var(--accent); color: #fff;
          font-size: 0.9rem; vertical-align: middle; }
        button.danger.confirm { background: var(--warn); color: #fff; }
        .confirm-box { flex-basis: 100%; display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; margin: 0.2rem 0 0;
          font-weight: 600; }
        .confirm-box p { flex-basis: 100%; margin: 0; }

        """#
}
