import Foundation
import Glibc
import RibbitSystem

/// Reads a whole file that must be small: a prescription, its picture, a key, a config file.
///
/// The size comes from `fstat` of the opened descriptor, so a symlink is judged by what it
/// points at (FileManager's attributes are an lstat: a symlink's own few bytes). The open never
/// blocks (O_NONBLOCK: a FIFO without a writer), and anything but a regular file (a directory,
/// a FIFO, /dev/zero) is refused before a byte is read. At most `maxBytes + 1` bytes are read,
/// so a file that grows meanwhile is refused too, never read whole.
public enum BoundedFile {
    /// For a key or a config file: they are a few hundred bytes.
    public static let keyOrConfigMaxBytes = 64 * 1024

    public static func read(_ path: String, maxBytes: Int) throws(BoundedFileError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            // A Unix socket cannot be opened (ENXIO); say what it is rather than "No such device".
            var info = stat()
            if code == ENXIO, stat(path, &info) == 0 { throw BoundedFileError(path: path, problem: .notRegular(kind(of: info.st_mode))) }
            throw BoundedFileError(path: path, problem: .cannotOpen(code))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw BoundedFileError(path: path, problem: .cannotRead(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw BoundedFileError(path: path, problem: .notRegular(kind(of: info.st_mode))) }
        let sizeBytes = Int(info.st_size)
        guard sizeBytes <= maxBytes else {
            throw BoundedFileError(path: path, problem: .tooLarge(sizeBytes: sizeBytes, maxBytes: maxBytes))
        }
        // Room for one byte more than fstat gave, so the loop sees the end of the file; a file
        // that grows meanwhile is read on, but never past maxBytes + 1.
        var data = Data(count: sizeBytes + 1)
        var total = 0
        while true {
            if total == data.count {
                guard data.count <= maxBytes else { break }
                data.count = min(maxBytes + 1, 2 * data.count)
            }
            let count = Syscall.retrying { data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) } }
            if count > 0 {
                total += count
            } else if count == 0 {
                break
            } else {
                throw BoundedFileError(path: path, problem: .cannotRead(errno))
            }
        }
        guard total <= maxBytes else { throw BoundedFileError(path: path, problem: .tooLarge(sizeBytes: total, maxBytes: maxBytes)) }
        data.count = total
        return data
    }

    /// "a directory", "a named pipe (FIFO)" ... for a file type from `st_mode`.
    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a named pipe (FIFO)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "a special file"
        }
    }
}

/// Why a file was not read; the description is one line naming the file.
public struct BoundedFileError: Error, CustomStringConvertible, Equatable {
    public enum Problem: Sendable, Equatable {
        /// open(2) failed with this errno (no such file, permission denied ...).
        case cannotOpen(Int32)
        /// A directory, FIFO, device or socket: "a directory".
        case notRegular(String)
        /// Larger than the caller's limit; `sizeBytes` may be a lower bound when it grew while read.
        case tooLarge(sizeBytes: Int, maxBytes: Int)
        /// fstat(2) or read(2) failed with this errno.
        case cannotRead(Int32)
    }

    public let path: String
    public let problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .cannotOpen(let code): "\(path): cannot open it (\(String(cString: strerror(code))))"
        case .notRegular(let kind): "\(path): \(kind), not a file"
        case .tooLarge(let sizeBytes, let maxBytes): "\(path): \(Self.size(sizeBytes)) is over the limit of \(Self.size(maxBytes))"
        case .cannotRead(let code): "\(path): cannot read it (\(String(cString: strerror(code))))"
        }
    }

    /// Bytes as "812 bytes", "64 KiB" or "3072 MiB" (whole units, rounded down).
    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }
}
