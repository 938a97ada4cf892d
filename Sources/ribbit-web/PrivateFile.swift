import Foundation
import Glibc
import RibbitSystem

/// A file only this user may read, in a directory only this user may enter: the personal link
/// (`web-token` in the runtime directory, for `ribbitd web --url`) and the HTTPS key.
enum PrivateFile {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Creates the 0700 directory if missing (and its parents), refusing one that is not this
    /// user's with mode 0700, or a symbolic link, and writes the file 0600 without following a
    /// link, atomically.
    static func write(_ text: String, to path: String) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(
            atPath: (directory as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw Failure(description: "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0
        else { throw Failure(description: "\(directory) is not a directory of this user's with mode 0700; move it away") }
        do { try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600, exactly: true) } catch {
            throw Failure(description: error.description)
        }
    }

    /// Removes the file if it still holds `text` (another ribbit-web may have replaced it).
    static func remove(_ path: String, ifHolding text: String) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        close(fd)
        if count > 0, String(decoding: buffer[0..<count], as: UTF8.self) == text { unlink(path) }
    }
}
