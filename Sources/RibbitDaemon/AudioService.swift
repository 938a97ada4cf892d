import Logging
import RibbitAudioLink
import RibbitControl
import RibbitDSP
import RibbitPrescription
import RibbitSettings
import RibbitSystem

/// The JACK side of the daemon, run in its own small process (`ribbit-audio`): this service
/// starts it, designs the filters it plays (for the rate JACK runs at), relays pause and the
/// dump, and starts a new one with backoff when the server goes away or changes its rate.
/// libjack may wait for the server without a deadline; that only ever holds the audio
/// process, which is killed at stop when it does not answer.
final class AudioService: DaemonService {
    let name = "JACK session"
    private let config: DaemonConfig
    /// The calibration profile in use (the uncalibrated default without one); fixed until restart.
    let calibration: Calibration
    private let log: Logger
    private let executable: String?
    /// FFTW's wisdom file for the audio process (RibbitWisdomFile).
    private let wisdomPath: String
    private var process: AudioProcess?
    /// Messages read ahead of `tick` (`receiveToneStarts`), handled first in the next one.
    private var deferred: [AudioMessage] = []

    /// What the audio process runs now (nil: not running yet).
    struct Session {
        let client: String
        let sampleRate: Double
        var latencyFrames = 0
        var stats = AudioStats()
        var running = false
        /// The JACK frame time after each of the last `missedGapsKept` gaps in the cycles.
        var missedAtFrameTimes: [UInt32] = []
        /// Tones sent to this process: the last one's number (`toneStarted` tells it back).
        var tonesSent = 0
    }
    static let missedGapsKept = 1024
    private(set) var session: Session?
    /// When the audio process was started and has not connected yet (nil: not opening).
    private(set) var openingSince: Double?
    private var problem: String? = "not connected yet"
    /// This daemon's own file was replaced (an upgrade) when it was about to start an audio
    /// process: the `ribbit-audio` beside it is then the new version, which would refuse this
    /// one, so the daemon ends and the new version starts (systemd's Restart=on-failure).
    private(set) var replacedByUpgrade = false
    /// This daemon's executable as it was when the daemon started.
    private let ownFile = RunningExecutable()
    private var retryDelay = AudioService.firstRetryDelay
    private var nextAttempt = 0.0
    private var xrunsOfClosedSessions = 0
    private var xrunLog = XrunSummary()
    /// What the engine runs (for the dump's gains).
    private(set) var running: RunningFilters?
    /// Dump samples that arrived, planar by channel (input left, input right, output left, output right).
    private(set) var dumpSamples = [[Float]](repeating: [], count: 4)
    /// The xruns and dropped dump samples counted when the newest of them were sent: what a
    /// frame built from them may have been glitched by (the stats come 100 ms apart, later).
    private(set) var dumpXruns = 0
    private(set) var dumpFramesDropped = 0
    private var dumpOn = false
    /// The filters this audio process was last sent (a new process has none): the same again
    /// are not sent, so the linear filters a process started on are not published twice.
    private var sentFilters: (ceilingDBFS: Double, taps: [[Double]])?

    /// Called after a session started or failed to, and when the server went away.
    var onChange: () -> Void = {}
    /// Called when the audio thread began tone `number` (from `playTone`), at `atSeconds`
    /// (monotonic): the real onset, however late the scheduler let it come.
    var onToneStarted: (_ number: Int, _ atSeconds: Double) -> Void = { _, _ in }
    /// Called with each stats message's band levels (about 10 a second while the compressor runs).
    var onInputLevels: (_ bandsDBSPL: [Double], _ broadbandDBSPL: Double) -> Void = { _, _ in }
    /// What should play now, and whether paused (from the fitting state).
    var wanted: () -> (choice: FilterChoice, paused: Bool, trimDB: Double) = { (.delay(ceilingDBFS: -1), false, 0) }

    /// A restarted server takes clients 100-200 ms after its exec: retrying from 50 ms, doubling,
    /// ribbit's ports were back about 60 ms after it (as quick as a start), against about 400
    /// from 0.25 s (bench/start-bench.sh).
    static let firstRetryDelay = 0.05
    /// How long an audio process that said `gone` or `failed` may take to exit before it is killed.
    static let goneGraceSeconds = 0.5
    static let longestRetryDelay = 2.0

