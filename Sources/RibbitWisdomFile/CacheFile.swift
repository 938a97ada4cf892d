import Glibc
import RibbitSystem

/// A file in the user's cache directory: read whole and bounded, written through a temp file
/// and a rename so a reader sees the old file or the new one, never part of one.
enum CacheFile {
    /// The whole file, or nil when it is missing, unreadable or over `maxBytes`.
    static func read(_ path: String, maxBytes: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size <= maxBytes else { return nil }
        // Its size and a byte more: a file that grew while read is still caught by the cap.
        var bytes = [UInt8](repeating: 0, count: min(Int(info.st_size) + 1, maxBytes + 1))
        var count = 0
        while count < bytes.count {
            let n = Syscall.retrying { bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) } }
            guard n > 0 else { break }
            count += n
        }
        guard count <= maxBytes else { return nil }
        return Array(bytes[0..<count])
    }

    /// Writes `bytes` to `path`, making its directory (owner-only) when missing; nil when
    /// written, else why not (one line).
    static func write(_ bytes: [UInt8], to path: String) -> String? {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { makeDirectories(directory) }
        do { try AtomicFile.write(bytes, to: path, mode: 0o644) } catch { return error.description }
        return nil
    }

    /// mkdir -p, owner-only for what it makes (the cache is the user's own).
    private static func makeDirectories(_ directory: String) {
        var partial = ""
        for component in directory.split(separator: "/") {
            partial += "/" + component
            mkdir(partial, 0o700)
        }
    }
}
