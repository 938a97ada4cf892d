import Foundation
import RibbitAudioFile
import RibbitDSP
import RibbitSignals
import RibbitTestSupport
import Testing

/// Runs the release `ribbitd` (`make test` builds it; RIBBITD_RELEASE overrides), the binary that
/// ships and that the daemon tests run too.
struct Ribbitd {
    static let binary = Built.product("ribbitd", configuration: "release")

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String]) throws -> Result {
        let process = ChildProcess()
        process.executableURL = binary
        process.arguments = arguments
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = try out.fileHandleForReading.readAll()
        let stderr = try err.fileHandleForReading.readAll()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}

func rx(_ name: String) -> String { TestPaths.prescription(name).path }

@Suite struct CLITests {
    @Test func helpListsTheCommandsAndExitCodes() throws {
        let help = try Ribbitd.run(["--help"])
        #expect(help.status == 0)
        for word in [
            "run", "status", "load", "pause", "resume", "bypass", "stop", "ports", "dump", "process", "rx", "measure", "Exit codes",
            "65 bad prescription", "69 the daemon or JACK is not reachable",
        ] {
            #expect(help.stdout.contains(word))
        }
        let runHelp = try Ribbitd.run(["run", "--help"])
        for word in ["--rx", "--input", "--output", "--no-connect", "--config", "--log-level", "pw-jack"] {
            #expect(runHelp.stdout.contains(word))
        }
        let processHelp = try Ribbitd.run(["process", "--help"])
        for word in ["--rx", "--ear", "--keep-latency", "--dump", "--fft", "--hop", "--taps"] { #expect(processHelp.stdout.contains(word)) }
        let dumpHelp = try Ribbitd.run(["dump", "--help"])
        for word in ["--json", "--csv", "--svg", "--duration", "--ear", "q, Ctrl-C or SIGTERM", "docs/dump-format.md"] {
            #expect(dumpHelp.stdout.contains(word), "\(word)")
        }
    }

    @Test func rxShowPrintsTheTargetGainTable() throws {
        let result = try Ribbitd.run(["rx", "show", rx("mild-presbycusis.rx")])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Mild sloping high-frequency loss"))
        #expect(result.stdout.contains("NAL-R"))
        // NAL-R at 1000 Hz for the left ear: 3.5 + 0.31 * 20 + 1 = 10.7 dB.
        let leftGains = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("left  gain") })
        #expect(leftGains.contains("10.7"))
        // The right ear's rows first, as on an audiogram form.
        let labels = result.stdout.split(separator: "\n").map { String($0.prefix(5)) }.filter { $0 == "right" || $0 == "left " }
        #expect(labels == ["right", "right", "left ", "left "])
    }

    @Test func rxShowJSONIsMachineReadable() throws {
        let result = try Ribbitd.run(["rx", "show", "--json", rx("asymmetric.rx")])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["rule"] as? String == "half-gain")
        let ears = try #require(object["ears"] as? [String: Any])
        let right = try #require(ears["right"] as? [String: Any])
        let gains = try #require(right["targetGainDB"] as? [String: Any])
        #expect(gains["1000"] as? Double == 30)  // 60 dB HL / 2
    }

    @Test func badPrescriptionIsOneLineAndExit65() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bad = folder.appendingPathComponent("bad.rx")
        try Data("RIBBIT-RX 1\nname: x\nenv: quiet\nleft: 500=20 1000=200 2000=40 4000=50\n".utf8).write(to: bad)
        let result = try Ribbitd.run(["rx", "show", bad.path])
        #expect(result.status == 65)
        #expect(
            result.stderr
                == "ribbitd: error: \(bad.path): line 4: 'left': 200 dB HL at 1000 Hz is outside -10 to 120; the prescription was not used\n"
        )
        #expect(result.stdout.isEmpty)
        let missing = try Ribbitd.run(["rx", "show", folder.appendingPathComponent("nope.rx").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.split(separator: "\n").count == 1)
    }

    @Test func processWritesTheInputsFormatAndMatchesThePrescription() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("noise.wav").path
        let output = folder.appendingPathComponent("out.wav").path
        let format = AudioFormat.wav(sampleRate: 48000, channelCount: 2, float: false)
        let noise = [Signals.whiteNoise(count: 96000, rms: 0.01, seed: 41), Signals.whiteNoise(count: 96000, rms: 0.01, seed: 42)]
        let writer = try AudioFileWriter(path: input, format: format)
        try writer.write(channels: noise)
        try writer.close()

        let result = try Ribbitd.run(["process", input, output, "--rx", rx("ski-slope.rx")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("latency 96 samples (2.00 ms)"))
        let reader = try AudioFileReader(path: output)
        #expect(reader.format == format)
        #expect(reader.frameCount == 96000)
        #expect(!FileManager.default.fileExists(atPath: output + ".partial"))

        let measured = try Ribbitd.run(["measure", input, output, "--rx", rx("ski-slope.rx"), "--tolerance", "2"])
        #expect(measured.status == 0, "\(measured.stdout)\(measured.stderr)")
        // The same output judged against another prescription must fail: the check can fail.
        let wrong = try Ribbitd.run(["measure", input, output, "--rx", rx("flat.rx"), "--tolerance", "2"])
        #expect(wrong.status == 1)
    }

    @Test func processAlignsOutputUnlessAskedToKeepTheLatency() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("click.wav").path
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 44100, channelCount: 1))
        try writer.write(channels: [Signals.impulse(count: 10000, at: 5000, amplitude: 0.25)])
        try writer.close()
        for (keep, expectedPeak, expectedLength) in [(false, 5000, 10000), (true, 5096, 10096)] {
            let output = folder.appendingPathComponent("out-\(keep).wav").path
            let result = try Ribbitd.run(
                ["process", input, output, "--rx", rx("flat.rx"), "--ear", "right"] + (keep ? ["--keep-latency"] : []))
            #expect(result.status == 0, "\(result.stderr)")
            let y = try AudioFileReader(path: output).readAll()[0]
            #expect(y.count == expectedLength)
            #expect(y.indices.max { abs(y[$0]) < abs(y[$1]) } == expectedPeak)
            #expect(abs(y[expectedPeak] - 0.25) < 1e-6)
        }
    }

    @Test func commandLineMistakesExit64WithOneLine() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mono = folder.appendingPathComponent("mono.wav").path
        let writer = try AudioFileWriter(path: mono, format: .wav(sampleRate: 48000, channelCount: 1))
        try writer.write(channels: [[Float](repeating: 0, count: 100)])
        try writer.close()
        let out = folder.appendingPathComponent("out.wav").path
        let cases: [([String], String)] = [
            (["process", mono, out, "--rx", rx("flat.rx")], "is mono; say whose fitting to apply with --ear left or --ear right"),
            (["process", mono, mono, "--rx", rx("flat.rx"), "--ear", "left"], "OUT is the same file as IN"),
            (["process", mono, out, "--rx", rx("flat.rx"), "--ear", "left", "--taps", "400"], "--taps 400 must be an odd number"),
            (["process", mono, out, "--rx", rx("flat.rx"), "--ear", "left", "--taps", "301"], "--taps 301 does not fit"),
            (["measure", mono, mono, "--rx", rx("flat.rx")], "is mono; say whose fitting to apply with --ear left or --ear right"),
        ]
        for (arguments, message) in cases {
            let result = try Ribbitd.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func unreadableSoundIsExit66AndLeavesNoOutput() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notSound = folder.appendingPathComponent("song.wav")
        try Data("RIFF but not really".utf8).write(to: notSound)
        let out = folder.appendingPathComponent("out.wav").path
        let result = try Ribbitd.run(["process", notSound.path, out, "--rx", rx("flat.rx")])
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix("ribbitd: error: \(notSound.path): cannot read it as sound"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

/// The demo of the README: real espeak-ng speech through a sample prescription, measured.
@Suite struct SpeechDemoTests {
    func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(arguments: ["mild-presbycusis.rx", "asymmetric.rx", "moderate-flat.rx"])
    func processedSpeechMatchesThePrescription(_ name: String) throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let raw = folder.appendingPathComponent("raw.wav").path
        let speech = folder.appendingPathComponent("speech.wav").path
        let processed = folder.appendingPathComponent("processed.wav").path
        #expect(try run("espeak-ng", ["-w", raw, "The quick brown fox jumps over the lazy dog. Six thick thistle sticks."]) == 0)
        // Quiet speech (peaks at -40 dBFS): even +40 dB stays under the ceiling, so this
        // measures the filter, not the limiter.
        #expect(try run("sox", ["-q", raw, "-r", "48000", "-c", "2", "-b", "16", speech, "gain", "-n", "-40"]) == 0)
        let result = try Ribbitd.run(["process", speech, processed, "--rx", rx(name)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("the limiter acted on 0.00 % of samples"))
        let measured = try Ribbitd.run(["measure", speech, processed, "--rx", rx(name), "--tolerance", "2"])
        #expect(measured.status == 0, "\(measured.stdout)\(measured.stderr)")
    }
}
