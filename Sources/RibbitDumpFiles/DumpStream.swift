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

    public enum OpenError: Error {
        /// No daemon, another user's, or it did not answer.
        case client(ControlClientError)
        /// The daemon refused the dump; its one-line reason.
        case refused(String)
    }

    private let fd: Int32
    private let reader: LineReader

    private init(fd: Int32) {
        self.fd = fd
        reader = LineReader(fd: fd)
    }

    deinit { close(fd) }

    public static func open(socketPath: String) throws(OpenError) -> DumpStream {
        let reply: ControlReply
        let stream: DumpStream
        do {
            stream = DumpStream(fd: try ControlClient.connect(socketPath: socketPath))
            reply = try ControlClient.ask(stream.fd, ControlRequest(command: .dump), timeoutSeconds: 10, reader: stream.reader)
        } catch {
            throw .client(error)
        }
        guard reply.ok else { throw .refused(reply.error ?? "the daemon refused the dump") }
        return stream
    }

    public func next(timeoutSeconds: Double) -> Item {
        switch reader.next(timeoutSeconds: timeoutSeconds) {
        case .timedOut: return .timedOut
        case .closed: return .closed
        case .line(let line):
            guard let frame = try? JSONDecoder().decode(DumpFrame.self, from: line) else { return .unreadable }
            return .frame(frame, line)
        }
    }
}
