import ArgumentParser
import Foundation
import RibbitControl
import RibbitSettings

/// What the daemon said, or that none is running.
enum DaemonAnswer {
    case notRunning(String)
    case answered(DaemonStatus?)
}

/// Sends one request to the running daemon; a refusal or failure becomes a one-line RibbitError.
func askDaemon(_ request: ControlRequest) throws(RibbitError) -> DaemonAnswer {
    let reply: ControlReply
    do {
        reply = try ControlClient.send(request, socketPath: RibbitPaths().socketPath)
    } catch {
        if case .notRunning = error { return .notRunning(error.description) }
        throw RibbitError(error)
    }
    guard reply.ok else { throw .data(reply.error ?? "the daemon refused the request without saying why") }
    return .answered(reply.status)
}

extension RibbitError {
    /// A failure to talk to the daemon: 69 when none is reachable (or it is another user's),
    /// 70 when it answered wrongly.
    init(_ error: ControlClientError) {
        switch error {
        case .notRunning, .refused: self = .unavailable(error.description)
        case .failed: self.init(message: error.description, exitCode: ExitCode(70))
        }
    }
}

/// As askDaemon, for commands that need the daemon: none running is an error (exit 69).
func sendToDaemon(_ request: ControlRequest) throws(RibbitError) -> DaemonStatus? {
    switch try askDaemon(request) {
    case .notRunning(let message): throw .unavailable(message)
    case .answered(let status): return status
    }
}

/// Sends a request that holds a lease (a hearing test, a live measurement) and keeps its
/// connection: what it started lasts until the connection is closed, or this process ends.
func holdAtDaemon(_ request: ControlRequest) throws(RibbitError) -> StreamConnection {
    do { return try StreamConnection.open(socketPath: RibbitPaths().socketPath, request: request) } catch {
        switch error {
        case .client(let failure): throw RibbitError(failure)
        case .refused(let message): throw .data(message)
        }
    }
}
