import Foundation
import RibbitControl
import RibbitMonitor

/// The dump stream of the running daemon: the connection after a `dump` request. `ribbitd dump`
/// reads it, and so does the web app's Live screen.
public final class DumpStream {
    public enum Item {
        case frame(DumpFrame, Data)
        case timedOut
        case closed
        case unreadable
    }

    private let connection: StreamConnection

    private init(connection: StreamConnection) { self.connection = connection }

    public static func open(socketPath: String) throws(DaemonFailure) -> DumpStream {
        DumpStream(connection: try DaemonConnection(socketPath: socketPath).stream(.dump))
    }

    public func next(timeoutSeconds: Double) -> Item {
        switch connection.next(timeoutSeconds: timeoutSeconds) {
        case .timedOut: return .timedOut
        case .closed: return .closed
        case .line(let line):
            guard let frame = try? JSONDecoder().decode(DumpFrame.self, from: line) else { return .unreadable }
            return .frame(frame, line)
        }
    }
}
