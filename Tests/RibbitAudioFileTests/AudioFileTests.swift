import Foundation
import RibbitAudioFile
import RibbitSignals
import RibbitTestSupport
import Testing

@Suite struct AudioFileTests {
    @Test(arguments: [("wav", false), ("wav", true), ("flac", false)])
    func writesAndReadsBackThroughLibsndfile(_ kind: String, _ float: Bool) throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("tone.\(kind)").path
        let format =
            kind == "flac" ? AudioFormat.flac(sampleRate: 44100, channelCount: 2) : .wav(sampleRate: 44100, channelCount: 2, float: float)
        let left = Signals.sine(count: 4410, frequencyHz: 441, sampleRate: 44100, amplitude: 0.5)
        let right = left.map { -$0 }
        let writer = try AudioFileWriter(path: path, format: format)
        try writer.write(channels: [left, right])
        try writer.close()

        let reader = try AudioFileReader(path: path)
        #expect(reader.format == format)
        #expect(reader.frameCount == 4410)
        let back = reader.readAll()
        // 16-bit quantisation: half a step of 2^-15.
        let tolerance: Float = float ? 0 : 1.0 / 32768
        #expect(zip(back[0], left).allSatisfy { abs($0 - $1) <= tolerance })
        #expect(zip(back[1], right).allSatisfy { abs($0 - $1) <= tolerance })
    }

    @Test func refusesAFileThatIsNotSound() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notes.wav").path
        try Data("not a sound".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: AudioFileError.self) { try AudioFileReader(path: path) }
        #expect(throws: AudioFileError.self) { try AudioFileReader(path: folder.appendingPathComponent("missing.wav").path) }
    }
}
