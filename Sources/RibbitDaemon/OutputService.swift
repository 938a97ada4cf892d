import Logging
import RibbitAudioLink
import RibbitControl
import RibbitFitting

/// What the output plays: pause and resume, bypass, the test box's mode during a live
/// measurement, and `play`, which sends what the fitting state now asks for to the engine (with
/// its crossfade). Who holds a pause or a measurement is the daemon's lease registry; this
/// service carries out what it decides.
final class OutputService: DaemonService {
    let name = "output"
    private let audio: AudioService
    private let fitting: FittingService
    private let log: Logger
    /// Stops a running hearing test (a paused output would play its tones to nobody).
    var stopHearingTest: (_ why: String) -> Void = { _ in }
    /// The automatic program starts listening again (back after a measurement that took it away).
    var listenAfresh: () -> Void = {}
    /// The reply to a request that changed the state: the daemon's, with its status.
    var reply: () -> ControlReply = { ControlReply(ok: true) }
    /// The status changed without a request: systemd's line follows.
    var statusChanged: () -> Void = {}

    /// How long a pause may take to silence the output before the reply goes anyway (no JACK
    /// cycles run): a period or two and the 5 ms ramp, on a loaded machine a scheduler delay.
    static let pauseConfirmSeconds = 0.5

    init(audio: AudioService, fitting: FittingService, log: Logger) {
        self.audio = audio
        self.fitting = fitting
        self.log = log
    }

    /// After the active prescription or the mode changed: what plays now goes to the engine
    /// (`prepared`: filters designed while the request was checked, used if still the choice).
    func play(reusing prepared: RunningFilters? = nil) {
        let choice = fitting.state.filterChoice
        // The trim first: a new compressor starts at the trim asked for when it is taken.
        audio.setTrim(fitting.state.trimDB)
        do { try audio.play(choice, reusing: prepared?.choice == choice ? prepared : nil) } catch {
            log.error("internal error: the new filters do not fit the engine (\(error))")
        }
    }

    /// Pausing answers once the output is silent (the audio process confirms its ramp ended).
    func setPaused(_ paused: Bool) -> ControlReply {
        if paused { stopHearingTest("the output was paused") }
        fitting.paused = paused
        let confirmed = audio.setPaused(paused, waitSeconds: paused ? Self.pauseConfirmSeconds : 0, now: Daemon.now())
        if paused && !confirmed && audio.isConnected {
            log.warning("paused, but the audio process did not confirm silence within \(Self.pauseConfirmSeconds) s")
        }
        log.info(paused ? "paused: output silent" : "resumed")
        return reply()
    }

    func bypass(_ on: Bool) throws(RequestFailure) -> ControlReply {
        fitting.bypassed = on
        audio.setTrim(fitting.state.trimDB)
        do { try audio.play(fitting.state.filterChoice) } catch { throw RequestFailure("cannot switch bypass: \(error)") }
        log.info(on ? "bypass on: unprocessed sound under the ceiling" : "bypass off: prescription applied")
        return reply()
    }

    /// A live measurement began: as a test box measures (ANSI S3.22), adaptive features off
    /// until it ends (`connections`: how many JACK connections it took, put back at the end).
    func beginMeasurement(connections: Int) -> ControlReply {
        if !fitting.testBox {
            fitting.testBox = true
            play()
        }
        log.info("live measurement started (adaptive features off); \(connections) JACK connections to put back when it ends")
        return reply()
    }

    /// The measurement ended: the wearer's program and volume again, then (once they play) the
    /// connections it took away, only those to or from the daemon's own ports.
    func endMeasurement(_ measurement: Leases.Measurement) {
        let changed = fitting.listening != measurement.listening || fitting.testBox
        fitting.testBox = false
        if fitting.listening != measurement.listening {
            if measurement.listening.automatic && !fitting.listening.automatic { listenAfresh() }
            fitting.listening = measurement.listening
        }
        if changed { play() }
        let client = (audio.session?.client ?? "ribbit") + ":"
        let ours = measurement.connections.filter { $0.source.hasPrefix(client) || $0.destination.hasPrefix(client) }
        audio.reconnect(ours)
        log.info("live measurement ended: program, volume and adaptive features as before, \(ours.count) JACK connections put back")
        statusChanged()
    }
}
