import Foundation
import RibbitSystem
import RibbitTestSupport
import Testing

@testable import RibbitWisdomFile

/// The detector targets' file beside FFTW's wisdom: what one build kept, the same build reads
/// back bit for bit; another build, another layout, a count that differs, a file cut short or
/// damaged are not read (the fitting then reads the detectors again and writes it anew).
@Suite struct DetectorTargetsFileTests {
    let values: [Float] = [-12.5, 0, .infinity, -.infinity, 93.25, .leastNonzeroMagnitude, -0.0, 1e-30]
    let key = "centres 250.0 500.0; fft 512 hop 64 taps 193; rate 48000.0"

    @Test func whatABuildKeptItReadsBackBitForBit() throws {
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The cache directory does not exist yet: the first write makes it.
        let cache = directory.appendingPathComponent("cache/ribbit").path
        let file = try #require(DetectorTargetsFile(cacheDirectory: cache, build: "0123abcd"))
        #expect(file.load(key, count: values.count) == nil)
        #expect(file.save(key, values) == nil)
        let read = try #require(file.load(key, count: values.count))
        #expect(read.map(\.bitPattern) == values.map(\.bitPattern))
        #expect(file.path(key).hasPrefix(cache + "/detector-targets-") && file.path(key).count == cache.count + 34)

        // Another build, layout or count reads nothing; so does a file cut short or damaged.
        #expect(DetectorTargetsFile(cacheDirectory: cache, build: "0123abce")?.load(key, count: values.count) == nil)
        #expect(file.load(key + " ", count: values.count) == nil)
        #expect(file.load(key, count: values.count - 1) == nil)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file.path(key)))
        try bytes.dropLast().write(to: URL(fileURLWithPath: file.path(key)))
        #expect(file.load(key, count: values.count) == nil)
        var damaged = bytes
        damaged[2] ^= 0x20
        try damaged.write(to: URL(fileURLWithPath: file.path(key)))
        #expect(file.load(key, count: values.count) == nil)
        // Written anew, it reads again; a layout of two lines is refused, not half-written.
        #expect(file.save(key, values) == nil && file.load(key, count: values.count) != nil)
        #expect(file.save("a\nb", values) != nil)
        #expect(DetectorTargetsFile(cacheDirectory: cache, build: nil) == nil)
    }

    /// The build ID as `readelf -n` (binutils, independent code) reads it from ribbitd, and
    /// this process's own: 40 hex digits, the same for the same file, none in a text file.
    @Test func theBuildIDIsWhatReadelfReads() throws {
        let ribbitd = Built.product("ribbitd", configuration: "release").path
        let readelf = ChildProcess()
        readelf.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        readelf.arguments = ["-n", ribbitd]
        let out = Pipe()
        readelf.standardOutput = out
        try readelf.run()
        let text = String(decoding: try out.fileHandleForReading.readAll(), as: UTF8.self)
        readelf.waitUntilExit()
        let line = try #require(text.split(separator: "\n").first { $0.contains("Build ID:") }, "\(text)")
        let expected = line.split(separator: " ").last.map(String.init)
        #expect(BuildID.read(path: ribbitd) == expected)
        let own = try #require(BuildID.current)
        #expect(own.count == 40 && own.allSatisfy(\.isHexDigit), "\(own)")
        #expect(BuildID.read(path: "/etc/passwd") == nil && BuildID.read(path: "/nonexistent") == nil)
    }
}
