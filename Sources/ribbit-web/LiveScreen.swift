import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import RibbitStore

/// The Live screen: `ribbitd dump` in the browser. The daemon's dump frames come over a
/// WebSocket (/api/live/socket, 20 a second, each cut down to what the chart draws: LiveFrame),
/// drawn by /live.js as third-octave input and output levels per ear with the target marked,
/// in dB SPL the active prescription's thresholds, UCLs and output limits over them (a
/// SpeechMap: /api/speechmap), and the broadband levels; Save writes the last seconds as `ribbitd dump --csv/--svg` does.
enum LiveScreen {
    static let path = "/live"
    static let script = "/live.js"
    static let socketPath = "/api/live/socket"

    static var html: String {
        Assets.screen(path: path, script: script, file: main)
    }

    static func addRoutes<Context: WebSocketRequestContext & RequestContext>(
        to router: Router<Context>, feed: LiveFeed, daemon: DaemonBridge, history: HistoryBridge
    ) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.ws(
            RouterPath(stringLiteral: socketPath), shouldUpgrade: { request, _ in try checkUpgrade(request) },
            onUpgrade: { inbound, outbound, _ in
                let (id, messages) = feed.subscribe()
                defer { feed.unsubscribe(id) }
                // Until the browser goes (its messages end) or the writing fails; then the other stops.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for try await _ in inbound {} }
                    group.addTask { for await text in messages { try await outbound.write(.text(text)) } }
                    _ = try await group.next()
                    group.cancelAll()
                }
            })
        // The SpeechMap's lines: the thresholds, UCLs and band limits of what the daemon plays.
        router.get("/api/speechmap") { _, _ in
            guard case .success(let status) = await daemon.send(.status), let id = status.prescription?.id else {
                return WebApp.plain(.notFound, "no prescription playing: nothing to draw over the sound")
            }
            switch await history.speechMap(id: id) {
            case .success(let map): return WebApp.json(HistoryEntry.json(map))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        router.get("/api/live/:file") { _, context in
            let file = context.parameters.get("file") ?? ""
            let kind = file.hasPrefix("recording.") ? String(file.dropFirst("recording.".count)) : ""
            guard
                let (text, type) = kind == "csv"
                    ? feed.csv().map({ ($0, "text/csv; charset=utf-8") })
                    : kind == "svg" ? feed.svg().map({ ($0, "image/svg+xml") }) : ("", "")
            else { return WebApp.plain(.conflict, "nothing recorded yet: keep the Live screen open a few seconds, then save") }
            guard !type.isEmpty else { return WebApp.plain(.notFound, "ask for /api/live/recording.csv or /api/live/recording.svg") }
            var headers = HTTPFields()
            headers[.contentType] = type
            headers[.contentDisposition] = "attachment; filename=\"ribbit-live.\(kind)\""
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }

    /// The session's secret (in the protocol list) was checked by the middleware. The Origin must
    /// be this web app's own too: WebSockets are outside the same-origin policy. The answer names
    /// the `ribbit` protocol when the page offered it (a browser drops a socket whose answer names
    /// none of the protocols it offered).
    static func checkUpgrade(_ request: Request, socket: String = socketPath, view: String = "the live view") throws -> RouterShouldUpgrade
    {
        guard request.headers[.upgrade]?.lowercased() == "websocket" else {
            throw HTTPError(.badRequest, message: "\(socket) is a WebSocket: open it with ws:// (wss:// over HTTPS)")
        }
        // Either scheme: the server speaks only one of them (HTTPS on a LAN), so a page of the
        // other cannot exist at this authority.
        guard let origin = request.headers[.origin]?.lowercased(), let authority = request.head.authority?.lowercased(),
            origin == "http://\(authority)" || origin == "https://\(authority)"
        else { throw HTTPError(.forbidden, message: "\(view) opens only from this web app's own pages (wrong or no Origin)") }
        let offered = WebSecurity.webSocketProtocols(request.headers).contains(WebSecurity.webSocketProtocol)
        return .upgrade(offered ? [.secWebSocketProtocol: WebSecurity.webSocketProtocol] : [:])
    }

    static let main = Web.text(PackageResources.live_html)

    static let css = Web.text(PackageResources.live_css)

    static let javaScript = Web.text(PackageResources.live_js)
}
