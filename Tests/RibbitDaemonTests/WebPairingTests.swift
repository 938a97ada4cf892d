import Foundation
import Glibc
import RibbitTestSupport
import Testing

/// `ribbitd web --listen LAN-ADDRESS:PORT`: HTTPS with a kept self-signed certificate, and
/// one-time pairing codes. Checked with curl against the certificate ribbit-web wrote (so the
/// certificate must name the address), on this machine's first non-loopback IPv4 address.
@Suite struct WebPairingTests {
    @Test func aLANListenerServesHTTPSAndPairsOneBrowserPerCode() throws {
        let curl = try #require(Built.tool("curl"), "curl is needed (make dev-deps installs it)")
        let host = try #require(Self.lanAddress(), "this machine has no non-loopback IPv4 address to listen on")
        let directory = try TestPaths.temporaryDirectory()
        let environment = try DaemonUnderTest.environment(in: directory)
        let port = try WebAppUnderTest.freePort()
        let web = try LANWebApp(host: host, port: port, environment: environment, log: directory.appendingPathComponent("web.log"))
        defer { web.stop() }
        let certificate = try #require(
            environment["XDG_CONFIG_HOME"].map { $0 + "/ribbit/web-tls/certificate.pem" }, "the test environment sets XDG_CONFIG_HOME")
        let keyMode =
            try FileManager.default.attributesOfItem(atPath: (certificate as NSString).deletingLastPathComponent + "/key.pem")[
                .posixPermissions] as? Int
        #expect(keyMode == 0o600)

