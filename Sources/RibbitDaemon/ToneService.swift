import Logging
import RibbitControl

/// The calibration and test tones (`tone` requests: `ribbitd calibrate`, its pulsed tones):
/// checked and clamped here, and again in the audio process; the hearing aid is off while one
/// plays. Refused while a hearing test holds the output, and not shown in the status then
/// (its level and timing would cue the listener).
final class ToneService: DaemonService {
    let name = "tone"
    private let audio: AudioService
    private let fitting: FittingService
    private let log: Logger
    /// Whether a hearing test holds the output now.
    var hearingTestRunning: () -> Bool = { false }
    /// The reply to a request that changed the state: the daemon's, with its status.
    var reply: () -> ControlReply = { ControlReply(ok: true) }

    init(audio: AudioService, fitting: FittingService, log: Logger) {
        self.audio = audio
        self.fitting = fitting
        self.log = log
    }

    var handlers: [ControlRequest.Command: ControlService.Handler] {
        [.tone: { [unowned self] request, _ throws(RequestFailure) in try tone(request) }]
    }

    /// The tone playing, for `status` (nil: none, or a hearing test runs).
    func status(now: Double, inputDBSPLAtFullScale: Double) -> DaemonStatus.Tone? {
        hearingTestRunning() ? nil : audio.toneStatus(now: now, inputDBSPLAtFullScale: inputDBSPLAtFullScale)
    }

    private func tone(_ request: ControlRequest) throws(RequestFailure) -> ControlReply {
        let now = Daemon.now()
        if hearingTestRunning() {
            throw RequestFailure("a hearing test is running; `ribbitd hearing-test --stop` first")
        }
        let seconds = request.seconds ?? ControlProtocol.toneDefaultSeconds
        guard seconds.isFinite, seconds >= 0 else { throw RequestFailure("a tone's seconds are from 0 (stop) to 60") }
        guard audio.isConnected else {
            throw RequestFailure("no JACK session (\(audio.problem(now: now) ?? "not connected")); the tone plays through JACK")
        }
        if seconds == 0 {
            audio.playTone(frequencyHz: 1000, levelDBFS: nil, ear: "both", seconds: 0, now: now)
            log.info("calibration tone stopped")
            return reply()
        }
        guard !fitting.state.paused else { throw RequestFailure("the output is paused; `ribbitd resume` first") }
        guard let hz = request.frequencyHz, ControlProtocol.toneFrequencies.contains(hz) else {
            throw RequestFailure("tone needs a \"frequencyHz\" from 20 to 20000")
        }
        let ear = request.ear ?? "both"
        guard ["left", "right", "both"].contains(ear) else { throw RequestFailure("tone's ear is \"left\", \"right\" or \"both\"") }
        var level = request.levelDBFS
        if let asked = level {
            guard asked.isFinite else { throw RequestFailure("tone's levelDBFS is a number (dBFS of the sine)") }
            let ceiling = fitting.state.filterChoice.ceilingDBFS(calibration: audio.calibration)
            level = min(asked, ControlProtocol.toneMaxLevelDBFS, ceiling - ControlProtocol.toneHeadroomDB, -ControlProtocol.toneHeadroomDB)
        }
        if let pattern = try Self.pulsePattern(request) {
            audio.playTone(
                frequencyHz: hz, levelDBFS: level, ear: ear, seconds: pattern.on, pulses: (pattern.count, pattern.off), now: now)
            log.info(
                "test tone: \(pattern.count) pulses of \(pattern.on * 1000) ms, \(pattern.off * 1000) ms apart, \(level.map { "\($0) dBFS" } ?? "silence"), \(hz) Hz, \(ear) ear"
            )
            return reply()
        }
        let length = min(seconds, ControlProtocol.toneMaxSeconds)
        audio.playTone(frequencyHz: hz, levelDBFS: level, ear: ear, seconds: length, now: now)
        log.info(
            "calibration tone: \(level.map { "\($0) dBFS, \(hz) Hz, \(ear) ear" } ?? "silence, metering the input") for \(length) s; the hearing aid is off meanwhile"
        )
        return reply()
    }

    /// A pulsed tone's pattern (count, on and off seconds), checked; nil for a steady tone.
    static func pulsePattern(_ request: ControlRequest) throws(RequestFailure) -> (count: Int, on: Double, off: Double)? {
        guard request.pulses != nil || request.onMs != nil || request.offMs != nil else { return nil }
        guard request.seconds == nil else {
            throw RequestFailure("a pulsed tone's length is its pattern: send pulses, onMs and offMs without seconds")
        }
        let (pulses, on, off) = (ControlProtocol.tonePulses, ControlProtocol.tonePulseOnMs, ControlProtocol.tonePulseOffMs)
        guard let count = request.pulses, pulses.contains(count) else {
            throw RequestFailure("a pulsed tone's pulses are from \(pulses.lowerBound) to \(pulses.upperBound)")
        }
        guard let onMs = request.onMs, on.contains(onMs) else {
            throw RequestFailure(
                "a pulsed tone's onMs is from \(Int(on.lowerBound)) to \(Int(on.upperBound)) (each pulse, between its half-amplitude points)"
            )
        }
        guard let offMs = request.offMs, off.contains(offMs) else {
            throw RequestFailure("a pulsed tone's offMs is from \(Int(off.lowerBound)) to \(Int(off.upperBound)) (between pulses)")
        }
        let total = (Double(count) * (onMs + offMs) - offMs) / 1000
        guard total <= ControlProtocol.toneMaxSeconds else {
            throw RequestFailure("a pulsed tone lasts at most \(Int(ControlProtocol.toneMaxSeconds)) s; this one is \(total) s")
        }
        return (count, onMs / 1000, offMs / 1000)
    }
}
