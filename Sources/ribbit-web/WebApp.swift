import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RibbitControl
import RibbitStore

/// The routes: the Home page and its two assets, the daemon's status, and the requests that
/// change it (each a control request, answered with the new status).
enum WebApp {
    /// `onRunning` is called once the port is bound (so a message then is true).
    static func make(
        listen: WebListenAddress, daemon: DaemonBridge, history: HistoryBridge, token: String, access: WebAccess,
        onRunning: @escaping @Sendable () -> Void
    ) -> some ApplicationProtocol {
        let router = Router()
        router.add(middleware: SecurityMiddleware(listen: listen, token: token, access: access))

        let page = Assets.response(Assets.homeHTML(csrfToken: token), type: "text/html; charset=utf-8")
        let script = Assets.response(Assets.javaScript, type: "text/javascript; charset=utf-8")
        let style = Assets.response(Assets.styleSheet, type: "text/css; charset=utf-8")
        let prescriptions = Assets.response(Assets.prescriptionsHTML(csrfToken: token), type: "text/html; charset=utf-8")
        let prescriptionsScript = Assets.response(Assets.prescriptionsJavaScript, type: "text/javascript; charset=utf-8")
        router.get("/") { _, _ in page }
        router.get("/prescriptions") { _, _ in prescriptions }
        router.get("/prescriptions.js") { _, _ in prescriptionsScript }
        router.get("/app.js") { _, _ in script }
        router.get("/app.css") { _, _ in style }

        router.get("/api/status") { _, _ in await reply(daemon.send(ControlRequest(command: .status))) }
        router.post("/api/pause") { _, _ in await reply(daemon.send(ControlRequest(command: .pause))) }
        router.post("/api/resume") { _, _ in await reply(daemon.send(ControlRequest(command: .resume))) }
        router.post("/api/bypass") { request, context in
            let body = try await decode(BypassBody.self, from: request, context: context)
            return await reply(daemon.send(ControlRequest(command: .bypass, on: body.on)))
        }
        router.post("/api/volume") { request, context in
            let body = try await decode(VolumeBody.self, from: request, context: context)
            var control = ControlRequest(command: .volume)
            switch (body.volumeDB, body.stepDB) {
            case (let level?, nil) where level.isFinite: control.volumeDB = level
            case (nil, let step?) where step.isFinite: control.volumeStepDB = step
            default: return plain(.badRequest, "give either volumeDB (a level) or stepDB (a step), in dB")
            }
            return await reply(daemon.send(control))
        }
        router.post("/api/program") { request, context in
            let body = try await decode(ProgramBody.self, from: request, context: context)
            var control = ControlRequest(command: .program)
            control.program = body.program
            return await reply(daemon.send(control))
        }

        // The Prescriptions screen: the history as `ribbitd list --json`, use through the daemon
        // as `ribbitd use` does, remove and export on the history as `ribbitd remove`/`export` do.
        router.get("/api/history") { _, _ in
            switch await history.list() {
            case .success(let entries): return json(HistoryEntry.json(entries))
            case .failure(let failure): return plain(failure)
            }
        }
        router.get("/api/history/:file") { _, context in
            let file = context.parameters.get("file") ?? ""
            let parts = file.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, let id = Int64(parts[0]), id > 0,
                let kind = ["rx": HistoryBridge.Download.rx, "png": .png][String(parts[1])]
            else { return plain(.notFound, "ask for /api/history/ID.rx or /api/history/ID.png (ID from /api/history)") }
            switch await history.export(id: id, as: kind) {
            case .success(let (record, bytes)):
                var headers = HTTPFields()
                headers[.contentType] = kind == .png ? "image/png" : "text/plain; charset=utf-8"
                headers[.contentDisposition] = "attachment; filename=\"\(downloadName(record, id: id)).\(parts[1])\""
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            case .failure(let failure): return plain(failure)
            }
        }
        router.post("/api/use") { request, context in
            let body = try await decode(HistoryIDBody.self, from: request, context: context)
            return await reply(daemon.send(ControlRequest(command: .use, selector: String(body.id))))
        }
        router.post("/api/remove") { request, context in
            let body = try await decode(HistoryIDBody.self, from: request, context: context)
            switch await history.remove(id: body.id) {
            case .success:
                switch await history.list() {
                case .success(let entries): return json(HistoryEntry.json(entries))
                case .failure(let failure): return plain(failure)
                }
            case .failure(let failure): return plain(failure)
            }
        }

        return Application(
            router: router,
            configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: nil),
            onServerRunning: { _ in onRunning() },
            logger: {
                var logger = Logger(label: "ribbit-web")
                logger.logLevel = .warning
                return logger
            }()
        )
    }

    struct BypassBody: Decodable { var on: Bool }
    struct VolumeBody: Decodable {
        var volumeDB: Double?
        var stepDB: Double?
    }
    struct ProgramBody: Decodable { var program: String }
    struct HistoryIDBody: Decodable { var id: Int64 }

    /// `ribbit-12-music`: ASCII only, so the header needs no encoding.
    static func downloadName(_ record: PrescriptionStore.Record, id: Int64) -> String {
        let environment = record.environment.lowercased().filter { ($0.isASCII && $0.isLetter) || $0.isNumber || $0 == "-" }
        return "ribbit-\(id)" + (environment.isEmpty ? "" : "-\(environment)")
    }

    static func json(_ data: Data) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func plain(_ failure: HistoryBridge.Failure) -> Response {
        switch failure {
        case .notFound(let message): plain(.notFound, message)
        case .refused(let message): plain(.conflict, message)
        case .unavailable(let message): plain(.serviceUnavailable, message)
        }
    }

    /// The daemon's answer: its status as `ribbitd status --json` prints it, a refusal as 409,
    /// no daemon as 503; the two errors as one line of text.
    static func reply(_ answer: DaemonAnswer) -> Response {
        switch answer {
        case .status(let status):
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: ControlProtocol.encode(status))))
        case .refused(let message): return plain(.conflict, message)
        case .unavailable(let message): return plain(.serviceUnavailable, message)
        }
    }

    static func plain(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        var request = request
        let buffer = try await request.collectBody(upTo: WebSecurity.maxBodyBytes)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw HTTPError(
                .badRequest, message: "the request body is not the JSON this call takes (README.md's web app section lists them)")
        }
    }
}
