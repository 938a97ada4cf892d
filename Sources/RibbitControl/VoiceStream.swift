import Foundation
import RibbitVoice

/// The voice stream of the running daemon: the connection after a `voice` request, one
/// VoiceFrame per line, 100 a second. The web app's voice exercises and `ribbitd voice` read it.
public final class VoiceStream {
    public enum Item {
        case frame(VoiceFrame)
        case timedOut
        case closed
        case unreadable
    }

    private let connection: StreamConnection
    private let decoder = JSONDecoder()
    /// The daemon's status when the stream opened (the calibration says the level's scale).
    public var status: DaemonStatus? { connection.status }

    private init(connection: StreamConnection) { self.connection = connection }

    public static func open(socketPath: String) throws(DaemonFailure) -> VoiceStream {
        VoiceStream(connection: try DaemonConnection(socketPath: socketPath).stream(.voice))
    }

    public func next(timeoutSeconds: Double) -> Item {
        switch connection.next(timeoutSeconds: timeoutSeconds) {
        case .timedOut: return .timedOut
        case .closed: return .closed
        case .line(let line):
            guard let frame = try? decoder.decode(VoiceFrame.self, from: line) else { return .unreadable }
            return .frame(frame)
        }
    }
}
