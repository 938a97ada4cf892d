import Foundation
import Glibc
import Logging
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitJack
import RibbitPrescription
import RibbitSignature
import RibbitStore

/// `ribbitd run`: one control thread that owns all daemon state and polls the control socket,
/// the signals and JACK's events; JACK's process thread runs only the RealtimeProcessor, and
/// a worker thread makes the libjack calls that wait for the server (JackWorker).
///
/// Prescription changes are prepared here (parse, fit, design filters) and published to the
/// engine, which crossfades on the RT thread. If the JACK server goes away, the client is
/// closed and reopened with backoff, with the same prescription and output mode.
public final class Daemon {
    public static let version = "0.1.0"

    private let config: DaemonConfig
    private let paths: RibbitPaths
    private let log: Logger
    private var store: PrescriptionStore?
    private var historyLock: HistoryLock?
    /// What is wrong with the history, for `status` and the log (nil: nothing).
    private var historyProblem: String?
    private var intake: Intake
    private let notifier = SystemdNotifier()
    private let started = Daemon.now()

    private var active: Prescription?
    private var activeRecord: PrescriptionStore.Record?
    private var trial: PrescriptionStore.Trial?
    /// The lowest max-output in the history and the default: the ceiling with no prescription.
    private var strictestKnownCeilingDBFS = Prescription.defaultMaxOutputDBFS
    private var paused = false
    private var bypassed = false
    private var session: AudioSession?
    private let worker = JackWorker()
    /// When the worker began opening a session (nil: not opening), and where it puts the result.
    private var openingSince: Double?
    private let opened = Mailbox<(plan: AudioSession.Plan, result: Result<AudioSession, JackError>)>()
    private var jackProblem: String? = "not connected yet"
    private var retryDelay = Daemon.firstRetryDelay
    private var nextAttempt = 0.0
    private var xrunsOfClosedSessions = 0
    private var stopping = false
    private var readySent = false
    private var lastWatchdog = 0.0
    /// What the engine runs (for the dump), and the dump of the current session while clients listen.
    private var running: RunningFilters?
    private var dump: DumpPublisher?
    private var dumpListeners = 0

    static let firstRetryDelay = 0.25
    static let longestRetryDelay = 2.0
    /// systemd hears READY=1 once JACK answered, or after this long without an answer.
    static let readyDeadline = 2.0

    /// - Parameter prescription: text and source of a prescription to load at start (and keep
    ///   as the active one); nil: the last active one.
    private let startPrescription: (text: String, source: String)?

    public init(config: DaemonConfig, paths: RibbitPaths, log: Logger, prescription: (text: String, source: String)? = nil) {
        startPrescription = prescription
        self.config = config
        self.paths = paths
        self.log = log
        intake = Intake.load(paths: paths, config: config)
    }

