import Logging
import RibbitControl
import RibbitDSP
import RibbitJack
import RibbitSettings

/// The JACK side of the daemon: opens a session for what should play (on the JACK worker,
/// since libjack may wait for the server without a deadline), reconnects with backoff when
/// the server goes away or changes its rate, and hands new filters to the running engine.
final class AudioService: DaemonService {
    let name = "JACK session"
    private let config: DaemonConfig
    private let log: Logger
    private(set) var session: AudioSession?
    private let worker = JackWorker()
    /// When the worker began opening a session (nil: not opening), and where it puts the result.
    private(set) var openingSince: Double?
    private let opened = Mailbox<(plan: AudioSession.Plan, result: Result<AudioSession, JackError>)>()
    private var problem: String? = "not connected yet"
    private var retryDelay = AudioService.firstRetryDelay
    private var nextAttempt = 0.0
    private var xrunsOfClosedSessions = 0
    /// What the engine runs (for the dump).
    private(set) var running: RunningFilters?
    /// Called after a session opened or failed to, and when the server went away.
    var onChange: () -> Void = {}
    /// What should play now, and whether paused (from the fitting state).
    var wanted: () -> (choice: FilterChoice, paused: Bool) = { (.delay(ceilingDBFS: -1), false) }

    static let firstRetryDelay = 0.25
    static let longestRetryDelay = 2.0

    init(config: DaemonConfig, log: Logger) {
        self.config = config
        self.log = log
    }

    /// Asks the worker to open, activate and wire a JACK session for `choice`.
    func startOpening(_ choice: FilterChoice, paused: Bool, now: Double) {
        let plan = AudioSession.Plan(config: config, choice: choice, paused: paused)
        openingSince = now
        let (log, mailbox) = (log, opened)
        worker.run {
            mailbox.put((plan, Result { () throws(JackError) in try AudioSession.open(plan, log: log) }))
        }
    }

    /// Control-thread upkeep: adopts an opened session, retries, follows the server's changes.
    func tick(now: Double) {
        let (choice, paused) = wanted()
        if let outcome = opened.take() { adopt(outcome.result, plan: outcome.plan, now: now, choice: choice, paused: paused) }
        guard var current = session else {
            if openingSince == nil, now >= nextAttempt { startOpening(choice, paused: paused, now: now) }
            return
        }
        current.processor.engine.collectRetired()
        if current.client.events.shutDown.load(ordering: .acquiring) {
            log.warning("the JACK server went away; retrying with backoff, the prescription stays")
            close()
            problem = "the JACK server went away; retrying"
            nextAttempt = now + retryDelay
            onChange()
            return
        }
        if current.client.events.sampleRate.load(ordering: .relaxed) != Int(current.processor.sampleRate) {
            log.notice("JACK changed its sample rate; preparing the engine again")
            close()
            startOpening(choice, paused: paused, now: now)
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

    private func adopt(_ result: Result<AudioSession, JackError>, plan: AudioSession.Plan, now: Double, choice: FilterChoice, paused: Bool) {
        openingSince = nil
        switch result {
        case .success(let opened):
            session = opened
            running = opened.running
            retryDelay = Self.firstRetryDelay
            problem = nil
            // What changed while the worker opened it (a load, bypass or pause) applies now.
            opened.processor.paused.store(paused, ordering: .relaxed)
            if plan.choice != choice {
                do { try play(choice) } catch { log.error("internal error: \(error)") }
            }
        case .failure(let error):
            if problem != error.description { log.warning("JACK: \(error.description); retrying") }
            problem = error.description
            nextAttempt = now + retryDelay
            retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
        }
        onChange()
    }

    /// Fits and designs the filters for `choice` at the session's rate (48 kHz without one).
    func prepare(_ choice: FilterChoice) throws(EngineError) -> RunningFilters {
        try choice.prepare(sampleRate: session?.processor.sampleRate ?? 48000)
    }

    /// Sends `choice`'s filters to the running engine (crossfaded there); `prepared` when the
    /// caller designed them already. Without a session, the next one opens with the choice.
    func play(_ choice: FilterChoice, reusing prepared: RunningFilters? = nil) throws(EngineError) {
        guard let session else { return }
        let filters: RunningFilters
        if let prepared { filters = prepared } else { filters = try choice.prepare(sampleRate: session.processor.sampleRate) }
        try session.processor.engine.publish(filters.filters)
        running = filters
    }

    func setPaused(_ paused: Bool) { session?.processor.paused.store(paused, ordering: .relaxed) }

    /// Hands the client to the worker to close (closing waits for the server too).
    func close() {
        guard let current = session else { return }
        xrunsOfClosedSessions += current.client.events.xruns.load(ordering: .relaxed)
        session = nil
        let client = UncheckedBox(current.client)
        worker.run { client.value.close() }
    }

    /// At stop: closes the session and gives the server until `deadline` to answer.
    func stop(deadline: Double) {
        close()
        if !worker.waitUntilIdle(seconds: max(0, deadline - MonotonicClock.seconds())) {
            log.warning("the JACK server does not answer; stopping without closing the JACK client")
        }
    }

    /// The JACK part of `status` (nil without a session).
    var status: DaemonStatus.Jack? {
        guard let session else { return nil }
        let p = session.processor
        let rate = p.sampleRate
        let cycles = p.cycles.load(ordering: .relaxed)
        let busy = Double(p.busyNanoseconds.load(ordering: .relaxed)) / 1e9
        let period = p.period.load(ordering: .relaxed)
        let elapsed = Double(cycles) * Double(period) / rate
        return DaemonStatus.Jack(
            client: session.client.name, sampleRate: Int(rate), period: period, latencyFrames: p.latencyFrames,
            latencyMilliseconds: Double(p.latencyFrames) / rate * 1000, dspLoadPercent: session.client.dspLoadPercent,
            ribbitLoadPercent: elapsed > 0 ? 100 * busy / elapsed : 0,
            longestCallbackMicroseconds: Double(p.longestNanoseconds.load(ordering: .relaxed)) / 1000,
            cycles: cycles, xruns: session.client.events.xruns.load(ordering: .relaxed),
            limitedSamples: p.engine.counters.limitedSamples)
    }

    var totalXruns: Int { xrunsOfClosedSessions + (session?.client.events.xruns.load(ordering: .relaxed) ?? 0) }

    /// Why there is no JACK session; a server that accepted the connection and then went
    /// silent (a stopped jackd, a stuck PipeWire) is named as such.
    func problem(now: Double) -> String? {
        guard session == nil else { return nil }
        if let since = openingSince, now - since >= 1 {
            return "the JACK server has not answered for \(Int(now - since)) s (stopped or stuck?); still waiting for it"
        }
        return problem
    }
}

/// A non-Sendable reference passed to the JACK worker, which is then its only user.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
