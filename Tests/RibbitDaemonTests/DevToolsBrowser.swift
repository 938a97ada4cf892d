import Foundation
import Glibc
import RibbitTestSupport

/// Headless Chromium driven over its DevTools protocol (a WebSocket on loopback), for what
/// command-line flags cannot do: choose a file in a file input (`DOM.setFileInputFiles`, as a
/// person picking one), press buttons, read the page, screenshot it at a given size. Console
/// messages, script errors and CSP violations are collected in `problems`. Started and stopped
/// by PID.
final class DevToolsBrowser {
    private let process = ChildProcess()
    private var socket: TestWebSocket?
    private var nextID = 0
    /// Console calls, uncaught exceptions and log entries (CSP violations are), in order.
    private(set) var problems = [String]()

    /// `arguments`: more of Chromium's flags (`--ignore-certificate-errors` for a LAN web app's own certificate).
    init(chromium: URL, directory: URL, url: String, arguments: [String] = []) throws {
        let log = directory.appendingPathComponent("devtools-chromium.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = chromium
        process.arguments =
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--user-data-dir=\(directory.appendingPathComponent("devtools-profile").path)",
                "--remote-debugging-port=0", "--window-size=1280,800",
            ] + arguments + [url]
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var port = 0
        let deadline = Date().addingTimeInterval(30)
        while port == 0 {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"ws://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression) {
                port = Int(text[range].dropFirst("ws://127.0.0.1:".count).dropLast()) ?? 0
            }
            guard port == 0 else { break }
            guard process.isRunning, Date() < deadline else { throw TestSetupError("chromium gave no DevTools port: \(text)") }
            usleep(50_000)
        }
        // The page's own socket, from the target list.
        var target: String?
        while target == nil && Date() < deadline {
            let list = try Self.httpGet(port: port, path: "/json/list")
            let targets = (try? JSONSerialization.jsonObject(with: Data(list.utf8))) as? [[String: Any]] ?? []
            target = targets.first { $0["type"] as? String == "page" }?["webSocketDebuggerUrl"] as? String
            if target == nil { usleep(100_000) }
        }
        guard let target, let path = URL(string: target)?.path else { throw TestSetupError("chromium lists no page") }
        socket = try TestWebSocket(port: port, path: path, headers: [:])
        for domain in ["Runtime", "Log", "Page", "DOM"] { _ = try call("\(domain).enable") }
    }

    deinit { stop() }

    /// Closes the page and stops the browser (again is harmless).
    func stop() {
        socket?.close()
        socket = nil
        stopProcess(process)
    }

    /// One DevTools command and its result; events that come first are kept.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        nextID += 1
        let id = nextID
        let message = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params])
        guard let socket else { throw TestSetupError("\(method): the browser was stopped") }
        try socket.send(String(decoding: message, as: UTF8.self))
        while true {
            guard let reply = try socket.nextText(timeoutSeconds: 60) else {
                throw TestSetupError("\(method): DevTools closed or gave no answer in 60 s")
            }
            guard let object = try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else { continue }
            if let got = object["id"] as? Int, got == id {
                if let error = object["error"] { throw TestSetupError("\(method): \(error)") }
                return object["result"] as? [String: Any] ?? [:]
            }
            let params = object["params"] as? [String: Any] ?? [:]
            switch object["method"] as? String {
            case "Runtime.consoleAPICalled":
                let args = (params["args"] as? [[String: Any]] ?? []).map { "\($0["value"] ?? $0["description"] ?? "")" }
                problems.append("console.\(params["type"] ?? ""): \(args.joined(separator: " "))")
            case "Runtime.exceptionThrown": problems.append("exception: \(params["exceptionDetails"] ?? "")")
            case "Log.entryAdded":
                let entry = params["entry"] as? [String: Any] ?? [:]
                let url = entry["url"] as? String ?? ""
                // The browser's own guess at an icon, not the page's doing.
                guard !url.hasSuffix("/favicon.ico") else { break }
                problems.append("log \(entry["level"] ?? ""): \(entry["text"] ?? "") \(url)")
            default: break
            }
        }
    }

    /// A JavaScript expression's value (awaited when it is a promise).
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let details = result["exceptionDetails"] { throw TestSetupError("\(expression): \(details)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Waits until the expression is true.
    func wait(for expression: String, seconds: Double = 30) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while (try? evaluate(expression)) as? Bool != true {
            guard Date() < deadline else {
                throw TestSetupError("the page never got to \(expression) in \(Int(seconds)) s; the page: \(pageState())")
            }
            usleep(100_000)
        }
    }

    /// Where the page is and what it says went wrong (its `#problem` line, console problems),
    /// for a failed wait to name.
    func pageState() -> String {
        let expression = """
            JSON.stringify({url: location.href, ready: document.readyState,
              problem: (document.getElementById("problem") || {}).textContent || null})
            """
        let page = (try? evaluate(expression)) as? String ?? "(the page did not answer)"
        return page + (problems.isEmpty ? "" : "; console: \(problems.suffix(5))")
    }

    /// Waits until the page opened with a personal link has traded its token for a session (the
    /// page keeps it in localStorage), so the next page of the web app is logged in.
    func waitUntilLoggedIn(seconds: Double = 30) throws {
        try wait(for: #"localStorage.getItem("ribbit-session") !== null"#, seconds: seconds)
    }

    /// Chooses a file in the file input matching `selector`, as a person picking it does (the page gets its change event).
    func chooseFile(_ path: String, in selector: String) throws {
        let root = try call("DOM.getDocument")["root"] as? [String: Any]
        let node = try call("DOM.querySelector", ["nodeId": root?["nodeId"] ?? 0, "selector": selector])["nodeId"] as? Int ?? 0
        guard node != 0 else { throw TestSetupError("no \(selector) on the page") }
        try call("DOM.setFileInputFiles", ["files": [path], "nodeId": node])
    }

    /// The viewport at `width` x `height` CSS px, as a PNG.
    func screenshot(width: Int, height: Int) throws -> Data {
        try call("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
        usleep(300_000)
        let data = try call("Page.captureScreenshot", ["format": "png"])["data"] as? String ?? ""
        guard let png = Data(base64Encoded: data) else { throw TestSetupError("no screenshot") }
        return png
    }

    private static func httpGet(port: Int, path: String) throws -> String {
        let fd = try TestWebSocket.connectLoopback(port: port)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        guard write(fd, request, request.count) == request.count else { throw TestSetupError("write failed") }
        // Chromium keeps the connection open: read the head, then Content-Length bytes.
        var reply = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let text = String(decoding: reply, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound].lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                let body = Array(reply[(text[..<end.upperBound].utf8.count)...])
                if body.count >= length { return String(decoding: body, as: UTF8.self) }
            }
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { throw TestSetupError("DevTools: no whole answer to GET \(path): \(String(decoding: reply, as: UTF8.self))") }
            reply += buffer[0..<count]
        }
    }
}
