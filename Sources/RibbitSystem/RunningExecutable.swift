import Glibc

/// The file this process was started from, as the file system has it now.
public enum RunningExecutable {
    /// Whether that file has been replaced or removed since the process started: a package
    /// upgrade writes the new file beside the old one and renames it over, so /proc/self/exe
    /// still leads to the image that runs while its path leads to another file (or to none).
    public static func wasReplaced() -> Bool {
        var running = stat()
        guard stat("/proc/self/exe", &running) == 0 else { return false }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return false }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // The kernel marks the link of an unlinked file so.
        if path.hasSuffix(" (deleted)") { return true }
        var current = stat()
        guard stat(path, &current) == 0 else { return true }
        return current.st_dev != running.st_dev || current.st_ino != running.st_ino
    }
}
