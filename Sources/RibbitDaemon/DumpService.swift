import RibbitControl
import RibbitMonitor

/// The debug dump: while dump clients listen, the audio process copies each period into its
/// ring and sends the samples over; 20 times a second a frame (`DumpFrameBuilder`, the same
/// as `process --dump`) goes to every client. With none, the RT thread does nothing extra.
final class DumpService: DaemonService {
    let name = "dump"
    private let audio: AudioService
    private let control: ControlService
    private let started: Double
    /// What the frames say about the prescription and the output mode.
    private let describe: () -> (output: DaemonStatus.Output, prescription: DaemonStatus.ActivePrescription?)
    private var builder: DumpFrameBuilder?
    private var droppedBefore = 0
    private var nextFrame = -Double.infinity
    private(set) var listeners = 0
    /// The calibration the frames carry (levels in dB SPL); fixed for the daemon's life.
    var calibration: DaemonStatus.Calibration?
    /// Take each turn's input samples (left, right) while set, with or without dump clients:
    /// a hearing test's ambient-noise check ("noise"), the voice exercises' analysis ("voice").
    var inputTaps: [String: ([[Float]]) -> Void] = [:]

    init(
        audio: AudioService, control: ControlService, started: Double,
        describe: @escaping () -> (output: DaemonStatus.Output, prescription: DaemonStatus.ActivePrescription?)
    ) {
        self.audio = audio
        self.control = control
        self.started = started
        self.describe = describe
    }

    func tick(now: Double) {
        listeners = control.server?.subscriberCount(.dump) ?? 0
        let listening = listeners > 0
        audio.setDump(listening || !inputTaps.isEmpty)
        if !inputTaps.isEmpty, !listening {
            builder = nil
            let fresh = audio.takeDumpSamples()
            if audio.session?.running == true { tap(fresh) }
            return
        }
        guard listening, let session = audio.session, session.running, let running = audio.running, let server = control.server else {
            builder = nil
            return
        }
        if builder == nil || builder?.sampleRate != session.sampleRate {
            _ = audio.takeDumpSamples()
            builder = DumpFrameBuilder(ears: [.left, .right], sampleRate: session.sampleRate, limitedSamples: audio.limitedSamples)
            droppedBefore = audio.dumpFramesDropped
        }
        guard let builder else { return }
        let fresh = audio.takeDumpSamples()
        tap(fresh)
        for ear in 0..<2 { builder.append(ear: ear, input: fresh[ear], output: fresh[2 + ear]) }
        // A frame only of new sound: on a busy machine the samples can come a turn late, and a
        // frame made without them would read silence (-140 dBFS RMS) between two of the tone.
        guard builder.pendingFrames > 0, isDue(now: now) else { return }
        let (output, prescription) = describe()
        let frame = builder.frame(
            time: now - started, latencyFrames: session.latencyFrames, xruns: audio.dumpXruns, output: output,
            prescription: prescription,
            filters: running.filters, fitting: running.fitting, limitedSamples: audio.limitedSamples,
            droppedFrames: audio.dumpFramesDropped - droppedBefore, calibration: calibration)
        server.broadcast(frame.jsonLine(), now: now)
    }

    private func tap(_ fresh: [[Float]]) {
        for tap in inputTaps.values { tap([fresh[0], fresh[1]]) }
    }

    /// True at most once per frame interval, on a fixed grid (20 a second even when the poll
    /// loop wakes a little late).
    private func isDue(now: Double) -> Bool {
        guard now >= nextFrame else { return false }
        nextFrame += DumpFrame.intervalSeconds
        if nextFrame <= now { nextFrame = now + DumpFrame.intervalSeconds }  // first frame, or a long stall
        return true
    }

    func stop(deadline: Double) { builder = nil }
}
