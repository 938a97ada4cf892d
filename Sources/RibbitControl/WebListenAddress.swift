import Glibc

/// Where `ribbitd web` listens: `HOST:PORT`. Loopback serves plain HTTP to this machine; any
/// other address serves HTTPS to browsers that pair. Checked by `ribbitd web` (so the error
/// comes before the exec) and again by `ribbit-web` itself.
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

    /// Whether only this machine can connect (plain HTTP, a reusable token); otherwise HTTPS and
    /// one-time pairing codes.
    public var isLoopback: Bool { Self.isLoopback(host) }

    /// The URL a browser opens.
    public var url: String { "\(isLoopback ? "http" : "https")://\(description)/" }

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
        guard !["0.0.0.0", "::", "0:0:0:0:0:0:0:0"].contains(host) else {
            throw WebListenAddressError(
                "\(host) is every address: give the one a phone will open, this machine's LAN address (`ip -brief address`)")
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, String(host), &v4) == 1 || inet_pton(AF_INET6, String(host), &v6) == 1 else {
            throw WebListenAddressError(
                "\(host) is not an IP address: give 127.0.0.1 for this machine or its LAN address (`ip -brief address`)")
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
