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
        CacheFile.read(path, maxBytes: maxBytes).flatMap { String(validating: $0, as: UTF8.self) }
    }

    static func write(_ text: String, to path: String) -> String? { CacheFile.write(Array(text.utf8), to: path) }
}
