import Foundation
import Glibc
import Logging
import RibbitAudioLink
import RibbitControl
import RibbitIntake
import RibbitSettings
import RibbitStore

/// `ribbitd run`: one control thread that owns all daemon state and runs the services' poll
/// loop. The JACK client and its real-time thread live in a small child process,
/// `ribbit-audio` (AudioService), so the process holding the audio thread carries no
/// Foundation, SQLite, crypto or QR code.
///
/// The services, in start order: systemd notification, the history (`FittingService`), the
/// control socket, the JACK session (`AudioService`), what the output plays (`OutputService`),
/// the active prescription and its trial (`PrescriptionService`), the voice stream, the tones
/// (`ToneService`), the program and volume (`ListeningService`), the dump, the hearing test
/// (`HearingTestService`), the data log (`WearLogService`).
/// They stop in reverse. The audio process itself starts as soon as the history's lock is held,
/// so JACK's ports come up while the history, the socket and the data log open (the filters
/// follow when it has connected, from the prescription the history restored).
/// Each request goes to the service that owns it through one switch (`answer`); what plays is
/// derived from the fitting state. The daemon keeps the loop, that switch, the status and the
/// leases (what a connection holds, undone when it closes).
public final class Daemon {
    private let log: Logger
    private let started = Daemon.now()
    private let fitting: FittingService
    private let control: ControlService
    private let audio: AudioService
    private var systemd: SystemdService!
    private var dump: DumpService!
    private var voice: VoiceService!
    private var tone: ToneService!
    private var output: OutputService!
    private var prescriptions: PrescriptionService!
    private var listening: ListeningService!
    private var hearingTests: HearingTestService!
    /// The data log (nil: `log = false` in ribbitd.conf).
    private var wearLog: WearLogService?
    private var stopping = false
    /// `run --rx`: a prescription to load at start and keep as the active one.
    private let startPrescription: PrescriptionInput?
    /// The calibration in use (nil: uncalibrated).
    private let calibration: CalibrationProfile?
    private let paths: RibbitPaths
    /// What clients hold while their connection stays open.
    private var leases = Leases()

    /// How long the services get to stop (the JACK server may not answer).
    static let stopSeconds = 2.0

    public init(config: DaemonConfig, paths: RibbitPaths, log: Logger, prescription: PrescriptionInput? = nil) {
        self.log = log
        startPrescription = prescription
        calibration = config.calibrationProfile
        self.paths = paths
        fitting = FittingService(paths: paths, config: config, log: log)
        control = ControlService(path: paths.socketPath, log: log)
        audio = AudioService(config: config, log: log, environment: paths.environment)
        systemd = SystemdService(started: started) { [unowned self] in fitting.state.statusLine(connected: audio.isConnected) }
        dump = DumpService(audio: audio, control: control, started: started) { [unowned self] in
            (fitting.state.output, fitting.state.description)
        }
        audio.onChange = { [unowned self] in systemd.jackAnswered(connected: audio.isConnected) }
        audio.wanted = { [unowned self] in (fitting.state.filterChoice, fitting.state.paused, fitting.state.trimDB) }
        fitting.afterLock = { [unowned self] in audio.startOpening(now: Self.now()) }
        audio.onInputLevels = { [unowned self] bands, broadband in
            listening.listen(bands: bands, broadband: broadband)
            wearLog?.hear(broadbandDBSPL: broadband, now: Self.now())
        }
        if config.log {
            wearLog = WearLogService(
                path: WearLog.path(dataDirectory: paths.dataDirectory), flushSeconds: config.logIntervalSeconds, log: log,
                storage: fitting.storage
            ) {
                [unowned self] in
                let state = fitting.state
                return WearLogService.Now(
                    connected: audio.isConnected, calibrating: audio.tone.map { Self.now() < $0.until } ?? false, output: state.output,
                    program: state.active == nil ? "none" : state.program.rawValue,
                    noiseReduction: state.active != nil && state.program.noiseReductionStrength > 0, volumeDB: state.listening.volumeDB,
                    xruns: audio.totalXruns)
            }
        }
        voice = VoiceService(audio: audio, control: control, dump: dump, microphoneDBSPL: calibration?.inputDBSPL)
        tone = ToneService(audio: audio, fitting: fitting, log: log)
        tone.reply = { [unowned self] in reply() }
        output = OutputService(audio: audio, fitting: fitting, log: log)
        output.reply = { [unowned self] in reply() }
        output.statusChanged = { [unowned self] in systemd.statusChanged() }
        output.stopHearingTest = { [unowned self] why in hearingTests.stopTest(why: why) }
        output.listenAfresh = { [unowned self] in listening.listenAfresh() }
        prescriptions = PrescriptionService(audio: audio, fitting: fitting, log: log)
        prescriptions.play = { [unowned self] prepared in output.play(reusing: prepared) }
        prescriptions.reply = { [unowned self] in reply() }
        prescriptions.statusChanged = { [unowned self] in systemd.statusChanged() }
        listening = ListeningService(audio: audio, fitting: fitting, log: log)
        listening.play = { [unowned self] in output.play() }
        listening.reply = { [unowned self] in reply() }
        hearingTests = HearingTestService(
            audio: audio, fitting: fitting, dump: dump, paths: paths, calibration: calibration, calibrationStatus: calibrationStatus,
            log: log)
        hearingTests.hold = { [unowned self] connection in
            leases.holdHearingTest(connection)
            control.hold(connection)
        }
        hearingTests.reply = { [unowned self] in reply() }
        hearingTests.statusChanged = { [unowned self] in systemd.statusChanged() }
        audio.onToneStarted = { [unowned self] number, at in hearingTests.toneStarted(number: number, atSeconds: at) }
        tone.hearingTestRunning = { [unowned self] in hearingTests.isRunning }
        control.answer = { [unowned self] request, connection throws(RequestFailure) in try answer(request, connection: connection) }
        control.onLeaseEnd = { [unowned self] connection in leaseEnded(connection) }
        dump.calibration = calibrationStatus
        if let calibration {
            log.info("\(calibration.summary)")
            if calibration.isFarFromDefault {
                log.warning(
                    "calibration profile \(calibration.name) is more than \(Int(CalibrationProfile.uncalibratedUncertaintyDB)) dB from the uncalibrated default: check that it was measured with these headphones and this microphone (`ribbitd calibrate`)"
                )
            }
        } else {
            log.info("no calibration profile: taking 100 dB SPL at 0 dBFS (+-20 dB); `ribbitd calibrate` measures it")
        }
    }

