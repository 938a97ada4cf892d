/// What the daemon answered to one request: its status after it, or why not. Both front ends
/// read it, the CLI as exit codes, the web app as HTTP statuses.
public typealias DaemonAnswer = Result<DaemonStatus, DaemonFailure>

/// Why a request did not get the daemon to act.
public enum DaemonFailure: Error, CustomStringConvertible {
    /// No daemon reached: none runs, it is another user's, or it did not answer rightly.
    case unreachable(ControlClientError)
    /// The daemon refused the request; its one-line reason.
    case refused(String)

    public var description: String {
        switch self {
        case .unreachable(let error): error.description
        case .refused(let message): message
        }
    }
}

/// The running daemon as its front ends reach it, `ribbitd`'s commands and ribbit-web alike:
/// one request and the status after it, or a request held for as long as its connection
/// stays open (a lease, a stream). Blocking; ribbit-web calls it off its event loops.
public struct DaemonConnection: Sendable {
    public let socketPath: String

    public init(socketPath: String) { self.socketPath = socketPath }

    /// Sends one request; the status after it.
    public func ask(_ request: ControlRequest, timeoutSeconds: Double = 10) throws(DaemonFailure) -> DaemonStatus {
        let reply: ControlReply
        do { reply = try ControlClient.send(request, socketPath: socketPath, timeoutSeconds: timeoutSeconds) } catch {
            throw .unreachable(error)
        }
        guard reply.ok else {
            throw .refused(reply.error ?? "the daemon refused the \(request.command.rawValue) request without saying why")
        }
        guard let status = reply.status else {
            throw .unreachable(.failed("the daemon answered the \(request.command.rawValue) request without its status"))
        }
        return status
    }

    /// As `ask`, the failure as a value.
    public func answer(_ request: ControlRequest, timeoutSeconds: Double = 10) -> DaemonAnswer {
        do throws(DaemonFailure) { return .success(try ask(request, timeoutSeconds: timeoutSeconds)) } catch { return .failure(error) }
    }

    /// Sends one request and keeps its connection: what it started lasts until the connection
    /// is closed, or this process ends.
    public func hold(_ request: ControlRequest) throws(DaemonFailure) -> StreamConnection {
        try StreamConnection.open(socketPath: socketPath, request: request)
    }

    /// A stream (`dump`, `voice`): the connection after its request.
    public func stream(_ request: ControlRequest) throws(DaemonFailure) -> StreamConnection {
        try StreamConnection.open(socketPath: socketPath, request: request)
    }
}
