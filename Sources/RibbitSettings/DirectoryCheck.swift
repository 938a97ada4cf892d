import Foundation
import Glibc

/// Whether ribbit can store files in a directory: a data directory on an SD card the kernel
/// remounted read-only, a directory of another user, a full disk. Asked once at start so the
/// wearer hears of it in `status` before a change fails.
public enum DirectoryCheck {
    /// Below this much free space a disk counts as full: a history write needs a few pages,
    /// the data log's flush a few more.
    public static let fullBelowBytes = 1 << 20

    /// Why nothing can be written in `directory` (or, when it does not exist yet, in the
    /// nearest directory above it that does), in a few words; nil when it can be.
    public static func unwritable(_ directory: String) -> String? {
        var path = directory
        var info = stat()
        while stat(path, &info) != 0 {
            guard errno == ENOENT, path != "/", !path.isEmpty else { return String(cString: strerror(errno)) }
            path = (path as NSString).deletingLastPathComponent
        }
        var fs = statvfs()
        let readOnlyMount: UInt = 1  // ST_RDONLY: even root cannot write there
        if statvfs(path, &fs) == 0, fs.f_flag & readOnlyMount != 0 { return String(cString: strerror(EROFS)) }
        return access(path, W_OK) == 0 ? nil : String(cString: strerror(errno))
    }

    /// The bytes free for this user on the disk holding `directory` (nil: cannot tell).
    public static func freeBytes(_ directory: String) -> Int? {
        var path = directory
        var fs = statvfs()
        while statvfs(path, &fs) != 0 {
            guard errno == ENOENT, path != "/", !path.isEmpty else { return nil }
            path = (path as NSString).deletingLastPathComponent
        }
        return Int(fs.f_bavail) * Int(fs.f_frsize)
    }
}
