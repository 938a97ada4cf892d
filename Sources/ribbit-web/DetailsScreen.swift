import Foundation
import Hummingbird
import RibbitIntake
import RibbitPrescription
import RibbitStore

/// The Details screen (/details?id=N, linked from each Prescriptions entry): one history entry
/// as `ribbitd show` gives it, with its audiogram and target gains, and Load (the
/// Prescriptions screen's Use) when it is not the active one.
enum DetailsScreen {
    static let path = "/details"
    static let script = "/details.js"

    static var html: String {
        Assets.screen(
            path: path, title: "ribbit: prescription details", script: script, connecting: "Reading the history…", main: main)
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>, history: HistoryBridge) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(PrescriptionView.javaScript + javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.get("/api/details") { request, _ in
            guard let given = request.uri.queryParameters["id"], let id = Int64(given), id > 0 else {
                return WebApp.plain(.notFound, "ask for /api/details?id=ID (ID from /api/history)")
            }
            switch await history.details(id: id) {
            case .success(let view): return view.response
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
    }

    static let main = #"""
        <main class="rx-screen">
          <h2 class="screen-title">Prescription details</h2>
          <p class="hint"><a href="/prescriptions">Back to the prescriptions</a></p>
          <div id="rx-view" class="rx-view" aria-live="polite"></div>
          <div class="actions"><button type="button" id="use" class="use" hidden>Load</button></div>
        </main>

        """#

    static let javaScript = #"""
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
          } catch (error) {
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
          } catch (error) {
            showMessage(unreachable);
          } finally {
            busy = false;
          }
        });

        refresh();

        """#
}

extension HistoryBridge {
    /// `ribbitd show ID --json`: the entry and its prescription, with its audiogram.
    func details(id: Int64) async -> Result<PrescriptionView, Failure> {
        await run { store in
            guard let record = try? store.find(String(id)), record.id == id else {
                return .failure(.notFound("no prescription '\(id)' in the history; `ribbitd list` shows them"))
            }
            do {
                let entry = HistoryEntry(record, activeID: try? store.activeID())
                let report = try PrescriptionReport(record: record)
                // PrescriptionReport(record:) parsed it just now, and refuses what does not parse.
                let rx = try Prescription.parse(Array(record.intactPayload().utf8))
                let trusted = record.isIntact && record.signature == "trusted"
                return .success(PrescriptionView(report, rx: rx, trusted: trusted, entry: entry))
            } catch {
                return .failure(.refused("\(error)"))
            }
        }
    }
}
