import Foundation
import Glibc

/// A control connection the daemon turned into a stream (`dump`, `voice`): asks once, keeps the
/// status of the reply, then hands out the lines. DumpStream and VoiceStream decode them.
/// Also a connection that holds a lease (a `pause` with `lease`, `hearing-test-start`, `measure`):
/// what it asked for lasts until it is closed (`close()`, deinit, or its process ending).
public final class StreamConnection {
    private var fd: Int32
    private let reader: LineReader
    /// The daemon's status when the stream opened.
    public let status: DaemonStatus?

    private init(fd: Int32, reader: LineReader, status: DaemonStatus?) {
        self.fd = fd
        self.reader = reader
        self.status = status
    }

    deinit { close() }

    /// Closes the connection (the daemon ends what it held at once).
    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    /// Use `DaemonConnection.hold` or `.stream`.
    static func open(socketPath: String, request: ControlRequest) throws(DaemonFailure) -> StreamConnection {
        let fd: Int32
        do { fd = try ControlClient.connect(socketPath: socketPath) } catch { throw .unreachable(error) }
        let reader = LineReader(fd: fd)
        let reply: ControlReply
        do {
            reply = try ControlClient.ask(fd, request, timeoutSeconds: 10, reader: reader)
        } catch {
            Glibc.close(fd)
            throw .unreachable(error)
        }
        guard reply.ok else {
            Glibc.close(fd)
            throw .refused(reply.error ?? "the daemon refused the \(request.command.rawValue) request")
        }
        return StreamConnection(fd: fd, reader: reader, status: reply.status)
    }

    public func next(timeoutSeconds: Double) -> LineReader.Result { reader.next(timeoutSeconds: timeoutSeconds) }
}
