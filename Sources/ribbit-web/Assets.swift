import Hummingbird

/// What every screen shares, compiled into the binary (no build step, nothing fetched from the
/// network): the page skeleton, the nav, the style sheet and /common.js. Each screen's own
/// page, script and routes live in its file (HomeScreen.swift ...); scripts are files of their
/// own because the Content-Security-Policy allows no inline script.
enum Assets {
    static func response(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The style sheet: the shared rules, each screen's, then dark mode's colours.
    static let styleSheet =
        StyleSheet.shared + PrescriptionsScreen.css + PrescriptionView.css + LiveScreen.css + FittingScreen.css + HearingTestScreen.css
        + VoiceScreen.css + VoicePlay.css + StyleSheet.dark

    static let commonScript = "/common.js"
    static let styleSheetPath = "/app.css"

    /// Serves the shared assets.
    static func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let common = response(commonJavaScript, type: "text/javascript; charset=utf-8")
        let style = response(styleSheet, type: "text/css; charset=utf-8")
        router.get(RouterPath(stringLiteral: commonScript)) { _, _ in common }
        router.get(RouterPath(stringLiteral: styleSheetPath)) { _, _ in style }
    }

    /// A screen's page, the same for everybody (its data comes from the API, with the session):
    /// the shared head (the style sheet; /session.js, /common.js, then the screen's own script,
    /// if it has one) and header (the nav, the connection line), then the screen's main. The
    /// nav's links are page.html's, the wearer's screens and Clinic; the screen's own link is
    /// marked current, or the link of the screen it is reached from (Clinic for the
    /// audiologist's and the therapist's screens).
    /// A screen's file opens with its `<title>` line and its connection line (what the header
    /// says until the first answer), then its `<main>`: the shell puts each in its place.
    static func screen(path: String, script: String?, file: String) -> String {
        let parts = file.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        precondition(
            parts.count == 3 && parts[0].hasPrefix("<title>") && parts[1].hasPrefix("<p id=\"connection\""),
            "a screen's file opens with its <title> line and its <p id=\"connection\"> line")
        // "page" on the screen's own link; "true" on the one that leads to it (not this page).
        let (link, current) = navigationLink[path].map { ($0, "true") } ?? (path, "page")
        let shell = Web.text(PackageResources.page_html)
            .replacingOccurrences(of: "<a href=\"\(link)\">", with: "<a href=\"\(link)\" aria-current=\"\(current)\">")
        let scriptTag = script.map { "<script src=\"\($0)\" defer></script>\n" } ?? ""
        return Web.fill(shell, ["title": parts[0], "script": scriptTag, "connection": parts[1], "main": parts[2]])
    }

    /// The screens without a link of their own in the nav, and the link that leads to them.
    static let navigationLink: [String: String] =
        Dictionary(uniqueKeysWithValues: ClinicScreen.screens.map { ($0, ClinicScreen.path) })
        .merging([DetailsScreen.path: PrescriptionsScreen.path]) { first, _ in first }

    /// Shared by every screen's script (deferred scripts run in order, and top-level consts of
    /// classic scripts are visible to the ones after them).
    static let commonJavaScript = Web.text(PackageResources.common_js)
}
