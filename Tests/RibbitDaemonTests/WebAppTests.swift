import Foundation
import Glibc
import RibbitControl
import RibbitTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The web app end to end (ribbit-web, a real daemon, headless Chromium): one test at a time.
@Suite(.endToEnd) struct WebDaemonTests {}

/// `ribbitd web` (the release build, which execs the ribbit-web beside it) against a real daemon
/// on a private jackd: its API over HTTP, and its Home screen in headless Chromium.
extension WebDaemonTests {
    /// As a user unit its standard output is the journal (systemd says so in JOURNAL_STREAM):
    /// the personal link, which controls the hearing aid, is never written there; the token
    /// file has it, and `ribbitd web --url` shows it.
    @Test func thePersonalLinkNeverGoesToTheJournal() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let log = try TestPaths.temporaryDirectory().appendingPathComponent("journal")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = ChildProcess()
        process.executableURL = DaemonUnderTest.binary
        process.arguments = ["web", "--listen", "127.0.0.1:\(try WebAppUnderTest.freePort())"]
        process.environment = daemon.environment.merging(["JOURNAL_STREAM": try TestPaths.deviceAndInode(log.path)]) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = process.standardOutput
        try process.run()
        defer { stopProcess(process) }
        var text = ""
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, !text.contains("ribbitd web --url") {
            usleep(50_000)
            text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
        #expect(text.contains("ribbit web app on ") && text.contains("`ribbitd web --url` shows it"), "\(text)")
        #expect(!text.contains("token="), "the link went to the journal: \(text)")
        let shown = try daemon.ribbitd(["web", "--url"])
        #expect(shown.status == 0 && shown.stdout.contains("/?token="), "\(shown.stdout) \(shown.stderr)")
    }

    @Test func webAppServesTheStatusAndForwardsOnlyRequestsWithTheToken() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let web = try WebAppUnderTest(daemon: daemon)

