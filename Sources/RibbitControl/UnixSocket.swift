import Foundation
import Glibc
import RibbitSystem

public struct SocketError: Error, CustomStringConvertible {
    public let description: String
    /// errno of the failed call (0 when not from a system call).
    public let code: Int32
    public init(_ description: String, code: Int32 = 0) {
        self.description = description
        self.code = code
    }
    static func system(_ what: String) -> SocketError {
        let code = errno
        return SocketError("\(what): \(String(cString: strerror(code)))", code: code)
    }
}

/// Thin wrappers over AF_UNIX stream sockets.
public enum UnixSocket {
    /// Calls `body` with a sockaddr_un for `path` (at most 107 bytes).
    static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws(SocketError) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw SocketError("the socket path \(path) is longer than \(capacity - 1) bytes; use a shorter XDG_RUNTIME_DIR")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A listening socket at `path`, mode 0600 (created under umask 077).
    public static func listen(at path: String, backlog: Int32 = 16) throws(SocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        let oldMask = umask(0o077)
        let bound = try withAddress(path) { bind(fd, $0, $1) }
        umask(oldMask)
        guard bound == 0 else {
            let error = SocketError.system("cannot bind \(path)")
            close(fd)
            throw error
        }
        guard chmod(path, 0o600) == 0, Glibc.listen(fd, backlog) == 0 else {
            let error = SocketError.system("cannot listen on \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// A connected client socket, or an error whose code tells whether nobody listens
    /// (ENOENT, ECONNREFUSED) or access was denied (EACCES).
    public static func connect(to path: String) throws(SocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        let result = try withAddress(path) { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let error = SocketError.system("cannot connect to \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// struct ucred of <sys/socket.h>, which Glibc's module leaves out (it needs _GNU_SOURCE).
    private struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    /// The uid of the process at the other end (SO_PEERCRED).
    public static func peerUID(_ fd: Int32) -> uid_t? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return credentials.uid
    }

    /// Writes all of `data`; false if the peer is gone or would block (a non-blocking socket).
    public static func writeAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Syscall.retrying { send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket; nil when none.
    public static func acceptNonBlocking(_ listener: Int32) -> Int32? {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// Sets a receive and send timeout on a blocking socket.
    public static func setTimeout(_ fd: Int32, seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}
