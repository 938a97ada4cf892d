import Glibc
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections the web app holds and how long an idle one may stay. Each connection is
/// a file descriptor, and under systemd's default of 1,024 a few hundred idle connections would
/// leave none for a new client, the daemon's socket or SQLite. So:
/// - at most `maxConnections` (half the process's descriptors, at most 512); a new connection
///   beyond that closes the one that has waited longest for nothing (ConnectionTable.open);
/// - a connection that has not been answered yet closes after `firstRequestSeconds` with nothing
///   read (a client that connects and sends nothing, or stalls in its request head);
/// - any connection closes after `idleSeconds` with nothing read or written, unless its request
///   is being answered (a slow daemon); a WebSocket pings every `webSocketPingSeconds`, so an
///   open Live screen or game never goes quiet that long.
/// Hummingbird's own idle timeout starts only once a first request has been parsed (its
/// WebSocket pipeline adds it then), so these are kept here, in a handler placed before
/// everything else (TLS included) on every connection.
struct ConnectionLimits: Sendable {
    var maxConnections: Int
    var firstRequestSeconds = 10.0
    var idleSeconds = 30.0
    static let webSocketPingSeconds: Int64 = 10

    static func forThisProcess() -> ConnectionLimits {
        var limit = rlimit()
        // RLIM_INFINITY is the largest rlim_t: clamped, it leaves 512.
        let descriptors = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
        return ConnectionLimits(maxConnections: max(16, min(512, descriptors / 2)))
    }
}

/// What one connection did when (monotonic nanoseconds), written on its event loop and read by
/// the table when another connection needs its place.
final class ConnectionActivity: Sendable {
    let channel: any Channel
    let openedNanos: Int64
    let lastReadNanos: Atomic<Int64>
    /// 0 until something was written (a response, a TLS handshake).
    let lastWriteNanos = Atomic<Int64>(0)
    /// The request in hand (RequestActivity): `requestOpen` from its head to its answer's end,
    /// `requestRead` once its end has come. Both: the server is working on it. (A request
    /// answered before its body was read, a 401 say, ends open before it is read.)
    let request = Atomic<Int>(0)
    static let requestOpen = 1
    static let requestRead = 2
    /// Closed to make room: closing takes a moment, and it must not be chosen twice.
    let evicted = Atomic<Bool>(false)

    init(channel: any Channel, now: Int64) {
        self.channel = channel
        openedNanos = now
        lastReadNanos = Atomic(now)
    }

    var isAnswering: Bool { request.load(ordering: .relaxed) == Self.requestOpen | Self.requestRead }

    /// When it last got anything from the server (opened: never).
    var lastAnsweredNanos: Int64 { max(openedNanos, lastWriteNanos.load(ordering: .relaxed)) }

    /// When this connection is due to close if nothing happens meanwhile; nil while answering.
    func deadline(_ limits: ConnectionLimits) -> Int64? {
        guard !isAnswering else { return nil }
        let wrote = lastWriteNanos.load(ordering: .relaxed)
        let last = max(lastReadNanos.load(ordering: .relaxed), wrote)
        return last + Int64((wrote == 0 ? limits.firstRequestSeconds : limits.idleSeconds) * 1e9)
    }

    static func now() -> Int64 { Int64(NIODeadline.now().uptimeNanoseconds) }
}

/// Every open connection, shared by the event loops.
final class ConnectionTable: Sendable {
    let limits: ConnectionLimits
    private let open = Mutex<[ObjectIdentifier: ConnectionActivity]>([:])

    init(limits: ConnectionLimits) { self.limits = limits }

    var count: Int { open.withLock { $0.count } }

    /// Adds a new connection. Beyond the limit it closes the one that has waited longest for
    /// nothing: not one being answered, the oldest by when it was last written to (or opened),
    /// so a client that connects and idles is the first to go, and a new client always gets in.
    func add(_ connection: ConnectionActivity) {
        let victim: ConnectionActivity? = open.withLock { open in
            open[ObjectIdentifier(connection)] = connection
            guard open.count > limits.maxConnections else { return nil }
            let victim = open.values.filter { $0 !== connection && !$0.isAnswering && !$0.evicted.load(ordering: .relaxed) }
                .min { $0.lastAnsweredNanos < $1.lastAnsweredNanos }
            victim?.evicted.store(true, ordering: .relaxed)
            return victim
        }
        victim?.channel.close(promise: nil)
    }

    func remove(_ connection: ConnectionActivity) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }
}

/// The first handler of every connection: notes when it reads and writes (bytes, whatever the
/// protocol above) and closes it when it is due (ConnectionActivity.deadline).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let activity: ConnectionActivity
    private let table: ConnectionTable
    private var check: Scheduled<Void>?

    init(activity: ConnectionActivity, table: ConnectionTable) {
        self.activity = activity
        self.table = table
    }

    func handlerAdded(context: ChannelHandlerContext) { schedule(context) }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        activity.lastReadNanos.store(ConnectionActivity.now(), ordering: .relaxed)
        context.fireChannelRead(data)
    }

    // Not unwrapped: HTTP's encoder may hand on an IOData; only the time matters here.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        activity.lastWriteNanos.store(ConnectionActivity.now(), ordering: .relaxed)
        context.write(data, promise: promise)
    }

    private func schedule(_ context: ChannelHandlerContext) {
        let now = ConnectionActivity.now()
        // While a request is being answered, look again after the idle time.
        let due = activity.deadline(table.limits) ?? now + Int64(table.limits.idleSeconds * 1e9)
        check = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(max(due - now, 1_000_000))) { [self] in
            self.check = nil
            if let deadline = activity.deadline(table.limits), deadline <= ConnectionActivity.now() {
                context.close(promise: nil)
            } else {
                schedule(context)
            }
        }
    }
}

/// In the HTTP pipeline (after the request is decoded): tells the connection's guard when a
/// request begins and ends, and when its answer has been written.
final class RequestActivity: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var activity: ConnectionActivity?

    func handlerAdded(context: ChannelHandlerContext) {
        activity = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self).activity
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: activity?.request.store(ConnectionActivity.requestOpen, ordering: .relaxed)
        case .body: break
        case .end: activity?.request.bitwiseOr(ConnectionActivity.requestRead, ordering: .relaxed)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { activity?.request.store(0, ordering: .relaxed) }
        context.write(data, promise: promise)
    }
}

/// A child channel (HTTP with WebSocket upgrades, inside TLS on a LAN) with a ConnectionGuard in
/// front, registered in the table.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let table: ConnectionTable

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let activity = ConnectionActivity(channel: channel, now: ConnectionActivity.now())
            try channel.pipeline.syncOperations.addHandler(ConnectionGuard(activity: activity, table: table))
            channel.closeFuture.whenComplete { [table] _ in table.remove(activity) }
            table.add(activity)
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
