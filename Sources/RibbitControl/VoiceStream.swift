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

    public enum OpenError: Error {
        /// No daemon, another user's, or it did not answer.
        case client(ControlClientError)
        /// The daemon refused; its one-line reason.
        case refused(String)
    }

    private let fd: Int32
    private let reader: LineReader
    private let decoder = JSONDecoder()
    /// The daemon's status when the stream opened (the calibration says the level's scale).
    public private(set) var status: DaemonStatus?

    private init(fd: Int32) {
        self.fd = fd
        reader = LineReader(fd: fd)
    }

    deinit { close(fd) }

    public static func open(socketPath: String) throws(OpenError) -> VoiceStream {
        let reply: ControlReply
        let stream: VoiceStream
        do {
            stream = VoiceStream(fd: try ControlClient.connect(socketPath: socketPath))
            reply = try ControlClient.ask(stream.fd, ControlRequest(command: .voice), timeoutSeconds: 10, reader: stream.reader)
        } catch {
            throw .client(error)
        }
        guard reply.ok else { throw .refused(reply.error ?? "the daemon refused the voice stream") }
        stream.status = reply.status
        return stream
    }

    public func next(timeoutSeconds: Double) -> Item {
        switch reader.next(timeoutSeconds: timeoutSeconds) {
        case .timedOut: return .timedOut
        case .closed: return .closed
        case .line(let line):
            guard let frame = try? decoder.decode(VoiceFrame.self, from: line) else { return .unreadable }
            return .frame(frame)
        }
    }
}
