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
        Assets.screen(path: path, script: script, file: main)
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
            return await WebApp.reply(daemon.send(.use(.entry(String(body.id)))))
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

    static let main = Web.text(PackageResources.prescriptions_html)

    static let javaScript = Web.text(PackageResources.prescriptions_js)

    static let css = Web.text(PackageResources.prescriptions_css)
}
