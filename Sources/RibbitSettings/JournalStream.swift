import Glibc

/// Whether standard error goes to the systemd journal: systemd sets JOURNAL_STREAM to the
/// "device:inode" of the stream it connected, and sd-daemon(3) asks programs to compare it with
/// their own stderr, so a child whose stderr was redirected elsewhere does not take the
/// journal's format.
public enum JournalStream {
    public static func isStandardError(environment: [String: String]) -> Bool {
        isJournal(STDERR_FILENO, environment: environment)
    }

    /// Whether descriptor `fd` is the journal's stream (standard output, for ribbit-web).
    public static func isJournal(_ fd: Int32, environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// sd-daemon(3)'s priority prefix for one line: "<3>" for an error ... "<7>" for debug.
    /// journald strips it and files the line with that priority.
    public static func prefix(_ priority: Priority) -> String { "<\(priority.rawValue)>" }

    /// syslog(3) priorities.
    public enum Priority: Int, Sendable {
        case emergency = 0, alert, critical, error, warning, notice, info, debug
    }
}
