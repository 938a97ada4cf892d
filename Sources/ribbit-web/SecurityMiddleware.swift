import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import RibbitControl

/// The request context: Hummingbird's WebSocket-capable one, with the connection's two ends
/// (for the guess throttle's PeerIdentity).
struct WebRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let remoteAddress: SocketAddress?
    let localAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
        localAddress = source.channel.localAddress
    }
}

/// Runs around every request. It answers only to the address it listens on (a page of another
/// site that rebinds its DNS name to 127.0.0.1 is refused: 421), serves the page shells, their
/// scripts and the style sheet to anyone (they hold no personal data: each page asks the API for
/// it), lets `POST /api/login` trade a token for a session, and refuses every other request
/// without a live session's secret (WebAccess; 401), in `X-Ribbit-Session`, a WebSocket's
/// protocol list, or a one-use `?link=` for a GET. It refuses a body over 4 KiB (16 MiB for the
/// Load screen's uploads; 413), and puts the security headers on every response, errors
/// included. No CORS header is ever sent, so other origins cannot read any answer, nor send
/// the session header (the browser would have to ask first).
struct SecurityMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    let hosts: Set<String>
    let origin: String
    let access: WebAccess

    init(listen: WebListenAddress, access: WebAccess) {
        var hosts: Set<String> = [listen.description]
        if listen.host == "127.0.0.1" { hosts.insert("localhost:\(listen.port)") }
        if listen.port == 80 { hosts.insert(listen.host) }
        self.hosts = hosts
        self.origin = listen.url
        self.access = access
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await check(request, context: context, next: next)
        } catch let error as HTTPError {
            response = WebApp.plain(error.status, error.body ?? error.status.reasonPhrase)
        } catch let error as any HTTPResponseError {
            // NIOTooManyBytesError (a chunked body over the limit) is one: 413.
            let limit = WebSecurity.maxBodyBytes(for: request.uri.path)
            let message = error.status == .contentTooLarge ? "the request body is over \(limit) bytes" : error.status.reasonPhrase
            response = WebApp.plain(error.status, message)
        } catch {
            response = WebApp.plain(.internalServerError, "internal error: \(error)")
        }
        WebSecurity.secure(&response.headers)
        return response
    }

    private func check(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authority = request.head.authority, hosts.contains(authority.lowercased()) else {
            return WebApp.plain(.misdirectedRequest, "this web app answers only at \(origin)")
        }
        let path = request.uri.path
        if request.method == .get && WebSecurity.publicPaths.contains(path) { return try await next(request, context) }
        let loggingIn = request.method == .post && path == SessionRoutes.loginPath
        if !loggingIn && !access.isSession(request.headers[WebSecurity.sessionHeader] ?? WebSecurity.webSocketSecret(request.headers)) {
            guard request.method == .get, let link = request.uri.queryParameters["link"] else {
                return WebApp.plain(.unauthorized, "not logged in: \(WebSecurity.howToOpen)")
            }
            guard access.useLink(String(link), to: path) else {
                return WebApp.plain(
                    .unauthorized,
                    "this link opens once, within a minute: open it again from the web app's screen (or \(WebSecurity.howToOpen))")
            }
        }
        guard request.method == .post else { return try await next(request, context) }
        let limit = WebSecurity.maxBodyBytes(for: path)
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            return WebApp.plain(.contentTooLarge, "the request body is over \(limit) bytes")
        }
        var request = request
        _ = try await request.collectBody(upTo: limit)
        return try await next(request, context)
    }
}

/// The limits, the public paths and the headers.
enum WebSecurity {
    static let maxBodyBytes = 4096
    /// The Load screen's uploads, a photo of a QR code or a .rx file: a phone's photo is a few MB.
    /// The image decoder's own limits (pixels, the QR scan's time) still apply.
    static let uploadMaxBytes = 16 * 1024 * 1024
    static let uploadPaths: Set<String> = [LoadScreen.previewPath, LoadScreen.loadPath]

    static func maxBodyBytes(for path: String) -> Int { uploadPaths.contains(path) ? uploadMaxBytes : maxBodyBytes }

    /// The header that carries the session's secret (SessionRoutes' script sends it).
    static let sessionHeader = HTTPField.Name("X-Ribbit-Session")!
    /// A browser's WebSocket can send no header of its own, only a list of protocols: the page
    /// offers `ribbit` and `ribbit-session.SECRET`, and the upgrade answers `ribbit`.
    static let webSocketProtocol = "ribbit"
    static let webSocketSecretPrefix = "ribbit-session."
    static let howToOpen = "open the link `ribbitd web` printed (or run `ribbitd web --url`)"

    /// The page shells (no personal data in them), their scripts and the style sheet: what a
    /// browser loads before the page can send the session's secret.
    static let publicPaths: Set<String> = {
        let screens: [(path: String, script: String)] = [
            (HomeScreen.path, HomeScreen.script), (PrescriptionsScreen.path, PrescriptionsScreen.script),
            (LoadScreen.path, LoadScreen.script), (DetailsScreen.path, DetailsScreen.script), (LiveScreen.path, LiveScreen.script),
            (FittingScreen.path, FittingScreen.script), (HearingTestScreen.path, HearingTestScreen.script),
            (VoiceScreen.path, VoiceScreen.script), (VoicePlay.path, VoicePlay.script),
        ]
        return Set(
            screens.flatMap { [$0.path, $0.script] } + [
                ClinicScreen.path, SessionRoutes.script, Assets.commonScript, Assets.styleSheetPath,
            ])
    }()

    /// The secret in an upgrade's `Sec-WebSocket-Protocol` list, if any.
    static func webSocketSecret(_ headers: HTTPFields) -> String? {
        guard headers[.upgrade]?.lowercased() == "websocket" else { return nil }
        return webSocketProtocols(headers).first { $0.hasPrefix(webSocketSecretPrefix) }.map {
            String($0.dropFirst(webSocketSecretPrefix.count))
        }
    }

    static func webSocketProtocols(_ headers: HTTPFields) -> [String] {
        headers[values: .secWebSocketProtocol].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// script-src 'self' and no 'unsafe-inline': only the app's own script files run; nothing comes from elsewhere.
    /// img-src blob: for the QR code the Fitting screen shows from its POST's answer and the progress chart.
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
        + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    static func secure(_ headers: inout HTTPFields) {
        // A page may bring a stricter policy of its own (the hearing test's printable report).
        if headers[HTTPField.Name("Content-Security-Policy")!] == nil {
            headers[HTTPField.Name("Content-Security-Policy")!] = contentSecurityPolicy
        }
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[.cacheControl] = "no-store"
    }
}