    /// The data log last: it starts once the history made the data directory, and stops
    /// first, so its final flush happens while everything else still stands.
    private var services: [DaemonService] {
        [systemd, fitting, control, audio, output, prescriptions, voice, tone, listening, dump, hearingTests] + (wearLog.map { [$0] } ?? [])
    }

    /// Why `run` returned.
    public enum End: Sendable { case stopped, upgraded }

    /// Runs until `stop` or SIGTERM/SIGINT, or until its own file was replaced by an upgrade
    /// when it needed a new audio process (`AudioService.replacedByUpgrade`). Throws only when
    /// it cannot start: another daemon holds the history, or the socket cannot be made. A
    /// damaged or unusable history does not stop it: it plays what it last knew, or passes
    /// sound through under the ceiling.
    @discardableResult
    public func run() throws -> End {
        var signals = Self.blockTerminationSignals()  // before JACK starts its threads
        var running: [DaemonService] = []
        func stopServices() {
            let deadline = Self.now() + Self.stopSeconds
            for service in running.reversed() { service.stop(deadline: deadline) }
            audio.stop(deadline: deadline)  // started with the history, before its own turn
            running = []
        }
        defer { stopServices() }
        for service in services {
            try service.start(now: Self.now())
            running.append(service)
        }
        if let startPrescription {
            try fitting.loadAtStart(startPrescription)
        } else {
            fitting.logActive()
        }

        var watch = TurnWatch()
        while !stopping {
            var fds = (control.pollDescriptors + [audio.pollDescriptor].compactMap { $0 }).map {
                pollfd(fd: $0, events: Int16(POLLIN), revents: 0)
            }
            let idle = control.subscriberCount == 0 && audio.openingSince == nil && !hearingTests.isRunning
            let ready = poll(&fds, nfds_t(fds.count), idle ? 100 : 10)
            let now = Self.now()
            watch.begin()
            if ready > 0 {
                for entry in fds where entry.revents != 0 && entry.fd != audio.pollDescriptor {
                    control.handleReadable(entry.fd, now: now, watch: &watch)
                }
            }
            var noWait = timespec()
            let signal = sigtimedwait(&signals, nil, &noWait)
            if signal > 0 {
                log.info("signal \(signal): stopping")
                stopping = true
            }
            for service in services { watch.part(service.name) { service.tick(now: now) } }
            if let slow = watch.end() { log.warning("\(slow)") }
            if audio.replacedByUpgrade { stopping = true }
        }
        systemd.stopping()
        stopServices()
        log.info("stopped")
        return audio.replacedByUpgrade ? .upgraded : .stopped
    }

    // MARK: Requests

