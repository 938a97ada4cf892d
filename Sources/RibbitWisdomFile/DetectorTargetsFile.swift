import Glibc
import RibbitSystem

/// What the compressor's detectors read of the fitting's speech-like signal, per band layout
/// (`DetectorSpeechLevels` in RibbitFitting), kept beside FFTW's wisdom in
/// `$XDG_CACHE_HOME/ribbit/detector-targets-HASH`: read, it spares every start, reconnect and
/// `process` 3 s of that signal through an engine. The file names the build that wrote it (its
/// GNU build ID: another build may read differently) and the layout; a file from another build
/// or layout, damaged or cut short, is ignored and replaced by the next write. A cache: no error
/// here ever stops the sound.
public struct DetectorTargetsFile: Sendable {
    public let directory: String
    public let build: String

    /// Nil for an executable without a build ID: nothing would say which code wrote the file.
    public init?(cacheDirectory: String, build: String? = BuildID.current) {
        guard let build, !build.isEmpty else { return nil }
        (self.directory, self.build) = (cacheDirectory, build)
    }

    /// Far more than any layout's levels (10 bands, 2,250 hops: 90 kB) are not read.
    static let maxBytes = 8 << 20

    /// The file for `key` (its 64-bit FNV-1a hash: a short name from any layout).
    public func path(_ key: String) -> String {
        directory + "/detector-targets-" + FNV1a.hex(FNV1a.hash(key))
    }

    /// The first lines of the file: what it is, the build, the layout (one line) and the count.
    func header(_ key: String, count: Int) -> [UInt8] {
        Array("ribbit detector targets 1\nbuild \(build)\n\(key)\n\(count)\n".utf8)
    }

    /// The `count` values kept for `key` by this build, or nil.
    public func load(_ key: String, count: Int) -> [Float]? {
        let header = header(key, count: count)
        guard !key.contains("\n"), let bytes = CacheFile.read(path(key), maxBytes: Self.maxBytes),
            bytes.count == header.count + 4 * count, bytes[0..<header.count].elementsEqual(header)
        else { return nil }
        return bytes.withUnsafeBytes { raw in
            (0..<count).map {
                Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: header.count + 4 * $0, as: UInt32.self)))
            }
        }
    }

    /// Keeps `values` for `key`; nil when written, else why not (one line).
    @discardableResult
    public func save(_ key: String, _ values: [Float]) -> String? {
        guard !key.contains("\n") else { return "a layout is one line" }
        var bytes = header(key, count: values.count)
        bytes.reserveCapacity(bytes.count + 4 * values.count)
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 } }
        return CacheFile.write(bytes, to: path(key))
    }
}
