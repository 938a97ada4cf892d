import Foundation
import Logging
import RibbitControl
import RibbitFitting
import RibbitIntake
import RibbitStore

/// The active prescription (`load`, `use`, `keep`, `revert`) and the trial's timer: a
/// prescription is checked, designed and stored first, and plays only then, so any error
/// leaves everything as it was.
final class PrescriptionService: DaemonService {
    let name = "prescription"
    private let audio: AudioService
    private let fitting: FittingService
    private let log: Logger
    /// Plays what the fitting state now asks for, reusing filters designed for the request.
    var play: (_ prepared: RunningFilters?) -> Void = { _ in }
    /// The reply to a request that changed the state: the daemon's, with its status.
    var reply: () -> ControlReply = { ControlReply(ok: true) }
    /// The status changed without a request (a trial ended): systemd's line follows.
    var statusChanged: () -> Void = {}

    init(audio: AudioService, fitting: FittingService, log: Logger) {
        self.audio = audio
        self.fitting = fitting
        self.log = log
    }

    /// The trial's timer: a failure to end it is logged, and tried again next turn.
    func tick(now: Double) {
        guard fitting.state.trialIsOver(at: Date().timeIntervalSince1970) else { return }
        do throws(RequestFailure) { try endTrial(keep: false, why: "the trial time is up") } catch {}
    }

    func load(_ upload: PrescriptionUpload) throws(RequestFailure) -> ControlReply {
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
        play(prepared)
        log.info(
            "loaded \(fitting.state.title) from \(source), \(accepted.verdict.description)\(fitting.state.trial == nil ? "" : ", as a trial")"
        )
        return reply()
    }

    func use(_ choice: HistoryChoice) throws(RequestFailure) -> ControlReply {
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
        play(prepared)
        log.info("using \(entry.title), history entry \(entry.id)")
        return reply()
    }

    /// `keep` or `revert`: ends the trial that runs.
    func endTrial(keep: Bool) throws(RequestFailure) -> ControlReply {
        _ = try fitting.history()
        guard fitting.state.trial != nil else { throw RequestFailure("no trial is running; `ribbitd load --trial 15m RX` starts one") }
        try endTrial(keep: keep, why: keep ? "kept" : "reverted")
        return reply()
    }

    private func endTrial(keep: Bool, why: String) throws(RequestFailure) {
        do { try fitting.endTrial(keep: keep) } catch {
            log.error("\(error)")
            throw error
        }
        if !keep { play(nil) }
        log.info("trial \(why): now \(fitting.state.title)")
        statusChanged()
    }
}
