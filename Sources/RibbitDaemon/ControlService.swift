import Logging
import RibbitControl

/// The control socket: accepts clients, reads their requests and answers each through the
/// handler table (`Daemon.handlers`); dump clients get frames from the dump service.
final class ControlService: DaemonService {
    let name = "control socket"
    private let path: String
    private let log: Logger
    private(set) var server: ControlServer?
    /// One handler per request; a thrown failure becomes the reply's one-line error.
    var handlers: [ControlRequest.Command: (ControlRequest) throws(RequestFailure) -> ControlReply] = [:]

    init(path: String, log: Logger) {
        self.path = path
        self.log = log
    }

    func start(now: Double) throws {
        let server = try ControlServer(path: path)
        server.onNotice = { [log] in log.warning("\($0)") }
        self.server = server
        log.info("control socket \(path)")
    }

    var pollDescriptors: [Int32] { server?.pollDescriptors ?? [] }
    var subscriberCount: Int { server?.subscriberCount ?? 0 }

    /// Serves what arrived on `fd`.
    func handleReadable(_ fd: Int32, now: Double) {
        server?.handleReadable(fd, now: now) { request in
            guard let handler = handlers[request.command] else { return .failure("unknown request \(request.command.rawValue)") }
            do throws(RequestFailure) { return try handler(request) } catch { return .failure(error.description) }
        }
    }

    func tick(now: Double) { server?.closeIdle(now: now) }

    func stop(deadline: Double) { server = nil }
}
