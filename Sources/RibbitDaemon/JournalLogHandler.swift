import Glibc
import Logging
import RibbitSettings
import RibbitSystem

/// swift-log's handler for a daemon whose stderr is the systemd journal: each line starts with
/// its sd-daemon(3) priority ("<4>the audio process ended ...") and carries no timestamp or
/// host name, which the journal adds itself. On a terminal `ribbitd run` keeps
/// StreamLogHandler's readable form instead.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let write: @Sendable (String) -> Void

    public init(logLevel: Logger.Level, write: @escaping @Sendable (String) -> Void = JournalLogHandler.writeToStandardError) {
        self.logLevel = logLevel
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let suffix = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        write(Self.lines("\(event.message)" + suffix, priority: Self.priority(event.level)))
    }

    /// Every line of a message gets the prefix: journald files each line as its own entry.
    static func lines(_ text: String, priority: JournalStream.Priority) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { JournalStream.prefix(priority) + $0 + "\n" }.joined()
    }

    static func priority(_ level: Logger.Level) -> JournalStream.Priority {
        switch level {
        case .trace, .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }

    /// One write(2) per message, so lines from two threads do not interleave.
    public static let writeToStandardError: @Sendable (String) -> Void = { text in
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = Syscall.retrying {
                bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            }
            if written <= 0 { return }
            offset += written
        }
    }
}
