import Foundation
import RibbitAudioFile
import RibbitSignals
import RibbitTestSupport
import Testing

/// `ribbitd process` keeps what the compressor's detectors read of speech (per band layout)
/// beside FFTW's wisdom: the first run writes the file, a later run reads it rather than
/// playing 3 s of speech through an engine; a damaged file is read anew and replaced.
@Suite struct DetectorTargetsCLITests {
    @Test func theNextRunReadsTheKeptTargetsAndADamagedFileIsReplaced() throws {
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = try TestPaths.privateHome(in: directory)
        environment["XDG_CACHE_HOME"] = directory.appendingPathComponent("cache").path
        let cache = directory.appendingPathComponent("cache/ribbit").path
        // One second of speech-level noise, both ears.
        let input = directory.appendingPathComponent("in.wav").path
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 48000, channelCount: 2))
        try writer.write(channels: [
            Signals.whiteNoise(count: 48000, rms: 0.02, seed: 3), Signals.whiteNoise(count: 48000, rms: 0.02, seed: 4),
        ])
        try writer.close()
        var runs = 0
        func process() throws -> [[UInt32]] {
            runs += 1
            let output = directory.appendingPathComponent("out\(runs).wav").path
            let result = try runWithTimeout(
                Ribbitd.binary, ["process", input, output, "--rx", rx("camfit-sloping.rx"), "--program", "noisy"],
                environment: environment, timeout: 120)
            #expect(result.status == 0, "\(result.stderr)")
            return try AudioFileReader(path: output).readAll().map { $0.map(\.bitPattern) }
        }
        func targetsFile() throws -> String {
            let names = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix("detector-targets-") }
            try #require(names.count == 1, "\(names)")
            return cache + "/" + names[0]
        }

        let first = try process()
        let path = try targetsFile()
        let kept = try Data(contentsOf: URL(fileURLWithPath: path))
        // Four lines (what it is, the build, the layout, the count), then the levels.
        let lines = kept.split(separator: UInt8(ascii: "\n"), maxSplits: 4, omittingEmptySubsequences: false)
        let count = try #require(Int(String(decoding: lines[3], as: UTF8.self)))
        let headerBytes = lines[0..<4].reduce(0) { $0 + $1.count + 1 }
        #expect(kept.count == headerBytes + 4 * count && count >= 10 * 2000, "\(kept.count) bytes, \(count) levels")

        // The kept levels, every one 6 dB louder: the next run reads them (its knees move, its
        // output differs) and leaves the file as it was.
        var louder = Data(kept.prefix(headerBytes))
        for i in 0..<count {
            let bits = kept.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: headerBytes + 4 * i, as: UInt32.self)) }
            withUnsafeBytes(of: (Float(bitPattern: bits) + 6).bitPattern.littleEndian) { louder.append(contentsOf: $0) }
        }
        try louder.write(to: URL(fileURLWithPath: path))
        let fromLouder = try process()
        #expect(fromLouder != first, "a run with targets 6 dB louder wrote the same samples: the file was not read")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == louder)

        // Cut short, the file is not read: the targets are read off the engine again, written
        // back as the first run wrote them, and the samples are the first run's.
        try louder.prefix(headerBytes + 100).write(to: URL(fileURLWithPath: path))
        #expect(try process() == first)
        #expect(try Data(contentsOf: URL(fileURLWithPath: try targetsFile())) == kept)
        // And read as written: the same samples again.
        #expect(try process() == first)
    }
}