        // The access token: 0600 in the 0700 runtime directory; `ribbitd web --url` prints the link.
        let tokenFile = try #require(daemon.environment["XDG_RUNTIME_DIR"]) + "/ribbit/web-token"
        let fileMode = try #require(FileManager.default.attributesOfItem(atPath: tokenFile)[.posixPermissions] as? Int)
        let directoryMode = try #require(
            FileManager.default.attributesOfItem(atPath: (tokenFile as NSString).deletingLastPathComponent)[.posixPermissions] as? Int)
        #expect(fileMode == 0o600 && directoryMode == 0o700, "\(String(fileMode, radix: 8)) \(String(directoryMode, radix: 8))")
        let printed = try daemon.ribbitd(["web", "--url"])
        #expect(printed.status == 0 && printed.stdout == web.personalURL + "\n", "\(printed.stdout) \(printed.stderr)")
        #expect(web.personalURL.range(of: #"\?token=[A-Za-z0-9_-]{43}$"#, options: .regularExpression) != nil, "\(web.personalURL)")

        // Without a session: the page shells, their scripts and the style sheet, which hold no
        // personal data (the page asks the API for it); no data and no action.
        let name = try #require(try daemon.status().prescription?.name)
        let shell = try web.request("GET", "/", withSession: false)
        #expect(shell.status == 200 && shell.headers["content-type"]?.hasPrefix("text/html") == true)
        for path in ["/", "/session.js", "/app.js", "/common.js", "/app.css"] {
            let answer = try web.request("GET", path, withSession: false)
            #expect(answer.status == 200 && !answer.text.contains(name) && answer.headers["set-cookie"] == nil, "\(path)")
        }
        let locked = try web.request("GET", "/api/status", withSession: false)
        #expect(locked.status == 401 && locked.text.contains("ribbitd web --url"), "\(locked.text)")
        #expect(try web.request("GET", "/api/status", session: String(repeating: "A", count: 43)).status == 401)
        #expect(
            try web.request(
                "GET", "/api/status", withSession: false, headers: ["Cookie": "ribbit_session=" + String(repeating: "A", count: 43)]
            )
            .status == 401)

        // The right token (as the page's session.js sends it): a session secret in JSON, never a
        // cookie. Only JSON is taken: a page of another origin may send a form or text unasked.
        let tokenJSON = #"{"token":"\#(web.accessToken)"}"#
        #expect(try web.request("POST", "/api/login", bytes: Data(tokenJSON.utf8), withSession: false).status == 415)
        let login = try web.logIn()
        #expect(login.status == 200 && login.headers["set-cookie"] == nil, "\(login) \(login.text)")
        let secret = try #require(web.session)
        #expect(secret.range(of: #"^[A-Za-z0-9_-]{43}$"#, options: .regularExpression) != nil, "\(secret)")
        #expect(try web.request("GET", "/api/session").status == 200)

        #expect(try web.request("POST", "/api/pause", withSession: false).status == 401)
        #expect(try daemon.status().output == .processing)
        #expect(try daemon.ribbitd(["status"]).stdout.contains("processing"))

        let answer = try web.request("GET", "/api/status")
        #expect(answer.status == 200)
        let fromWeb = try JSONDecoder().decode(DaemonStatus.self, from: answer.body)
        let fromCLI = try daemon.status()
        #expect(fromWeb.pid == fromCLI.pid && fromWeb.version == fromCLI.version)
        #expect(fromWeb.prescription == fromCLI.prescription && fromWeb.prescription != nil)
        #expect(fromWeb.output == fromCLI.output && fromWeb.listening == fromCLI.listening)
        #expect(fromWeb.jack?.latencyFrames == fromCLI.jack?.latencyFrames && fromWeb.jack != nil)
        // The same keys as `ribbitd status --json` (the same encoder).
        let webKeys = try #require(JSONSerialization.jsonObject(with: answer.body) as? [String: Any]).keys.sorted()
        let cliJSON = try daemon.ribbitd(["status", "--json"]).stdout
        let cliKeys = try #require(JSONSerialization.jsonObject(with: Data(cliJSON.utf8)) as? [String: Any]).keys.sorted()
        #expect(webKeys == cliKeys)

        // Security headers on every response, an error's included; never a CORS header.
        for response in [answer, try web.request("GET", "/"), try web.request("GET", "/app.js"), try web.request("GET", "/nowhere")] {
            #expect(response.headers["content-security-policy"]?.hasPrefix("default-src 'self'; script-src 'self';") == true)
            #expect(response.headers["x-content-type-options"] == "nosniff" && response.headers["referrer-policy"] == "no-referrer")
            #expect(!response.headers.keys.contains { $0.hasPrefix("access-control-") })
        }

        // Keyboard and screen readers: native controls only, in document order (no tabindex),
        // every button with a name and every input inside its label; no inline script or style.
        let page = String(decoding: try web.request("GET", "/").body, as: UTF8.self)
        #expect(!page.contains("tabindex") && !page.contains("onclick") && !page.contains("style="))
        #expect(!page.contains("<script>") && page.contains(#"<script src="/common.js" defer></script>"#))
        #expect(page.contains(#"<script src="/app.js" defer></script>"#))
        for button in page.components(separatedBy: "<button").dropFirst() {
            let name = button.split(separator: ">", maxSplits: 1).last?.prefix { $0 != "<" } ?? ""
            #expect(!name.trimmingCharacters(in: .whitespaces).isEmpty || button.contains("aria-label="), "<button\(button.prefix(80))")
        }
        let inputs = page.components(separatedBy: "<input").count - 1
        #expect(inputs == 5 && page.components(separatedBy: "<label><input").count - 1 == inputs)

        // Without the session (or with a wrong one) nothing changes.
        #expect(try web.request("POST", "/api/pause", withSession: false).status == 401)
        #expect(try web.request("POST", "/api/pause", session: String(repeating: "0", count: 43)).status == 401)
        #expect(try web.request("POST", "/api/volume", json: #"{"stepDB":3}"#, withSession: false).status == 401)
        #expect(try daemon.status().output == .processing)
        #expect(try daemon.status().listening?.volumeDB == 0)

        let paused = try web.request("POST", "/api/pause")
        #expect(paused.status == 200)
        #expect(try JSONDecoder().decode(DaemonStatus.self, from: paused.body).output == .paused)
        #expect(try daemon.ribbitd(["status"]).stdout.contains("paused"))
        #expect(try daemon.status().output == .paused)
        #expect(try web.request("POST", "/api/resume").status == 200)
        #expect(try daemon.status().output == .processing)

        #expect(try web.request("POST", "/api/volume", json: #"{"stepDB":3}"#).status == 200)
        #expect(try daemon.status().listening?.volumeDB == 3)
        #expect(try web.request("POST", "/api/bypass", json: #"{"on":true}"#).status == 200)
        #expect(try daemon.status().output == .bypassed)
        #expect(try web.request("POST", "/api/bypass", json: #"{"on":false}"#).status == 200)
        #expect(try web.request("POST", "/api/program", json: #"{"program":"music"}"#).status == 200)
        #expect(try daemon.status().listening?.program == .music)

        // A program that does not exist cannot be a request: 400 with the protocol's one line,
        // and nothing reaches the daemon (its refusals are 409: a trial to keep with none running).
        let refused = try web.request("POST", "/api/program", json: #"{"program":"loud"}"#)
        #expect(refused.status == 400)
        #expect(try web.request("POST", "/api/keep").status == 409)
        let reason = String(decoding: refused.body, as: UTF8.self)
        #expect(reason.contains("loud") && reason.split(separator: "\n").count == 1, "\(reason)")
        #expect(try web.request("POST", "/api/volume", json: #"{"db":1}"#).status == 400)

        // Over 4 KiB: refused before anything reaches the daemon.
        let big = #"{"stepDB":3,"pad":""# + String(repeating: "x", count: 5000) + #""}"#
        #expect(try web.request("POST", "/api/volume", json: big).status == 413)
        #expect(try daemon.status().listening?.volumeDB == 3)

        // A page of another site whose name was rebound to 127.0.0.1 sends its own Host: refused.
        #expect(try web.rawStatusLine("GET /api/status HTTP/1.1\r\nHost: attacker.example:\(web.port)\r\n\r\n").contains(" 421 "))
        #expect(
            try web.rawStatusLine("GET /api/status HTTP/1.1\r\nHost: localhost:\(web.port)\r\nX-Ribbit-Session: \(secret)\r\n\r\n")
                .contains(" 200 "))

        // ribbit-web never opens JACK; the daemon is its only way to the sound.
        let jackClients = try Built.run(try #require(Built.tool("jack_lsp")), [], environment: server.environment).stdout
        #expect(!jackClients.contains("web"), "\(jackClients)")
        web.recordFigures()

        // 5 wrong tokens make this guesser (a user of this machine: root here) wait 10 s, its
        // next tries refused unchecked, the right token included; a session already open stays.
        for _ in 0..<WebAppUnderTest.wrongTokens {
            #expect(try web.logIn(token: String(repeating: "x", count: 43)).status == 401)
        }
        let waiting = try web.logIn()
        #expect(
            waiting.status == 429 && waiting.headers["retry-after"].flatMap { Int($0) }.map { (1...10).contains($0) } == true, "\(waiting)")
        #expect(waiting.text.contains("user 0"), "\(waiting.text)")
        #expect(try web.request("GET", "/api/status").status == 200)

        #expect(try daemon.stop() == 0)
        let gone = try web.request("GET", "/api/status")
        #expect(gone.status == 503)
        #expect(String(decoding: gone.body, as: UTF8.self).contains("not running"))

        // Stopped: the token file is gone and `ribbitd web --url` says none runs.
        web.stop()
        #expect(!FileManager.default.fileExists(atPath: tokenFile))
        let none = try daemon.ribbitd(["web", "--url"])
        #expect(none.status == 69 && none.stderr.split(separator: "\n").count == 1, "\(none.stderr)")
    }

    /// Headless Chromium runs the page's script (the prescription's name comes from the daemon
    /// through /api/status) and takes the Home screen's screenshots at phone and laptop size.
    /// RIBBIT_WEB_SCREENSHOTS=DIR keeps them (the README's are docs/images/web-home-*.png).
    @Test func webAppHomeScreenRendersInAHeadlessBrowser() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is not installed (make dev-deps)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let web = try WebAppUnderTest(daemon: daemon)
        let name = try #require(try daemon.status().prescription?.name)
        let profile = web.directory.appendingPathComponent("chromium")
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)", "--virtual-time-budget=4000"]

        // With the console on stderr: a CSP violation or a script error would show there.
        // The personal link: the page trades the token for a session, then asks for the status.
        let dom = try Built.run(
            chromium, common + ["--enable-logging=stderr", "--v=0", "--dump-dom", web.personalURL], timeoutSeconds: 60)
        #expect(dom.status == 0, "\(dom.stderr)")
        let escaped = name.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        #expect(dom.stdout.contains(#"<p id="rx-name" class="name">\#(escaped)</p>"#), "\(dom.stdout)")
        #expect(dom.stdout.contains("Connected: ribbitd"))
        let console = dom.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "the page wrote to the console: \(console)")

        try web.screenshots(chromium, common, of: web.personalURL, name: "web-home")
    }

    /// The Prescriptions screen's API against a real daemon with two prescriptions of different
    /// environments: the history as `ribbitd list --json`, Use through the daemon, Remove with
    /// `ribbitd remove`'s refusals, and the downloads with `ribbitd export`'s bytes.
    @Test func webAppListsUsesRemovesAndExportsPrescriptions() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let loaded = try daemon.ribbitd(["load", TestPaths.prescription("moderate-flat-music.rx").path])
        #expect(loaded.status == 0, "\(loaded.stderr)")
        let web = try WebAppUnderTest(daemon: daemon)
        let quiet = "Mild sloping high-frequency loss", music = "Moderate flat loss, music"

        // Without the session: the page and its script (neither has an entry in it), not the list.
        for path in ["/prescriptions", "/prescriptions.js"] {
            let answer = try web.request("GET", path, withSession: false)
            #expect(answer.status == 200 && !answer.text.contains(quiet) && !answer.text.contains(music), "\(path)")
        }
        for path in ["/api/history", "/api/history/1.rx", "/api/history/1.png"] {
            #expect(try web.request("GET", path, withSession: false).status == 401, "\(path)")
        }
        #expect(try web.logIn().status == 200)
        #expect(try web.request("POST", "/api/use", json: #"{"id":1}"#, withSession: false).status == 401)

        struct Entry: Decodable {
            var id: Int64
            var name: String
            var environment: String
            var rule: String?
            var active: Bool
        }
        let listed = try web.request("GET", "/api/history")
        #expect(listed.status == 200 && listed.headers["content-type"] == "application/json")
        let entries = try JSONDecoder().decode([Entry].self, from: listed.body)
        #expect(entries.map(\.name) == [quiet, music] && entries.map(\.environment) == ["quiet", "music"])
        #expect(entries.map(\.active) == [false, true] && entries.map(\.rule) == ["nal-r", "pogo2"])
        // The same bytes as `ribbitd list --json` (which ends with a newline).
        #expect(String(decoding: listed.body, as: UTF8.self) + "\n" == (try daemon.ribbitd(["list", "--json"]).stdout))

        // Without the session nothing changes.
        #expect(try web.request("POST", "/api/use", json: #"{"id":1}"#, withSession: false).status == 401)
        #expect(try web.request("POST", "/api/remove", json: #"{"id":1}"#, withSession: false).status == 401)
        #expect(try daemon.status().prescription?.name == music)

        let used = try web.request("POST", "/api/use", json: #"{"id":1}"#)
        #expect(used.status == 200, "\(String(decoding: used.body, as: UTF8.self))")
        #expect(try JSONDecoder().decode(DaemonStatus.self, from: used.body).prescription?.name == quiet)
        #expect(try daemon.ribbitd(["status"]).stdout.contains(quiet))
        #expect(try web.request("POST", "/api/use", json: #"{"id":"one"}"#).status == 400)

        // The active one stays, with `ribbitd remove`'s line; nothing changes.
        let refused = try web.request("POST", "/api/remove", json: #"{"id":1}"#)
        let line = String(decoding: refused.body, as: UTF8.self)
        #expect(refused.status == 409 && line.split(separator: "\n").count == 1, "\(refused.status) \(line)")
        let cli = try daemon.ribbitd(["remove", "1"])
        #expect(
            cli.status != 0 && cli.stderr.contains(line.trimmingCharacters(in: .newlines)) && line.contains("active"),
            "\(cli.stderr) | \(line)")
        #expect(try JSONDecoder().decode([Entry].self, from: web.request("GET", "/api/history").body).count == 2)
        #expect(try web.request("POST", "/api/remove", json: #"{"id":9}"#).status == 404)

        // The downloads: the bytes `ribbitd export` writes; the QR code reads back.
        let directory = web.directory
        for kind in ["rx", "png"] {
            let download = try web.request("GET", "/api/history/2.\(kind)")
            #expect(download.status == 200)
            #expect(download.headers["content-disposition"] == "attachment; filename=\"ribbit-2-music.\(kind)\"")
            let file = directory.appendingPathComponent("cli.\(kind)").path
            let exported = try daemon.ribbitd(["export", "2", "-o", file])
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == download.body, "\(kind)")
            let webFile = directory.appendingPathComponent("web.\(kind)")
            try download.body.write(to: webFile)
            let shown = try daemon.ribbitd(["rx", "show", webFile.path])
            #expect(shown.status == 0 && shown.stdout.contains(music), "\(shown.stdout) \(shown.stderr)")
        }
        #expect(try web.request("GET", "/api/history/2.png").headers["content-type"] == "image/png")
        // As the page's links open them (a plain navigation carries no session header): a one-use
        // link, good once for that path only; only a session gets one.
        func oneUseLink(_ path: String) throws -> String {
            let answer = try web.request("POST", "/api/link", json: #"{"path":"\#(path)"}"#)
            let object = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
            return try #require(object?["url"] as? String, "\(answer)")
        }
        let link = try oneUseLink("/api/history/2.rx")
        #expect(link.hasPrefix("/api/history/2.rx?link="), "\(link)")
        let opened = try web.request("GET", link, withSession: false)
        let direct = try web.request("GET", "/api/history/2.rx")
        #expect(opened.status == 200 && opened.body == direct.body)
        let reused = try web.request("GET", link, withSession: false)
        #expect(reused.status == 401 && reused.text.contains("opens once"), "a link works once: \(reused.text)")
        let elsewhere = try oneUseLink("/api/history/2.rx").replacingOccurrences(of: "2.rx?", with: "1.rx?")
        #expect(try web.request("GET", elsewhere, withSession: false).status == 401, "a link opens only its own path")
        #expect(try web.request("POST", "/api/link", json: #"{"path":"/api/history/2.rx"}"#, withSession: false).status == 401)
        for path in ["/api/history/9.rx", "/api/history/2.pdf", "/api/history/x.png"] {
            #expect(try web.request("GET", path).status == 404, "\(path)")
        }

        // The other one goes; `ribbitd list` agrees.
        let removed = try web.request("POST", "/api/remove", json: #"{"id":2}"#)
        #expect(removed.status == 200)
        #expect(try JSONDecoder().decode([Entry].self, from: removed.body).map(\.id) == [1])
        let list = try daemon.ribbitd(["list"]).stdout
        #expect(list.contains(quiet) && !list.contains(music), "\(list)")
        #expect(try daemon.status().prescription?.name == quiet)
        let weights = ["/prescriptions", "/common.js", "/prescriptions.js", "/app.css"].map { path in
            "\(path) \((try? web.request("GET", path).body.count) ?? -1) B"
        }
        print("ribbit-web prescriptions screen: \(weights.joined(separator: ", "))")
    }

    /// Headless Chromium draws the Prescriptions screen from /api/history: both names, the
    /// active one marked, no console message; RIBBIT_WEB_SCREENSHOTS=DIR keeps its screenshots
    /// (the README's are docs/images/web-prescriptions-*.png).
    @Test func webAppPrescriptionsScreenRendersInAHeadlessBrowser() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is not installed (make dev-deps)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server, then: ["moderate-flat-music.rx"])
        let web = try WebAppUnderTest(daemon: daemon)
        let link = web.personalURL.replacingOccurrences(of: "/?token=", with: "/prescriptions?token=")
        let profile = web.directory.appendingPathComponent("chromium")
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)", "--virtual-time-budget=4000"]

        let dom = try Built.run(chromium, common + ["--enable-logging=stderr", "--v=0", "--dump-dom", link], timeoutSeconds: 60)
        #expect(dom.status == 0, "\(dom.stderr)")
        #expect(dom.stdout.contains(#"<h4 class="name">Mild sloping high-frequency loss</h4>"#), "\(dom.stdout)")
        #expect(dom.stdout.contains(#"<h4 class="name">Moderate flat loss, music<span class="badge">Active</span></h4>"#))
        #expect(dom.stdout.contains(#"<a href="/prescriptions" aria-current="page">Prescriptions</a>"#))
        #expect(dom.stdout.contains(#"<h3 id="env-quiet">quiet</h3>"#) && dom.stdout.contains(#"<h3 id="env-music">music</h3>"#))
        #expect(dom.stdout.contains(#"href="/api/history/1.png""#) && dom.stdout.contains("2 prescriptions"))
        let console = dom.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "the page wrote to the console: \(console)")

        try web.screenshots(chromium, common, of: link, name: "web-prescriptions")
    }
}

