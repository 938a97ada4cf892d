import Foundation
import RibbitAudioFile
import RibbitControl
import RibbitDSP
import RibbitMonitor
import RibbitSignals
import RibbitTestSupport
import Testing

/// `process --dump`: the debug dump of a file, the same frames the daemon streams, without JACK.
@Suite struct DumpCLITests {
    /// A 1 kHz tone at -40 dBFS RMS, 2 s, through mild-presbycusis: 40 frames, one per 50 ms;
    /// the tone's band gains the target within +-1 dB, the levels are what was written, the
    /// CSV has a row per frame and ear, and the SVG holds every series.
    @Test func processDumpShowsTheTargetGainOfATone() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("tone.wav").path
        let tone = Signals.sine(count: 96000, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.01 * 2.0.squareRoot())
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 48000, channelCount: 2, float: true))
        try writer.write(channels: [tone, tone])
        try writer.close()
        let dump = folder.appendingPathComponent("dump").path
        let result = try Ribbitd.run([
            "process", input, folder.appendingPathComponent("out.wav").path, "--rx", rx("mild-presbycusis.rx"), "--dump", dump,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("dump.jsonl (40 frames)"), "\(result.stdout)")
        let lines = try String(contentsOfFile: dump + "/dump.jsonl", encoding: .utf8).split(separator: "\n")
        let frames = try lines.map { try JSONDecoder().decode(DumpFrame.self, from: Data($0.utf8)) }
        #expect(frames.count == 40)
        #expect(frames.enumerated().allSatisfy { abs($1.time - 0.05 * Double($0 + 1)) < 1e-9 })
        let shown = try Ribbitd.run(["rx", "show", rx("mild-presbycusis.rx"), "--json"])
        let targets = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        let band = try #require(DumpAnalyzer.bandCentersHz.firstIndex(of: 1000))
        for frame in frames {
            #expect(
                frame.latencyFrames == 96 && frame.sampleRate == 48000 && frame.prescription?.name == "Mild sloping high-frequency loss")
            for ear in ["left", "right"] {
                let values = try #require(frame.ears[ear])
                let target = try #require(values.targetGainDB[band])
                #expect(abs(values.outputBandsDB[band] - values.inputBandsDB[band] - target) <= 1, "\(ear) at \(frame.time) s")
                #expect(abs(values.inputRMSDB + 40) < 0.05 && abs(values.inputBandsDB[band] + 40) < 0.5)
                #expect(values.audiogram.count == 8)
            }
        }
        // The target in the dump is the one `rx show` prints (same fitting code, same numbers).
        let gains = try #require(((targets["ears"] as? [String: Any])?["left"] as? [String: Any])?["targetGainDB"] as? [String: Any])
        #expect(abs(try #require(gains["1000"] as? Double) - frames[0].ears["left"]!.targetGainDB[band]!) < 0.05, "\(gains)")
        let rows = try String(contentsOfFile: dump + "/dump.csv", encoding: .utf8).split(separator: "\n")
        #expect(rows.count == 1 + 2 * 40 && rows[1].hasPrefix("0.050,left,processing,-40.0"), "\(rows.prefix(2))")
        let svg = try SVGContents(dump + "/dump.svg")
        for id in [
            "left-input-spectrum", "left-output-spectrum", "left-target-gain", "left-applied-gain", "left-measured-gain",
            "right-measured-gain", "audiogram-left", "audiogram-right",
        ] {
            #expect(svg.ids.contains(id), "\(id) missing")
        }
        #expect(svg.marks == ["X": 8, "O": 8])
    }

    /// A mono file processed for one ear dumps that ear only.
    @Test func monoFileDumpsItsEarOnly() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("noise.wav").path
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 44100, channelCount: 1))
        try writer.write(channels: [Signals.whiteNoise(count: 22050, rms: 0.05, seed: 7)])
        try writer.close()
        let dump = folder.appendingPathComponent("d").path
        let result = try Ribbitd.run([
            "process", input, folder.appendingPathComponent("o.wav").path, "--rx", rx("asymmetric.rx"), "--ear", "right", "--dump", dump,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let frames = try String(contentsOfFile: dump + "/dump.jsonl", encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(DumpFrame.self, from: Data($0.utf8)) }
        #expect(frames.count == 10 && frames.allSatisfy { Array($0.ears.keys) == ["right"] && $0.sampleRate == 44100 })
        #expect(try SVGContents(dump + "/dump.svg").marks.keys.sorted() == ["O"], "only the right ear's audiogram")
    }

    /// Mistakes: one line each, the right exit code, and no sound file left behind.
    @Test func dumpMistakesAreOneLine() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.wav").path
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 48000, channelCount: 2))
        try writer.write(channels: [[Float](repeating: 0, count: 100), [Float](repeating: 0, count: 100)])
        try writer.close()
        let empty = folder.appendingPathComponent("empty.wav").path
        try AudioFileWriter(path: empty, format: .wav(sampleRate: 48000, channelCount: 2)).close()
        let aFile = folder.appendingPathComponent("a-file").path
        _ = FileManager.default.createFile(atPath: aFile, contents: Data())
        let out = folder.appendingPathComponent("out.wav").path
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = folder.path  // no daemon listens there
        let cases: [([String], Int32, String)] = [
            (["process", input, out, "--rx", rx("flat.rx"), "--dump", aFile], 73, "exists and is not a directory"),
            (["process", empty, out, "--rx", rx("flat.rx"), "--dump", folder.appendingPathComponent("d").path], 65, "has no samples"),
            (["dump", "--json"], 69, "the ribbit daemon is not running"),
            (["dump", "--duration", "0", "--json"], 64, "--duration takes seconds"),
            (["dump"], 64, "the live view needs a terminal"),
        ]
        for (arguments, code, message) in cases {
            let result = try Built.run(Ribbitd.binary, arguments, environment: environment)
            #expect(result.status == code, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out) && !FileManager.default.fileExists(atPath: out + ".partial"))
        let badEar = try Built.run(Ribbitd.binary, ["dump", "--ear", "middle", "--json"], environment: environment)
        #expect(badEar.status == 64 && badEar.stderr.contains("middle"), "\(badEar.stderr)")
    }
}
