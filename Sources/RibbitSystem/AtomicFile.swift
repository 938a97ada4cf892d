import Glibc
import Synchronization

/// A file written whole and atomically, the one way ribbit replaces a file: a temporary file
/// beside it (created afresh with the mode asked, never through a symbolic link), every byte
/// written (a short or interrupted write goes on), fsync, rename over the old one, fsync of the
/// directory. A crash leaves the old file or the new one, never half of either; a failure
/// leaves the old one and no temporary file.
public enum AtomicFile {
    /// Numbers the temporary files, so two threads replacing one file never share one.
    private static let written = Atomic<Int>(0)

    /// Replaces `path` with `bytes` (its directory must exist), created with `mode` less the
    /// umask, as any new file; `exactly`: with `mode` whatever the umask (a private file, 0600).
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o666, exactly: Bool = false) throws(SyscallError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let number = written.add(1, ordering: .relaxed).newValue
        let temporary = (directory == "/" ? "" : directory) + "/.\(name).\(getpid()).\(number).tmp"
        unlink(temporary)  // a leftover of a crashed process that had this id
        let fd = try Syscall.checked("open", temporary) {
            open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        }
        var isOpen = true
        do throws(SyscallError) {
            var done = 0
            while done < bytes.count {
                let n = try Syscall.checked("write", path) {
                    bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
                }
                guard n > 0 else { throw SyscallError(call: "write", subject: path, code: EIO) }
                done += n
            }
            if exactly { _ = try Syscall.checked("fchmod", path) { fchmod(fd, mode) } }  // whatever the umask took away
            _ = try Syscall.checked("fsync", path) { fsync(fd) }
            isOpen = false
            guard close(fd) == 0 else { throw SyscallError(call: "close", subject: path, code: errno) }
            _ = try Syscall.checked("rename", path) { rename(temporary, path) }
        } catch {
            if isOpen { close(fd) }  // never twice: another thread may have its number by now
            unlink(temporary)
            throw error
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = Syscall.retrying { fsync(directoryFD) }
            close(directoryFD)
        }
    }
}
