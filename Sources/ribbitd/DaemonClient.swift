import ArgumentParser
import Foundation
import RibbitControl

/// Sends one request to the running daemon; a failure becomes a one-line RibbitError.
func sendToDaemon(_ request: ControlRequest) throws(RibbitError) -> DaemonStatus? {
    let reply: ControlReply
    do {
        reply = try ControlClient.send(request, socketPath: RibbitPaths().socketPath)
    } catch {
        switch error {
        case .notRunning, .refused: throw .unavailable(error.description)
        case .failed: throw RibbitError(message: error.description, exitCode: ExitCode(70))
        }
    }
    guard reply.ok else { throw .data(reply.error ?? "the daemon refused the request without saying why") }
    return reply.status
}
