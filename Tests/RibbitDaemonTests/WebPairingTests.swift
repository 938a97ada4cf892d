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

        func get(_ path: String, cookie: String? = nil) throws -> (status: Int, headers: String, body: String) {
            var arguments = ["-sS", "--max-time", "10", "--cacert", certificate, "-D", "-", "https://\(host):\(port)\(path)"]
            if let cookie { arguments += ["-H", "Cookie: \(cookie)"] }
            let result = try Built.run(curl, arguments, timeoutSeconds: 15)
            let parts = result.stdout.components(separatedBy: "\r\n\r\n")
            let status = Int(parts.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            return (status, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n") + result.stderr)
        }

        // The certificate verifies for the address (curl checks the name); no session: 401.
        #expect(try get("/api/status").status == 401)
        // Plain HTTP gets no page.
        let plain = try Built.run(curl, ["-sS", "--max-time", "5", "http://\(host):\(port)/"], timeoutSeconds: 10)
        #expect(plain.status != 0 || !plain.stdout.contains("ribbit"), "\(plain.stdout)")

        // The code pairs one browser: a Secure session cookie; a new link replaces it at once.
        let code = web.pairingCode
        let paired = try get("/?token=\(code)")
        #expect(paired.status == 303, "\(paired)")
        let setCookie = try #require(
            paired.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }, "\(paired.headers)")
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Secure"))
        let cookie = String(setCookie.dropFirst("set-cookie:".count).split(separator: ";")[0]).trimmingCharacters(in: .whitespaces)
        #expect(try get("/", cookie: cookie).status == 200)
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
                        "Cookie: \(cookie)\\r\\nOrigin: " + origin + "\\r\\n\\r\\n").encode())
                    print(s.recv(100).split(b"\\r\\n")[0].decode())
                """
            let statuses = try Built.run(python, ["-c", upgrade, certificate], timeoutSeconds: 20)
            #expect(statuses.stdout.hasPrefix("HTTP/1.1 101") && statuses.stdout.contains("\nHTTP/1.1 400"), "\(statuses)")
        }

        // The used code pairs nothing more; the new one does. A paired browser opening the old
        // link again is let in without it counting as a wrong code (the count below shows it).
        #expect(try get("/?token=\(code)", cookie: cookie).status == 303)
        #expect(try get("/?token=\(code)").status == 401)
        #expect(try get("/?token=\(next)").status == 303)

        // Five wrong codes (the used one above was the first) lock pairing out, the right one
        // included, until a restart.
        let latest = try web.waitForNewLink(after: next)
        for _ in 0..<3 { #expect(try get("/?token=wrong").status == 401) }
        let locked = try get("/?token=wrong")
        #expect(locked.status == 429 && locked.body.contains("wrong pairing codes"), "\(locked)")
        #expect(try get("/?token=\(latest)").status == 429)
        #expect(try get("/", cookie: cookie).status == 200, "a paired browser stays paired")

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
    let process = Process()
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
        let deadline = Date().addingTimeInterval(5)
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
