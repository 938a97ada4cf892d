import Foundation
import Glibc
import RibbitMonitor
import RibbitTestSupport
import Testing

/// The Live screen: a real daemon on a private jackd playing a 1 kHz tone, `ribbitd web`, its
/// WebSocket read by URLSessionWebSocketTask and by headless Chromium.
extension WebDaemonTests {
    /// With the session and the app's own Origin: 10 or more frames a second whose levels
    /// are the tone's; without the session, or from another origin, no upgrade; Save's CSV has
    /// the CLI's header and a row per frame and ear, its SVG every series.
    @Test func webLiveStreamsFramesOverAWebSocketToItsOwnPagesOnly() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        // Plays past the last frame read, however slowly the web app starts on a loaded machine.
        let probe = try Probe(server: server, signal: "sine:1000", levelDBFS: -40, seconds: 60)
        defer { probe.cancel() }
        try probe.waitUntilPlaying()
        let web = try WebAppUnderTest(daemon: daemon)
        #expect(try web.logIn().status == 200)
        let origin = "http://127.0.0.1:\(web.port)"

        // The upgrade itself: refused without the session, from a foreign or no Origin, and as plain GET.
        func upgrade(session: String?, origin: String?, protocols: String? = nil) throws -> String {
            var head = "GET /api/live/socket HTTP/1.1\r\nHost: 127.0.0.1:\(web.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            head += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            if let session { head += "X-Ribbit-Session: \(session)\r\n" }
            if let protocols { head += "Sec-WebSocket-Protocol: \(protocols)\r\n" }
            if let origin { head += "Origin: \(origin)\r\n" }
            return try web.rawHead(head + "\r\n")
        }
        func expectStatus(_ status: Int, _ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let statusLine = line.components(separatedBy: "\r\n").first ?? ""
            #expect(statusLine.contains(" \(status) "), "\(line)", sourceLocation: sourceLocation)
        }
        let secret = try #require(web.session)
        try expectStatus(101, upgrade(session: secret, origin: origin))
        // As a browser's WebSocket sends it: the secret in the protocol list; the answer names `ribbit`.
        let asBrowsers = try upgrade(session: nil, origin: origin, protocols: "ribbit, ribbit-session.\(secret)")
        expectStatus(101, asBrowsers)
        #expect(asBrowsers.lowercased().contains("\r\nsec-websocket-protocol: ribbit\r\n"), "\(asBrowsers)")
        try expectStatus(400, upgrade(session: nil, origin: origin))
        try expectStatus(
            400, upgrade(session: nil, origin: origin, protocols: "ribbit, ribbit-session.\(String(repeating: "A", count: 43))"))
        try expectStatus(400, upgrade(session: secret, origin: "http://evil.example"))
        try expectStatus(400, upgrade(session: secret, origin: "http://127.0.0.1:\(web.port + 1)"))
        try expectStatus(400, upgrade(session: secret, origin: nil))
        #expect(try web.request("GET", "/api/live/socket").status == 400)
        #expect(try web.request("GET", "/api/live/recording.csv", withSession: false).status == 401)

