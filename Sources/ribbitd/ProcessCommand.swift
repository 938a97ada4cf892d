import ArgumentParser
import Foundation
import RibbitAudioFile
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitIntake
import RibbitPrescription
import RibbitSettings

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Apply a prescription to a sound file, as the hearing aid would.",
        discussion: """
            Reads IN (WAV, FLAC, or anything libsndfile reads), writes OUT in the format its extension \
            names (.wav, .flac, .ogg, .mp3, .aiff ...: what libsndfile writes here), with IN's encoding \
            where that format takes it, and IN's channel count; OUT without an extension gets IN's format. A stereo file gets the left ear's fitting on channel 1 and the right \
            ear's on channel 2; a mono file needs --ear. OUT is time-aligned with IN (the \
            engine's latency is removed) unless --keep-latency is given. --dump DIR writes what \
            `ribbitd dump` shows of the daemon for the file: DIR/dump.jsonl (a frame per 50 ms), \
            DIR/dump.csv and DIR/dump.svg (docs/dump-format.md).
            """
    )

    @Argument(help: "The sound file to process.", completion: .soundFile) var input: String
    @Argument(help: "Where to write the result.", completion: .file()) var output: String
    @Option(name: .customLong("rx"), help: ArgumentHelp("The prescription (.rx text).", valueName: "RX"), completion: .prescriptionFile)
    var prescriptionPath: String
    @Option(help: "For a mono file: whose fitting to apply (left or right).") var ear: Ear?
    @Flag(help: "Keep the real-time delay in OUT (it is then longer by the latency).") var keepLatency = false
    @Option(
        help: ArgumentHelp("Also write the debug dump (spectra, levels, gains) for the file into this directory.", valueName: "DIR"),
        completion: .directory)
    var dump: String?
    @Option(help: "The listening program (quiet, noisy, outdoor, music; default: the one the prescription's env selects).")
    var program: Program?
    @Option(help: ArgumentHelp("The wearer's volume trim in dB (-10 to +10), as `ribbitd volume` sets it.", valueName: "DB"))
    var volume: Double = 0
    @OptionGroup var engineOptions: EngineOptions

    func run() throws {
        // Before any work: OUT's name says its format (an .mp3 once got WAV data).
        do { _ = try AudioFormat.majorFormat(forOutput: output) } catch { throw RibbitError.usage(error.description) }
        // Judged against the trusted keys (a trusted signature may allow a higher output limit)
        // and played through the calibration in use, as the daemon would.
        let paths = RibbitPaths()
        let config = try loadConfig(paths)
        let accepted = try readPrescription(
            prescriptionPath, intake: Intake(trusted: Intake.load(paths: paths, config: config).trusted, requireSigned: false)
        ).accepted
        let rx = accepted.prescription
        guard rx.volumeRange.contains(volume) else {
            throw RibbitError.usage(
                "--volume is from \(Prescription.number(rx.volumeRange.lowerBound)) to +\(Prescription.number(rx.volumeRange.upperBound)) dB for this prescription, not \(Prescription.number(volume))"
            )
        }
        let reader = try openAudio(input)
        let format = reader.format
        let outputFormat: AudioFormat
        do { outputFormat = try AudioFormat.forOutput(output, like: format) } catch { throw RibbitError.usage(error.description) }
        let ears = try ears(channelCount: format.channelCount, ear: ear, path: input)
        if FileManager.default.fileExists(atPath: output),
            URL(fileURLWithPath: output).resolvingSymlinksInPath() == URL(fileURLWithPath: input).resolvingSymlinksInPath()
        {
            throw RibbitError.usage("OUT is the same file as IN; choose another name so the original is kept")
        }
        let sampleRate = Double(format.sampleRate)
        guard EngineGeometry.supportedSampleRates.contains(sampleRate) else {
            throw RibbitError.data("\(input): \(EngineError.unsupportedSampleRate(sampleRate))")
        }
        let geometry = try engineOptions.geometry(sampleRate: sampleRate)
        let fitting: Fitting
        let filters: FilterSet
        let engine: OverlapSaveEngine
        let ceilingDBFS: Double
        let calibration: Calibration
        let calibrationStatus: DaemonStatus.Calibration
        do {
            fitting = try Fitting(prescription: rx, sampleRate: sampleRate, geometry: geometry)
            calibration = config.calibrationProfile?.calibration(ears: ears) ?? .uncalibrated
            let processing = fitting.processing(
                ears: ears, trusted: accepted.isTrusted, calibration: calibration, program: program, volumeDB: volume)
            filters = processing.filters
            engine = try OverlapSaveEngine(
                playing: filters, compressor: processing.compressor, geometry: geometry, sampleRate: sampleRate, blockSize: Self.blockFrames
            )
            let profile = config.calibrationProfile
            calibrationStatus = DaemonStatus.Calibration(
                profile: profile?.name, inputDBSPL: calibration.inputDBSPLAtFullScale,
                outputLeftDBSPL: profile?.outputLeftDBSPL ?? CalibrationProfile.uncalibratedDBSPL,
                outputRightDBSPL: profile?.outputRightDBSPL ?? CalibrationProfile.uncalibratedDBSPL,
                uncertaintyDB: profile == nil ? CalibrationProfile.uncalibratedUncertaintyDB : nil)
            ceilingDBFS = CompressorFitting.ceilingDBFS(rx, ears: ears, trusted: accepted.isTrusted, calibration: calibration)
        } catch {
            throw RibbitError.data(error.description)
        }

        let recorder = try dump.map { directory throws(RibbitError) in
            try ProcessDump(
                directory: directory, ears: ears, fitting: fitting, filters: filters, latencyFrames: engine.latencyFrames,
                fileFrames: reader.frameCount, calibration: calibrationStatus)
        }

        // Write next to OUT and rename at the end: a failed run leaves no half-written OUT.
        let partial = output + ".partial"
        let written: Int
        do {
            let writer = try AudioFileWriter(path: partial, format: outputFormat)
            written = try Self.stream(reader, through: engine, to: writer, keepLatency: keepLatency, dump: recorder)
            try writer.close()
            try recorder?.finish()
        } catch let error as RibbitError {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw RibbitError.cannotCreate("\(error)")
        }
        guard rename(partial, output) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: partial)
            throw RibbitError.cannotCreate("\(output): cannot move the result into place (\(reason))")
        }

        let counters = engine.counters
        let channelWord = format.channelCount == 1 ? "mono (\(ears[0]) ear)" : "stereo"
        let latencyMS = Double(engine.latencyFrames) / sampleRate * 1000
        // Over the samples the limiter judged, which is also what it counted: the file's, plus
        // the filter's delay before and under two hops after (stream() stops that close).
        let judged = counters.hops * geometry.hopSize * format.channelCount
        let limitedPercent = 100 * Double(counters.limitedSamples) / Double(max(1, judged))
        print(
            """
            wrote \(output): \(String(format: "%.2f", Double(written) / sampleRate)) s, \(channelWord), \(format.sampleRate) Hz, \(outputFormat.name)
              prescription  \(rx.name) (\(rx.environment), \(rx.rule.rawValue)), program \((program ?? .default(forEnvironment: rx.environment)).rawValue)\(volume == 0 ? "" : ", volume \(Prescription.number(volume)) dB")
              engine        \(geometry): latency \(engine.latencyFrames) samples (\(String(format: "%.2f", latencyMS)) ms), \(keepLatency ? "kept in the file" : "removed from the file")
              ceiling       \(Prescription.number(ceilingDBFS)) dBFS; the limiter acted on \(String(format: "%.2f", limitedPercent)) % of samples
            """)
        if limitedPercent >= 1 {
            print(
                "  note          the output often reached the ceiling: the input is loud for this fitting, so loud parts are less amplified"
            )
        }
        if let recorder {
            print("  dump          \(recorder.directory)/dump.jsonl (\(recorder.frameCount) frames), dump.csv, dump.svg")
            for line in recorder.bandLevels(calibration: calibration) { print("  " + line) }
        }
        if counters.sanitizedInputs > 0 {
            print("  input         \(counters.sanitizedInputs) samples were NaN, infinite or beyond full scale (+-1) and were replaced")
        }
    }

    static let blockFrames = 4096

    /// Runs the whole file through the engine in blocks. The engine delays by its latency L, so
    /// output sample i (aligned) is engine output i + L; the input is padded with zeros to flush.
    /// The last block goes only as far as OUT needs, in whole hops (which keeps the engine's
    /// block-size promise: no underrun), so the limiter judges little beyond the file.
    /// Returns the frames written.
    static func stream(
        _ reader: AudioFileReader, through engine: OverlapSaveEngine, to writer: AudioFileWriter,
        keepLatency: Bool, dump: ProcessDump? = nil
    ) throws -> Int {
        let channels = reader.format.channelCount
        let skip = keepLatency ? 0 : engine.latencyFrames
        let total = reader.frameCount + (keepLatency ? engine.latencyFrames : 0)
        let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * channels)
        let planar = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        let unprocessed = (0..<(dump == nil ? 0 : channels)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        defer {
            interleaved.deallocate()
            planar.forEach { $0.deallocate() }
            unprocessed.forEach { $0.deallocate() }
            inputs.deallocate()
            outputs.deallocate()
        }
        for c in 0..<channels {
            inputs[c] = UnsafePointer(planar[c])
            outputs[c] = planar[c]  // the engine may process in place
        }
        var produced = 0  // engine output frames so far
        var written = 0
        let hop = engine.geometry.hopSize
        while written < total {
            let frames = min(blockFrames, (skip + total - produced + hop - 1) / hop * hop)
            let got = reader.read(into: interleaved, frames: frames)
            for c in 0..<channels {
                for i in 0..<frames { planar[c][i] = i < got ? interleaved[i * channels + c] : 0 }
            }
            for (copy, source) in zip(unprocessed, planar) { copy.update(from: source, count: frames) }
            engine.process(inputs: inputs, outputs: outputs, frameCount: frames)
            try dump?.observe(
                inputs: unprocessed.map { UnsafePointer($0) }, outputs: planar.map { UnsafePointer($0) }, frameCount: frames,
                limitedSamples: engine.counters.limitedSamples)
            let first = max(0, skip - produced)
            let count = min(frames - first, total - written)
            produced += frames
            guard count > 0 else { continue }
            for i in 0..<count {
                for c in 0..<channels { interleaved[i * channels + c] = planar[c][first + i] }
            }
            try writer.write(interleaved, frames: count)
            written += count
        }
        return written
    }
}

extension Program: ExpressibleByArgument {}
