import Dispatch
import Foundation
import RibbitControl

/// The daemon's control socket through `DaemonConnection`, as the CLI reaches it. It blocks, so
/// requests run on one serial queue of their own, never on the server's threads; the daemon
/// answers one at a time anyway.
final class DaemonBridge: Sendable {
    let daemon: DaemonConnection
    private let queue = DispatchQueue(label: "ribbit-web.daemon")

    init(socketPath: String) { daemon = DaemonConnection(socketPath: socketPath) }

    var socketPath: String { daemon.socketPath }

    func send(_ request: ControlRequest) async -> DaemonAnswer {
        await withCheckedContinuation { continuation in
            queue.async { [daemon] in continuation.resume(returning: daemon.answer(request, timeoutSeconds: 5)) }
        }
    }
}

/// A request the daemon holds for as long as its connection stays open (a lease: a voice game's
/// pause, a hearing test): `close()` ends it, and so does ribbit-web's end, however it ends.
final class DaemonLease: @unchecked Sendable {
    private let lock = NSLock()
    private var connection: StreamConnection?

    fileprivate init(_ connection: StreamConnection) { self.connection = connection }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        connection?.close()
        connection = nil
    }
}

extension DaemonBridge {
    /// Sends `request` on a connection of its own and keeps that connection: the lease.
    func hold(_ request: ControlRequest) async -> (answer: DaemonAnswer, lease: DaemonLease?) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { [daemon] in
                do throws(DaemonFailure) {
                    let connection = try daemon.hold(request)
                    let answer: DaemonAnswer =
                        connection.status.map { .success($0) } ?? .failure(.unreachable(.failed("the daemon sent no status")))
                    continuation.resume(returning: (answer, DaemonLease(connection)))
                } catch {
                    continuation.resume(returning: (.failure(error), nil))
                }
            }
        }
    }
}
