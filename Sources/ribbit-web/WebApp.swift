import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RibbitControl

/// The routes: the Home page and its two assets, the daemon's status, and the requests that
/// change it (each a control request, answered with the new status).
enum WebApp {
    /// `onRunning` is called once the port is bound (so a message then is true).
    static func make(
        listen: WebListenAddress, daemon: DaemonBridge, token: String, access: WebAccess, onRunning: @escaping @Sendable () -> Void
    ) -> some ApplicationProtocol {
        let router = Router()
        router.add(middleware: SecurityMiddleware(listen: listen, token: token, access: access))

        let page = Assets.response(Assets.homeHTML(csrfToken: token), type: "text/html; charset=utf-8")
        let script = Assets.response(Assets.javaScript, type: "text/javascript; charset=utf-8")
        let style = Assets.response(Assets.styleSheet, type: "text/css; charset=utf-8")
        router.get("/") { _, _ in page }
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
