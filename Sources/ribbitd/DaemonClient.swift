import ArgumentParser
import Foundation
import RibbitControl
import RibbitSettings

/// This user's daemon.
var thisUsersDaemon: DaemonConnection { DaemonConnection(socketPath: RibbitPaths().socketPath) }

/// Sends one request to the daemon if one runs: its status after the request, nil when none
/// runs (the command then does the work itself); a refusal or failure is a one-line RibbitError.
func askDaemonIfRunning(_ request: ControlRequest) throws(RibbitError) -> DaemonStatus? {
    switch thisUsersDaemon.answer(request) {
    case .success(let status): return status
    case .failure(.unreachable(.notRunning)): return nil
    case .failure(let failure): throw RibbitError(failure)
    }
}

extension RibbitError {
    /// A request the daemon did not act on: 65 (data) for a refusal, 69 when no daemon is
    /// reachable (or it is another user's), 70 when it answered wrongly.
    init(_ failure: DaemonFailure) {
        switch failure {
        case .refused(let message): self = .data(message)
        case .unreachable(let error): self.init(error)
        }
    }

    /// A stream the daemon would not open (`dump`, `voice`): unavailable (69) either way.
    init(streamRefused failure: DaemonFailure) {
        switch failure {
        case .refused(let message): self = .unavailable(message)
        case .unreachable(let error): self.init(error)
        }
    }

    init(_ error: ControlClientError) {
        switch error {
        case .notRunning, .refused: self = .unavailable(error.description)
        case .failed: self.init(message: error.description, exitCode: ExitCode(70))
        }
    }
}

/// As askDaemonIfRunning, for commands that need the daemon: none running is an error (exit 69).
func sendToDaemon(_ request: ControlRequest) throws(RibbitError) -> DaemonStatus {
    do { return try thisUsersDaemon.ask(request) } catch { throw RibbitError(error) }
}

/// Sends a request that holds a lease (a hearing test, a live measurement) and keeps its
/// connection: what it started lasts until the connection is closed, or this process ends.
func holdAtDaemon(_ request: ControlRequest) throws(RibbitError) -> StreamConnection {
    do { return try thisUsersDaemon.hold(request) } catch { throw RibbitError(error) }
}
