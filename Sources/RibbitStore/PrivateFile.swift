import Foundation
import Glibc
import RibbitSystem

/// The wearer's private files (the history, its copy, the daemon's lock): created 0600 in a
/// 0700 directory, never through a symbolic link, replaced atomically.
enum PrivateFile {
    /// Makes sure `path` is a plain file of ours with mode 0600 (creating it empty if missing)
    /// in a directory that exists. A symbolic link or anything but a plain file is refused.
    static func prepare(_ path: String) throws(StoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError("cannot create \(directory): \(describe(error))")
        }
        let fd = try open(path, flags: O_RDWR | O_CREAT)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw StoreError("\(path) is not a plain file; move it away")
        }
        if info.st_mode & 0o077 != 0 { fchmod(fd, 0o600) }  // made world-readable by an older version
    }

    /// Opens without following a symbolic link; a created file gets mode 0600.
    static func open(_ path: String, flags: Int32) throws(StoreError) -> Int32 {
        let fd = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { throw StoreError("\(path) is a symbolic link; ribbit keeps its files as plain files: move the link away") }
            throw StoreError("cannot open \(path): \(String(cString: strerror(code)))")
        }
        return fd
    }

    /// Replaces the file's contents atomically, mode 0600 (`AtomicFile`): a crash leaves the old
    /// or the new contents, never half.
    static func replace(_ path: String, with data: Data) throws(StoreError) {
        do { try AtomicFile.write([UInt8](data), to: path, mode: 0o600, exactly: true) } catch { throw StoreError(error.description) }
    }

    /// The whole file, when it is a plain file of at most `maxBytes`.
    static func read(_ path: String, maxBytes: Int) throws(StoreError) -> Data {
        let fd = try open(path, flags: O_RDONLY)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= maxBytes else {
            throw StoreError("\(path) is not a plain file of at most \(maxBytes) bytes")
        }
        var data = Data(count: Int(info.st_size))
        let count = data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count == data.count else { throw StoreError("cannot read \(path)") }
        return data
    }

    static func describe(_ error: Error) -> String {
        ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError).map { String(cString: strerror(Int32($0.code))) }
            ?? "\(error)"
    }
}
