import Logging
import RibbitControl

/// The control socket: accepts clients, reads their requests and answers each through the
/// daemon's registry (`Daemon.answer`); dump clients get frames from the dump service.
final class ControlService: DaemonService {
    let name = "control socket"
    private let path: String
    private let log: Logger
    private(set) var server: ControlServer?
    /// Answers a request (the daemon's registry, `Daemon.answer`); a thrown failure becomes the
    /// reply's one-line error. It gets the connection the request came on (a lease is tied to it).
    var answer: (_ request: ControlRequest, _ connection: Int32) throws(RequestFailure) -> ControlReply = { _, _ in
        ControlReply.failure("the daemon is starting")
    }
    /// A connection that held a lease closed.
    var onLeaseEnd: (_ connection: Int32) -> Void = { _ in }

    init(path: String, log: Logger) {
        self.path = path
        self.log = log
    }

    func start(now: Double) throws {
        let server = try ControlServer(path: path)
        server.onNotice = { [log] in log.warning("\($0)") }
        server.onClose = { [unowned self] connection in onLeaseEnd(connection) }
        self.server = server
        log.info("control socket \(path)")
    }

    var pollDescriptors: [Int32] { server?.pollDescriptors ?? [] }
    var subscriberCount: Int { server?.subscriberCount ?? 0 }

    /// Serves what arrived on `fd`, each request timed for the turn's watch.
    func handleReadable(_ fd: Int32, now: Double, watch: inout TurnWatch) {
        server?.handleReadable(fd, now: now) { request, connection in
            watch.part("request \(request.command.rawValue)") {
                do throws(RequestFailure) { return try answer(request, connection) } catch { return .failure(error.description) }
            }
        }
    }

    func tick(now: Double) { server?.closeIdle(now: now) }

    /// Keeps `connection` open while its peer does; `onLeaseEnd` follows when it closes.
    func hold(_ connection: Int32) { server?.hold(connection) }

    func stop(deadline: Double) { server = nil }
}
