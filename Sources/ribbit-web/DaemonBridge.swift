import Dispatch
import Foundation
import RibbitControl

/// What the daemon answered to one request, in HTTP terms.
enum DaemonAnswer: Sendable {
    case status(DaemonStatus)
    /// The daemon refused the request; its one-line reason.
    case refused(String)
    /// No daemon runs (or it is another user's, or it answered wrongly); one line for the user.
    case unavailable(String)
}

/// The daemon's control socket, as the CLI uses it. ControlClient blocks, so requests run on one
/// serial queue of their own, never on the server's threads; the daemon answers one at a time anyway.
final class DaemonBridge: Sendable {
    let socketPath: String
    private let queue = DispatchQueue(label: "ribbit-web.daemon")

    init(socketPath: String) { self.socketPath = socketPath }

    func send(_ request: ControlRequest) async -> DaemonAnswer {
        await withCheckedContinuation { continuation in
            queue.async { [socketPath] in
                let answer: DaemonAnswer
                do throws(ControlClientError) {
                    let reply = try ControlClient.send(request, socketPath: socketPath, timeoutSeconds: 5)
                    if !reply.ok {
                        answer = .refused(reply.error ?? "the daemon refused the request without saying why")
                    } else if let status = reply.status {
                        answer = .status(status)
                    } else {
                        answer = .unavailable("the daemon sent no status")
                    }
                } catch {
                    answer = .unavailable(error.description)
                }
                continuation.resume(returning: answer)
            }
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
            DispatchQueue.global().async { [socketPath] in
                do throws(StreamConnection.OpenError) {
                    let connection = try StreamConnection.open(socketPath: socketPath, request: request)
                    let answer: DaemonAnswer = connection.status.map { .status($0) } ?? .unavailable("the daemon sent no status")
                    continuation.resume(returning: (answer, DaemonLease(connection)))
                } catch {
                    switch error {
                    case .client(let failure): continuation.resume(returning: (.unavailable(failure.description), nil))
                    case .refused(let message): continuation.resume(returning: (.refused(message), nil))
                    }
                }
            }
        }
    }
}