    /// Runs until `stop` or SIGTERM/SIGINT. Throws only when it cannot start: another daemon
    /// holds the history, or the socket cannot be made. A damaged or unusable history does not
    /// stop it: it plays what it last knew, or passes sound through under the ceiling.
    public func run() throws {
        var signals = Self.blockTerminationSignals()  // before JACK starts its threads
        let lock: HistoryLock
        do { lock = try HistoryLock(dataDirectory: paths.dataDirectory, waitSeconds: 2) } catch {
            if case .held(let holder) = error, let pid = holder.pid {
                throw StateError(
                    "another ribbitd is already running (pid \(pid), listening on \(holder.socketPath ?? "?")) on the history in \(paths.dataDirectory); `ribbitd stop` stops it"
                )
            }
            throw StateError("\(error)")
        }
        historyLock = lock
        let server = try ControlServer(path: paths.socketPath)
        server.onNotice = { [log] in log.warning("\($0)") }
        lock.record(socketPath: paths.socketPath)
        defer { lock.clear() }
        openHistory()
        if startPrescription == nil { restoreActivePrescription() }
        if let (text, source) = startPrescription {
            let reply = load(ControlRequest(command: .load, prescription: text, source: source))
            if let error = reply.error { throw StateError(error) }
        }
        log.info("control socket \(paths.socketPath)")
        startOpening(now: Self.now())

        while !stopping {
            var fds = server.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), server.subscriberCount == 0 && openingSince == nil ? 100 : 10)
            let now = Self.now()
            if ready > 0 {
                for entry in fds where entry.revents != 0 {
                    server.handleReadable(entry.fd, now: now) { self.handle($0) }
                }
            }
            var noWait = timespec()
            let signal = sigtimedwait(&signals, nil, &noWait)
            if signal > 0 {
                log.info("signal \(signal): stopping")
                stopping = true
            }
            server.closeIdle(now: now)
            tick(now: now)
            publishDump(server, now: now)
        }
        notifier.send("STOPPING=1")
        closeSession()
        if !worker.waitUntilIdle(seconds: 2) {
            log.warning("the JACK server does not answer; stopping without closing the JACK client")
        }
        log.info("stopped")
    }

    // MARK: Periodic work (control thread)

    private func tick(now: Double) {
        if let watchdog = notifier.watchdogInterval, now - lastWatchdog >= watchdog {
            notifier.send("WATCHDOG=1")
            lastWatchdog = now
        }
        if let deadline = trial?.deadline, Date() >= deadline { endTrial(keep: false, why: "the trial time is up") }
        if let outcome = opened.take() { adopt(outcome.result, plan: outcome.plan, now: now) }
        if !readySent, now - started >= Self.readyDeadline {
            // Ready means the control socket answers; the status says JACK is still missing.
            sendReady()
        }
        guard var current = session else {
            if openingSince == nil, now >= nextAttempt { startOpening(now: now) }
            return
        }
        current.processor.engine.collectRetired()
        if current.client.events.shutDown.load(ordering: .acquiring) {
            log.warning("the JACK server went away; retrying with backoff, the prescription stays")
            closeSession()
            jackProblem = "the JACK server went away; retrying"
            nextAttempt = now + retryDelay
            notifier.send("STATUS=waiting for a JACK server")
            return
        }
        if current.client.events.sampleRate.load(ordering: .relaxed) != Int(current.processor.sampleRate) {
            log.notice("JACK changed its sample rate; preparing the engine again")
            closeSession()
            startOpening(now: now)
            return
        }
        let period = current.processor.period.load(ordering: .relaxed)
        if period != current.period {
            log.notice("JACK period is now \(period) frames; latency \(current.processor.latencyFrames) frames")
            let client = UncheckedBox(current.client)
            worker.run { client.value.recomputeLatencies() }
            current.period = period
        }
        let xruns = current.client.events.xruns.load(ordering: .relaxed)
        if xruns > current.xrunsLogged {
            log.warning("\(xruns - current.xrunsLogged) xrun(s) (\(xruns) since connecting)")
            current.xrunsLogged = xruns
        }
        session = current
    }

    /// While dump clients listen, the RT thread copies each period into the ring and 20 times
    /// a second a frame goes to every client. With none, the RT thread does nothing extra.
    private func publishDump(_ server: ControlServer, now: Double) {
        dumpListeners = server.subscriberCount
        guard let session, let running else { return }
        let listening = dumpListeners > 0
        if listening != session.processor.dumpEnabled.load(ordering: .relaxed) {
            dump = listening ? DumpPublisher(processor: session.processor) : nil
            session.processor.dumpEnabled.store(listening, ordering: .relaxed)
        }
        guard listening, let dump, dump.isDue(now: now) else { return }
        let frame = dump.frame(
            from: session.processor, running: running, time: now - started,
            xruns: session.client.events.xruns.load(ordering: .relaxed), output: output, prescription: activeDescription)
        server.broadcast(frame.jsonLine(), now: now)
    }

    /// Asks the worker to open, activate and wire a JACK session for what should play now.
    private func startOpening(now: Double) {
        let plan = AudioSession.Plan(config: config, choice: currentFilterChoice, paused: paused)
        openingSince = now
        let (log, mailbox) = (log, opened)
        worker.run {
            mailbox.put((plan, Result { () throws(JackError) in try AudioSession.open(plan, log: log) }))
        }
    }

    private func adopt(_ result: Result<AudioSession, JackError>, plan: AudioSession.Plan, now: Double) {
        openingSince = nil
        switch result {
        case .success(let opened):
            session = opened
            running = opened.running
            dump = nil
            retryDelay = Self.firstRetryDelay
            jackProblem = nil
            // What changed while the worker opened it (a load, bypass or pause) applies now.
            opened.processor.paused.store(paused, ordering: .relaxed)
            if plan.choice != currentFilterChoice {
                do { try publishCurrentFilters() } catch { log.error("internal error: \(error)") }
            }
            sendReady()
        case .failure(let error):
            if jackProblem != error.description { log.warning("JACK: \(error.description); retrying") }
            jackProblem = error.description
            nextAttempt = now + retryDelay
            retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
            if !readySent { sendReady() }
        }
    }

    private func sendReady() {
        notifier.send("READY=1\nSTATUS=\(session == nil ? "waiting for a JACK server" : statusLine)")
        readySent = true
    }

    /// Hands the client to the worker to close (closing waits for the server too).
    private func closeSession() {
        guard let current = session else { return }
        xrunsOfClosedSessions += current.client.events.xruns.load(ordering: .relaxed)
        session = nil
        dump = nil
        let client = UncheckedBox(current.client)
        worker.run { client.value.close() }
    }

    // MARK: Prescriptions

    /// The prescription's filters; in bypass a pure delay under its ceiling; with none, a pure
    /// delay under the strictest ceiling the history knows. No mode is without a ceiling.
    private var currentFilterChoice: FilterChoice {
        guard let active else { return .delay(ceilingDBFS: strictestKnownCeilingDBFS) }
        return bypassed ? .delay(ceilingDBFS: active.maxOutputDBFS) : .prescription(active)
    }

    /// Sends the filters for the current state to the running engine (crossfaded there);
    /// `prepared` are the active prescription's filters when the caller made them already.
    private func publishCurrentFilters(reusing prepared: RunningFilters? = nil) throws(EngineError) {
        guard let session else { return }
        let choice = currentFilterChoice
        let filters: RunningFilters
        if case .prescription = choice, let prepared {
            filters = prepared
        } else {
            filters = try choice.prepare(sampleRate: session.processor.sampleRate)
        }
        try session.processor.engine.publish(filters.filters)
        running = filters
    }

    /// Opens the history, moving a damaged one aside (the store's recovery). When it cannot be
    /// opened at all the daemon still runs, on the copy of the last active prescription.
    private func openHistory() {
        do {
            let (opened, recovery) = try PrescriptionStore.openRecovering(path: paths.storePath)
            store = opened
            if let recovery {
                historyProblem = recovery
                log.error("\(recovery)")
            }
        } catch {
            historyProblem = "cannot open the prescription history \(paths.storePath) (\(error)); load and use are unavailable until it is fixed"
            log.error("\(historyProblem!)")
        }
    }

    /// The active prescription from the history (or, without one, from its copy). An older
    /// version kept it in $XDG_STATE_HOME/ribbit/active.rx: that file is taken in once.
    private func restoreActivePrescription() {
        do {
            if let store {
                let legacy = StateStore(directory: paths.stateDirectory)
                if try store.active() == nil, let text = try? legacy.loadActive() {
                    let accepted = try intake.check(text, source: legacy.activePrescriptionPath)
                    try store.add(accepted.record(payload: text, source: legacy.activePrescriptionPath))
                    try? FileManager.default.removeItem(atPath: legacy.activePrescriptionPath)
                    log.notice("took \(legacy.activePrescriptionPath) into the history")
                }
                store.saveActiveCopy()  // also for a history made before the copy existed
            }
            try adoptActiveFromStore()
            guard let active else {
                log.notice("no prescription loaded: sound passes through unchanged until `ribbitd load RX`")
                return
            }
            log.info("prescription \(active.name) (\(active.environment)) from the history")
        } catch {
            active = nil
            activeRecord = nil
            log.error("\(error); starting without a prescription (sound passes through unchanged)")
        }
    }

    /// Reads the active prescription and trial from the store (no publish). A damaged active
    /// entry, or no store at all, plays the copy kept beside the history when it is intact.
    private func adoptActiveFromStore() throws {
        let copy = PrescriptionStore.activeCopy(databasePath: paths.storePath)
        guard let store else {
            active = try copy.map { try intake.check($0.payload, source: "the copy of the last active prescription").prescription }
            activeRecord = copy
            return
        }
        trial = try store.trial()
        strictestKnownCeilingDBFS = try store.all().compactMap { try? Prescription.parse(Array($0.intactPayload().utf8)).maxOutputDBFS }
            .reduce(Prescription.defaultMaxOutputDBFS) { min($0, $1) }
        guard let record = try store.active() else {
            (active, activeRecord) = (nil, nil)
            return
        }
        var payload: String
        do { payload = try record.intactPayload() } catch {
            guard let copy, copy.id == record.id else { throw StateError("\(error.description) (in \(store.path))") }
            payload = copy.payload
            historyProblem = "\(error.description); playing its intact copy from \(store.activeCopyPath)"
            log.error("\(historyProblem!)")
        }
        do {
            active = try intake.check(payload, source: "history entry \(record.id ?? 0)").prescription
            activeRecord = record
        } catch {
            throw StateError("\(error.description) (stored in \(store.path))")
        }
    }

    // MARK: Requests

    private func handle(_ request: ControlRequest) -> ControlReply {
        switch request.command {
        case .status:
            return ControlReply(ok: true, status: status)
        case .pause, .resume:
            paused = request.command == .pause
            session?.processor.paused.store(paused, ordering: .relaxed)
            log.info(paused ? "paused: output silent" : "resumed")
        case .bypass:
            guard let on = request.on else { return .failure("bypass needs \"on\": true or false") }
            bypassed = on
            do { try publishCurrentFilters() } catch { return .failure("cannot switch bypass: \(error)") }
            log.info(on ? "bypass on: unprocessed sound under the ceiling" : "bypass off: prescription applied")
        case .load:
            return load(request)
        case .use:
            return use(request)
        case .keep, .revert:
            guard store != nil else { return .failure(noHistory) }
            guard trial != nil else { return .failure("no trial is running; `ribbitd load --trial 15m RX` starts one") }
            if let failure = endTrial(keep: request.command == .keep, why: request.command == .keep ? "kept" : "reverted") {
                return .failure(failure)
            }
        case .stop:
            stopping = true
            log.info("stop requested")
        case .dump:
            break  // the server turned the connection into a stream
        }
        notifier.send("STATUS=\(statusLine)")
        return ControlReply(ok: true, status: status)
    }

    private var noHistory: String {
        "the prescription history cannot be used (\(historyProblem ?? "not open")); nothing changed"
    }

    /// Validate, fit and store first (one transaction); only then switch. Any error leaves
    /// everything as it was.
    private func load(_ request: ControlRequest) -> ControlReply {
        guard let store else { return .failure(noHistory) }
        intake = Intake.load(paths: paths, config: config)  // a key trusted since the start counts
        let source = request.source ?? "the prescription"
        guard let text = request.prescription else { return .failure("load needs a \"prescription\" (the text of an .rx file)") }
        if let seconds = request.trialSeconds, !(1...(7 * 86400)).contains(seconds) {
            return .failure("a trial lasts from 1 s to 7 days, not \(seconds) s")
        }
        let accepted: Intake.Accepted
        do { accepted = try intake.check(text, source: source) } catch {
            return .failure("\(error.description); the active prescription is unchanged")
        }
        let prepared: RunningFilters
        do {
            prepared = try FilterChoice.prescription(accepted.prescription).prepare(sampleRate: session?.processor.sampleRate ?? 48000)
        } catch {
            return .failure("\(source): \(error); the active prescription is unchanged")
        }
        do {
            let deadline = request.trialSeconds.map { Date().addingTimeInterval(Double($0)) }
            try store.add(accepted.record(payload: text, source: source), trialUntil: deadline)
            try adoptActiveFromStore()
        } catch {
            return .failure("cannot store the prescription (\(error)); the active prescription is unchanged")
        }
        publish(reusing: prepared)
        log.info("loaded \(accepted.prescription.name) (\(accepted.prescription.environment)) from \(source), \(accepted.verdict.description)\(trial.map { _ in ", as a trial" } ?? "")")
        notifier.send("STATUS=\(statusLine)")
        return ControlReply(ok: true, status: status)
    }

    private func use(_ request: ControlRequest) -> ControlReply {
        guard let store else { return .failure(noHistory) }
        intake = Intake.load(paths: paths, config: config)
        do {
            let found: PrescriptionStore.Record?
            if let environment = request.environment {
                found = try store.newest(environment: environment)
                guard found != nil else { return .failure("no prescription for the environment '\(environment)'; `ribbitd list` shows them") }
            } else if let selector = request.selector {
                found = try store.find(selector)
                guard found != nil else { return .failure("no prescription '\(selector)' in the history; `ribbitd list` shows them") }
            } else {
                return .failure("use needs a \"selector\" (id or name) or an \"environment\"")
            }
            let record = found!
            let id = record.id!
            let accepted = try intake.check(try record.intactPayload(), source: "history entry \(id)")
            let prepared = try FilterChoice.prescription(accepted.prescription).prepare(sampleRate: session?.processor.sampleRate ?? 48000)
            try store.activate(id: id)
            try adoptActiveFromStore()
            publish(reusing: prepared)
            log.info("using \(accepted.prescription.name) (\(accepted.prescription.environment)), history entry \(id)")
        } catch {
            return .failure("\(error); the active prescription is unchanged")
        }
        notifier.send("STATUS=\(statusLine)")
        return ControlReply(ok: true, status: status)
    }

    /// Ends the trial (keep it, or go back). Returns a failure message, or nil.
    @discardableResult
    private func endTrial(keep: Bool, why: String) -> String? {
        guard let store else { return noHistory }
        do {
            try store.endTrial(keep: keep)
            try adoptActiveFromStore()
            if !keep { try publishCurrentFilters() }
            log.info("trial \(why): now \(active.map { "\($0.name) (\($0.environment))" } ?? "no prescription (unchanged sound)")")
            notifier.send("STATUS=\(statusLine)")
            return nil
        } catch {
            log.error("cannot end the trial: \(error)")
            return "cannot end the trial: \(error)"
        }
    }

    /// After the active prescription changed: what plays now goes to the engine.
    private func publish(reusing prepared: RunningFilters) {
        do { try publishCurrentFilters(reusing: prepared) } catch {
            log.error("internal error: the new filters do not fit the engine (\(error))")
        }
    }

    private var status: DaemonStatus {
        var jack: DaemonStatus.Jack?
        if let session {
            let p = session.processor
            let rate = p.sampleRate
            let cycles = p.cycles.load(ordering: .relaxed)
            let busy = Double(p.busyNanoseconds.load(ordering: .relaxed)) / 1e9
            let period = p.period.load(ordering: .relaxed)
            let elapsed = Double(cycles) * Double(period) / rate
            jack = DaemonStatus.Jack(
                client: session.client.name, sampleRate: Int(rate), period: period, latencyFrames: p.latencyFrames,
                latencyMilliseconds: Double(p.latencyFrames) / rate * 1000, dspLoadPercent: session.client.dspLoadPercent,
                ribbitLoadPercent: elapsed > 0 ? 100 * busy / elapsed : 0,
                longestCallbackMicroseconds: Double(p.longestNanoseconds.load(ordering: .relaxed)) / 1000,
                cycles: cycles, xruns: session.client.events.xruns.load(ordering: .relaxed),
                limitedSamples: p.engine.counters.limitedSamples)
        }
        return DaemonStatus(
            pid: getpid(), version: Self.version, uptimeSeconds: Self.now() - started,
            prescription: activeDescription, output: output, jack: jack, jackProblem: session == nil ? currentJackProblem : nil,
            totalXruns: xrunsOfClosedSessions + (jack?.xruns ?? 0),
            trial: trial.map { trial in
                let back = (try? trial.previousID.flatMap { try store?.record(id: $0) })??.name
                return .init(secondsLeft: max(0, trial.deadline.timeIntervalSinceNow), revertsTo: back)
            }, dumpListeners: dumpListeners, ceilingDBFS: currentFilterChoice.ceilingDBFS, historyProblem: historyProblem)
    }

    /// Why there is no JACK session; a server that accepted the connection and then went
    /// silent (a stopped jackd, a stuck PipeWire) is named as such.
    private var currentJackProblem: String? {
        if let since = openingSince, Self.now() - since >= 1 {
            return "the JACK server has not answered for \(Int(Self.now() - since)) s (stopped or stuck?); still waiting for it"
        }
        return jackProblem
    }

    private var activeDescription: DaemonStatus.ActivePrescription? {
        active.map {
            .init(
                id: activeRecord?.id, name: $0.name, environment: $0.environment, audiologist: $0.audiologist, rule: $0.rule.rawValue,
                signature: activeRecord.map { Self.signatureText($0) })
        }
    }

    private var output: DaemonStatus.Output { paused ? .paused : bypassed ? .bypassed : .processing }

    /// One line for systemd's STATUS=.
    private var statusLine: String {
        let what = active.map { "\($0.name) (\($0.environment))" } ?? "no prescription (unchanged sound)"
        let mode = paused ? "paused" : bypassed ? "bypassed" : "processing"
        return session == nil ? "\(mode), \(what), waiting for JACK" : "\(mode): \(what)"
    }

    // MARK: Helpers

    /// How the history records a signature, as `status` and `list` say it.
    public static func signatureText(_ record: PrescriptionStore.Record) -> String {
        guard record.isIntact else { return "DAMAGED (its text no longer matches its checksum)" }
        return switch record.signature {
        case "trusted": "signed by \(record.signer ?? "?") (trusted)"
        case "unknown key": "signed, unknown key"
        default: record.signature
        }
    }

    static func now() -> Double { MonotonicClock.seconds() }

    static func milliseconds(_ frames: Int, _ rate: Double) -> String { String(format: "%.2f", Double(frames) / rate * 1000) }

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

/// A non-Sendable reference passed to the JACK worker, which is then its only user.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
