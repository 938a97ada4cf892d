import HTTPTypes
import Hummingbird
import RibbitControl

/// Runs around every request. It answers only to the address it listens on (a page of another
/// site that rebinds its DNS name to 127.0.0.1 is refused), trades a right `?token=` for a
/// session cookie (303 to the same path without it), refuses any request without a live session
/// (401; 429 once the token is locked out), refuses a body over 4 KiB (16 MiB for the Load
/// screen's uploads; 413) and a POST without
/// the CSRF token (403), and puts the security headers on every response,
/// errors included. No CORS header is ever sent, so other origins cannot read any answer.
struct SecurityMiddleware<Context: RequestContext>: RouterMiddleware {
    static var maxBodyBytes: Int { WebSecurity.maxBodyBytes }

    let hosts: Set<String>
    let origin: String
    let token: String
    let access: WebAccess
    let secure: Bool

    init(listen: WebListenAddress, token: String, access: WebAccess) {
        var hosts: Set<String> = [listen.description]
        if listen.host == "127.0.0.1" { hosts.insert("localhost:\(listen.port)") }
        if listen.port == 80 { hosts.insert(listen.host) }
        self.hosts = hosts
        self.origin = listen.url
        self.secure = !listen.isLoopback
        self.token = token
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
        let query = request.uri.queryParameters
        // A paired browser that opens an old link again is let in without counting a wrong code.
        if query["token"] != nil, access.isSession(cookieHeader: request.headers[.cookie]) {
            var headers = HTTPFields()
            headers[.location] = (request.uri.path.isEmpty ? "/" : request.uri.path) + Self.queryWithoutToken(request.uri.query)
            return Response(status: .seeOther, headers: headers)
        }
        if let given = query["token"] {
            switch access.logIn(with: String(given)) {
            case .session(let session):
                var headers = HTTPFields()
                headers[.location] = (request.uri.path.isEmpty ? "/" : request.uri.path) + Self.queryWithoutToken(request.uri.query)
                headers[.setCookie] = WebAccess.setCookie(session, secure: secure)
                headers[.contentType] = "text/plain; charset=utf-8"
                return Response(status: .seeOther, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "logged in\n")))
            case .wrongToken:
                return WebApp.plain(.unauthorized, "wrong token: \(WebSecurity.howToOpen)")
            case .lockedOut:
                return WebApp.plain(
                    .tooManyRequests,
                    "\(WebAccess.maxWrongTokens) wrong \(access.oneTime ? "pairing codes" : "tokens"): "
                        + "locked out until ribbit-web restarts (`ribbitd web`)")
            }
        }
        guard access.isSession(cookieHeader: request.headers[.cookie]) else {
            if request.method == .get
                && ["/", "", "/prescriptions", "/load", "/details", LiveScreen.path, "/fitting"].contains(request.uri.path)
            {
                return Assets.response(Assets.loginHTML, type: "text/html; charset=utf-8", status: .unauthorized)
            }
            return WebApp.plain(.unauthorized, "not logged in: \(WebSecurity.howToOpen)")
        }
        guard request.method == .post else { return try await next(request, context) }
        let limit = WebSecurity.maxBodyBytes(for: request.uri.path)
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            return WebApp.plain(.contentTooLarge, "the request body is over \(limit) bytes")
        }
        var request = request
        _ = try await request.collectBody(upTo: limit)
        guard CSRFToken.matches(request.headers[WebSecurity.csrfHeader], token) else {
            return WebApp.plain(.forbidden, "missing or wrong X-CSRF-Token: reload the page and try again")
        }
        return try await next(request, context)
    }

    /// The rest of the query after the token, so a link such as /details?id=2&token=... keeps its id.
    static func queryWithoutToken(_ query: String?) -> String {
        let kept = (query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") && $0 != "token" }
        return kept.isEmpty ? "" : "?" + kept.joined(separator: "&")
    }
}

/// The limits and headers, outside the generic middleware (which cannot hold stored statics).
enum WebSecurity {
    static let maxBodyBytes = 4096
    /// The Load screen's uploads, a photo of a QR code or a .rx file: a phone's photo is a few MB.
    /// The image decoder's own limits (pixels, the QR scan's time) still apply.
    static let uploadMaxBytes = 16 * 1024 * 1024
    static let uploadPaths: Set<String> = [LoadScreen.previewPath, LoadScreen.loadPath]

    static func maxBodyBytes(for path: String) -> Int { uploadPaths.contains(path) ? uploadMaxBytes : maxBodyBytes }
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    static let howToOpen = "open the link `ribbitd web` printed (or run `ribbitd web --url`)"

    /// script-src 'self' and no 'unsafe-inline': only the app's own script files run; nothing comes from elsewhere.
    /// img-src blob: for the QR code the Fitting screen shows from its POST's answer.
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