    init(config: DaemonConfig, log: Logger, environment: [String: String]) {
        self.config = config
        calibration = config.calibrationProfile?.calibration ?? .uncalibrated
        self.log = log
        executable = AudioProcess.executablePath(environment: environment)
        wisdomPath = RibbitPaths(environment: environment).cacheDirectory + "/fftw-wisdom"
    }

    func start(now: Double) throws {
        guard executable != nil else {
            throw DaemonError(
                "the audio process ribbit-audio is missing (looked beside ribbitd and in ../libexec/ribbit/); reinstall ribbit")
        }
    }

    var isConnected: Bool { session?.running == true }

    /// The link's descriptor, for the poll loop (nil without a process).
    var pollDescriptor: Int32? { process?.link.fd }

    /// Starts an audio process; it connects to JACK and asks for filters.
    func startOpening(now: Double) {
        guard let executable, !replacedByUpgrade else { return }
        if ownFile?.wasReplaced == true {
            replacedByUpgrade = true
            log.notice("ribbitd was upgraded while it ran: ending, so that the new version starts")
            return
        }
        var arguments = ["--link-version", String(AudioMessage.linkVersion), "--client-name", config.clientName]
        for port in config.inputs ?? [] { arguments += ["--input", port] }
        for port in config.outputs ?? [] { arguments += ["--output", port] }
        if !config.connect { arguments.append("--no-connect") }
        if log.logLevel <= .debug { arguments.append("--jack-messages") }
        arguments += ["--wisdom", wisdomPath]
        deferred = []  // an earlier process's
        do { process = try AudioProcess(executable: executable, arguments: arguments) } catch {
            failed(error.description, now: now)
            return
        }
        openingSince = now
    }

    /// The tone starts the audio process has told by now, handled at once (a hearing test's press
    /// is judged after them); its other messages wait for `tick`, in order.
    func receiveToneStarts(now: Double) {
        guard let process else { return }
        for message in process.link.receive() {
            if case .toneStarted = message { handle(message, now: now) } else { deferred.append(message) }
        }
    }

    /// Control-thread upkeep: messages from the audio process, its end, retries.
    func tick(now: Double) {
        guard let process else {
            if now >= nextAttempt { startOpening(now: now) }
            return
        }
        let messages = deferred + process.link.receive()
        deferred = []
        for message in messages { handle(message, now: now) }
        process.link.flush()
        if self.process != nil, process.link.isClosed || process.hasExited() {
            // Ended without saying why (crashed, killed): like a server that went away.
            process.kill()
            log.error("the audio process ended unexpectedly; starting it again, the prescription stays")
            ended(problem: "the audio process ended unexpectedly; starting it again", now: now, at: now + retryDelay)
        }
    }

