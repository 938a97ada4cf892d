import Foundation
import Glibc
import Logging
import RibbitAudioLink
import RibbitAudiometry
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
/// (`ToneService`), the listening program (`ProgramService`), the dump, the data log
/// (`WearLogService`).
/// They stop in reverse. The audio process itself starts as soon as the history's lock is held,
/// so JACK's ports come up while the history, the socket and the data log open (the filters
/// follow when it has connected, from the prescription the history restored).
/// Requests go through one table (`handlers`); what plays is derived from the fitting state.
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
    /// The data log (nil: `log = false` in ribbitd.conf).
    private var wearLog: WearLogService?
    private var stopping = false
    /// `run --rx`: a prescription to load at start and keep as the active one.
    private let startPrescription: PrescriptionInput?
    /// The calibration in use (nil: uncalibrated).
    private let calibration: CalibrationProfile?
    private let paths: RibbitPaths
    /// The hearing test running, or the last one (its status stays until the next).
    private var hearingTest: HearingTestSession?
    /// The microphone's octave bands (left and right input) while a hearing test runs.
    private var noiseMeters: [OctaveBandMeter] = []
    /// Where finished hearing tests go (the history's SQLite file).
    private let hearingTests: HearingTestRecords
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
        hearingTests = HearingTestRecords(path: PrescriptionStore.path(dataDirectory: paths.dataDirectory))
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
        tone.hearingTestRunning = { [unowned self] in hearingTest.map { !$0.isOver } ?? false }
        tone.reply = { [unowned self] in reply() }
        programs = ProgramService(fitting: fitting, log: log)
        programs.play = { [unowned self] in play() }
        programs.reply = { [unowned self] in reply() }
        control.handlers = [handlers, tone.handlers, programs.handlers].reduce(into: [:]) { all, more in
            all.merge(more) { _, _ in preconditionFailure("two handlers for one request") }
        }
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
        [systemd, fitting, control, audio, voice, tone, programs, dump] + (wearLog.map { [$0] } ?? [])
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
            let idle = control.subscriberCount == 0 && audio.openingSince == nil && hearingTest?.isOver ?? true
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
            watch.part("the hearing test") { hearingTestTick(now: now) }
            if let slow = watch.end() { log.warning("\(slow)") }
        }
        if let test = hearingTest, !test.isOver { perform(test.stop(why: "the daemon stopped"), now: Self.now()) }
        systemd.stopping()
        stopServices()
        log.info("stopped")
    }

    // MARK: Requests

    /// The control protocol's requests (docs/control-protocol.md), one handler each.
    private var handlers: [ControlRequest.Command: ControlService.Handler] {
        [
            .status: { [unowned self] _, _ in ControlReply(ok: true, status: status) },
            .pause: { [unowned self] request, connection in pause(request, connection: connection) },
            .resume: { [unowned self] _, _ in
                leases.wearerChosePause()
                return setPaused(false)
            },
            .bypass: { [unowned self] request, _ throws(RequestFailure) in try bypass(request) },
            .load: { [unowned self] request, _ throws(RequestFailure) in try load(request) },
            .use: { [unowned self] request, _ throws(RequestFailure) in try use(request) },
            .keep: { [unowned self] _, _ throws(RequestFailure) in try endTrialRequest(keep: true) },
            .revert: { [unowned self] _, _ throws(RequestFailure) in try endTrialRequest(keep: false) },
            .stop: { [unowned self] _, _ in
                stopping = true
                log.info("stop requested")
                return reply()
            },
            .dump: { [unowned self] _, _ in reply() },  // the server turned the connection into a stream
            .voice: { [unowned self] _, _ in reply() },  // likewise
            .volume: { [unowned self] request, _ throws(RequestFailure) in try volume(request) },
            .hearingTestStart: { [unowned self] request, connection throws(RequestFailure) in
                try startHearingTest(request, connection: connection)
            },
            .hearingTestAnswer: { [unowned self] request, _ throws(RequestFailure) in try answerHearingTest(request) },
            .hearingTestStop: { [unowned self] _, _ throws(RequestFailure) in try stopHearingTest() },
            .measure: { [unowned self] request, connection throws(RequestFailure) in try measure(request, connection: connection) },
        ]
    }

    /// The reply to a request that changed (or read) the state.
    private func reply() -> ControlReply {
        systemd.statusChanged()
        return ControlReply(ok: true, status: status)
    }

    /// A pause, the wearer's or held by the connection (`lease`: a voice game's, which ends
    /// when the game's connection does).
    private func pause(_ request: ControlRequest, connection: Int32) -> ControlReply {
        if request.lease == true {
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
        if paused, let test = hearingTest, !test.isOver {
            perform(test.stop(why: "the output was paused"), now: Self.now())
        }
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
                guard let test = hearingTest, !test.isOver else { continue }
                perform(test.stop(why: "the screen or command that ran it went away"), now: Self.now())
                log.notice("hearing test stopped: the connection that started it closed; the hearing aid plays again")
            case .restore(let measurement):
                restore(measurement)
            }
        }
    }

    /// A live measurement (`verify --live`): held by its connection; what it changes is put
    /// back when that connection closes, however it closes.
    private func measure(_ request: ControlRequest, connection: Int32) throws(RequestFailure) -> ControlReply {
        guard !leases.measurementHeld(byOtherThan: connection) else {
            throw RequestFailure("another live measurement is running; wait for it to end")
        }
        var taken: [AudioMessage.Connection] = []
        for pair in request.connections ?? [] {
            guard pair.count == 2, pair.allSatisfy({ !$0.isEmpty && $0.utf8.count < 512 }) else {
                throw RequestFailure("measure's connections are [source, destination] pairs of JACK port names")
            }
            taken.append(.init(source: pair[0], destination: pair[1]))
        }
        leases.holdMeasurement(.init(connection: connection, listening: fitting.listening, connections: taken))
        control.hold(connection)
        log.info("live measurement started; \(taken.count) JACK connections to put back when it ends")
        return reply()
    }

    /// The wearer's program and volume again, then (once they play) the connections the
    /// measurement took away: only those to or from the daemon's own ports.
    private func restore(_ measurement: Leases.Measurement) {
        if fitting.listening != measurement.listening {
            if measurement.listening.automatic && !fitting.listening.automatic { programs.listenAfresh() }
            fitting.listening = measurement.listening
            play()
        }
        let client = (audio.session?.client ?? "ribbit") + ":"
        let ours = measurement.connections.filter { $0.source.hasPrefix(client) || $0.destination.hasPrefix(client) }
        audio.reconnect(ours)
        log.info("live measurement ended: program and volume as before, \(ours.count) JACK connections put back")
        systemd.statusChanged()
    }

    private func bypass(_ request: ControlRequest) throws(RequestFailure) -> ControlReply {
        guard let on = request.on else { throw RequestFailure("bypass needs \"on\": true or false") }
        fitting.bypassed = on
        audio.setTrim(fitting.state.trimDB)
        do { try audio.play(fitting.state.filterChoice) } catch { throw RequestFailure("cannot switch bypass: \(error)") }
        log.info(on ? "bypass on: unprocessed sound under the ceiling" : "bypass off: prescription applied")
        return reply()
    }

    /// Check, fit and store first; only then switch. Any error leaves everything as it was.
    private func load(_ request: ControlRequest) throws(RequestFailure) -> ControlReply {
        let history = try fitting.history()
        let source = request.source ?? "the prescription"
        guard let text = request.prescription else { throw RequestFailure("load needs a \"prescription\" (the text of an .rx file)") }
        if let seconds = request.trialSeconds, !ControlProtocol.trialSeconds.contains(seconds) {
            throw RequestFailure("a trial lasts \(ControlProtocol.trialSecondsText), not \(seconds) s")
        }
        let accepted: Intake.Accepted
        do { accepted = try history.intake.check(text, source: source) } catch {
            throw RequestFailure("\(error.description); the active prescription is unchanged")
        }
        let prepared: RunningFilters
        do { prepared = try audio.prepare(fitting.state.choice(adopting: accepted.prescription, trusted: accepted.isTrusted)) } catch {
            throw RequestFailure("\(source): \(error); the active prescription is unchanged")
        }
        _ = try fitting.load(accepted, source: source, trialSeconds: request.trialSeconds)
        play(reusing: prepared)
        log.info(
            "loaded \(fitting.state.title) from \(source), \(accepted.verdict.description)\(fitting.state.trial == nil ? "" : ", as a trial")"
        )
        return reply()
    }

    private func use(_ request: ControlRequest) throws(RequestFailure) -> ControlReply {
        guard request.selector != nil || request.environment != nil else {
            throw RequestFailure("use needs a \"selector\" (id or name) or an \"environment\"")
        }
        let entry: PrescriptionHistory.Entry
        let prepared: RunningFilters
        do {
            entry = try fitting.history().find(selector: request.selector, environment: request.environment)
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
    private func volume(_ request: ControlRequest) throws(RequestFailure) -> ControlReply {
        guard fitting.state.active != nil else {
            throw RequestFailure("no prescription is loaded, and the volume trims a prescription's gain; `ribbitd load RX` first")
        }
        let asked: Double
        if let db = request.volumeDB {
            asked = db
        } else if let step = request.volumeStepDB {
            asked = fitting.listening.volumeDB + step
        } else {
            throw RequestFailure("volume needs \"volumeDB\" (a level) or \"volumeStepDB\" (a step), in dB")
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

    // MARK: Hearing test

    /// Starts a test: checked here; its tones are converted through the calibration and the
    /// headphones' RETSPL table, never above the self-test ceiling, 1 dB under the output
    /// ceiling in force and 1 dB under full scale.
    private func startHearingTest(_ request: ControlRequest, connection: Int32) throws(RequestFailure) -> ControlReply {
        let now = Self.now()
        if let test = hearingTest, !test.isOver { throw RequestFailure("a hearing test is already running; stop it first") }
        guard audio.isConnected else {
            throw RequestFailure("no JACK session (\(audio.problem(now: now) ?? "not connected")); the test's tones play through JACK")
        }
        guard !fitting.state.paused else { throw RequestFailure("the output is paused; `ribbitd resume` first") }
        let names = Transducer.allCases.map(\.rawValue).joined(separator: ", ")
        guard let transducer = Transducer(rawValue: request.transducer ?? Transducer.consumer.rawValue) else {
            throw RequestFailure("no headphone type \"\(request.transducer ?? "")\"; the types are \(names)")
        }
        var ears: [Ear] = []
        for name in request.testEars ?? ["right", "left"] {
            guard let ear = Ear(rawValue: name), !ears.contains(ear) else {
                throw RequestFailure("testEars lists \"right\" and \"left\" (each once, the better ear first), not \"\(name)\"")
            }
            ears.append(ear)
        }
        guard !ears.isEmpty else { throw RequestFailure("testEars needs at least one ear") }
        var table = RETSPLTable.standard(transducer)
        // Consumer headphones: a normal-hearing listener's thresholds as 0 dB HL, when one was stored.
        var reference: [Int: Double]?
        if transducer == .consumer {
            do { reference = try HearingReference.load(paths: paths) } catch { throw RequestFailure("\(error)") }
            if let reference { table = table.biologicallyCalibrated(referenceThresholdsDBHL: reference) }
        }
        let frequencies = request.frequenciesHz ?? HearingTest.Plan.clinicalOrder
        // A clinical plan: each frequency once, or twice (a retest), so a test ends.
        guard frequencies.count <= HearingTest.Plan.maxPresentedFrequencies,
            Dictionary(grouping: frequencies, by: { $0 }).values.allSatisfy({ $0.count <= 2 })
        else {
            throw RequestFailure(
                "frequenciesHz lists at most \(HearingTest.Plan.maxPresentedFrequencies) frequencies, each at most twice (a retest)")
        }
        if let missing = frequencies.first(where: { table.dBSPLAtZeroHL[$0] == nil }) {
            let known = table.dBSPLAtZeroHL.keys.sorted().map(String.init).joined(separator: ", ")
            throw RequestFailure("no RETSPL for \(missing) Hz; the test's frequencies are \(known)")
        }
        let ceiling = fitting.state.filterChoice.ceilingDBFS(calibration: audio.calibration)
        let highest = min(ceiling - ControlProtocol.toneHeadroomDB, -ControlProtocol.toneHeadroomDB)
        let cal = calibrationStatus
        var levels: [Ear: ToneLevels] = [:]
        var maximum: [Ear: [Int: Int]] = [:]
        for ear in ears {
            let response = (ear == .left ? calibration?.responseLeft : calibration?.responseRight) ?? [:]
            let tone = ToneCalibration(dBSPLAtZeroDBFS: ear == .left ? cal.outputLeftDBSPL : cal.outputRightDBSPL, responseDB: response)
            let earLevels = ToneLevels(table: table, calibration: tone, highestPlayedDBFS: highest)
            levels[ear] = earLevels
            maximum[ear] = Dictionary(
                uniqueKeysWithValues: Set(frequencies).compactMap { hz in earLevels.maximumDBHL(frequencyHz: hz).map { (hz, $0) } })
        }
        var plan = HearingTest.Plan(maximumDBHL: maximum)
        plan.ears = ears
        plan.frequenciesHz = frequencies
        plan.answersNameTheEar = request.answersNameTheEar ?? false
        let session = HearingTestSession(
            plan: plan, levels: levels, transducer: transducer, ceilingDBHL: ToneLevels.selfTestCeilingDBHL,
            seed: request.seed ?? UInt64.random(in: 0...UInt64.max), now: now
        ) { [unowned self] hz, levelDBHL in judgeNoise(frequencyHz: hz, levelDBHL: levelDBHL, transducer: transducer) }
        guard session.test.progress.total > 0 else {
            throw RequestFailure("no frequency can be played with this calibration and ceiling; check `ribbitd status`")
        }
        session.biologicalReferenceDBHL = reference
        hearingTest = session
        let rate = Double(audio.session?.sampleRate ?? 48000)
        noiseMeters = [OctaveBandMeter(sampleRate: rate), OctaveBandMeter(sampleRate: rate)]
        dump.inputTaps["noise"] = { [unowned self] channels in
            for (index, samples) in channels.enumerated() where index < noiseMeters.count { noiseMeters[index].append(samples) }
        }
        perform(session.startActions, now: now)
        leases.holdHearingTest(connection)
        control.hold(connection)
        log.info(
            "hearing test started: \(transducer.rawValue) headphones, \(ears.map(\.rawValue).joined(separator: " then ")) ear, \(session.test.progress.total) frequencies; the hearing aid is off meanwhile"
        )
        return reply()
    }

    private func answerHearingTest(_ request: ControlRequest) throws(RequestFailure) -> ControlReply {
        guard let test = hearingTest, !test.isOver else {
            throw RequestFailure("no hearing test is running; `ribbitd hearing-test` starts one")
        }
        var ear: Ear?
        if let name = request.ear {
            guard let named = Ear(rawValue: name) else { throw RequestFailure("an answer's ear is \"left\" or \"right\"") }
            ear = named
        }
        let now = Self.now()
        perform(test.answer(ear: ear, now: now), now: now)
        return ControlReply(ok: true, status: status)
    }

    private func stopHearingTest() throws(RequestFailure) -> ControlReply {
        guard let test = hearingTest, !test.isOver else { throw RequestFailure("no hearing test is running") }
        perform(test.stop(why: "stopped before the end"), now: Self.now())
        return reply()
    }

    private func hearingTestTick(now: Double) {
        guard let test = hearingTest, !test.isOver else { return }
        guard audio.isConnected else {
            perform(test.stop(why: "JACK went away"), now: now)
            return
        }
        perform(test.tick(now: now, toneStartDelay: audio.toneStartDelay(now: now)), now: now)
    }

    /// Carries out what the test asks; at its end, the hearing aid again and the result stored.
    private func perform(_ actions: [HearingTestSession.Action], now: Double) {
        for action in actions {
            switch action {
            case .play(let hz, let dBFS, let ear, let pulses):
                audio.playTone(
                    frequencyHz: Double(hz), levelDBFS: dBFS, ear: ear.rawValue, seconds: Double(pulses.pulseMs) / 1000,
                    pulses: (pulses.pulses, Double(pulses.gapMs) / 1000), hearingTest: true, now: now)
            case .holdSilence:
                audio.playTone(
                    frequencyHz: 1000, levelDBFS: nil, ear: "both", seconds: ControlProtocol.toneMaxSeconds, hearingTest: true, now: now)
            case .end:
                endHearingTest(now: now)
            }
        }
    }

    private func endHearingTest(now: Double) {
        guard let test = hearingTest else { return }
        if audio.isConnected { audio.playTone(frequencyHz: 1000, levelDBFS: nil, ear: "both", seconds: 0, now: now) }
        dump.inputTaps["noise"] = nil
        noiseMeters = []
        let record = test.record(date: Date(), calibration: calibrationStatus)
        if record.result.frequencies.isEmpty {
            log.info("hearing test ended (\(test.problem ?? "finished")) before any frequency was measured; nothing stored")
        } else {
            do {
                test.recordID = try hearingTests.save(record)
                log.info("hearing test \(test.problem == nil ? "finished" : "ended: \(test.problem!)"); stored as \(test.recordID!)")
            } catch {
                test.problem = (test.problem.map { $0 + "; " } ?? "") + "the result could not be stored: \(error)"
                log.error("hearing test result not stored: \(error)")
            }
        }
        systemd.statusChanged()
    }

    /// The room against the headphones' maximum permissible ambient noise, each band the louder
    /// of the two inputs (nil: no reading yet).
    private func judgeNoise(frequencyHz: Int, levelDBHL: Int, transducer: Transducer) -> HearingTestSession.NoiseReading? {
        let microphone = calibrationStatus.inputDBSPL
        var bands: [Int: Double] = [:]
        for meter in noiseMeters {
            // Silence reads -inf; JSON carries only numbers, and no microphone is that quiet.
            for (band, level) in meter.levelsDBSPL(microphoneDBSPLAtZeroDBFS: microphone) {
                bands[band] = max(bands[band] ?? -99, level, -99)
            }
        }
        guard !bands.isEmpty else { return nil }
        let verdict = AmbientNoiseCheck(transducer: transducer).verdict(
            bandLevelsDBSPL: bands, presentationDBHL: levelDBHL, testFrequencyHz: frequencyHz)
        return HearingTestSession.NoiseReading(
            tooLoud: verdict.tooLoud,
            status: HearingTestStatus.Noise(
                loudBandHz: verdict.tooLoud ? verdict.worstBandHz : nil, levelDBSPL: verdict.worstBandDBSPL,
                limitDBSPL: verdict.worstBandLimitDBSPL, testBandDBSPL: verdict.testBandDBSPL))
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
            listening: listeningStatus, hearingTest: hearingTest?.status(now: now))
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
