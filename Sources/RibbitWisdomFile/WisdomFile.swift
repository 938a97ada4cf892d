import Glibc
import RibbitDSP
import RibbitSystem

/// The FFTW wisdom file of this user on this machine, `$XDG_CACHE_HOME/ribbit/fftw-wisdom`:
/// read before planning, written (temp file and rename: never seen half-written) when the
/// process learnt plans the file did not hold. A missing, damaged or foreign-version file is
/// ignored and replaced by the next write. A cache: no error here ever stops the sound.
/// Glibc only, for the audio process (no Foundation there).
public final class WisdomFile {
    public let path: String
    /// The wisdom as read (or last written), to write only what is new.
    private(set) var known = ""

    public init(path: String) { self.path = path }

    /// The path under a cache directory (`RibbitPaths.cacheDirectory`).
    public convenience init(cacheDirectory: String) { self.init(path: cacheDirectory + "/fftw-wisdom") }

    /// Files far larger than any wisdom (a few kB per length) are not read.
    static let maxBytes = 1 << 20

    public enum Loaded: Equatable, Sendable {
        case loaded, missing, damaged
        case otherVersion(String)
    }

    /// Imports the file's wisdom into this process.
    @discardableResult
    public func load() -> Loaded {
        guard let text = Self.read(path) else { return access(path, F_OK) == 0 ? .damaged : .missing }
        switch FFTWisdom.importFile(text) {
        case .imported:
            known = FFTWisdom.export()
            return .loaded
        case .damaged: return .damaged
        case .otherVersion(let version): return .otherVersion(version)
        }
    }

    /// Writes this process's wisdom when it holds plans the file did not; nil when nothing
    /// was new or it was written, else why not (one line).
    @discardableResult
    public func saveIfNew() -> String? {
        let wisdom = FFTWisdom.export()
        guard wisdom != known, !wisdom.isEmpty else { return nil }
        if let error = Self.write(FFTWisdom.fileText(), to: path) { return error }
        known = wisdom
        return nil
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size <= maxBytes else { return nil }
        // Its size and a byte more: a file that grew while read is still caught by the cap.
        var bytes = [UInt8](repeating: 0, count: min(Int(info.st_size) + 1, maxBytes + 1))
        var count = 0
        while count < bytes.count {
            let n = Syscall.retrying { bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) } }
            guard n > 0 else { break }
            count += n
        }
        guard count <= maxBytes else { return nil }
        return String(validating: bytes[0..<count], as: UTF8.self)
    }

    /// Temp file beside it, then rename: a reader sees the old file or the new one, never part.
    static func write(_ text: String, to path: String) -> String? {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { makeDirectories(directory) }
        let temporary = "\(path).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return "cannot write \(temporary): \(String(cString: strerror(errno)))" }
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = Syscall.retrying { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) } }
            guard n > 0 else { break }
            done += n
        }
        let closed = close(fd) == 0
        guard done == bytes.count, closed, rename(temporary, path) == 0 else {
            let error = String(cString: strerror(errno))
            unlink(temporary)
            return "cannot write \(path): \(error)"
        }
        return nil
    }

    /// mkdir -p, owner-only for what it makes (the cache is the user's own).
    private static func makeDirectories(_ directory: String) {
        var partial = ""
        for component in directory.split(separator: "/") {
            partial += "/" + component
            mkdir(partial, 0o700)
        }
    }
}
