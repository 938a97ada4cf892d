import Foundation
import Logging
import RibbitControl
import RibbitStore

/// The data log's writer (`WearLog`): on the control thread, like every service. Each turn of
/// the poll loop adds the time since the last one to what plays (the program, bypass or pause;
/// only while JACK runs the session, and not while the calibration tone plays) and counts program switches, volume changes and xruns;
/// the input levels come with the audio process's stats (about 10 a second, each ~100 ms in
/// dB SPL), power-averaged into 1-s levels. Every 60 s, and at stop, the tally goes to the file
/// in one transaction. Nothing of this touches the audio thread: the levels are the stats the
/// audio process already sends.
///
/// A log that cannot be opened or written is said in the log and the daemon plays on; a failed
/// flush keeps its counts for the next one.
final class WearLogService: DaemonService {
    let name = "data log"

    /// What plays at a turn of the loop.
    struct Now: Equatable {
        var connected: Bool
        /// The calibration tone replaces the hearing aid: not wear.
        var calibrating = false
        var output: DaemonStatus.Output
        var program: String
        var noiseReduction: Bool
        var volumeDB: Double
        var xruns: Int
    }

    /// How often the tally goes to the file (`log-interval` in ribbitd.conf; 60 s by default).
    let flushSeconds: Double
    /// How long a flush waits for another writer (`log --erase`): the control thread waits with it.
    static let busySeconds = 0.5

    private let path: String
    private let log: Logger
    private let current: () -> Now
    private let storage: StorageProblems
    private var store: WearLog?
    private var tally = WearLog.Tally()
    private var last: Now?
    private var lastTick = 0.0
    private var nextFlush = 0.0
    /// The local date, looked up once a second (monotonic time of the next look).
    private var date = ""
    private var nextDateCheck = 0.0
    /// Whether the last flush failed (its failure is logged once, its recovery too).
    private var failing = false
    /// How long the last flush took (ms), for the debug log.
    private(set) var lastFlushMilliseconds = 0.0

    init(path: String, flushSeconds: Double = 60, log: Logger, storage: StorageProblems? = nil, current: @escaping () -> Now) {
        self.path = path
        self.flushSeconds = flushSeconds
        self.log = log
        self.storage = storage ?? StorageProblems(log: log)
        self.current = current
    }

    func start(now: Double) throws {
        do {
            let (store, recovery) = try WearLog.openRecovering(path: path, busySeconds: Self.busySeconds)
            self.store = store
            if let recovery { storage.report(path, recovery) }
        } catch {
            storage.report(path, "the data log \(path) cannot be opened (\(error)); nothing is logged until the daemon restarts")
        }
        lastTick = now
        nextFlush = now + flushSeconds
        tally.count(date: today(now: now), starts: 1)
    }

    /// One ~100 ms input level in dB SPL (-200: no compressor ran).
    func hear(broadbandDBSPL: Double, now: Double) {
        guard store != nil else { return }
        tally.addLevel(broadbandDBSPL, now: now, date: today(now: now))
    }

    func tick(now: Double) {
        guard store != nil else { return }
        account(now: now)
        if now >= nextFlush {
            nextFlush = now + flushSeconds
            flush()
        }
    }

    func stop(deadline: Double) {
        guard store != nil else { return }
        let now = Daemon.now()
        account(now: now)
        tally.closeLevels(now: now, date: today(now: now), force: true)
        flush()
    }

    /// The time since the last turn, to what played then; the events since.
    private func account(now: Double) {
        let date = today(now: now)
        let state = current()
        // A turn is at most 100 ms; a longer gap (a stopped process) is not wear.
        let seconds = min(max(0, now - lastTick), 1)
        lastTick = now
        if let last, last.connected, !last.calibrating {
            let mode: WearLog.Tally.Mode =
                switch last.output {
                case .processing: .processing(program: last.program, noiseReduction: last.noiseReduction)
                case .bypassed: .bypassed
                case .paused: .paused
                }
            tally.add(seconds: seconds, mode: mode, date: date)
        }
        if let last {
            tally.count(
                date: date, programSwitches: last.program == state.program ? 0 : 1, volumeChanges: last.volumeDB == state.volumeDB ? 0 : 1,
                xruns: state.xruns - last.xruns)
        }
        tally.closeLevels(now: now, date: date)
        last = state
    }

    /// Writes the tally in one transaction; on failure keeps it for the next flush.
    private func flush() {
        guard let store else { return }
        let days = tally.take()
        let started = Daemon.now()
        do {
            try store.add(days)
            lastFlushMilliseconds = (Daemon.now() - started) * 1000
            log.debug("data log: \(days.count) day(s) written in \(String(format: "%.1f", lastFlushMilliseconds)) ms")
            if failing { storage.clear(path, saying: "the data log \(path) is written again") }
            failing = false
        } catch {
            tally.putBack(days)
            if !failing {
                storage.report(path, "cannot write the data log \(path) (\(error)); its counts are kept and tried again every minute")
            }
            failing = true
        }
    }

    private func today(now: Double) -> String {
        if now >= nextDateCheck || date.isEmpty {
            date = WearLog.date(of: Date())
            nextDateCheck = now + 1
        }
        return date
    }
}
