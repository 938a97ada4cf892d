import Foundation
import Glibc

/// A settings file ribbit writes (calibration.toml, hearing-reference.toml): whole and
/// atomically (a temporary file beside it, fsync, rename), mode 0644, so a crash leaves the old
/// file or the new one, never half of either.
enum SettingsFile {
    static func write(_ text: String, to path: String) throws(ConfigError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ConfigError("cannot make \(directory): \(error.localizedDescription)", kind: .unreadable)
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ConfigError("cannot write \(temporary): \(String(cString: strerror(errno)))", kind: .unreadable) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw ConfigError("cannot write \(path): \(why)", kind: .unreadable)
        }
    }
}