extension DaemonUnderTest {
    /// The web tests' daemon: on `server`, its ports unconnected, playing mild-presbycusis.rx,
    /// with `loaded` loaded after it in order (the last one active).
    static func forWeb(on server: JackTestServer, then loaded: [String] = []) throws -> DaemonUnderTest {
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("mild-presbycusis.rx").path])
        try daemon.waitUntilProcessing()
        for rx in loaded {
            let result = try daemon.ribbitd(["load", TestPaths.prescription(rx).path])
            #expect(result.status == 0, "\(result.stderr)")
        }
        return daemon
    }
}

/// `ribbitd web` on a free loopback port with a daemon's environment, stopped by PID.
final class WebAppUnderTest {
    let process = ChildProcess()
    let port: Int
    let directory: URL
    var url: String { "http://127.0.0.1:\(port)/" }
    static let wrongTokens = 5
    /// The link ribbit-web printed: the URL with the access token.
    private(set) var personalURL = ""
    var accessToken: String { personalURL.components(separatedBy: "?token=").last ?? "" }
    /// The session's secret once logged in, sent in `X-Ribbit-Session` by `request`.
    private(set) var session: String?
    private let client: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration)
    }()

    struct Answer {
        var status: Int
        var body: Data
        /// Names in lower case.
        var headers: [String: String]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// `fileLimit`: run it under `prlimit --nofile=N:N`, as `ulimit -n N` would.
    init(daemon: DaemonUnderTest, fileLimit: Int? = nil) throws {
        directory = try TestPaths.temporaryDirectory()
        port = try Self.freePort()
        let arguments = ["web", "--listen", "127.0.0.1:\(port)"]
        if let fileLimit {
            guard let prlimit = Built.tool("prlimit") else { throw TestSetupError("prlimit is needed (util-linux)") }
            process.executableURL = prlimit
            process.arguments = ["--nofile=\(fileLimit):\(fileLimit)", "--", DaemonUnderTest.binary.path] + arguments
        } else {
            process.executableURL = DaemonUnderTest.binary
            process.arguments = arguments
        }
        process.environment = daemon.environment
        let log = directory.appendingPathComponent("web.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = process.standardOutput
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            guard process.isRunning else {
                throw TestSetupError("ribbitd web exited: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            }
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"http://127\.0\.0\.1:[0-9]+/\?token=[A-Za-z0-9_-]+"#, options: .regularExpression),
                (try? request("GET", "/api/status", withSession: false))?.status == 401
            {
                personalURL = String(text[range])
                return
            }
            usleep(50_000)
        }
        throw TestSetupError("ribbitd web did not answer on port \(port) within 15 s")
    }

    deinit { stopProcess(process) }

    func stop() { stopProcess(process) }

    /// `POST /api/login` with the token (the right one unless given), as the page's session.js
    /// sends it; the session it answers is kept for `request`.
    @discardableResult
    func logIn(token: String? = nil) throws -> Answer {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["token": token ?? accessToken]), as: UTF8.self)
        let answer = try request("POST", "/api/login", json: body, withSession: false)
        if answer.status == 200,
            let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any], let secret = object["session"] as? String
        {
            session = secret
        }
        return answer
    }

    /// `json` goes as application/json, `bytes` as they are (the Load screen's upload).
    /// With the session (`withSession`, or the secret `session` given), and any other `headers`.
    func request(
        _ method: String, _ path: String, json: String? = nil, bytes: Data? = nil, withSession: Bool = true, session given: String? = nil,
        headers extra: [String: String] = [:]
    ) throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 30
        if let bytes {
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            request.httpBody = bytes
        }
        if let value = given ?? (withSession ? session : nil) { request.setValue(value, forHTTPHeaderField: "X-Ribbit-Session") }
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        final class Box: @unchecked Sendable { var answer: Answer? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        client.dataTask(with: request) { data, response, _ in
            if let http = response as? HTTPURLResponse {
                var headers = [String: String]()
                for (name, value) in http.allHeaderFields { headers["\(name)".lowercased()] = "\(value)" }
                box.answer = Answer(status: http.statusCode, body: data ?? Data(), headers: headers)
            }
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 40) == .success, let answer = box.answer else {
            throw TestSetupError("\(method) \(path): no answer")
        }
        return answer
    }

    /// The screen at `link` as a phone (390x844) and a laptop (1280x800) show it, taken by
    /// chromium's --screenshot with `common` flags, each checked to be a PNG of that size;
    /// RIBBIT_WEB_SCREENSHOTS=DIR keeps them as NAME-phone.png and NAME-laptop.png (the README's
    /// are in docs/images).
    func screenshots(_ chromium: URL, _ common: [String], of link: String, name: String) throws {
        let keep = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            let png = directory.appendingPathComponent("\(name)-\(label).png")
            let shot = try Built.run(
                chromium, common + ["--hide-scrollbars", "--window-size=\(width),\(height)", "--screenshot=\(png.path)", link],
                timeoutSeconds: 60)
            #expect(shot.status == 0, "\(shot.stderr)")
            let data = try Data(contentsOf: png)
            #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            // IHDR: width and height, big-endian, at bytes 16 and 20.
            let size = [16, 20].map { offset in data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
            #expect(size == [width, height], "\(name) \(label) screenshot is \(size)")
            if let keep {
                try? FileManager.default.createDirectory(at: keep, withIntermediateDirectories: true)
                let target = keep.appendingPathComponent(png.lastPathComponent)
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: png, to: target)
            }
        }
    }

    /// What the README and the report quote: the server's resident memory after it served,
    /// and the page's weight.
    func recordFigures() {
        let weights = ["/", "/common.js", "/app.js", "/app.css"].map { path in "\(path) \((try? request("GET", path).body.count) ?? -1) B" }
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? "VmRSS: ?"
        print(
            "ribbit-web: \(rss.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ")) resident; \(weights.joined(separator: ", "))"
        )
    }

    /// Sends `text` as it is (URLSession sets its own Host header) and returns the status line.
    func rawStatusLine(_ text: String) throws -> String {
        try rawHead(text).components(separatedBy: "\r\n").first ?? ""
    }

    /// Sends `text` as it is and returns the response's status line and headers.
    func rawHead(_ text: String) throws -> String {
        let fd = try TestWebSocket.connectLoopback(port: port)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(text.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw TestSetupError("write failed") }
        var reply = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &reply, reply.count)
        guard count > 0 else { throw TestSetupError("no reply to \(text)") }
        return String(decoding: reply[0..<count], as: UTF8.self).components(separatedBy: "\r\n\r\n").first ?? ""
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestSetupError("cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
