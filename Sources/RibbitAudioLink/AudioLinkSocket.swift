import RibbitSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One end of the daemon <-> audio process link: non-blocking, with an outgoing queue so
/// neither side ever waits on the other. Both ends are on threads that may wait (never the
/// RT thread).
public final class AudioLinkSocket {
    public let fd: Int32
    private var incoming: [UInt8] = []
    private var outgoing: [UInt8] = []
    /// Where `receive` reads into (kept, not allocated per call).
    private var chunk = [UInt8](repeating: 0, count: 65536)
    /// Set when the other end closed or sent something malformed.
    public private(set) var isClosed = false

    /// Bytes queued for sending beyond which `send(_:droppable:)` drops droppable messages.
    public static let queueLimitBytes = 4 << 20

    public init(fd: Int32) {
        self.fd = fd
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    deinit { close(fd) }

    /// A connected pair (the daemon's end and the audio process's), close-on-exec.
    public static func pair() -> (Int32, Int32)? {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    /// Queues a message and sends what the socket takes now. A droppable message (dump
    /// samples) is dropped when the queue is long; returns false then.
    @discardableResult
    public func send(_ message: AudioMessage, droppable: Bool = false) -> Bool {
        guard !isClosed else { return false }
        if droppable, outgoing.count > Self.queueLimitBytes { return false }
        outgoing.append(contentsOf: message.encoded())
        flush()
        return true
    }

    /// Sends what is queued, as far as the socket takes it.
    public func flush() {
        while !outgoing.isEmpty, !isClosed {
            let sent = Syscall.retrying { outgoing.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            if sent > 0 {
                outgoing.removeFirst(sent)
            } else {
                if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK { isClosed = true }
                return
            }
        }
    }

    public var hasQueuedOutput: Bool { !outgoing.isEmpty }

    /// Every complete message that arrived; marks the link closed at end of file or on garbage.
    public func receive() -> [AudioMessage] {
        while !isClosed {
            let count = Syscall.retrying { chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }
            if count > 0 {
                incoming.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                isClosed = true
            } else {
                if errno != EAGAIN, errno != EWOULDBLOCK { isClosed = true }
                break
            }
        }
        guard let messages = AudioMessage.decode(from: &incoming) else {
            isClosed = true
            return []
        }
        return messages
    }

    /// Waits up to `milliseconds` for something to read (or room to write, when output is queued).
    public func wait(milliseconds: Int32) {
        var entry = pollfd(fd: fd, events: Int16(POLLIN) | (outgoing.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
        _ = poll(&entry, 1, milliseconds)
    }
}
