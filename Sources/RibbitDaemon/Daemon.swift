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
/// the signals and JACK's events; JACK's process thread runs only the RealtimeProcessor.
///
/// Prescription changes are prepared here (parse, fit, design filters) and published to the
/// engine, which crossfades on the RT thread. If the JACK server goes away, the client is
/// closed and reopened with backoff, with the same prescription and output mode.
public final class Daemon {
    public static let version = "0.1.0"

    private let config: DaemonConfig
    private let paths: RibbitPaths
    private let log: Logger
    private let paths_: RibbitPaths
    private var store: PrescriptionStore!
    private var intake: Intake
    private let notifier = SystemdNotifier()
    private let started = Daemon.now()

    private var active: Prescription?
    private var activeRecord: PrescriptionStore.Record?
    private var trial: PrescriptionStore.Trial?
    private var paused = false
    private var bypassed = false
    private var session: Session?
    private var jackProblem: String? = "not connected yet"
    private var retryDelay = Daemon.firstRetryDelay
    private var nextAttempt = 0.0
    private var xrunsOfClosedSessions = 0
    private var stopping = false
    private var lastWatchdog = 0.0
    /// What the engine runs (for the dump), and the dump of the current session while clients listen.
    private var running: RunningFilters?
    private var dump: DumpPublisher?
    private var dumpListeners = 0

    static let firstRetryDelay = 0.25
    static let longestRetryDelay = 2.0

    private struct Session {
        let client: JackClient
        let processor: RealtimeProcessor
        var period: Int
        var xrunsLogged = 0
    }

    /// - Parameter prescription: text and source of a prescription to load at start (and keep
    ///   as the active one); nil: the last active one.
    private let startPrescription: (text: String, source: String)?

    public init(config: DaemonConfig, paths: RibbitPaths, log: Logger, prescription: (text: String, source: String)? = nil) {
        startPrescription = prescription
        self.config = config
        self.paths = paths
        self.log = log
        paths_ = paths
        intake = Intake.load(paths: paths, config: config)
    }

