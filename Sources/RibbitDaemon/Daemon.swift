import Foundation
import Glibc
import Logging
import RibbitAudioLink
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitIntake
import RibbitPrescription
import RibbitSettings
import RibbitStore

/// `ribbitd run`: one control thread that owns all daemon state and runs the services' poll
/// loop. The JACK client and its real-time thread live in a small child process,
/// `ribbit-audio` (AudioService), so the process holding the audio thread carries no
/// Foundation, SQLite, crypto or QR code.
///
/// The services, in start order: systemd notification, the history (`FittingService`), the
/// control socket, the JACK session (`AudioService`), the voice stream, the tones
/// (`ToneService`), the listening program (`ProgramService`), the dump, the hearing test
/// (`HearingTestService`), the data log (`WearLogService`).
/// They stop in reverse. The audio process itself starts as soon as the history's lock is held,
/// so JACK's ports come up while the history, the socket and the data log open (the filters
/// follow when it has connected, from the prescription the history restored).
/// Each request goes to the service that owns it through one switch (`answer`); what plays is
/// derived from the fitting state.
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
    private var programs: ProgramService!
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
            programs.listen(bands: bands, broadband: broadband)
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
        programs = ProgramService(fitting: fitting, log: log)
        programs.play = { [unowned self] in play() }
        programs.reply = { [unowned self] in reply() }
        hearingTests = HearingTestService(
            audio: audio, fitting: fitting, dump: dump, paths: paths, calibration: calibration, calibrationStatus: calibrationStatus,
            log: log)
        hearingTests.hold = { [unowned self] connection in
            leases.holdHearingTest(connection)
            control.hold(connection)
        }
        hearingTests.reply = { [unowned self] in reply() }
        hearingTests.statusChanged = { [unowned self] in systemd.statusChanged() }
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
        [systemd, fitting, control, audio, voice, tone, programs, dump, hearingTests] + (wearLog.map { [$0] } ?? [])
    }

    /// Runs until `stop` or SIGTERM/SIGINT. Throws only when it cannot start: another daemon
    /// holds the history, or the socket cannot be made. A damaged or unusable history does not
    /// stop it: it plays what it last knew, or passes sound through under the ceiling.
    public func run() throws {
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
            if fitting.state.trialIsOver(at: Date().timeIntervalSince1970) { watch.part("the trial's end") { trialTimeIsUp() } }
            for service in services { watch.part(service.name) { service.tick(now: now) } }
            if let slow = watch.end() { log.warning("\(slow)") }
        }
        systemd.stopping()
        stopServices()
        log.info("stopped")
    }

    // MARK: Requests

    /// The control protocol's requests (docs/control-protocol.md), each to the handler of the
    /// service that owns it; the switch is the registry, and a new request does not compile
    /// until it has its handler.
    private func answer(_ request: ControlRequest, connection: Int32) throws(RequestFailure) -> ControlReply {
        switch request {
        case .status: return ControlReply(ok: true, status: status)
        case .pause(let lease): return pause(lease: lease, connection: connection)
        case .resume:
            leases.wearerChosePause()
            return setPaused(false)
        case .bypass(let on): return try bypass(on)
        case .load(let upload): return try load(upload)
        case .use(let choice): return try use(choice)
        case .keep: return try endTrialRequest(keep: true)
        case .revert: return try endTrialRequest(keep: false)
        case .stop:
            stopping = true
            log.info("stop requested")
            return reply()
        case .dump, .voice: return reply()  // the server turned the connection into a stream
        case .tone(let tone): return try self.tone.play(tone)
        case .volume(let change): return try volume(change)
        case .program(let choice): return try programs.choose(choice)
        case .hearingTestStart(let test): return try hearingTests.start(test, connection: connection)
        case .hearingTestAnswer(let ear): return try hearingTests.answer(ear: ear)
        case .hearingTestStop: return try hearingTests.stopRequest()
        case .measure(let connections): return try measure(connections, connection: connection)
        }
    }

    /// The reply to a request that changed (or read) the state.
    private func reply() -> ControlReply {
        systemd.statusChanged()
        return ControlReply(ok: true, status: status)
    }

    /// A pause, the wearer's or held by the connection (`lease`: a voice game's, which ends
    /// when the game's connection does).
    private func pause(lease: Bool, connection: Int32) -> ControlReply {
        if lease {
            if leases.holdPause(connection, outputWasPaused: fitting.state.paused) { control.hold(connection) }
        } else {
            leases.wearerChosePause()
        }
        return setPaused(true)
    }

    /// How long a pause may take to silence the output before the reply goes anyway (no JACK
    /// cycles run): a period or two and the 5 ms ramp, on a loaded machine a scheduler delay.
    static let pauseConfirmSeconds = 0.5

    /// Pausing answers once the output is silent (the audio process confirms its ramp ended).
    private func setPaused(_ paused: Bool) -> ControlReply {
        // A paused output would play the test's tones to nobody: the test stops first.
        if paused { hearingTests.stopTest(why: "the output was paused") }
        fitting.paused = paused
        let confirmed = audio.setPaused(paused, waitSeconds: paused ? Self.pauseConfirmSeconds : 0, now: Self.now())
        if paused && !confirmed && audio.isConnected {
            log.warning("paused, but the audio process did not confirm silence within \(Self.pauseConfirmSeconds) s")
        }
        log.info(paused ? "paused: output silent" : "resumed")
        return reply()
    }

    /// A connection that held something closed: undo what it held.
    private func leaseEnded(_ connection: Int32) {
        for undo in leases.end(connection) {
            switch undo {
            case .resume:
                guard fitting.state.paused else { continue }
                _ = setPaused(false)
                log.notice("the client that held the pause went away: resumed")
            case .stopHearingTest:
                guard hearingTests.isRunning else { continue }
                hearingTests.stopTest(why: "the screen or command that ran it went away")
                log.notice("hearing test stopped: the connection that started it closed; the hearing aid plays again")
            case .restore(let measurement):
                restore(measurement)
            }
        }
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
        // As a test box measures (ANSI S3.22): adaptive features off until it ends.
        if !fitting.testBox {
            fitting.testBox = true
            play()
        }
        log.info("live measurement started (adaptive features off); \(taken.count) JACK connections to put back when it ends")
        return reply()
    }

    /// The wearer's program and volume again, then (once they play) the connections the
    /// measurement took away: only those to or from the daemon's own ports.
    private func restore(_ measurement: Leases.Measurement) {
        let changed = fitting.listening != measurement.listening || fitting.testBox
        fitting.testBox = false
        if fitting.listening != measurement.listening {
            if measurement.listening.automatic && !fitting.listening.automatic { programs.listenAfresh() }
            fitting.listening = measurement.listening
        }
        if changed { play() }
        let client = (audio.session?.client ?? "ribbit") + ":"
        let ours = measurement.connections.filter { $0.source.hasPrefix(client) || $0.destination.hasPrefix(client) }
        audio.reconnect(ours)
        log.info("live measurement ended: program, volume and adaptive features as before, \(ours.count) JACK connections put back")
        systemd.statusChanged()
    }

    private func bypass(_ on: Bool) throws(RequestFailure) -> ControlReply {
        fitting.bypassed = on
        audio.setTrim(fitting.state.trimDB)
        do { try audio.play(fitting.state.filterChoice) } catch { throw RequestFailure("cannot switch bypass: \(error)") }
        log.info(on ? "bypass on: unprocessed sound under the ceiling" : "bypass off: prescription applied")
        return reply()
    }

    /// Check, fit and store first; only then switch. Any error leaves everything as it was.
    private func load(_ upload: PrescriptionUpload) throws(RequestFailure) -> ControlReply {
        let history = try fitting.history()
        let source = upload.source
        let accepted: Intake.Accepted
        do { accepted = try history.intake.check(upload.text, source: source) } catch {
            throw RequestFailure("\(error.description); the active prescription is unchanged")
        }
        let prepared: RunningFilters
        do { prepared = try audio.prepare(fitting.state.choice(adopting: accepted.prescription, trusted: accepted.isTrusted)) } catch {
            throw RequestFailure("\(source): \(error); the active prescription is unchanged")
        }
        _ = try fitting.load(accepted, source: source, trialSeconds: upload.trial?.seconds)
        play(reusing: prepared)
        log.info(
            "loaded \(fitting.state.title) from \(source), \(accepted.verdict.description)\(fitting.state.trial == nil ? "" : ", as a trial")"
        )
        return reply()
    }

    private func use(_ choice: HistoryChoice) throws(RequestFailure) -> ControlReply {
        let entry: PrescriptionHistory.Entry
        let prepared: RunningFilters
        do {
            entry =
                switch choice {
                case .entry(let selector): try fitting.history().find(selector: selector, environment: nil)
                case .newest(let environment): try fitting.history().find(selector: nil, environment: environment)
                }
            prepared = try audio.prepare(fitting.state.choice(adopting: entry.accepted.prescription, trusted: entry.accepted.isTrusted))
        } catch {
            throw RequestFailure("\(error); the active prescription is unchanged")
        }
        try fitting.use(entry)
        play(reusing: prepared)
        log.info("using \(entry.title), history entry \(entry.id)")
        return reply()
    }

    /// The wearer's volume: set or stepped, clamped to the range, remembered; only the
    /// compressor's trim moves (no design, no new plan), under each band's maximum gain. The
    /// output limits do not move with it.
    private func volume(_ change: VolumeChange) throws(RequestFailure) -> ControlReply {
        guard fitting.state.active != nil else {
            throw RequestFailure("no prescription is loaded, and the volume trims a prescription's gain; `ribbitd load RX` first")
        }
        let asked: Double =
            switch change {
            case .set(let dB): dB
            case .step(let dB): fitting.listening.volumeDB + dB
            }
        guard asked.isFinite else { throw RequestFailure("the volume must be a number of dB") }
        let range = fitting.state.active?.prescription.volumeRange ?? Listening.volumeRangeDB
        fitting.listening.volumeDB = min(max(asked, range.lowerBound), range.upperBound)
        audio.setTrim(fitting.state.trimDB)
        log.info("volume \(Prescription.number(fitting.listening.volumeDB)) dB")
        return reply()
    }

    private func endTrialRequest(keep: Bool) throws(RequestFailure) -> ControlReply {
        _ = try fitting.history()
        guard fitting.state.trial != nil else { throw RequestFailure("no trial is running; `ribbitd load --trial 15m RX` starts one") }
        try endTrial(keep: keep, why: keep ? "kept" : "reverted")
        return reply()
    }

    /// Ends the trial (keep it, or go back).
    private func endTrial(keep: Bool, why: String) throws(RequestFailure) {
        do { try fitting.endTrial(keep: keep) } catch {
            log.error("\(error)")
            throw error
        }
        if !keep { play() }
        log.info("trial \(why): now \(fitting.state.title)")
        systemd.statusChanged()
    }

    /// The trial's timer: a failure is logged (and the trial tried again next turn).
    private func trialTimeIsUp() {
        do throws(RequestFailure) { try endTrial(keep: false, why: "the trial time is up") } catch {}
    }

    /// After the active prescription or the mode changed: what plays now goes to the engine.
    private func play(reusing prepared: RunningFilters? = nil) {
        let choice = fitting.state.filterChoice
        // The trim first: a new compressor starts at the trim asked for when it is taken.
        audio.setTrim(fitting.state.trimDB)
        do { try audio.play(choice, reusing: prepared?.choice == choice ? prepared : nil) } catch {
            log.error("internal error: the new filters do not fit the engine (\(error))")
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
            listening: listeningStatus, hearingTest: hearingTests.status(now: now))
        status.voiceListeners = voice.listeners
        status.storageProblems = fitting.storage.lines
        return status
    }

    /// The program, volume and what the compressor does with the active prescription (nil without one).
    private var listeningStatus: DaemonStatus.Listening? {
        let state = fitting.state
        guard let active = state.active else { return nil }
        let program = state.program
        let rx = program.adjust(active.prescription)
        let ears = [Ear.left, .right].map {
            CompressorFitting.settings(rx, ear: $0, trusted: active.trusted) ?? CompressorFitting.passThrough(rx, trusted: active.trusted)
        }
        let range = active.prescription.volumeRange
        var listening = DaemonStatus.Listening(
            program: program.rawValue, chosenBy: state.programChosenBy,
            reason: state.listening.automatic ? state.automaticPick?.reason : nil,
            volumeDB: state.listening.volumeDB, volumeMinDB: range.lowerBound, volumeMaxDB: range.upperBound,
            noiseReduction: program.noiseReductionStrength, bands: ears[0].bands.count,
            compressing: ears.contains { $0.bands.contains { $0.ratio > 1 } },
            outputLimitDBSPL: ears.map { $0.bands.map(\.limitDBSPL).max() ?? CompressorFitting.otcLimitDBSPL },
            outputLimitReason: CompressorFitting.capReason(
                rx, trusted: active.trusted, compressing: ears.contains { $0.bands.contains { $0.ratio > 1 } }))
        listening.shortfall = CompressorFitting.shortfallSummary(rx, trusted: active.trusted, calibration: audio.calibration)
        let deliveries = CompressorFitting.deliveries(rx, trusted: active.trusted, calibration: audio.calibration)
        listening.clinicalNote = ClinicalNote.text(rx, deliveries: deliveries, maximumDB: GainMaximum.headphonesDB(audio.calibration))
        if state.output == .processing, let activity = audio.activity, activity.inputDBSPL.count == ears[0].bands.count {
            func tenths(_ values: [Double]) -> [Double] { values.map { ($0 * 10).rounded() / 10 + 0 } }
            listening.activity = DaemonStatus.Activity(
                bandCentresHz: ears[0].bands.map(\.centreHz), inputDBSPL: tenths(activity.inputDBSPL),
                compressionDB: tenths(activity.compressionDB), followingSpeech: activity.followingSpeech.map { ($0 * 100).rounded() / 100 },
                noiseReductionDB: program.noiseReductionStrength > 0 ? tenths(activity.noiseReductionDB) : nil,
                outputLimitDB: tenths(activity.outputLimitDB))
        }
        return listening
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
