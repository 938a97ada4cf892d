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

    /// The tone playing, for `status` (nil: none, or a hearing test runs).
    func status(now: Double, inputDBSPLAtFullScale: Double) -> DaemonStatus.Tone? {
        hearingTestRunning() ? nil : audio.toneStatus(now: now, inputDBSPLAtFullScale: inputDBSPLAtFullScale)
    }

    /// Plays, replaces or stops the tone (the request's fields were checked when it was read;
    /// its level is clamped here, where the ceiling in force is known).
    func play(_ request: ToneRequest) throws(RequestFailure) -> ControlReply {
        let now = Daemon.now()
        if hearingTestRunning() {
            throw RequestFailure("a hearing test is running; `ribbitd hearing-test --stop` first")
        }
        guard audio.isConnected else {
            throw RequestFailure("no JACK session (\(audio.problem(now: now) ?? "not connected")); the tone plays through JACK")
        }
        guard case .play(let tone) = request else {
            audio.playTone(frequencyHz: 1000, levelDBFS: nil, ear: .both, seconds: 0, now: now)
            log.info("calibration tone stopped")
            return reply()
        }
        guard !fitting.state.paused else { throw RequestFailure("the output is paused; `ribbitd resume` first") }
        let (hz, ear) = (tone.frequencyHz, tone.ear)
        let ceiling = fitting.state.filterChoice.ceilingDBFS(calibration: audio.calibration)
        let level = tone.levelDBFS.map {
            min($0, ControlProtocol.toneMaxLevelDBFS, ceiling - ControlProtocol.toneHeadroomDB, -ControlProtocol.toneHeadroomDB)
        }
        switch tone.timing {
        case .pulsed(let pattern):
            let (on, off) = (pattern.onMs / 1000, pattern.offMs / 1000)
            audio.playTone(frequencyHz: hz, levelDBFS: level, ear: ear, seconds: on, pulses: (pattern.count, off), now: now)
            log.info(
                "test tone: \(pattern.count) pulses of \(pattern.onMs) ms, \(pattern.offMs) ms apart, \(level.map { "\($0) dBFS" } ?? "silence"), \(hz) Hz, \(ear.rawValue) ear"
            )
        case .steady(let seconds):
            let length = min(seconds, ControlProtocol.toneMaxSeconds)
            audio.playTone(frequencyHz: hz, levelDBFS: level, ear: ear, seconds: length, now: now)
            log.info(
                "calibration tone: \(level.map { "\($0) dBFS, \(hz) Hz, \(ear.rawValue) ear" } ?? "silence, metering the input") for \(length) s; the hearing aid is off meanwhile"
            )
        }
        return reply()
    }
}