    /// Runs until `stop` or SIGTERM/SIGINT. Throws only when it cannot start (the socket).
    public func run() throws {
        var signals = Self.blockTerminationSignals()  // before JACK starts its threads
        let server = try ControlServer(path: paths.socketPath)
        server.onNotice = { [log] in log.warning("\($0)") }
        do { store = try PrescriptionStore(path: paths.storePath) } catch {
            throw StateError("cannot open the prescription history \(paths.storePath): \(error)")
        }
        if startPrescription == nil { restoreActivePrescription() }
        if let (text, source) = startPrescription {
            let reply = load(ControlRequest(command: .load, prescription: text, source: source))
            if let error = reply.error { throw StateError(error) }
        }
        log.info("control socket \(paths.socketPath)")
        attemptConnection(now: Self.now())
        if session == nil {
            // Ready means the control socket answers; the status says JACK is still missing.
            notifier.send("READY=1\nSTATUS=waiting for a JACK server")
        }

        while !stopping {
            var fds = server.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), server.subscriberCount == 0 ? 100 : 10)
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
        log.info("stopped")
    }

    // MARK: Periodic work (control thread)

    private func tick(now: Double) {
        if let watchdog = notifier.watchdogInterval, now - lastWatchdog >= watchdog {
            notifier.send("WATCHDOG=1")
            lastWatchdog = now
        }
        if let trial, Date() >= trial.deadline { endTrial(keep: false, why: "the trial time is up") }
        guard var current = session else {
            if now >= nextAttempt { attemptConnection(now: now) }
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
            attemptConnection(now: now)
            return
        }
        let period = current.processor.period.load(ordering: .relaxed)
        if period != current.period {
            log.notice("JACK period is now \(period) frames; latency \(current.processor.latencyFrames) frames")
            current.client.recomputeLatencies()
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

    private func attemptConnection(now: Double) {
        do {
            try openSession()
            retryDelay = Self.firstRetryDelay
            jackProblem = nil
            notifier.send("READY=1\nSTATUS=\(statusLine)")
        } catch {
            if jackProblem != error.description { log.warning("JACK: \(error.description); retrying") }
            jackProblem = error.description
            nextAttempt = now + retryDelay
            retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
        }
    }

    private func openSession() throws(JackError) {
        let client = try JackClient(name: config.clientName)
        let rate = client.sampleRate
        let engine: OverlapSaveEngine
        let prepared: RunningFilters
        do {
            prepared = try prepare(currentFilterChoice, sampleRate: rate)
            engine = try OverlapSaveEngine(
                geometry: .standard(sampleRate: rate), sampleRate: rate, filters: prepared.filters, blockSize: client.bufferSize)
        } catch {
            client.close()
            throw JackError("JACK runs at \(Int(rate)) Hz: \(error)")
        }
        let processor = RealtimeProcessor(engine: engine, period: client.bufferSize)
        processor.paused.store(paused, ordering: .relaxed)
        do {
            try client.activate(with: processor)
        } catch {
            client.close()
            throw error
        }
        session = Session(client: client, processor: processor, period: client.bufferSize)
        running = prepared
        dump = nil
        log.info(
            "JACK: client \(client.name), \(Int(rate)) Hz, period \(client.bufferSize), added latency \(processor.latencyFrames) frames (\(Self.milliseconds(processor.latencyFrames, rate)) ms)"
        )
        wire(client)
    }

    private func closeSession() {
        guard let current = session else { return }
        xrunsOfClosedSessions += current.client.events.xruns.load(ordering: .relaxed)
        current.client.close()
        session = nil
        dump = nil
    }

    /// Connects our ports as configured; a port that cannot be connected is logged, not fatal
    /// (the wearer can wire it by hand, and sound through the others still works).
    private func wire(_ client: JackClient) {
        guard config.connect else { return }
        let sources = config.inputs ?? client.ports(physicalSources: true).prefix(2).map(\.name)
        let sinks = config.outputs ?? client.ports(physicalSources: false).prefix(2).map(\.name)
        let own = client.ownPorts
        if sources.isEmpty { log.warning("JACK offers no capture port; connect \(own[0]) and \(own[1]) yourself") }
        if sinks.isEmpty { log.warning("JACK offers no playback port; connect \(own[2]) and \(own[3]) yourself") }
        var pairs = [(String, String)]()
        // One source (a mono microphone) feeds both ears; one sink gets the left ear.
        for ear in 0..<2 where !sources.isEmpty { pairs.append((sources[min(ear, sources.count - 1)], own[ear])) }
        for ear in 0..<min(2, sinks.count) { pairs.append((own[2 + ear], sinks[ear])) }
        for (source, destination) in pairs {
            do {
                try client.connect(source, destination)
                log.info("connected \(source) -> \(destination)")
            } catch {
                log.error("\(error.description)")
            }
        }
    }

    // MARK: Prescriptions

    private enum FilterChoice {
        case unchanged  // bypassed, or no prescription: a pure delay, no ceiling
        case prescription(Prescription)
    }

    private var currentFilterChoice: FilterChoice {
        guard !bypassed, let active else { return .unchanged }
        return .prescription(active)
    }

    private func prepare(_ choice: FilterChoice, sampleRate: Double) throws(EngineError) -> RunningFilters {
        let geometry = EngineGeometry.standard(sampleRate: sampleRate)
        switch choice {
        case .unchanged:
            // Infinite ceiling: the limiter never acts, so the output is the input, delayed.
            let delay = FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: .infinity)
            return RunningFilters(filters: delay, fitting: nil)
        case .prescription(let prescription):
            let fitting = try Fitting(prescription: prescription, sampleRate: sampleRate, geometry: geometry)
            return RunningFilters(filters: fitting.filterSet(ears: [.left, .right]), fitting: fitting)
        }
    }

    /// Sends the filters for the current state to the running engine (crossfaded there).
    private func publishCurrentFilters() throws(EngineError) {
        guard let session else { return }
        let prepared = try prepare(currentFilterChoice, sampleRate: session.processor.sampleRate)
        try session.processor.engine.publish(prepared.filters)
        running = prepared
    }

    /// The active prescription from the history. An older version kept it in
    /// $XDG_STATE_HOME/ribbit/active.rx: that file is taken into the history once.
    private func restoreActivePrescription() {
        do {
            let legacy = StateStore(directory: paths_.stateDirectory)
            if try store.active() == nil, let text = try? legacy.loadActive() {
                let accepted = try intake.check(text, source: legacy.activePrescriptionPath)
                try store.add(accepted.record(payload: text, source: legacy.activePrescriptionPath))
                try? FileManager.default.removeItem(atPath: legacy.activePrescriptionPath)
                log.notice("took \(legacy.activePrescriptionPath) into the history")
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

    /// Reads the active prescription and trial from the store (no publish).
    private func adoptActiveFromStore() throws {
        trial = try store.trial()
        guard let record = try store.active() else {
            (active, activeRecord) = (nil, nil)
            return
        }
        do {
            active = try intake.check(record.payload, source: "history entry \(record.id ?? 0)").prescription
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
            log.info(on ? "bypass on: unprocessed sound" : "bypass off: prescription applied")
        case .load:
            return load(request)
        case .use:
            return use(request)
        case .keep, .revert:
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

    /// Validate, fit and store first (one transaction); only then switch. Any error leaves
    /// everything as it was.
    private func load(_ request: ControlRequest) -> ControlReply {
        intake = Intake.load(paths: paths_, config: config)  // a key trusted since the start counts
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
            prepared = try prepare(.prescription(accepted.prescription), sampleRate: session?.processor.sampleRate ?? 48000)
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
        publish(prepared)
        log.info("loaded \(accepted.prescription.name) (\(accepted.prescription.environment)) from \(source), \(accepted.verdict.description)\(trial.map { _ in ", as a trial" } ?? "")")
        notifier.send("STATUS=\(statusLine)")
        return ControlReply(ok: true, status: status)
    }

    private func use(_ request: ControlRequest) -> ControlReply {
        intake = Intake.load(paths: paths_, config: config)
        do {
            let record: PrescriptionStore.Record?
            if let environment = request.environment {
                record = try store.newest(environment: environment)
                guard record != nil else { return .failure("no prescription for the environment '\(environment)'; `ribbitd list` shows them") }
            } else if let selector = request.selector {
                record = try store.find(selector)
                guard record != nil else { return .failure("no prescription '\(selector)' in the history; `ribbitd list` shows them") }
            } else {
                return .failure("use needs a \"selector\" (id or name) or an \"environment\"")
            }
            let accepted = try intake.check(record!.payload, source: "history entry \(record!.id!)")
            let prepared = try prepare(.prescription(accepted.prescription), sampleRate: session?.processor.sampleRate ?? 48000)
            try store.activate(id: record!.id!)
            try adoptActiveFromStore()
            publish(prepared)
            log.info("using \(accepted.prescription.name) (\(accepted.prescription.environment)), history entry \(record!.id!)")
        } catch {
            return .failure("\(error); the active prescription is unchanged")
        }
        notifier.send("STATUS=\(statusLine)")
        return ControlReply(ok: true, status: status)
    }

    /// Ends the trial (keep it, or go back). Returns a failure message, or nil.
    @discardableResult
    private func endTrial(keep: Bool, why: String) -> String? {
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

    /// Sends filters to the running engine unless bypassed (bypass keeps its pure delay).
    private func publish(_ prepared: RunningFilters) {
        guard !bypassed, let session else { return }
        do {
            try session.processor.engine.publish(prepared.filters)
            running = prepared
        } catch {
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
            prescription: activeDescription, output: output, jack: jack, jackProblem: session == nil ? jackProblem : nil,
            totalXruns: xrunsOfClosedSessions + (jack?.xruns ?? 0),
            trial: trial.map { trial in
                let back = (try? trial.previousID.flatMap { try store.record(id: $0) })??.name
                return .init(secondsLeft: max(0, trial.deadline.timeIntervalSinceNow), revertsTo: back)
            }, dumpListeners: dumpListeners)
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
        switch record.signature {
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
