import Foundation
import Glibc
import RibbitSystem

/// The daemon's side of the control socket, driven by the daemon's poll loop on one thread.
///
/// Every socket is non-blocking, so a client that sends half a request, never reads, or
/// floods cannot stall the daemon or other clients: a request over 64 KiB, a request line not
/// complete `partialRequestTimeout` after its first byte (however slowly bytes trickle in), a
/// connection silent for `idleTimeout`, or a reply that would block closes that connection.
/// With every slot taken, a new connection still gets in: the one whose partial request is
/// oldest (else the longest silent) makes room. Peers with another uid are refused at accept
/// (SO_PEERCRED).
///
/// A connection may hold a lease (`hold`): what its request started (a pause, a hearing test,
/// a live measurement) lasts while it stays open. Holders are exempt from the idle timeout and
/// are never closed to make room; when one closes for any reason (its process ended, was
/// killed, or closed it), `onClose` tells the daemon at once, which then undoes what it held.
public final class ControlServer {
    /// Answers one request; `connection` names the connection it came on (for `hold`).
    public typealias Handler = (_ request: ControlRequest, _ connection: Int32) -> ControlReply

    public let path: String
    public let maxConnections = 32
    public let idleTimeout: Double = 30
    /// A client writes its request line at once; one still incomplete after this is stalling.
    public let partialRequestTimeout: Double = 5
    private let listener: Int32
    private let ownerUID = getuid()
    private var connections: [Int32: Connection] = [:]
    /// Connections that asked for a stream (dump or voice), and what each still has to receive.
    private var subscribers: [Int32: Subscriber] = [:]
    /// A stream client that takes nothing for this long is dropped.
    public let stalledSubscriberTimeout: Double = 10
    /// Connections that hold a lease.
    private var holders: Set<Int32> = []
    /// One line per refused or dropped peer, for the daemon's log.
    public var onNotice: (String) -> Void = { _ in }
    /// A connection that held a lease has closed (called once, before its descriptor is reused).
    public var onClose: (_ connection: Int32) -> Void = { _ in }

    private struct Connection {
        var buffer = Data()
        var lastActivity: Double
        /// When the first byte of the request line still incomplete arrived (nil: none).
        var partialSince: Double?
    }

    /// What a streaming connection receives.
    public enum Stream: Sendable {
        /// DumpFrame lines, 20 a second.
        case dump
        /// VoiceFrame lines, 100 a second.
        case voice
    }

    private struct Subscriber {
        var stream: Stream
        /// The rest of a frame the socket did not take whole; sent before any newer frame.
        var unsent = Data()
        var lastProgress: Double
    }

    /// How many clients listen to a stream (any, or the one named).
    public var subscriberCount: Int { subscribers.count }
    public func subscriberCount(_ stream: Stream) -> Int { subscribers.values.filter { $0.stream == stream }.count }