    private func handle(_ message: AudioMessage, now: Double) {
        switch message {
        case .connected(let client, let rate, _):
            session = Session(client: client, sampleRate: Double(rate))
            (dumpXruns, dumpFramesDropped) = (0, 0)  // a new process counts from 0
            xrunLog.restart()
            let (choice, paused, trim) = wanted()
            process?.link.send(.trim(trim))  // the engine starts at it
            // The sound starts on the linear filters, the compressor follows (issue 32): the
            // audio process opens its ports as soon as it has filters to play.
            sentFilters = nil
            if let session, let linear = try? choice.prepareLinear(sampleRate: session.sampleRate, calibration: calibration) {
                sendFilters(ceilingDBFS: choice.ceilingDBFS(calibration: calibration), linear)
                process?.link.flush()
            }
            send(choice)
            process?.link.send(.paused(paused))
            if dumpOn { process?.link.send(.dump(true)) }
        case .running(let latency):
            openingSince = nil
            session?.latencyFrames = latency
            session?.running = true
            retryDelay = Self.firstRetryDelay
            problem = nil
            onChange()
        case .stats(let stats):
            guard var current = session else { return }
            current.stats = stats
            current.missedAtFrameTimes = Array((current.missedAtFrameTimes + stats.missedAtFrameTimes).suffix(Self.missedGapsKept))
            current.latencyFrames = stats.latencyFrames
            if let line = xrunLog.update(total: stats.xruns, now: now) { log.warning("\(line)") }
            session = current
            if !stats.bandLevelsDBSPL.isEmpty { onInputLevels(stats.bandLevelsDBSPL, stats.broadbandDBSPL) }
        case .samples(let frames, let channels, let xruns, let dropped):
            guard dumpOn else { return }
            (dumpXruns, dumpFramesDropped) = (xruns, dropped)
            for channel in 0..<4 { dumpSamples[channel].append(contentsOf: channels[(channel * frames)..<((channel + 1) * frames)]) }
        case .log(let level, let text):
            switch level {
            case .debug: log.debug("\(text)")
            case .info: log.info("\(text)")
            case .notice: log.notice("\(text)")
            case .warning: log.warning("\(text)")
            case .error: log.error("\(text)")
            }
        case .failed(let text):
            process?.stop(deadline: MonotonicClock.seconds() + Self.goneGraceSeconds)
            failed(text, now: now)
        case .gone(let reason, let rateChanged):
            if rateChanged {
                log.notice("\(reason); preparing the engine again")
            } else {
                log.warning("\(reason); retrying with backoff, the prescription stays")
            }
            // It exits by itself once it said so; a stuck libjack call gets half a second.
            process?.stop(deadline: MonotonicClock.seconds() + Self.goneGraceSeconds)
            ended(problem: "\(reason); retrying", now: now, at: rateChanged ? now : now + retryDelay)
        case .pauseTookEffect:
            break  // a confirmation nobody waits for any more (`setPaused` waits for its own)
        case .toneStarted(let number, let at):
            if number == session?.tonesSent { onToneStarted(number, at) }
        case .filters, .compressor, .trim, .paused, .dump, .tone, .masker, .stop, .connect:
            break  // the daemon's own messages; the audio process does not send them
        }
    }

    /// The audio process could not connect: retry with backoff.
    private func failed(_ text: String, now: Double) {
        if problem != text { log.warning("JACK: \(text); retrying") }
        problem = text
        process = nil
        session = nil
        openingSince = nil
        nextAttempt = now + retryDelay
        retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
        onChange()
    }

    /// A running session ended: start again at `at`.
    private func ended(problem: String, now: Double, at: Double) {
        xrunsOfClosedSessions += session?.stats.xruns ?? 0
        if let line = xrunLog.flush(now: now) { log.warning("\(line)") }
        self.problem = problem
        process = nil
        session = nil
        running = nil
        tone = nil
        openingSince = nil
        nextAttempt = at
        onChange()
    }

    /// Fits and designs the filters for `choice` at the session's rate (48 kHz without one).
    func prepare(_ choice: FilterChoice) throws(EngineError) -> RunningFilters {
        try choice.prepare(sampleRate: session?.sampleRate ?? 48000, calibration: calibration)
    }

    /// Sends `choice`'s filters to the audio process (crossfaded there); `prepared` when the
    /// caller designed them already. Without a session, the next one starts with the choice.
    func play(_ choice: FilterChoice, reusing prepared: RunningFilters? = nil) throws(EngineError) {
        guard let session else { return }
        let filters: RunningFilters
        if let prepared {
            filters = prepared
        } else {
            filters = try choice.prepare(sampleRate: session.sampleRate, calibration: calibration)
        }
        process?.link.send(.compressor(filters.compressor))
        sendFilters(ceilingDBFS: filters.ceilingDBFS, filters.filters)
        running = filters
    }

    /// The wearer's volume: only the compressor's trim moves (glided in the audio process).
    func setTrim(_ dB: Double) {
        guard session != nil else { return }  // a new session gets it with its filters
        process?.link.send(.trim(dB))
    }

    private func sendFilters(ceilingDBFS: Double, _ filters: FilterSet) {
        if let sent = sentFilters, sent.ceilingDBFS == ceilingDBFS, sent.taps == filters.taps { return }
        process?.link.send(.filters(ceilingDBFS: ceilingDBFS, fftLength: filters.fftLength, taps: filters.taps))
        sentFilters = (ceilingDBFS, filters.taps)
    }

    private func send(_ choice: FilterChoice) {
        do { try play(choice) } catch { log.error("internal error: \(error)") }
    }