        // The printed fingerprint is the certificate's (openssl's reading of the same file).
        let printed = try web.firstLog()
        #expect(printed.contains("Pairing link, for one browser: https://\(host):\(port)/?token="), "\(printed)")
        if let openssl = Built.tool("openssl") {
            let reading = try Built.run(openssl, ["x509", "-in", certificate, "-noout", "-fingerprint", "-sha256"], timeoutSeconds: 10)
            let fingerprint = try #require(reading.stdout.split(separator: "=", maxSplits: 1).last).trimmingCharacters(
                in: .whitespacesAndNewlines)
            #expect(
                printed.contains(fingerprint) && web.pairingLink.hasSuffix("#sha256=" + fingerprint.replacingOccurrences(of: ":", with: ""))
            )
        }

        /// curl, as `user` (setpriv) if given: a GET, or a POST of `json`, with the session `secret` if given.
        func fetch(_ path: String, json: String? = nil, secret: String? = nil, as user: String? = nil) throws -> (
            status: Int, headers: String, body: String
        ) {
            var arguments = ["-sS", "--max-time", "10", "--cacert", certificateCopy.path, "-D", "-", "https://\(host):\(port)\(path)"]
            if let json { arguments += ["-H", "Content-Type: application/json", "--data", json] }
            if let secret { arguments += ["-H", "X-Ribbit-Session: \(secret)"] }
            let result: RunResult
            if let user {
                let setpriv = try #require(Built.tool("setpriv"))
                result = try Built.run(
                    setpriv, ["--reuid", user, "--regid", "nogroup", "--clear-groups", curl.path] + arguments, timeoutSeconds: 15)
            } else {
                result = try Built.run(curl, arguments, timeoutSeconds: 15)
            }
            let parts = result.stdout.components(separatedBy: "\r\n\r\n")
            let status = Int(parts.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            return (status, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n") + result.stderr)
        }
        func logIn(_ code: String, as user: String? = nil) throws -> (status: Int, headers: String, body: String) {
            try fetch("/api/login", json: #"{"token":"\#(code)"}"#, as: user)
        }
        // The certificate where another user (the guesser below) can read it.
        let certificateCopy = FileManager.default.temporaryDirectory.appendingPathComponent("ribbit-web-\(getpid())-\(port).pem")
        try? FileManager.default.removeItem(at: certificateCopy)
        try FileManager.default.copyItem(atPath: certificate, toPath: certificateCopy.path)
        chmod(certificateCopy.path, 0o644)
        defer { try? FileManager.default.removeItem(at: certificateCopy) }

        // The certificate verifies for the address (curl checks the name); no session: 401.
        #expect(try fetch("/api/status").status == 401)
        // Plain HTTP gets no page.
        let plain = try Built.run(curl, ["-sS", "--max-time", "5", "http://\(host):\(port)/"], timeoutSeconds: 10)
        #expect(plain.status != 0 || !plain.stdout.contains("ribbit"), "\(plain.stdout)")

        // The code pairs one browser: a session secret (never a cookie); a new link replaces it at once.
        let code = web.pairingCode
        let paired = try logIn(code)
        #expect(paired.status == 200 && !paired.headers.lowercased().contains("set-cookie"), "\(paired)")
        let secret = try #require(
            (try JSONSerialization.jsonObject(with: Data(paired.body.utf8)) as? [String: Any])?["session"] as? String, "\(paired)")
        #expect(try fetch("/api/session", secret: secret).status == 200)
        let next = try web.waitForNewLink(after: code)
        #expect(next != code)
        let file = try String(contentsOfFile: environment["XDG_RUNTIME_DIR"]! + "/ribbit/web-token", encoding: .utf8)
        #expect(file.contains("?token=\(next)#sha256="), "\(file)")
        let shown = try Built.run(DaemonUnderTest.binary, ["web", "--url"], environment: environment, timeoutSeconds: 10)
        #expect(shown.stdout.hasPrefix("https://\(host):\(port)/?token=\(next)"), "\(shown.stdout)")

        // The Live screen's WebSocket upgrades inside TLS too, for the app's own https origin only.
        if let python = Built.tool("python3") {
            let upgrade = """
                import base64, os, socket, ssl, sys
                context = ssl.create_default_context(cafile=sys.argv[1])
                for origin in ["https://\(host):\(port)", "https://elsewhere.example"]:
                    s = context.wrap_socket(socket.create_connection(("\(host)", \(port))), server_hostname="\(host)")
                    key = base64.b64encode(os.urandom(16)).decode()
                    s.sendall(("GET /api/live/socket HTTP/1.1\\r\\nHost: \(host):\(port)\\r\\nUpgrade: websocket\\r\\n"
                        "Connection: Upgrade\\r\\nSec-WebSocket-Key: " + key + "\\r\\nSec-WebSocket-Version: 13\\r\\n"
                        "Sec-WebSocket-Protocol: ribbit, ribbit-session.\(secret)\\r\\nOrigin: " + origin + "\\r\\n\\r\\n").encode())
                    print(s.recv(100).split(b"\\r\\n")[0].decode())
                """
            let statuses = try Built.run(python, ["-c", upgrade, certificate], timeoutSeconds: 20)
            #expect(statuses.stdout.hasPrefix("HTTP/1.1 101") && statuses.stdout.contains("\nHTTP/1.1 400"), "\(statuses)")
        }

        // The used code pairs nothing more (a wrong code, the first); the new one does, in a
        // browser (the page trades the code; the address bar keeps only the fingerprint).
        #expect(try logIn(code).status == 401)
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let pairingLink = try #require(LANWebApp.links(in: try web.firstLog()).first { LANWebApp.code(in: $0) == next })
        let browser = try DevToolsBrowser(
            chromium: chromium, directory: directory, url: pairingLink, arguments: ["--ignore-certificate-errors"])
        defer { browser.stop() }
        let sessionStatus = #"session.api("/api/session").then((answer) => answer.status)"#
        try browser.wait(for: "typeof session !== 'undefined'")
        #expect(try browser.evaluate(sessionStatus) as? Int == 200)
        #expect(
            try browser.evaluate("location.search + location.hash") as? String == "#sha256="
                + (pairingLink.components(separatedBy: "#sha256=").last ?? ""))
        // The paired browser opens the same, now used, link again: it stays paired, and it is
        // not counted as a wrong code (the count below shows it).
        let latest = try web.waitForNewLink(after: next)
        try browser.call("Page.navigate", ["url": pairingLink])
        try browser.wait(for: "typeof session !== 'undefined'")
        #expect(try browser.evaluate(sessionStatus) as? Int == 200)
        #expect(try browser.evaluate("location.search") as? String == "")

        // Five wrong codes from this user (root; the browser's pairing, root's too, cleared its
        // count): it waits, its next tries refused unchecked, the right code included. Had the
        // browser sent the used code again, the fifth here would already be refused. Another
        // user is not held up by it.
        for _ in 0..<5 { #expect(try logIn("wrong").status == 401) }
        let waiting = try logIn(latest)
        #expect(waiting.status == 429 && waiting.body.contains("wrong pairing codes from user 0"), "\(waiting)")
        #expect(waiting.headers.lowercased().contains("retry-after:"), "\(waiting.headers)")
        #expect(try logIn(latest, as: "nobody").status == 200, "the wearer's code works for another user")
        #expect(try fetch("/api/session", secret: secret).status == 200, "a paired browser stays paired")

        // The certificate is kept: a restart shows the same fingerprint (a phone keeps trusting it).
        let before = try String(contentsOfFile: certificate, encoding: .utf8)
        web.stop()
        let again = try LANWebApp(host: host, port: port, environment: environment, log: directory.appendingPathComponent("web2.log"))
        defer { again.stop() }
        #expect(try String(contentsOfFile: certificate, encoding: .utf8) == before)
        #expect(again.pairingLink.components(separatedBy: "#").last == web.pairingLink.components(separatedBy: "#").last)
    }

    /// Addresses that are no single interface, and names, get one line and exit 64.
    @Test func webRefusesAnAddressItCannotServe() throws {
        let directory = try TestPaths.temporaryDirectory()
        let environment = try DaemonUnderTest.environment(in: directory)
        for (address, says) in [("0.0.0.0:8417", "every address"), ("[::]:8417", "every address"), ("example.org:80", "not an IP address")]
        {
            let result = try Built.run(DaemonUnderTest.binary, ["web", "--listen", address], environment: environment, timeoutSeconds: 10)
            #expect(result.status == 64)
            #expect(result.stderr.contains(says) && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        let bad = try Built.run(
            DaemonUnderTest.binary, ["web", "--listen", "127.0.0.1:http"], environment: environment, timeoutSeconds: 10)
        #expect(bad.status == 64 && bad.stderr.contains("not a port"), "\(bad.stderr)")
    }

    /// The first IPv4 address of an interface that is up and not loopback.
    static func lanAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var inet = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &inet, &text, socklen_t(text.count)) != nil else { continue }
            return String(cString: text)
        }
        return nil
    }
}