    /// Creates the runtime directory (0700, must be ours) and listens at `path`. A stale socket
    /// left by a crash is replaced; a live daemon there is an error.
    public init(path: String) throws(SocketError) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        try Self.makePrivateDirectory(directory)
        if access(path, F_OK) == 0 {
            if let fd = try? UnixSocket.connect(to: path) {
                close(fd)
                throw SocketError("another ribbitd is already running (it listens on \(path)); `ribbitd stop` stops it")
            }
            unlink(path)
        }
        listener = try UnixSocket.listen(at: path)
    }

    deinit {
        for fd in connections.keys { close(fd) }
        close(listener)
        unlink(path)
    }

    static func makePrivateDirectory(_ directory: String) throws(SocketError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .system("cannot create \(directory)") }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw .system("cannot inspect \(directory)") }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else {
            throw SocketError("\(directory) is not a directory owned by uid \(getuid()); remove it or set XDG_RUNTIME_DIR")
        }
        if info.st_mode & 0o777 != 0o700 { chmod(directory, 0o700) }
    }

    /// The descriptors to poll for input.
    public var pollDescriptors: [Int32] { [listener] + connections.keys.sorted() }

    /// Handles readiness of `fd` (one of pollDescriptors).
    public func handleReadable(_ fd: Int32, now: Double, handler: Handler) {
        if fd == listener { acceptAll(now: now) } else { read(fd, now: now, handler: handler) }
    }

    /// Keeps `connection` open for as long as its peer does: what it asked for lasts until then.
    public func hold(_ connection: Int32) {
        guard connections[connection] != nil else { return }
        holders.insert(connection)
    }

    /// Whether `connection` is open and holds a lease.
    public func isHolding(_ connection: Int32) -> Bool { holders.contains(connection) }

    /// Closes connections that sat silent, or on one partial request, for too long (dump
    /// subscribers only listen and lease holders only hold, so they are exempt).
    public func closeIdle(now: Double) {
        for (fd, connection) in connections where subscribers[fd] == nil && !holders.contains(fd) {
            if let since = connection.partialSince, now - since > partialRequestTimeout {
                onNotice("closed a control connection whose request stayed incomplete for \(Int(partialRequestTimeout)) s")
                drop(fd)
            } else if now - connection.lastActivity > idleTimeout {
                onNotice("closed a control connection silent for \(Int(idleTimeout)) s")
                drop(fd)
            }
        }
    }

    /// Closes the connection whose partial request is oldest, else the one silent longest (never
    /// a dump client or a lease holder), so a new client gets a slot. False when none is left.
    private func makeRoom() -> Bool {
        let candidates = connections.filter { subscribers[$0.key] == nil && !holders.contains($0.key) }
        guard
            let (fd, _) = candidates.min(by: {
                ($0.value.partialSince ?? .infinity, $0.value.lastActivity) < ($1.value.partialSince ?? .infinity, $1.value.lastActivity)
            })
        else { return false }
        onNotice("all \(maxConnections) control connections were taken; closed the most stalled one for a new client")
        drop(fd)
        return true
    }

    private func acceptAll(now: Double) {
        while true {
            guard let fd = UnixSocket.acceptNonBlocking(listener) else { return }
            guard let uid = UnixSocket.peerUID(fd), uid == ownerUID else {
                let who = UnixSocket.peerUID(fd).map { "uid \($0)" } ?? "a peer of unknown uid"
                onNotice("refused a control connection from \(who) (only uid \(ownerUID) may control this daemon)")
                _ = UnixSocket.writeAll(
                    fd,
                    ControlProtocol.encode(
                        ControlReply.failure(
                            "refused: this ribbitd belongs to uid \(ownerUID), you are \(who); control your own ribbitd")))
                close(fd)
                continue
            }
            guard connections.count < maxConnections || makeRoom() else {
                _ = UnixSocket.writeAll(
                    fd,
                    ControlProtocol.encode(
                        ControlReply.failure(
                            "the daemon has \(maxConnections) control connections open; try again")))
                close(fd)
                continue
            }
            connections[fd] = Connection(lastActivity: now)
        }
    }

    private func read(_ fd: Int32, now: Double, handler: Handler) {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = Syscall.retrying { Glibc.read(fd, &chunk, chunk.count) }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            guard n > 0 else {
                drop(fd)  // the peer closed (a partial request without newline is discarded)
                return
            }
            if connections[fd]?.buffer.isEmpty == true { connections[fd]?.partialSince = now }
            connections[fd]?.buffer.append(contentsOf: chunk[0..<n])
            connections[fd]?.lastActivity = now
            guard serveLines(fd, now: now, handler: handler) else { return }
        }
    }

    /// Answers each complete line; false when the connection was closed.
    private func serveLines(_ fd: Int32, now: Double, handler: Handler) -> Bool {
        while let buffer = connections[fd]?.buffer {
            guard let newline = buffer.firstIndex(of: 0x0A) else {
                // What is left is the start of the next request line (nil when nothing is).
                let since = connections[fd]?.partialSince ?? now
                connections[fd]?.partialSince = buffer.isEmpty ? nil : since
                if buffer.count > ControlProtocol.maxRequestBytes {
                    onNotice("closed a control connection that sent a request over 64 KiB")
                    reply(fd, .failure("request longer than \(ControlProtocol.maxRequestBytes) bytes; refused"))
                    drop(fd)
                    return false
                }
                return true
            }
            let line = buffer[buffer.startIndex..<newline]
            connections[fd]?.buffer = Data(buffer[(newline + 1)...])
            connections[fd]?.partialSince = nil
            let answer: ControlReply
            if line.count > ControlProtocol.maxRequestBytes {
                answer = .failure("request longer than \(ControlProtocol.maxRequestBytes) bytes; refused")
            } else {
                switch ControlRequest.read(Data(line)) {
                case .success(let request) where request == .dump || request == .voice:
                    subscribers[fd] = Subscriber(
                        stream: request == .dump ? .dump : .voice, lastProgress: connections[fd]?.lastActivity ?? 0)
                    // Room for several frames, so a reader that stalls briefly misses none.
                    var size: Int32 = 1 << 20
                    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                    answer = handler(.status, fd)
                case .success(let request): answer = handler(request, fd)
                case .failure(let refusal): answer = .failure(refusal.description)
                }
            }
            guard reply(fd, answer) else {
                drop(fd)
                return false
            }
        }
        return false
    }

    @discardableResult
    private func reply(_ fd: Int32, _ reply: ControlReply) -> Bool {
        UnixSocket.writeAll(fd, ControlProtocol.encode(reply))
    }

    private func drop(_ fd: Int32) {
        connections[fd] = nil
        subscribers[fd] = nil
        close(fd)
        if holders.remove(fd) != nil { onClose(fd) }
    }

    /// Offers one frame line (or several, newline-terminated) to every subscriber of `stream`
    /// without ever waiting. A client still
    /// taking an earlier frame (its socket was full) gets the rest of that one first and misses
    /// this one, so every line it reads is whole; one that takes nothing for
    /// `stalledSubscriberTimeout`, or has gone, is dropped.
    public func broadcast(_ line: Data, to stream: Stream = .dump, now: Double) {
        for fd in Array(subscribers.keys) {
            guard var subscriber = subscribers[fd], subscriber.stream == stream else { continue }
            if subscriber.unsent.isEmpty { subscriber.unsent = line }
            let sent = Syscall.retrying {
                subscriber.unsent.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            if sent > 0 {
                subscriber.unsent.removeFirst(sent)
                subscriber.lastProgress = now
            } else if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK {
                drop(fd)  // the client has gone
                continue
            }
            if now - subscriber.lastProgress > stalledSubscriberTimeout {
                onNotice("dropped a \(stream) client that took nothing for \(Int(stalledSubscriberTimeout)) s")
                drop(fd)
                continue
            }
            subscribers[fd] = subscriber
        }
    }
}
