import Foundation

/// A control connection the daemon turned into a stream (`dump`, `voice`): asks once, keeps the
/// status of the reply, then hands out the lines. DumpStream and VoiceStream decode them.
public final class StreamConnection {
    public enum OpenError: Error {
        /// No daemon, another user's, or it did not answer.
        case client(ControlClientError)
        /// The daemon refused the stream; its one-line reason.
        case refused(String)
    }

    private let fd: Int32
    private let reader: LineReader
    /// The daemon's status when the stream opened.
    public let status: DaemonStatus?

    private init(fd: Int32, reader: LineReader, status: DaemonStatus?) {
        self.fd = fd
        self.reader = reader
        self.status = status
    }

    deinit { close(fd) }

    public static func open(socketPath: String, command: ControlRequest.Command) throws(OpenError) -> StreamConnection {
        let fd: Int32
        do { fd = try ControlClient.connect(socketPath: socketPath) } catch { throw .client(error) }
        let reader = LineReader(fd: fd)
        let reply: ControlReply
        do {
            reply = try ControlClient.ask(fd, ControlRequest(command: command), timeoutSeconds: 10, reader: reader)
        } catch {
            close(fd)
            throw .client(error)
        }
        guard reply.ok else {
            close(fd)
            throw .refused(reply.error ?? "the daemon refused the \(command.rawValue) stream")
        }
        return StreamConnection(fd: fd, reader: reader, status: reply.status)
    }

    public func next(timeoutSeconds: Double) -> LineReader.Result { reader.next(timeoutSeconds: timeoutSeconds) }
}
