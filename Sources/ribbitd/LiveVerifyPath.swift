import Foundation
import RibbitControl
import RibbitJack
import RibbitPrescription
import RibbitVerify
import Synchronization

/// `verify --live`: the test signals go through the running daemon over JACK, the whole path
/// the wearer hears (JACK, the audio process, its engine and output stage). A JACK client takes
/// the daemon's inputs and outputs for the measurement: the microphone is disconnected (room
/// sound would add to the tones) and so are the earphones (the tones reach 90 dB SPL at full-on
/// gain); the daemon's volume and program are set as each measurement needs. `restore()` puts
/// the program, the volume and then every connection back. The daemon holds the same duty:
/// the measurement is a lease on a control connection (`measure`) taken before anything is
/// changed, so when this process ends without restoring (SIGKILL, a crash), the daemon puts the
/// program, the volume and the connections back itself.
///
/// Everything runs on the calling thread. A signal only sets `interrupted` (`VerifyCommand`'s
/// signal sources); every step checks it, a signal being played stops within 5 ms, and the
/// error that follows brings the caller to `restore()`: nothing races the restore.
final class LiveVerifyPath: VerifyPath, @unchecked Sendable {
    /// The signal that asked to stop (0: none).
    static let interrupted = Atomic<Int32>(0)

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
    private var restored = false
    /// The lease: while it is open the daemon knows what to put back if this process dies.
    private var lease: StreamConnection?

    /// A loaded machine's xruns hit about one 1-s signal in three (seen at a 512-frame period
    /// while two compilers ran): twelve tries leave a run of 150 signals about 1 in 10^4 to fail.
    static let maxAttempts = 12
    /// After a volume change: the daemon builds the new plan and the audio process crossfades to it.
    static let settleSeconds = 0.5

    /// Takes the daemon's ports (`status` must be processing, with JACK and a prescription)
    /// and sets `program`.
    init(status: DaemonStatus, program: Program, releaseMs: Double) throws(RibbitError) {
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
            try send(.program(.named(program)))
            try setVolume(0)
            loopDelay = try impulseDelay()
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

    /// Our outputs feed the daemon's inputs alone; its outputs feed our inputs alone. The
    /// daemon is told what goes (the lease) before anything does.
    private func takePorts() throws(RibbitError) {
        var taken: [(source: String, destination: String)] = []
        for input in daemonInputs { taken += loop.connections(of: input).map { ($0, input) } }
        for output in daemonOutputs { taken += loop.connections(of: output).map { (output, $0) } }
        let connections: [PortConnection]
        do {
            connections = try taken.map { connection throws(RequestError) in
                try PortConnection(source: connection.source, destination: connection.destination)
            }
        } catch {
            throw RibbitError(error)
        }
        lease = try holdAtDaemon(.measure(connections: connections))
        for connection in taken {
            loop.disconnect(connection.source, connection.destination)
            removed.append(connection)
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

    /// Still wired as `takePorts` left it: a restarted audio process (its ports new, the
    /// microphone and earphones on them) or a patchbay that rewired them ends the measurement
    /// before a tone could reach the earphones or a silent recording the report.
    private func checkWiring() throws(RibbitError) {
        for c in 0..<2 {
            guard loop.connections(of: daemonInputs[c]) == [loop.playPorts[c]],
                loop.connections(of: daemonOutputs[c]) == [loop.recordPorts[c]]
            else {
                throw .unavailable(
                    "the daemon's JACK ports were reconnected during the measurement (its audio process restarted, or a patchbay); "
                        + "measure again")
            }
        }
    }

    private func checkInterrupted() throws(RibbitError) {
        let signal = Self.interrupted.load(ordering: .relaxed)
        guard signal == 0 else { throw RibbitError(message: "interrupted", exitCode: .init(128 + signal)) }
    }

    /// Puts back the program and the volume, waits for them to play, then reconnects the
    /// microphone and earphones (never the live microphone at a measurement's volume). What
    /// cannot be put back is said, with the command that does it.
    func restore() {
        guard !restored else { return }
        restored = true
        var failures: [String] = []
        let program: ProgramChoice =
            switch listening.chosenBy {
            case .auto: .auto
            case .prescription: .prescribed
            case .wearer: .named(listening.program)
            }
        do { try send(.program(program)) } catch { failures.append("the program (`ribbitd program \(program.name)`)") }
        do { try send(.volume(.set(dB: listening.volumeDB))) } catch {
            failures.append("the volume (`ribbitd volume \(VolumeCommand.signed(listening.volumeDB))`)")
        }
        usleep(UInt32(Self.settleSeconds * 1_000_000))
        loop.close()
        let putBack = try? JackLoopback(name: "ribbit-verify")
        for connection in removed {
            do { try putBack?.connect(connection.source, connection.destination) } catch {
                failures.append("\(connection.source) -> \(connection.destination) (`jack_connect`)")
            }
            if putBack == nil { failures.append("\(connection.source) -> \(connection.destination) (`jack_connect`)") }
        }
        putBack?.close()
        lease?.close()  // all put back: the daemon's own restore finds nothing to do
        if !failures.isEmpty {
            FileHandle.standardError.write(Data("ribbitd: could not put back \(failures.joined(separator: ", "))\n".utf8))
        }
    }

    private func send(_ request: ControlRequest) throws(RibbitError) {
        _ = try sendToDaemon(request)
    }

    private func setVolume(_ db: Double) throws(RibbitError) {
        try checkInterrupted()
        guard db != volumeDB else { return }
        try send(.volume(.set(dB: db)))
        volumeDB = db
        usleep(UInt32(Self.settleSeconds * 1_000_000))
    }

    /// The gap, then `input` in both channels; `extra` frames recorded after the signal ends.
    /// Played again when an xrun broke it.
    private func record(_ input: [Float], extra: Int) throws(RibbitError) -> [[Float]] {
        let signal = [Float](repeating: 0, count: gapFrames) + input
        for _ in 0..<Self.maxAttempts {
            try checkInterrupted()
            try checkWiring()
            let result: (recorded: [[Float]], xruns: Int)
            do {
                result = try loop.play([signal, signal], recordFrames: signal.count + extra) {
                    Self.interrupted.load(ordering: .relaxed) != 0
                }
            } catch {
                try checkInterrupted()
                throw .unavailable(error.description)
            }
            try checkWiring()
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
    /// The engine's latency is far below this; a period up to 8192 frames fits twice beside it.
    static let impulseListenFrames = 8192

    /// Where an impulse's largest output sample lies, in frames after it went out; an impulse
    /// that does not come back (a silent output) is an error, not a latency.
    private func impulseDelay() throws(RibbitError) -> Int {
        var impulse = [Float](repeating: 0, count: Self.impulseListenFrames + 2 * period)
        impulse[0] = Self.impulseAmplitude
        let out = try record(impulse, extra: 0)[0]
        guard let peak = out.indices.max(by: { abs(out[$0]) < abs(out[$1]) }), abs(out[peak]) >= 1e-4 else {
            throw .unavailable("an impulse played into the daemon did not come back: is it processing?")
        }
        return peak
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