    /// Pauses or resumes. With `waitSeconds`, returns once the audio process says the output has
    /// got there (a pause: silent), so the reply to `pause` means silence; false when it did
    /// not say so in time (no JACK cycles run) or there is no sound to stop.
    @discardableResult
    func setPaused(_ paused: Bool, waitSeconds: Double = 0, now: Double) -> Bool {
        guard let process else { return false }
        process.link.send(.paused(paused))
        process.link.flush()
        guard waitSeconds > 0, isConnected else { return false }
        for message in deferred { handle(message, now: now) }  // in order, before what comes next
        deferred = []
        let deadline = MonotonicClock.seconds() + waitSeconds
        while MonotonicClock.seconds() < deadline, let link = self.process?.link, !link.isClosed {
            link.wait(milliseconds: 2)
            for message in link.receive() {
                if case .pauseTookEffect(paused) = message { return true }
                handle(message, now: now)
            }
        }
        return false
    }

    /// Puts back JACK connections (a live measurement's), after what was sent before plays.
    func reconnect(_ connections: [AudioMessage.Connection]) {
        guard let process, !connections.isEmpty else { return }
        process.link.send(.connect(connections))
        process.link.flush()
    }

    /// The last tone asked (already clamped), its pulse pattern if any (count, on and off
    /// seconds), and until when it plays (monotonic seconds, its last fade-out included).
    struct PlayingTone {
        let frequencyHz: Double
        let levelDBFS: Double?
        let ear: ToneEar
        var pulses: (count: Int, on: Double, off: Double)? = nil
        let until: Double
    }
    private(set) var tone: PlayingTone?

    /// Starts (or replaces, or with `seconds` 0 stops) the calibration tone; `levelDBFS` nil
    /// plays silence and meters the input.
    /// `pulses` plays that many pulses of `seconds` each, `off` seconds apart. Returns the
    /// tone's number for `onToneStarted` (nil: no audio process to play it).
    @discardableResult
    func playTone(
        frequencyHz: Double, levelDBFS: Double?, ear: ToneEar, seconds: Double, pulses: (count: Int, off: Double)? = nil,
        hearingTest: Bool = false, now: Double
    ) -> Int? {
        let pattern = pulses.map { (count: $0.count, on: seconds, off: $0.off) }
        let count = Double(pattern?.count ?? 1)
        let length = count * seconds + (count - 1) * (pattern?.off ?? 0) + ControlProtocol.toneRampSeconds
        let start = now + toneStartDelay(now: now)
        tone =
            seconds > 0
            ? PlayingTone(frequencyHz: frequencyHz, levelDBFS: levelDBFS, ear: ear, pulses: pattern, until: start + length) : nil
        guard let process, session != nil else { return nil }
        session?.tonesSent += 1
        let number = session?.tonesSent ?? 0
        process.link.send(
            .tone(
                frequencyHz: frequencyHz, levelDBFS: levelDBFS ?? -200, left: ear != .right, right: ear != .left, seconds: seconds,
                pulses: pattern?.count ?? 1, offSeconds: pattern?.off ?? 0, hearingTest: hearingTest, number: number))
        return number
    }

    /// A hearing test's masking noise (`AudioMessage.masker`): a third of an octave around
    /// `frequencyHz` in one ear, or none (`levelDBFS` nil). The audio process keeps its peak
    /// under the ceiling in force and plays it only in the tone mode.
    func playMasker(frequencyHz: Int, levelDBFS: Double?, ear: Ear, seconds: Double) {
        guard let process, session != nil else { return }
        process.link.send(
            .masker(
                centerHz: Double(frequencyHz), levelDBFS: levelDBFS ?? -200, left: ear == .left, right: ear == .right,
                seconds: levelDBFS == nil ? 0 : seconds))
    }

    /// How long after the request a tone's first frame plays, so `secondsLeft` ends with the
    /// sound (a hearing test's response window opens then): entering the tone mode takes the
    /// audio process's renderer switch (a 5 ms fade out, two periods, the switch, a period to
    /// take it; ribbit-audio's AudioHost), and a tone that still sounds fades out first.
    func toneStartDelay(now: Double) -> Double {
        guard let session else { return 0 }
        let period = Double(session.stats.period) / session.sampleRate
        if let tone, now < tone.until { return min(tone.until - now, ControlProtocol.toneRampSeconds) }
        return session.stats.toneMode ? 0 : 3 * period + 2 * 0.005
    }