        // A WebSocket client with the session (this machine's libcurl has no WebSocket, so
        // URLSessionWebSocketTask cannot): frames for 2.5 s, counted over one second of them.
        let socket = try TestWebSocket(port: web.port, path: "/api/live/socket", headers: ["X-Ribbit-Session": secret, "Origin": origin])
        var messages: [(at: Double, text: String)] = []
        let start = MonotonicSeconds.now()
        while MonotonicSeconds.now() - start < 2.5 {
            guard let text = try socket.nextText(timeoutSeconds: 3) else {
                Issue.record("the WebSocket closed or sent nothing within 3 s")
                break
            }
            messages.append((MonotonicSeconds.now(), text))
        }
        socket.close()
        let frames = messages.filter { !$0.text.contains("\"problem\"") }
        #expect(frames.count == messages.count, "problems: \(messages.filter { $0.text.contains("\"problem\"") }.map(\.text))")
        let firstFrame = try #require(frames.first?.at)
        // The rate over the last 2 s (the first frames may come in a burst); 20 is the daemon's.
        let window = frames.filter { $0.at > firstFrame + 0.5 }
        let rate = Double(window.count - 1) / max((window.last?.at ?? 0) - (window.first?.at ?? 0), 0.001)
        #expect(rate >= 10, "\(rate) frames a second")
        let bytes = frames.map(\.text.utf8.count)
        print(
            "ribbit-web live: \(String(format: "%.1f", rate)) frames a second over the WebSocket, \(bytes.reduce(0, +) / max(bytes.count, 1)) B a frame"
        )
        let lastText = try #require(frames.last?.text)
        let last = try #require(try JSONSerialization.jsonObject(with: Data(lastText.utf8)) as? [String: Any])
        let bands = try #require(last["bandsHz"] as? [Double])
        let band = try #require(bands.firstIndex(of: 1000))
        let ears = try #require(last["ears"] as? [String: [String: Any]])
        #expect(Set(ears.keys) == ["left", "right"])
        for (name, ear) in ears {
            let inputRMS = try #require(ear["inputRMS"] as? Double), outputRMS = try #require(ear["outputRMS"] as? Double)
            let input = try #require(ear["input"] as? [Double]), output = try #require(ear["output"] as? [Double])
            let target = try #require((ear["targetGain"] as? [Any])?[band] as? Double)
            #expect(abs(inputRMS + 40) < 1 && abs(input[band] + 40) < 1.5, "\(name): input \(inputRMS) dBFS")
            #expect(abs(output[band] - input[band] - target) <= 1.5, "\(name): \(output[band] - input[band]) dB, target \(target)")
            #expect(outputRMS > inputRMS)
            #expect(ear["inputSPLOffset"] is Double && ear["outputSPLOffset"] is Double)
        }
        #expect(last["calibration"] is String)

        // Save: the CLI's CSV (the same header, a row per frame and ear) and SVG (every series).
        let csv = try web.request("GET", "/api/live/recording.csv")
        #expect(csv.status == 200 && csv.headers["content-disposition"]?.contains("ribbit-live.csv") == true)
        let rows = String(decoding: csv.body, as: UTF8.self).split(separator: "\n")
        let header = try #require(rows.first).split(separator: ",", omittingEmptySubsequences: false)
        #expect(header.prefix(4) == ["time_s", "ear", "output", "input_rms_dbfs"] && header.count == 9 + 3 * bands.count)
        #expect(rows.count >= 1 + 2 * 30 && (rows.count - 1) % 2 == 0, "\(rows.count) rows")
        for (index, row) in rows.dropFirst().enumerated() {
            let fields = row.split(separator: ",", omittingEmptySubsequences: false)
            #expect(fields.count == header.count && Double(fields[0]) != nil && ["left", "right"].contains(fields[1]), "\(row)")
            // The last second's: the tone (the first frames may be from before the probe played).
            if index >= rows.count - 1 - 40 { #expect(Double(fields[3]).map { abs($0 + 40) < 1.5 } == true, "\(row)") }
        }
        let svgAnswer = try web.request("GET", "/api/live/recording.svg")
        #expect(svgAnswer.status == 200 && svgAnswer.headers["content-type"] == "image/svg+xml")
        let svgFile = web.directory.appendingPathComponent("live.svg")
        try svgAnswer.body.write(to: svgFile)
        let ids = try SVGContents(svgFile.path)
        for ear in ["left", "right"] {
            for series in ["input-spectrum", "output-spectrum", "target-gain", "applied-gain", "measured-gain"] {
                #expect(ids.ids.contains("\(ear)-\(series)"), "\(ear)-\(series) missing from the SVG")
            }
        }
        #expect(try web.request("GET", "/api/live/recording.wav").status == 404)

        // The daemon stops: the open socket says so in one line instead of going quiet.
        let watching = try TestWebSocket(port: web.port, path: "/api/live/socket", headers: ["X-Ribbit-Session": secret, "Origin": origin])
        _ = try daemon.stop()
        var problem: String?
        let stopped = MonotonicSeconds.now()
        while problem == nil, MonotonicSeconds.now() - stopped < 5, let text = try watching.nextText(timeoutSeconds: 5) {
            if text.contains("\"problem\"") { problem = text }
        }
        #expect(problem?.contains("daemon") == true, "\(problem ?? "no problem reported")")
    }

