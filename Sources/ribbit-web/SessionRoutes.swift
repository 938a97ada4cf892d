import Foundation
import HTTPTypes
import Hummingbird
import RibbitStore

/// The page side of WebAccess: /session.js, which every page runs before its own scripts, and
/// the three calls it makes. `POST /api/login` `{"token": ...}` trades the link's token (or
/// pairing code) for a session secret; `GET /api/session` says whether a kept secret still
/// works; `POST /api/link` `{"path": ...}` gives a one-use link for a download or the
/// printable report, which the browser opens without the page's header.
enum SessionRoutes {
    static let script = "/session.js"
    static let loginPath = "/api/login"

    static func addRoutes(to router: Router<WebRequestContext>, access: WebAccess) {
        let page = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: script)) { _, _ in page }
        router.post(RouterPath(stringLiteral: loginPath)) { request, context in try await logIn(request, context: context, access: access) }
        router.get("/api/session") { _, _ in WebApp.json(Data("{}".utf8)) }
        router.post("/api/link") { request, context in
            let body = try await WebApp.decode(LinkBody.self, from: request, context: context)
            guard body.path.hasPrefix("/"), !body.path.contains("?"), !body.path.contains("#"), body.path.utf8.count <= 256 else {
                return WebApp.plain(.badRequest, "give the path to open, such as /api/history/1.rx (no query)")
            }
            return WebApp.json(HistoryEntry.json(["url": access.makeLink(to: body.path)]))
        }
    }

    struct LoginBody: Decodable { var token: String }
    struct LinkBody: Decodable { var path: String }

    /// JSON only: a page of another origin can send a form or text/plain without asking, but not
    /// this (the browser asks first, and no CORS header ever says yes), so it cannot guess on
    /// the wearer's behalf, and a guess costs only the guesser (PeerIdentity).
    static func logIn(_ request: Request, context: WebRequestContext, access: WebAccess) async throws -> Response {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            return WebApp.plain(.unsupportedMediaType, #"send the token as JSON, {"token":"..."}, with Content-Type: application/json"#)
        }
        let body = try await WebApp.decode(LoginBody.self, from: request, context: context)
        let guesser = PeerIdentity.of(remote: context.remoteAddress, local: context.localAddress)
        let code = access.oneTime ? "pairing code" : "token"
        switch access.logIn(with: body.token, from: guesser) {
        case .session(let secret):
            return WebApp.json(HistoryEntry.json(["session": secret]))
        case .wrongToken:
            return WebApp.plain(.unauthorized, "wrong \(code): \(WebSecurity.howToOpen)")
        case .wait(let seconds):
            var response = WebApp.plain(
                .tooManyRequests,
                "too many wrong \(code)s from \(guesser): wait \(seconds) s before the next try; \(WebSecurity.howToOpen)")
            response.headers[.retryAfter] = String(seconds)
            return response
        }
    }

    static let javaScript = Web.text(PackageResources.session_js)
}