    /// The tone mode as `status` reports it: while asked, or while the audio process still runs it.
    func toneStatus(now: Double, inputDBSPLAtFullScale: Double) -> DaemonStatus.Tone? {
        guard let session, let tone, now < tone.until || session.stats.toneMode else {
            if let tone, now >= tone.until { self.tone = nil }
            return nil
        }
        let stats = session.stats
        // Only finite numbers: JSON has no others, and a status that cannot be encoded is no status.
        let levels = [stats.inputLeftDBFS, stats.inputRightDBFS]
        let input = stats.toneMode && levels.allSatisfy(\.isFinite) ? levels : nil
        return DaemonStatus.Tone(
            frequencyHz: tone.frequencyHz, levelDBFS: tone.levelDBFS, ear: tone.ear, secondsLeft: max(0, tone.until - now),
            inputDBFS: input, inputDBSPL: input?.map { $0 + inputDBSPLAtFullScale }, pulses: tone.pulses?.count,
            onMs: tone.pulses.map { $0.on * 1000 }, offMs: tone.pulses.map { $0.off * 1000 })
    }

    /// Whether the audio process copies its periods for the dump.
    func setDump(_ on: Bool) {
        guard on != dumpOn else { return }
        dumpOn = on
        for channel in 0..<4 { dumpSamples[channel].removeAll() }
        (dumpXruns, dumpFramesDropped) = (session?.stats.xruns ?? 0, session?.stats.dumpFramesDropped ?? 0)
        process?.link.send(.dump(on))
    }

    /// The dump samples that arrived since the last call.
    func takeDumpSamples() -> [[Float]] {
        defer { for channel in 0..<4 { dumpSamples[channel].removeAll(keepingCapacity: true) } }
        return dumpSamples
    }

    /// At stop: stops the audio process (which closes its client), killing it at the deadline.
    func stop(deadline: Double) {
        guard let process else { return }
        if !process.stop(deadline: deadline) {
            log.warning("the JACK server does not answer; stopped the audio process without closing its JACK client")
        }
        self.process = nil
    }

    /// The JACK part of `status` (nil without a session).
    var status: DaemonStatus.Jack? {
        guard let session, session.running else { return nil }
        let s = session.stats
        let rate = session.sampleRate
        let elapsed = Double(s.cycles) * Double(s.period) / rate
        let busySeconds = Double(s.busyNanoseconds) / 1e9
        let ribbitLoad: Double = elapsed > 0 ? 100 * busySeconds / elapsed : 0
        let latencyMilliseconds = Double(session.latencyFrames) / rate * 1000
        return DaemonStatus.Jack(
            client: session.client, sampleRate: Int(rate), period: s.period, latencyFrames: session.latencyFrames,
            latencyMilliseconds: latencyMilliseconds, dspLoadPercent: s.dspLoadPercent, ribbitLoadPercent: ribbitLoad,
            longestCallbackMicroseconds: Double(s.longestNanoseconds) / 1000,
            cycles: s.cycles, xruns: s.xruns, missedCycles: s.missedCycles, missedAtFrameTimes: session.missedAtFrameTimes,
            limitedSamples: s.limitedSamples, guardedSamples: s.guardedSamples)
    }

    /// What the compressor's stages did over the last second (nil without a running session
    /// or a compressor, and while the tone mode has the hearing aid off).
    var activity: StageActivity? {
        guard let session, session.running, !session.stats.toneMode else { return nil }
        return session.stats.activity
    }

    /// Counters the dump frames carry.
    var limitedSamples: Int { session?.stats.limitedSamples ?? 0 }

    var totalXruns: Int { xrunsOfClosedSessions + (session?.stats.xruns ?? 0) }

    /// Why there is no JACK session; a server that accepted the connection and then went
    /// silent (a stopped jackd, a stuck PipeWire) is named as such.
    func problem(now: Double) -> String? {
        guard !isConnected else { return nil }
        if let since = openingSince, now - since >= 1 {
            return "the JACK server has not answered for \(Int(now - since)) s (stopped or stuck?); still waiting for it"
        }
        return problem
    }
}
