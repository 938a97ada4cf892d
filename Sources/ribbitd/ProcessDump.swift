import Foundation
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitMonitor
import RibbitPrescription

/// `process --dump DIR`: the dump of a file, frame for frame as the daemon would send it, in
/// DIR/dump.jsonl, DIR/dump.csv and DIR/dump.svg. Input and output are paired sample for
/// sample (the engine's latency taken out), one frame per 50 ms of the file.
final class ProcessDump {
    let directory: String
    private let ears: [Ear]
    private let fitting: Fitting
    private let filters: FilterSet
    private let prescription: DaemonStatus.ActivePrescription
    private let sampleRate: Double
    private let latencyFrames: Int
    private let fileFrames: Int
    private let calibration: DaemonStatus.Calibration
    private let hopFrames: Int
    private let builder: DumpFrameBuilder
    private var recorder: DumpRecorder
    /// Input samples waiting for their output (the engine's latency), per channel.
    private var pendingInput: [[Float]]
    private var outputToSkip: Int
    private var paired = 0

    init(
        directory: String, ears: [Ear], fitting: Fitting, filters: FilterSet, latencyFrames: Int, fileFrames: Int,
        calibration: DaemonStatus.Calibration
    ) throws(RibbitError) {
        self.calibration = calibration
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .cannotCreate(
                "\(directory): exists and is not a directory; --dump takes a directory for dump.jsonl, dump.csv and dump.svg")
        }
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw .cannotCreate("\(directory): cannot create the dump directory (\(describe(error)))")
        }
        self.directory = directory
        self.ears = ears
        sampleRate = fitting.sampleRate
        self.fitting = fitting
        self.filters = filters
        let rx = fitting.prescription
        prescription = .init(
            id: nil, name: rx.name, environment: rx.environment, audiologist: rx.audiologist, rule: rx.rule, signature: nil,
            patient: rx.patient, date: rx.date)
        self.latencyFrames = latencyFrames
        self.fileFrames = fileFrames
        hopFrames = Int((DumpFrame.intervalSeconds * sampleRate).rounded())
        builder = DumpFrameBuilder(ears: ears, sampleRate: sampleRate)
        pendingInput = Array(repeating: [], count: ears.count)
        outputToSkip = latencyFrames
        let names = ears.map(\.rawValue)
        recorder = try DumpRecorder(
            ears: names, jsonLines: try DumpRecorder.create(directory + "/dump.jsonl"), csvPath: directory + "/dump.csv",
            svgPath: directory + "/dump.svg")
    }

    var frameCount: Int { recorder.frameCount }

    /// One engine block: each channel's input (before processing) and output (after).
    func observe(inputs: [UnsafePointer<Float>], outputs: [UnsafePointer<Float>], frameCount: Int, limitedSamples: Int) throws(RibbitError)
    {
        for c in ears.indices { pendingInput[c].append(contentsOf: UnsafeBufferPointer(start: inputs[c], count: frameCount)) }
        // The first `latency` output samples come from before the file started.
        let skip = min(outputToSkip, frameCount)
        outputToSkip -= skip
        var offset = skip
        while offset < frameCount && paired < fileFrames {
            let count = min(frameCount - offset, hopFrames - builder.pendingFrames, fileFrames - paired)
            for c in ears.indices {
                builder.append(
                    ear: c, input: pendingInput[c][0..<count], output: UnsafeBufferPointer(start: outputs[c] + offset, count: count))
                pendingInput[c].removeFirst(count)
            }
            offset += count
            paired += count
            if builder.pendingFrames == hopFrames || paired == fileFrames { try emit(limitedSamples: limitedSamples) }
        }
    }

    private func emit(limitedSamples: Int) throws(RibbitError) {
        let frame = builder.frame(
            time: Double(paired) / sampleRate, latencyFrames: latencyFrames, xruns: 0, output: .processing, prescription: prescription,
            filters: filters, fitting: fitting, limitedSamples: limitedSamples, droppedFrames: 0, calibration: calibration)
        try recorder.add(frame)
    }

    /// Per ear and dump band, the file's long-term level in and out in dB SPL through
    /// `calibration` (the dump's dBFS RMS reads a full-scale sine as -3.01 dB; the calibration
    /// counts it as 0 dBFS), and the gain between them: what the compressor did at this level.
    func bandLevels(calibration: Calibration) -> [String] {
        guard let frame = recorder.averageFrame else { return [] }
        let centres = DumpAnalyzer.bandCentersHz
        var lines = [
            "band levels   dB SPL in -> out (\(calibration == .uncalibrated ? "uncalibrated: 100 dB SPL at 0 dBFS" : "calibrated"))"
        ]
        lines.append(
            "  Hz        "
                + centres.map { hz in
                    let text = Prescription.number(hz)
                    return String(repeating: " ", count: max(1, 7 - text.count)) + text
                }.joined())
        for (channel, ear) in ears.enumerated() {
            guard let e = frame.ears[ear.rawValue] else { continue }
            let sine = 10 * log10(2.0)
            let input = e.inputBandsDB.map { $0 + sine + calibration.inputDBSPLAtFullScale }
            let output = zip(e.outputBandsDB, centres).map { $0 + sine + calibration.outputDBSPL(channel: channel, atHz: $1) }
            func row(_ name: String, _ values: [Double]) -> String {
                "  " + name.padding(toLength: 10, withPad: " ", startingAt: 0)
                    + values.map { String(format: "%7.1f", max($0, -99)) }.joined()
            }
            lines.append(row("\(ear) in", input))
            lines.append(row("\(ear) out", output))
            lines.append(row("\(ear) gain", zip(output, input).map { $0 - $1 }))
        }
        return lines
    }

    func finish() throws(RibbitError) {
        try recorder.finish(noFrames: .data("the sound file has no samples, so \(directory)/dump.svg was not written"))
    }
}
