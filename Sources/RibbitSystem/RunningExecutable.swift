import Glibc

/// The file this process was started from, noted when it starts: its path and its file identity.
/// A package upgrade writes the new file beside the old one and renames it over (or moves the
/// old one aside first), so later the path leads to another file, or to none.
public struct RunningExecutable: Sendable {
    public let path: String
    let device: UInt64
    let inode: UInt64

    /// This process's executable as it is now; nil when /proc/self/exe cannot tell (not Linux,
    /// or a file already gone when the process started).
    public init?() {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count)
        guard count > 0, count < buffer.count else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var running = stat()
        // The kernel marks the link of an unlinked file " (deleted)": nothing to compare with.
        guard !path.hasSuffix(" (deleted)"), stat("/proc/self/exe", &running) == 0 else { return nil }
        self.path = path
        device = UInt64(running.st_dev)
        inode = UInt64(running.st_ino)
    }

    /// Whether the path now leads to another file, or to none (replaced or removed). An error
    /// that says nothing about the file (permissions, say) is not taken for a replacement.
    public var wasReplaced: Bool {
        var now = stat()
        guard stat(path, &now) == 0 else { return errno == ENOENT || errno == ENOTDIR }
        return UInt64(now.st_dev) != device || UInt64(now.st_ino) != inode
    }
}
