import Foundation
import RibbitControl
import RibbitDumpFiles
import RibbitMonitor
import Synchronization

/// The daemon's dump stream, shared by every open Live socket (SharedDaemonStream: the daemon
/// analyses once, and the saved files hold one copy of each frame). It keeps the last
/// `recentSeconds` of frames for the Save buttons.
final class LiveFeed: Sendable {
    static let recentSeconds = 10.0
    /// Frames a slow socket may fall behind before the oldest are dropped (it only needs the newest).
    static let socketBuffer = 4

    /// A box the stream's decoder shares (a Mutex cannot be captured by value).
    private final class Recent: Sendable { let frames = Mutex([DumpFrame]()) }
    private let recent = Recent()
    private let stream: SharedDaemonStream<String>

    init(socketPath: String) {
        let recent = recent
        let decoder = JSONDecoder()
        stream = SharedDaemonStream(
            socketPath: socketPath, command: .dump, name: "live view", socketBuffer: Self.socketBuffer,
            decode: { line in
                guard let frame = try? decoder.decode(DumpFrame.self, from: line) else { return nil }
                recent.frames.withLock { recent in
                    if let last = recent.last, frame.time < last.time { recent.removeAll() }  // the daemon restarted
                    recent.append(frame)
                    let keep = Int(Self.recentSeconds / DumpFrame.intervalSeconds)
                    if recent.count > keep { recent.removeFirst(recent.count - keep) }
                }
                return LiveFrame(frame).json
            },
            problem: { String(decoding: (try? JSONEncoder().encode(["problem": $0])) ?? Data(), as: UTF8.self) })
    }

    var socketPath: String { stream.socketPath }

    /// A socket's messages (JSON text: a frame, or `{"problem": ...}`); `unsubscribe` with the id ends them.
    func subscribe() -> (id: Int, messages: AsyncStream<String>) { stream.subscribe() }
    func unsubscribe(_ id: Int) { stream.unsubscribe(id) }
    var subscriberCount: Int { stream.subscriberCount }

    /// The frames of the last `recentSeconds`, oldest first.
    var recentFrames: [DumpFrame] { recent.frames.withLock { $0 } }

    /// The recorded frames as `ribbitd dump --csv` writes them; nil when there are none.
    func csv() -> String? {
        let frames = recentFrames
        guard !frames.isEmpty else { return nil }
        let ears = Self.ears(frames)
        var text = CSVRow.header.joined(separator: ",") + "\n"
        for frame in frames {
            for ear in ears {
                guard let values = frame.ears[ear] else { continue }
                text += CSVRow.fields(frame, ear: ear, values).joined(separator: ",") + "\n"
            }
        }
        return text
    }

    /// The recorded frames as `ribbitd dump --svg` draws them (their average); nil when there are none.
    func svg() -> String? {
        var average = DumpAverage()
        for frame in recentFrames { average.add(frame) }
        guard let frame = average.frame else { return nil }
        return DumpSVG.render(frame, ears: Self.ears(recentFrames), frames: average.count, seconds: average.seconds)
    }

    private static func ears(_ frames: [DumpFrame]) -> [String] {
        ["left", "right"].filter { ear in frames.contains { $0.ears[ear] != nil } }
    }
}

/// What the Live page draws of a frame: the third-octave bands, the target gain and the
/// broadband levels, in tenths of a dB (about 1.6 kB instead of the dump line's 30 kB of spectra).
struct LiveFrame: Encodable {
    struct Ear: Encodable {
        var input: [Double]
        var output: [Double]
        var targetGain: [Double?]
        var inputRMS: Double
        var outputRMS: Double
        var inputPeak: Double
        var outputPeak: Double
        /// What to add to the input and output dBFS for dB SPL; nil without a calibration.
        var inputSPLOffset: Double?
        var outputSPLOffset: Double?
    }

    var time: Double
    var output: String
    var prescription: String?
    /// Its history entry: the Live page asks for its SpeechMap again when it changes.
    var prescriptionID: Int64?
    var latencyMs: Double
    var xruns: Int
    var limitedSamples: Int
    /// The calibration profile's name; "defaults" when the daemon uses the documented ones; nil: none.
    var calibration: String?
    var uncertaintyDB: Double?
    var bandsHz: [Double]
    var ears: [String: Ear]

    init(_ frame: DumpFrame) {
        func r(_ value: Double) -> Double { (value * 10).rounded() / 10 }
        time = (frame.time * 1000).rounded() / 1000
        output = frame.output.rawValue
        prescription = frame.prescription.map { "\($0.name) (\($0.environment))" }
        prescriptionID = frame.prescription?.id
        latencyMs = r(Double(frame.latencyFrames) / Double(max(frame.sampleRate, 1)) * 1000)
        xruns = frame.xruns
        limitedSamples = frame.limitedSamples
        calibration = frame.calibration.map { $0.profile ?? "defaults" }
        uncertaintyDB = frame.calibration?.uncertaintyDB
        bandsHz = frame.bandsHz
        ears = frame.ears.mapValues { e in
            Ear(
                input: e.inputBandsDB.map(r), output: e.outputBandsDB.map(r), targetGain: e.targetGainDB.map { $0.map(r) },
                inputRMS: r(e.inputRMSDB), outputRMS: r(e.outputRMSDB), inputPeak: r(e.inputPeakDB), outputPeak: r(e.outputPeakDB),
                inputSPLOffset: nil, outputSPLOffset: nil)
        }
        for name in ears.keys {
            guard let offsets = frame.dBSPLOffsets(ear: name) else { continue }
            ears[name]!.inputSPLOffset = r(offsets.input)
            ears[name]!.outputSPLOffset = r(offsets.output)
        }
    }

    var json: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }
}
