import Foundation
import Glibc

/// The daemon's persistent state: the active prescription's text, so the next start uses it.
public struct StateStore: Sendable {
    public let directory: String
    public var activePrescriptionPath: String { directory + "/active.rx" }

    public init(directory: String) { self.directory = directory }

    /// The active prescription's text, or nil if none was ever loaded.
    public func loadActive() throws -> String? {
        guard FileManager.default.fileExists(atPath: activePrescriptionPath) else { return nil }
        return try String(contentsOfFile: activePrescriptionPath, encoding: .utf8)
    }

    /// Replaces the active prescription atomically: write a temporary file, fsync, rename over
    /// the old one, fsync the directory. A crash leaves the old or the new file, never half.
    public func saveActive(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = activePrescriptionPath + ".partial"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else {
            unlink(temporary)
            throw StateError("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, activePrescriptionPath) == 0 else {
            unlink(temporary)
            throw StateError("cannot replace \(activePrescriptionPath): \(String(cString: strerror(errno)))")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}

public struct StateError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
