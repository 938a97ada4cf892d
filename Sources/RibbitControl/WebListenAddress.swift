/// Where `ribbitd web` listens: `HOST:PORT`, loopback only until pairing exists. Checked by
/// `ribbitd web` (so the error comes before the exec) and again by `ribbit-web` itself.
public struct WebListenAddress: Equatable, Sendable, CustomStringConvertible {
    /// The port the web app uses when none is given (unassigned by IANA, unlikely to collide).
    public static let defaultPort = 8417
    public static let `default` = WebListenAddress(host: "127.0.0.1", port: defaultPort)

    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The URL a browser on this machine opens.
    public var url: String { "http://\(description)/" }

    /// Parses `127.0.0.1:8417`, `localhost:8417`, `[::1]:8417`; the error is one line for the user.
    public static func parse(_ text: String) throws(WebListenAddressError) -> WebListenAddress {
        var host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw WebListenAddressError("\"\(text)\" is not ADDRESS:PORT (an IPv6 address goes in brackets: [::1]:\(defaultPort))")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw WebListenAddressError("\"\(text)\" is not ADDRESS:PORT, such as 127.0.0.1:\(defaultPort)")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw WebListenAddressError("\"\(portText)\" is not a port: give a number from 1 to 65535, such as \(defaultPort)")
        }
        if host == "localhost" { host = "127.0.0.1" }
        guard isLoopback(String(host)) else {
            throw WebListenAddressError(
                "\(host) is not a loopback address: the web app listens on this machine only (127.0.0.1, ::1) until pairing is built")
        }
        return WebListenAddress(host: String(host), port: port)
    }

    /// 127.0.0.0/8 or ::1.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ part in UInt8(part).map { String($0) == part } ?? false }) else { return false }
        return parts[0] == "127"
    }
}

public struct WebListenAddressError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
