import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOSSL
import RibbitControl
import RibbitSettings
import RibbitStore

/// The application: the security middleware in front of the shared assets, the session's
/// routes and each screen's page, script and API (the screens' files), and the replies they share.
enum WebApp {
    /// `onRunning` is called once the port is bound (so a message then is true).
    static func make(
        listen: WebListenAddress, tls: TLSConfiguration? = nil, daemon: DaemonBridge, history: HistoryBridge,
        keys: SigningKeys, access: WebAccess, limits: ConnectionLimits = .forThisProcess(),
        onRunning: @escaping @Sendable () -> Void
    ) throws -> some ApplicationProtocol {
        // A WebSocket-capable context for the Live screen's and the games' sockets, with the peer's address.
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: SecurityMiddleware(listen: listen, access: access))

        Assets.addRoutes(to: router)
        SessionRoutes.addRoutes(to: router, access: access)
        HomeScreen.addRoutes(to: router, daemon: daemon)
        PrescriptionsScreen.addRoutes(to: router, daemon: daemon, history: history)
        LoadScreen.addRoutes(to: router, daemon: daemon, intake: IntakeBridge(paths: RibbitPaths()))
        DetailsScreen.addRoutes(to: router, history: history)
        ClinicScreen.addRoutes(to: router)
        LiveScreen.addRoutes(to: router, feed: LiveFeed(socketPath: daemon.socketPath), daemon: daemon, history: history)
        FittingScreen.addRoutes(to: router, daemon: daemon, history: history, keys: keys)
        HearingTestScreen.addRoutes(to: router, daemon: daemon)
        HearingTestResultsRoutes.addRoutes(to: router, daemon: daemon, tests: HearingTestBridge(storePath: history.storePath))
        let voice = VoiceBridge(storePath: VoiceStore.path(dataDirectory: RibbitPaths().dataDirectory))
        VoiceScreen.addRoutes(to: router, daemon: daemon, voice: voice)
        VoicePlay.addRoutes(to: router, daemon: daemon, voice: voice, feed: VoiceFeed.make(socketPath: daemon.socketPath))

        return Application(
            router: router,
            server: server(router: router, tls: tls, connections: ConnectionTable(limits: limits)),
            configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: nil),
            onServerRunning: { _ in onRunning() },
            logger: {
                var logger = Logger(label: "ribbit-web")
                logger.logLevel = .warning
                return logger
            }()
        )
    }

    /// HTTP/1.1 with WebSocket upgrades (the same router answers them, so the security
    /// middleware checks them too), on a LAN inside TLS, and in front of it all the connection
    /// guard (ConnectionLimits).
    static func server(router: Router<WebRequestContext>, tls: TLSConfiguration?, connections: ConnectionTable) -> HTTPServerBuilder {
        let webSocketResponder = router.buildResponder()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(additionalChannelHandlers: [RequestActivity()]),
            ws: .init(autoPing: .enabled(timePeriod: .seconds(ConnectionLimits.webSocketPingSeconds))))
        return HTTPServerBuilder { responder in
            let plain = HTTP1WebSocketUpgradeChannel(
                responder: responder, webSocketResponder: webSocketResponder, configuration: configuration)
            if let tls { return GuardedChannel(base: try TLSChannel(plain, tlsConfiguration: tls), table: connections) }
            return GuardedChannel(base: plain, table: connections)
        }
    }

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
        case .success(let status):
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: ControlProtocol.encode(status))))
        case .failure(.refused(let message)): return plain(.conflict, message)
        case .failure(.unreachable(let error)): return plain(.serviceUnavailable, error.description)
        }
    }

    /// Sends the request the page's values make, or answers 400 with why they cannot make one
    /// (the protocol's own words: the daemon would refuse the same).
    static func send(_ daemon: DaemonBridge, _ build: () throws(RequestError) -> ControlRequest) async -> Response {
        let request: ControlRequest
        do { request = try build() } catch { return plain(.badRequest, error.description + "; nothing changed") }
        return reply(await daemon.send(request))
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