    /// Headless Chromium streams /live in real time (driven over the DevTools protocol: --dump-dom
    /// and --screenshot run on virtual time, which outruns a WebSocket): the status line counts
    /// frames, the bars and the summary are drawn, no console message; while the laptop-sized
    /// one streams for 20 s, ribbit-web's CPU and memory are measured. RIBBIT_WEB_SCREENSHOTS=DIR
    /// keeps the screenshots (the README's docs/images/web-live-*.png).
    @Test func webLiveScreenDrawsInAHeadlessBrowser() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is not installed (make dev-deps)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let probe = try Probe(server: server, signal: "noise", levelDBFS: -30, seconds: 60)
        defer { probe.cancel() }
        let web = try WebAppUnderTest(daemon: daemon)
        #expect(try web.logIn().status == 200)
        let idle = try ProcessFigures(pid: web.process.processIdentifier)
        let link = web.personalURL.replacingOccurrences(of: "/?token=", with: "/live?token=")
        let keep = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }

        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            let directory = web.directory.appendingPathComponent(label)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let browser = try DevToolsBrowser(chromium: chromium, directory: directory, url: link)
            defer { browser.stop() }
            try browser.call(
                "Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
            func text(_ expression: String) throws -> String { try browser.evaluate(expression) as? String ?? "" }
            try browser.wait(for: "frames >= 20 && document.querySelector('.target') !== null", seconds: 30)
            let dom = try text("document.documentElement.outerHTML")
            let counted = dom.range(of: #"Live: [0-9]+ frames"#, options: .regularExpression).map { String(dom[$0]) }
            let count = Int(counted?.split(separator: " ")[1] ?? "") ?? 0
            #expect(count >= 20, "\(label): the status line: \(counted ?? dom)")
            #expect(dom.contains(#"<a href="/clinic" aria-current="true">Clinic</a>"#))
            #expect(dom.contains(#"class="target""#) && dom.contains("Level (dB SPL)"), "\(label): the chart was not drawn")
            #expect(dom.contains("Right ear: input ") && dom.contains(" dB SPL, output "), "\(label): no summary")
            let png = try browser.screenshot(width: width, height: height)
            let size = [16, 20].map { offset in png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
            #expect(size == [width, height], "\(label) screenshot is \(size)")
            if let keep {
                try? FileManager.default.createDirectory(at: keep, withIntermediateDirectories: true)
                try png.write(to: keep.appendingPathComponent("web-live-\(label).png"))
            }
            // The SpeechMap: the playing prescription's thresholds in dB SPL (its dB HL plus the
            // reference its UCLs convert with), drawn where the chart puts that level.
            try browser.wait(for: "window.liveSpeechMap.right !== undefined && window.liveSpeechMap.left !== undefined")
            let map = try #require(try JSONSerialization.jsonObject(with: web.request("GET", "/api/speechmap").body) as? [String: Any])
            let playing = try #require(try daemon.status().prescription?.id)
            let shown = try #require(
                try JSONSerialization.jsonObject(with: Data(daemon.ribbitd(["show", String(playing), "--json"]).stdout.utf8))
                    as? [String: Any])
            let rx = try #require(shown["prescription"] as? [String: Any])
            // The prescription names no headphones: a TDH-39's RETSPL (ANSI S3.6 / ISO 389-1, NBS 9-A coupler).
            #expect((map["reference"] as? String)?.contains("TDH-39") == true, "\(map)")
            let tdh39: [String: Double] = [
                "125": 45.0, "250": 25.5, "500": 11.5, "750": 8.0, "1000": 7.0, "1500": 6.5, "2000": 9.0, "3000": 10.0, "4000": 9.5,
                "6000": 15.5, "8000": 13.0,
            ]
            for ear in ["right", "left"] {
                let levels = try #require(((rx["ears"] as? [String: Any])?[ear] as? [String: Any])?["thresholdsDBHL"] as? [String: Int])
                let splJSON = try #require(((map["ears"] as? [String: Any])?[ear] as? [String: Any])?["thresholdsDBSPL"] as? [String: Any])
                let spl = splJSON.mapValues { ($0 as? NSNumber)?.doubleValue ?? .nan }
                #expect(Set(spl.keys) == Set(levels.keys), "\(ear): \(spl) against \(levels)")
                for (hz, hl) in levels {
                    let expected = Double(hl) + (tdh39[hz] ?? .nan)
                    #expect(abs((spl[hz] ?? .nan) - expected) <= 0.05, "\(ear) \(hz) Hz: \(spl[hz] ?? .nan) dB SPL, \(hl) dB HL")
                }
                // Each band's output limit, as `show --json` gives the band's.
                let bands = try #require(((rx["ears"] as? [String: Any])?[ear] as? [String: Any])?["bands"] as? [[String: Any]])
                let limits = try #require(((map["ears"] as? [String: Any])?[ear] as? [String: Any])?["limits"] as? [[String: Any]])
                #expect(
                    limits.map { ($0["dBSPL"] as? NSNumber)?.doubleValue ?? .nan }
                        == bands.map { ($0["limitDBSPL"] as? NSNumber)?.doubleValue ?? 0 },
                    "\(ear): \(limits) against \(bands)")
                let drawn = try text("JSON.stringify(window.liveSpeechMap.\(ear).thresholds)")
                let points = try #require(try JSONSerialization.jsonObject(with: Data(drawn.utf8)) as? [[Any]]).map { point in
                    point.map { ($0 as? NSNumber)?.doubleValue ?? .nan }
                }
                #expect(points.count == levels.count, "\(ear): \(points)")
                for point in points {
                    // The chart: 0 to 120 dB SPL from y 270 up to y 12.
                    let expected = 270 - (spl[String(Int(point[0]))] ?? .nan) / 120 * 258
                    #expect(abs(point[2] - expected) < 0.5, "\(ear): \(point) drawn at y \(point[2]), not \(expected)")
                }
            }
            if label == "laptop" {
                // One browser streams for 20 s: ribbit-web's CPU (utime + stime) and RSS.
                let pid = web.process.processIdentifier  // `ribbitd web` execs ribbit-web: the same process
                let before = try ProcessFigures(pid: pid)
                let framesBefore = try text("String(frames)")
                sleep(20)
                let after = try ProcessFigures(pid: pid)
                let frames = (Double(try text("String(frames)")) ?? 0) - (Double(framesBefore) ?? 0)
                let cpu = (after.cpuSeconds - before.cpuSeconds) / (after.at - before.at) * 100
                let weights = ["/live", "/common.js", "/live.js", "/app.css"].map { (try? web.request("GET", $0).body.count) ?? 0 }
                print(
                    "ribbit-web live, one browser streaming 20 s: \(String(format: "%.1f", frames / (after.at - before.at))) frames a second drawn, "
                        + "\(String(format: "%.1f", cpu)) % of a core, RSS \(before.rssKB) -> \(after.rssKB) kB; page weight \(weights.reduce(0, +)) B "
                        + "(/live \(weights[0]), /common.js \(weights[1]), /live.js \(weights[2]), /app.css \(weights[3]))")
                #expect(frames / (after.at - before.at) >= 10)
                #expect(cpu < 50 && after.rssKB < 200_000)

                // Hidden (the page sees visibilitychange with document.hidden): the socket closes and
                // with it the web app's dump connection; shown again, both come back.
                #expect(try daemon.status().dumpListeners == 1)
                func show(_ visible: Bool) throws {
                    _ = try text(
                        "Object.defineProperty(document, 'hidden', { value: \(!visible), configurable: true }); "
                            + "document.dispatchEvent(new Event('visibilitychange')); 'ok'")
                }
                func listenersBecome(_ count: Int) throws -> Bool { try daemon.wait(until: { ($0.dumpListeners ?? 0) == count }) }
                try show(false)
                #expect(try listenersBecome(0), "the daemon still sends frames while the tab is hidden")
                #expect(try text("document.getElementById('live-status').textContent").hasPrefix("Paused"))
                try show(true)
                #expect(try listenersBecome(1), "the live view did not resume")
                browser.stop()
                #expect(try listenersBecome(0), "the dump connection outlived the browser")
                usleep(500_000)
                let left = try ProcessFigures(pid: pid)
                let parts =
                    (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?.split(separator: "\n").filter {
                        $0.hasPrefix("Rss")
                    } ?? []
                print(
                    "ribbit-web RSS: idle \(idle.rssKB) kB, streaming \(after.rssKB) kB, after the last client left \(left.rssKB) kB (\(parts.joined(separator: ", ")))"
                )
            }
            #expect(browser.problems.isEmpty, "\(label): the page wrote to the console: \(browser.problems)")
            browser.stop()
        }
    }
}

