import Foundation
import Glibc
import RibbitSystem

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
        let fd = try connect(socketPath: socketPath)
        defer { close(fd) }
        return try ask(fd, request, timeoutSeconds: timeoutSeconds, reader: LineReader(fd: fd))
    }

    /// A connection to the daemon's socket; the caller closes it. Before a byte is sent, the
    /// socket's directory must be this user's, mode 0700, and the process listening must run as
    /// this user (SO_PEERCRED): whoever else made the path gets no prescription and cannot
    /// answer in the daemon's name.
    public static func connect(socketPath: String) throws(ControlClientError) -> Int32 {
        let directory = (socketPath as NSString).deletingLastPathComponent
        var info = stat()
        if lstat(directory, &info) != 0 {
            switch errno {
            case ENOENT, ENOTDIR: throw .notRunning(socket: socketPath)
            default:
                throw .refused(
                    "cannot inspect \(directory) (\(String(cString: strerror(errno)))): the daemon there belongs to another user")
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw .refused(
                "\(directory) belongs to another user or is open to others (owner uid \(info.st_uid), mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "nothing was sent. Remove it, or set XDG_RUNTIME_DIR to a private directory")
        }
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
        guard let peer = UnixSocket.peerUID(fd), peer == getuid() else {
            close(fd)
            throw .refused("the process listening on \(socketPath) belongs to another user; nothing was sent")
        }
        return fd
    }

    /// Writes one request on `fd` and reads its reply through `reader`.
    public static func ask(
        _ fd: Int32, _ request: ControlRequest, timeoutSeconds: Double, reader: LineReader
    ) throws(ControlClientError) -> ControlReply {
        UnixSocket.setTimeout(fd, seconds: timeoutSeconds)
        guard UnixSocket.writeAll(fd, ControlProtocol.encode(request)) else {
            throw .failed("the daemon closed the connection before reading the request")
        }
        let line: Data
        switch reader.next(timeoutSeconds: timeoutSeconds) {
        case .line(let data): line = data
        case .timedOut: throw .failed("the daemon did not answer within \(Int(timeoutSeconds)) s; see `journalctl --user -u ribbitd`")
        case .closed: throw .failed("the daemon closed the connection without a reply")
        }
        do {
            return try JSONDecoder().decode(ControlReply.self, from: line)
        } catch {
            throw .failed("the daemon's reply is not valid JSON; is the daemon the same version as this client?")
        }
    }
}

/// Reads newline-terminated lines from a socket, waiting at most a given time for each.
public final class LineReader {
    public enum Result: Equatable {
        case line(Data)
        case timedOut
        /// The peer closed the connection (or it failed).
        case closed
    }

    private let fd: Int32
    private var buffer = Data()
    /// How much of `buffer` is known to hold no newline (a long line is not scanned again).
    private var scanned = 0

    public init(fd: Int32) { self.fd = fd }

    /// The next line without its newline; waits up to `timeoutSeconds` for it to complete.
    public func next(timeoutSeconds: Double) -> Result {
        let deadline = MonotonicClock.seconds() + timeoutSeconds
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = buffer[(buffer.startIndex + scanned)...].firstIndex(of: 0x0A) {
                let line = Data(buffer[buffer.startIndex..<newline])
                buffer = Data(buffer[(newline + 1)...])
                scanned = 0
                return .line(line)
            }
            scanned = buffer.count
            let left = deadline - MonotonicClock.seconds()
            guard left > 0 else { return .timedOut }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // Not Syscall.retrying: after a signal the time left is worked out again.
            let ready = poll(&entry, 1, Int32((left * 1000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return ready == 0 ? .timedOut : .closed }
            let n = Syscall.retrying { read(fd, &chunk, chunk.count) }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            guard n > 0 else { return .closed }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

}

/// CLOCK_MONOTONIC in seconds: for deadlines and intervals that a change of the wall clock must
/// not move (the daemon's loop, the clients' timeouts).
public enum MonotonicClock {
    public static func seconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