    /// The control protocol's requests (docs/control-protocol.md), each to the handler of the
    /// service that owns it; the switch is the registry, and a new request does not compile
    /// until it has its handler.
    private func answer(_ request: ControlRequest, connection: Int32) throws(RequestFailure) -> ControlReply {
        switch request {
        case .status: return ControlReply(ok: true, status: status)
        case .pause(let lease):
            if lease == true { holdPause(connection) } else { leases.wearerChosePause() }
            return output.setPaused(true)
        case .resume:
            leases.wearerChosePause()
            return output.setPaused(false)
        case .bypass(let on): return try output.bypass(on)
        case .load(let upload): return try prescriptions.load(upload)
        case .use(let choice): return try prescriptions.use(choice)
        case .keep: return try prescriptions.endTrial(keep: true)
        case .revert: return try prescriptions.endTrial(keep: false)
        case .stop:
            stopping = true
            log.info("stop requested")
            return reply()
        case .dump, .voice: return reply()  // the server turned the connection into a stream
        case .tone(let tone): return try self.tone.play(tone)
        case .volume(let change): return try listening.volume(change)
        case .program(let choice): return listening.choose(choice)
        case .hearingTestStart(let test): return try hearingTests.start(test, connection: connection)
        case .hearingTestAnswer(let ear): return try hearingTests.answer(ear: ear)
        case .hearingTestStop: return try hearingTests.stopRequest()
        case .measure(let connections): return try measure(connections ?? [], connection: connection)
        }
    }

    /// The reply to a request that changed (or read) the state.
    private func reply() -> ControlReply {
        systemd.statusChanged()
        return ControlReply(ok: true, status: status)
    }

    /// A pause held by the connection (a voice game's, which ends when the game's connection
    /// does); none when the wearer had paused (their pause stays theirs).
    private func holdPause(_ connection: Int32) {
        if leases.holdPause(connection, outputWasPaused: fitting.state.paused) { control.hold(connection) }
    }

    /// A live measurement (`verify --live`): held by its connection; what it changes is put
    /// back when that connection closes, however it closes.
    private func measure(_ connections: [PortConnection], connection: Int32) throws(RequestFailure) -> ControlReply {
        guard !leases.measurementHeld(byOtherThan: connection) else {
            throw RequestFailure("another live measurement is running; wait for it to end")
        }
        let taken = connections.map { AudioMessage.Connection(source: $0.source, destination: $0.destination) }
        leases.holdMeasurement(.init(connection: connection, listening: fitting.listening, connections: taken))
        control.hold(connection)
        return output.beginMeasurement(connections: taken.count)
    }

    /// A connection that held something closed: undo what it held.
    private func leaseEnded(_ connection: Int32) {
        for undo in leases.end(connection) {
            switch undo {
            case .resume:
                guard fitting.state.paused else { continue }
                _ = output.setPaused(false)
                log.notice("the client that held the pause went away: resumed")
            case .stopHearingTest:
                guard hearingTests.isRunning else { continue }
                hearingTests.stopTest(why: "the screen or command that ran it went away")
                log.notice("hearing test stopped: the connection that started it closed; the hearing aid plays again")
            case .restore(let measurement):
                output.endMeasurement(measurement)
            }
        }
    }

    private var status: DaemonStatus {
        let now = Self.now()
        let jack = audio.status
        let state = fitting.state
        var status = DaemonStatus(
            pid: getpid(), version: RibbitVersion.current, uptimeSeconds: now - started,
            prescription: state.description, output: state.output, jack: jack, jackProblem: audio.problem(now: now),
            totalXruns: audio.totalXruns,
            trial: state.trial.map { .init(secondsLeft: max(0, $0.deadline - Date().timeIntervalSince1970), revertsTo: $0.revertsTo) },
            dumpListeners: dump.listeners, ceilingDBFS: state.filterChoice.ceilingDBFS(calibration: audio.calibration),
            historyProblem: fitting.historyProblem,
            calibration: calibrationStatus,
            tone: tone.status(now: now, inputDBSPLAtFullScale: calibrationStatus.inputDBSPL),
            listening: listening.status, hearingTest: hearingTests.status(now: now))
        status.voiceListeners = voice.listeners
        status.storageProblems = fitting.storage.lines
        return status
    }

    private var calibrationStatus: DaemonStatus.Calibration {
        let fallback = CalibrationProfile.uncalibratedDBSPL
        return DaemonStatus.Calibration(
            profile: calibration?.name, inputDBSPL: calibration?.inputDBSPL ?? fallback,
            outputLeftDBSPL: calibration?.outputLeftDBSPL ?? fallback, outputRightDBSPL: calibration?.outputRightDBSPL ?? fallback,
            uncertaintyDB: calibration == nil ? CalibrationProfile.uncalibratedUncertaintyDB : nil)
    }

    static func now() -> Double { MonotonicClock.seconds() }

    /// Blocks SIGTERM and SIGINT in this thread and every thread started later (JACK's), so
    /// they stay pending until the poll loop takes them with sigtimedwait (at most 100 ms).
    static func blockTerminationSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
        return set
    }
}