/// CLOCK_MONOTONIC seconds, for the test's own timing.
enum MonotonicSeconds {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// A process's CPU time and resident memory, from /proc/PID/stat and /proc/PID/status.
struct ProcessFigures {
    let at: Double
    let cpuSeconds: Double
    let rssKB: Int

    init(pid: Int32) throws {
        at = MonotonicSeconds.now()
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the ")" that ends the command name: state is field 3, utime and stime 14 and 15.
        let fields = (stat.split(separator: ")").last ?? "").split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        cpuSeconds = (Double(fields[11]) ?? 0) / ticks + (Double(fields[12]) ?? 0) / ticks
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        rssKB = Int(rss.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}

/// The smallest WebSocket client (RFC 6455) the tests need, on a plain TCP socket: the
/// handshake, masked text messages out, the server's text messages in (fragments joined).
final class TestWebSocket {
    private var fd: Int32
    private var buffer = [UInt8]()

    init(port: Int, path: String, headers: [String: String]) throws {
        fd = try Self.connectLoopback(port: port)
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        head += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let bytes = Array((head + "\r\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw TestSetupError("write failed") }
        while true {
            if let end = Self.find([13, 10, 13, 10], in: buffer) {
                let status = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
                buffer.removeFirst(end + 4)
                guard status.contains(" 101 ") else { throw TestSetupError("no upgrade: \(status)") }
                return
            }
            guard try fill(timeoutSeconds: 5) else { throw TestSetupError("no handshake answer") }
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends a text message, masked as a client must.
    func send(_ text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $1 ^ mask[$0 % 4] }
        var offset = 0
        while offset < frame.count {  // a large message (a script for DevTools) may take several writes
            let count = frame[offset...].withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { throw TestSetupError("WebSocket write failed") }
            offset += count
        }
    }

    /// The next text message (its fragments joined); nil when the server closes or nothing comes
    /// in time.
    func nextText(timeoutSeconds: Double) throws -> String? {
        let deadline = MonotonicSeconds.now() + timeoutSeconds
        var message = [UInt8]()
        while true {
            if buffer.count >= 2 {
                let (final, opcode) = (buffer[0] & 0x80 != 0, buffer[0] & 0x0F)
                var length = Int(buffer[1] & 0x7F), offset = 2
                if length == 126, buffer.count >= 4 {
                    length = Int(buffer[2]) << 8 | Int(buffer[3])
                    offset = 4
                } else if length == 127, buffer.count >= 10 {
                    length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    offset = 10
                }
                if length < 126 || offset > 2, buffer.count >= offset + length {
                    let payload = buffer[offset..<offset + length]
                    defer { buffer.removeFirst(offset + length) }
                    switch opcode {
                    case 0x0, 0x1:
                        message += payload
                        if final { return String(decoding: message, as: UTF8.self) }
                    case 0x8: return nil
                    default: break  // ping, pong
                    }
                    continue
                }
            }
            let left = deadline - MonotonicSeconds.now()
            guard left > 0, try fill(timeoutSeconds: left) else { return nil }
        }
    }

    /// A TCP connection to 127.0.0.1:`port`.
    static func connectLoopback(port: Int) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            let problem = String(cString: strerror(errno))
            Glibc.close(fd)
            throw TestSetupError("connect to 127.0.0.1:\(port): \(problem)")
        }
        return fd
    }

    private func fill(timeoutSeconds: Double) throws -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, Int32(timeoutSeconds * 1000)) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        return true
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }
}
