import Foundation
import RibbitControl
import RibbitJack
import RibbitVerify
import Synchronization

/// `verify --live`: the test signals go through the running daemon over JACK, the whole path
/// the wearer hears (JACK, the audio process, its engine and output stage). A JACK client takes
/// the daemon's inputs and outputs for the measurement: the microphone is disconnected (room
/// sound would add to the tones) and so are the earphones (the tones reach 90 dB SPL at full-on
/// gain); the daemon's volume and program are set as each measurement needs. `restore()` puts
/// every connection, the program and the volume back, also after Ctrl-C.
final class LiveVerifyPath: VerifyPath, @unchecked Sendable {
    let loop: JackLoopback
    let daemonClient: String
    let sampleRate: Double
    let period: Int
    let reportedLatency: Int
    /// Silence before each signal: the daemon's detectors carry the last signal's level, and
    /// must release (the offline engine starts each signal fresh).
    let gapFrames: Int
    /// From where a sample goes into the test client's output to where it comes back, by impulse.
    private(set) var loopDelay = 0
    /// Signals played again because an xrun broke them.
    private(set) var repeats = 0
    private var volumeDB: Double?
    private let listening: DaemonStatus.Listening
    /// The connections taken away, to put back.
    private var removed: [(source: String, destination: String)] = []
    private let restored = Atomic<Bool>(false)

    static let maxAttempts = 6
    /// After a volume change: the daemon builds the new plan and the audio process crossfades to it.
    static let settleSeconds = 0.5

    /// Takes the daemon's ports (`status` must be processing, with JACK and a prescription)
    /// and sets `program`.
    init(status: DaemonStatus, program: String, releaseMs: Double) throws(RibbitError) {
        guard let jack = status.jack else {
            throw .unavailable("the daemon has no JACK connection (\(status.jackProblem ?? "none")); --live measures through JACK")
        }
        guard let listening = status.listening else { throw .data("the daemon plays no prescription; load one first") }
        guard status.tone == nil else { throw .data("the calibration tone is playing; wait for it to end or run `ribbitd tone --stop`") }
        switch status.output {
        case .processing: break
        case .paused: throw .data("the hearing aid is paused; `ribbitd resume` first, then measure it live")
        case .bypassed: throw .data("the hearing aid is bypassed; `ribbitd bypass off` first, then measure it live")
        }
        do { loop = try JackLoopback(name: "ribbit-verify") } catch {
            throw .unavailable("\(error.description); --live needs the JACK server the daemon uses")
        }
        self.listening = listening
        daemonClient = jack.client
        sampleRate = loop.sampleRate
        period = loop.bufferSize
        reportedLatency = jack.latencyFrames
        gapFrames = Int(sampleRate * max(0.25, 3 * releaseMs / 1000))
        do {
            try takePorts()
            try setProgram(program)
            loopDelay = try measureLoopDelay()
        } catch {
            restore()
            throw error
        }
    }

    var description: String {
        "live: through the running daemon over JACK (client \(daemonClient), \(Int(sampleRate)) Hz, \(period)-frame periods), "
            + "\(String(format: "%.2f", Double(gapFrames) / sampleRate)) s of silence before each signal"
    }

    private var daemonInputs: [String] { ["in_left", "in_right"].map { "\(daemonClient):\($0)" } }
    private var daemonOutputs: [String] { ["out_left", "out_right"].map { "\(daemonClient):\($0)" } }

    /// Our outputs feed the daemon's inputs alone; its outputs feed our inputs alone.
    private func takePorts() throws(RibbitError) {
        for input in daemonInputs {
            for source in loop.connections(of: input) {
                loop.disconnect(source, input)
                removed.append((source, input))
            }
        }
        for output in daemonOutputs {
            for destination in loop.connections(of: output) {
                loop.disconnect(output, destination)
                removed.append((output, destination))
            }
        }
        do {
            for c in 0..<2 {
                try loop.connect(loop.playPorts[c], daemonInputs[c])
                try loop.connect(daemonOutputs[c], loop.recordPorts[c])
            }
        } catch {
            throw .unavailable("\(error.description): is the daemon's JACK client \(daemonClient) still there?")
        }
    }

    /// Puts back the connections, the program and the volume; once, from whichever thread first.
    func restore() {
        guard !restored.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.close()
        let putBack = (try? JackLoopback(name: "ribbit-verify")) ?? nil
        for connection in removed { try? putBack?.connect(connection.source, connection.destination) }
        putBack?.close()
        let program = listening.chosenBy == "auto" ? "auto" : listening.chosenBy == "prescription" ? "default" : listening.program
        try? setProgram(program)
        var volume = ControlRequest(command: .volume)
        volume.volumeDB = listening.volumeDB
        _ = try? send(volume)
    }

    private func send(_ request: ControlRequest) throws(RibbitError) {
        _ = try sendToDaemon(request)
    }

    private func setProgram(_ name: String) throws(RibbitError) {
        var request = ControlRequest(command: .program)
        request.program = name
        try send(request)
    }

    private func setVolume(_ db: Double) throws(RibbitError) {
        guard db != volumeDB else { return }
        var request = ControlRequest(command: .volume)
        request.volumeDB = db
        try send(request)
        volumeDB = db
        usleep(UInt32(Self.settleSeconds * 1_000_000))
    }

    /// The gap, then `input` in both channels; `extra` frames recorded after the signal ends.
    /// Played again when an xrun broke it.
    private func record(_ input: [Float], extra: Int) throws(RibbitError) -> [[Float]] {
        let signal = [Float](repeating: 0, count: gapFrames) + input
        for _ in 0..<Self.maxAttempts {
            let result: (recorded: [[Float]], xruns: Int)
            do { result = try loop.play([signal, signal], recordFrames: signal.count + extra) } catch {
                throw .unavailable(error.description)
            }
            if result.xruns == 0 { return result.recorded.map { Array($0[gapFrames...]) } }
            repeats += 1
        }
        throw .unavailable(
            "JACK reported xruns during \(Self.maxAttempts) attempts at one test signal; measure when the machine is less busy")
    }

    func run(_ input: [Float], volumeDB: Double) throws -> [[Float]] {
        try setVolume(volumeDB)
        let recorded = try record(input, extra: loopDelay + period)
        return recorded.map { Array($0[loopDelay..<(loopDelay + input.count)]) }
    }

    static let impulseAmplitude: Float = 0.1
    static let impulseListenFrames = 8192

    /// Where an impulse's largest output sample lies, in frames after it went out.
    private func impulseDelay() throws(RibbitError) -> Int {
        var impulse = [Float](repeating: 0, count: Self.impulseListenFrames)
        impulse[0] = Self.impulseAmplitude
        let out = try record(impulse, extra: 0)[0]
        return out.indices.max { abs(out[$0]) < abs(out[$1]) } ?? 0
    }

    private func measureLoopDelay() throws(RibbitError) -> Int {
        try setVolume(0)
        return try impulseDelay()
    }

    /// The impulse's delay less the one period a test client's loop through JACK adds (it runs
    /// before the daemon in the cycle it plays, so it reads the answer a cycle later).
    func latency(volumeDB: Double) throws -> VerifyReport.Latency {
        try setVolume(volumeDB)
        let measured = try impulseDelay() - period
        return VerifyReport.Latency(
            measuredFrames: measured, reportedFrames: reportedLatency, measuredMs: 1000 * Double(measured) / sampleRate,
            reportedMs: 1000 * Double(reportedLatency) / sampleRate, loopFrames: period)
    }
}
