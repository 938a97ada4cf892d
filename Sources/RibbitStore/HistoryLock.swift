import Foundation
import Glibc
import RibbitSystem

/// An exclusive lock (flock) on `ribbitd.lock` in the data directory: who may change the history
/// and the sound. A running daemon holds it for its whole life and writes its pid and socket
/// into the file; a command that finds no daemon holds it while it changes the history. So two
/// daemons never share one history, and a command that cannot reach the daemon (another
/// XDG_RUNTIME_DIR) never writes behind its back. The kernel drops the lock when its holder
/// dies, so a crash leaves nothing stale.
public final class HistoryLock {
    public let path: String
    private let fd: Int32

    /// Who holds the lock, as the daemon wrote it (a command writes nothing).
    public struct Holder: Sendable, Equatable {
        public var pid: Int32?
        public var socketPath: String?
    }

    public static func path(dataDirectory: String) -> String { dataDirectory + "/ribbitd.lock" }

    /// Takes the lock, waiting up to `waitSeconds` for a holder that is only a command (it
    /// holds it for milliseconds). Throws `.held` with what the holder wrote when it stays held.
    /// `readOnly`: the data directory cannot be written, so the lock file is opened as it is
    /// (flock works on a read-only descriptor) and nothing is recorded in it.
    public init(dataDirectory: String, waitSeconds: Double = 0, readOnly: Bool = false) throws(LockError) {
        path = Self.path(dataDirectory: dataDirectory)
        if !readOnly {
            do { try PrivateFile.prepare(path) } catch { throw .failed(error.description) }
        }
        do { fd = try PrivateFile.open(path, flags: readOnly ? O_RDONLY : O_RDWR) } catch { throw .failed(error.description) }
        let deadline = Date().addingTimeInterval(waitSeconds)
        while Syscall.retrying({ flock(fd, LOCK_EX | LOCK_NB) }) != 0 {
            let code = errno
            guard code == EWOULDBLOCK else {
                close(fd)
                throw .failed("cannot lock \(path): \(String(cString: strerror(code)))")
            }
            if Date() >= deadline {
                let holder = Self.holder(fd)
                close(fd)
                throw .held(holder)
            }
            usleep(20_000)
        }
    }

    deinit { close(fd) }  // releases the lock

    /// Records the daemon's pid and socket for commands that cannot reach it.
    public func record(socketPath: String) {
        let text = "pid \(getpid())\nsocket \(socketPath)\n"
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, text, text.utf8.count, 0)
    }

    /// Clears the record (a daemon on its way out; the lock itself goes with the descriptor).
    public func clear() { _ = ftruncate(fd, 0) }

    private static func holder(_ fd: Int32) -> Holder {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = pread(fd, &buffer, buffer.count, 0)
        var holder = Holder()
        for line in String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("pid ") { holder.pid = Int32(line.dropFirst(4)) }
            if line.hasPrefix("socket ") { holder.socketPath = String(line.dropFirst(7)) }
        }
        return holder
    }
}

public enum LockError: Error, CustomStringConvertible {
    /// Another process holds the lock: a daemon (with its pid and socket) or a command.
    case held(HistoryLock.Holder)
    case failed(String)

    public var description: String {
        switch self {
        case .held(let holder):
            let who =
                holder.pid.map { "ribbitd (pid \($0)\(holder.socketPath.map { ", listening on \($0)" } ?? ""))" }
                ?? "another ribbitd command"
            return "the prescription history is in use by \(who)"
        case .failed(let message): return message
        }
    }
}
