import Foundation
import RibbitControl
import RibbitDumpFiles
import RibbitMonitor
import Synchronization

/// The daemon's dump stream, shared by every open Live socket: one connection to the daemon
/// however many tabs watch (the daemon analyses once, and the saved files hold one copy of
/// each frame), opened when the first socket subscribes and closed when the last one leaves,
/// so the daemon stops analysing as soon as nobody looks. It keeps the last
/// `recentSeconds` of frames for the Save buttons.
final class LiveFeed: Sendable {
    static let recentSeconds = 10.0
    /// Frames a slow socket may fall behind before the oldest are dropped (it only needs the newest).
    static let socketBuffer = 4

    private struct State {
        var subscribers: [Int: AsyncStream<String>.Continuation] = [:]
        var nextID = 0
        var running = false
        var recent: [DumpFrame] = []
    }

    let socketPath: String
    private let state = Mutex(State())

    init(socketPath: String) { self.socketPath = socketPath }

    /// A socket's messages (JSON text: a frame, or `{"problem": ...}`); `unsubscribe` with the id ends them.
    func subscribe() -> (id: Int, messages: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(Self.socketBuffer))
        let (id, start) = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            defer { state.running = true }
            return (state.nextID, !state.running)
        }
        if start {
            // ControlClient blocks, so the stream is read on a thread of its own, never the server's.
            let thread = Thread { [self] in run() }
            thread.name = "ribbit-web.live"
            thread.start()
        }
        return (id, stream)
    }

    func unsubscribe(_ id: Int) {
        state.withLock { $0.subscribers.removeValue(forKey: id) }?.finish()
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// The frames of the last `recentSeconds`, oldest first.
    var recentFrames: [DumpFrame] { state.withLock { $0.recent } }

    private func send(_ text: String) {
        for continuation in state.withLock({ Array($0.subscribers.values) }) { continuation.yield(text) }
    }

    private func problem(_ text: String) {
        send(String(decoding: (try? JSONEncoder().encode(["problem": text])) ?? Data(), as: UTF8.self))
    }

    /// Until the last subscriber leaves: (re)connects, reads frames, records and forwards them.
    private func run() {
        var stream: DumpStream?
        var lastFrame = MonotonicClock.seconds()
        while true {
            let stop = state.withLock { state in
                if state.subscribers.isEmpty { state.running = false }
                return !state.running
            }
            if stop { return }  // `stream` closes here, and the daemon stops analysing
            guard let open = stream else {
                do {
                    stream = try DumpStream.open(socketPath: socketPath)
                    lastFrame = MonotonicClock.seconds()
                } catch {
                    switch error {
                    case .client(let error): problem(error.description)
                    case .refused(let message): problem("the daemon refused the live view: \(message)")
                    }
                    Thread.sleep(forTimeInterval: 1)
                }
                continue
            }
            switch open.next(timeoutSeconds: 0.25) {
            case .frame(let frame, _):
                lastFrame = MonotonicClock.seconds()
                state.withLock { state in
                    if let last = state.recent.last, frame.time < last.time { state.recent.removeAll() }  // the daemon restarted
                    state.recent.append(frame)
                    let keep = Int(Self.recentSeconds / DumpFrame.intervalSeconds)
                    if state.recent.count > keep { state.recent.removeFirst(state.recent.count - keep) }
                }
                send(LiveFrame(frame).json)
            case .timedOut:
                if MonotonicClock.seconds() - lastFrame > 1 {
                    problem("no sound arrives: the daemon has no JACK connection (is JACK running? `ribbitd status`)")
                    lastFrame = MonotonicClock.seconds()
                }
            case .closed:
                stream = nil
                problem("the daemon ended the live view (it stopped or restarted); reconnecting")
                Thread.sleep(forTimeInterval: 1)
            case .unreadable:
                stream = nil
                problem("the daemon sent a frame this web app cannot read; is it the same version as ribbitd?")
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }

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
