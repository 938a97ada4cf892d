import Foundation
import Glibc

/// Where the daemon's files live, by the XDG base directory specification.
public struct RibbitPaths: Sendable {
    public let environment: [String: String]
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) { self.environment = environment }

    private var home: String { environment["HOME"] ?? NSHomeDirectory() }

    /// `$XDG_RUNTIME_DIR/ribbit`; without XDG_RUNTIME_DIR (no login session), `/tmp/ribbit-UID`.
    public var runtimeDirectory: String {
        if let dir = environment["XDG_RUNTIME_DIR"], !dir.isEmpty { return dir + "/ribbit" }
        return "/tmp/ribbit-\(getuid())"
    }
    public var socketPath: String { runtimeDirectory + "/ribbitd.sock" }
    /// `$XDG_STATE_HOME/ribbit` (default ~/.local/state/ribbit): the active prescription.
    public var stateDirectory: String { directory("XDG_STATE_HOME", default: ".local/state") + "/ribbit" }
    /// `$XDG_CONFIG_HOME/ribbit` (default ~/.config/ribbit): ribbitd.conf and trusted/ keys.
    public var configDirectory: String { directory("XDG_CONFIG_HOME", default: ".config") + "/ribbit" }
    public var configFile: String { configDirectory + "/ribbitd.conf" }
    public var trustedKeysDirectory: String { configDirectory + "/trusted" }
    /// `$XDG_DATA_HOME/ribbit` (default ~/.local/share/ribbit): the prescription history.
    public var dataDirectory: String { directory("XDG_DATA_HOME", default: ".local/share") + "/ribbit" }
    public var storePath: String { dataDirectory + "/ribbit.sqlite" }

    private func directory(_ variable: String, default relative: String) -> String {
        if let dir = environment[variable], dir.hasPrefix("/") { return dir }
        return home + "/" + relative
    }
}

public enum ControlClientError: Error, CustomStringConvertible {
    case notRunning(socket: String)
    case refused(String)
    case failed(String)

    public var description: String {
        switch self {
        case .notRunning(let socket):
            "the ribbit daemon is not running (nothing listens on \(socket)); start it with `ribbitd run` or `systemctl --user start ribbitd`"
        case .refused(let message): message
        case .failed(let message): message
        }
    }
}

/// Sends one request and reads one reply.
public enum ControlClient {
    public static func send(
        _ request: ControlRequest, socketPath: String, timeoutSeconds: Double = 10
    ) throws(ControlClientError) -> ControlReply {
        let fd: Int32
        do {
            fd = try UnixSocket.connect(to: socketPath)
        } catch {
            switch error.code {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw .notRunning(socket: socketPath)
            case EACCES, EPERM:
                throw .refused("permission denied on \(socketPath): the daemon there belongs to another user")
            default: throw .failed(error.description)
            }
        }
        defer { close(fd) }
        UnixSocket.setTimeout(fd, seconds: timeoutSeconds)
        guard UnixSocket.writeAll(fd, ControlProtocol.encode(request)) else {
            throw .failed("the daemon closed the connection before reading the request")
        }
        var reply = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(0x0A) {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw .failed("the daemon did not answer within \(Int(timeoutSeconds)) s; see `journalctl --user -u ribbitd`")
            }
            guard n > 0 else { break }
            reply.append(contentsOf: buffer[0..<n])
        }
        guard let end = reply.firstIndex(of: 0x0A) else {
            throw .failed("the daemon closed the connection without a reply")
        }
        do {
            return try JSONDecoder().decode(ControlReply.self, from: reply[..<end])
        } catch {
            throw .failed("the daemon's reply is not valid JSON; is the daemon the same version as this client?")
        }
    }
}
