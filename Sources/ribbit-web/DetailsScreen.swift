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
        Assets.screen(path: path, script: script, file: main)
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

    static let main = Web.text(PackageResources.details_html)

    static let javaScript = Web.text(PackageResources.details_js)
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
                let trusted = record.isTrusted
                return .success(PrescriptionView(report, rx: rx, trusted: trusted, entry: entry))
            } catch {
                return .failure(.refused("\(error)"))
            }
        }
    }
}