/// `ribbitd web --listen HOST:PORT` on a LAN address, stopped by PID; its printed links.
final class LANWebApp {
    let process = ChildProcess()
    let log: URL
    private(set) var pairingLink = ""
    var pairingCode: String { Self.code(in: pairingLink) }

    init(host: String, port: Int, environment: [String: String], log: URL) throws {
        self.log = log
        process.executableURL = DaemonUnderTest.binary
        process.arguments = ["web", "--listen", "\(host):\(port)"]
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = process.standardOutput
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else { throw TestSetupError("ribbitd web exited: \(try firstLog())") }
            if let link = Self.links(in: try firstLog()).first {
                pairingLink = link
                return
            }
            usleep(50_000)
        }
        throw TestSetupError("ribbitd web printed no pairing link within 20 s: \(try firstLog())")
    }

    deinit { stopProcess(process) }
    func stop() { stopProcess(process) }

    func firstLog() throws -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The code of the link printed after the one holding `code`.
    func waitForNewLink(after code: String) throws -> String {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let codes = Self.links(in: try firstLog()).map(Self.code)
            if let index = codes.lastIndex(of: code), index + 1 < codes.count { return codes[index + 1] }
            usleep(50_000)
        }
        throw TestSetupError("no new pairing link after \(code): \(try firstLog())")
    }

    static func links(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            line.range(of: #"https://[0-9.]+:[0-9]+/\?token=[A-Za-z0-9_-]+#sha256=[0-9A-F]{64}"#, options: .regularExpression)
                .map { String(line[$0]) }
        }
    }

    static func code(in link: String) -> String {
        link.components(separatedBy: "?token=").last?.components(separatedBy: "#").first ?? ""
    }
}
