import Foundation
import Logging
import RibbitControl
import RibbitFitting
import RibbitIntake
import RibbitPrescription
import RibbitSettings
import RibbitStore

/// The history side of the daemon: the lock, the store (opened with recovery), intake, and the
/// fitting state they lead to. No JACK: what plays is derived from `state` by the audio service.
final class FittingService: DaemonService {
    let name = "history"
    private let paths: RibbitPaths
    private let config: DaemonConfig
    private let log: Logger
    private var lock: HistoryLock?
    private(set) var store: PrescriptionStore?
    /// What is wrong with the history, for `status` and the log (nil: nothing).
    private(set) var historyProblem: String?
    private(set) var state = FittingState()
    private let listeningFile: ListeningFile
    /// Writes the listening file and the active copy off the loop.
    private let files = FileWriter()
    /// What could not be read or stored (said once, in the log and `status`).
    let storage: StorageProblems
    /// Why the data directory cannot be written (nil: it can): the history is then read-only.
    private var unwritableData: String?
    /// A trial ended that a read-only history still holds: not read back from it.
    private var trialEndedUnstored = false

    init(paths: RibbitPaths, config: DaemonConfig, log: Logger, storage: StorageProblems? = nil) {
        self.paths = paths
        self.config = config
        self.log = log
        self.storage = storage ?? StorageProblems(log: log)
        listeningFile = ListeningFile(stateDirectory: paths.stateDirectory)
        let (listening, problem) = listeningFile.load()
        state.listening = listening
        // Its own key: the line stays while the daemon runs, though the file is soon written again.
        if let problem { self.storage.report(listeningFile.path + " (damaged)", problem) }
    }

    /// The wearer's program choice and volume; every change is remembered.
    var listening: Listening {
        get { state.listening }
        set {
            guard newValue != state.listening else { return }
            state.listening = newValue
            files.submit(listeningFile.path) { [listeningFile] in listeningFile.save(newValue) }
        }
    }

    var automaticPick: (program: Program, reason: String)? {
        get { state.automaticPick }
        set { state.automaticPick = newValue }
    }

    /// Takes the history's lock (another daemon holding it is fatal), then opens the history
    /// and restores what was active. A damaged or unusable history is not fatal.
    ///
    /// A data directory that cannot be written (a disk remounted read-only) is not fatal
    /// either: the lock is taken on the file as it is (or, with none there, not at all: nothing
    /// can change that history), the history opened read-only, and changes refused in one line.
    func start(now: Double) throws {
        let socketPath = paths.socketPath
        storage.checkDirectories(paths)
        unwritableData = DirectoryCheck.unwritable(paths.dataDirectory)
        reportDamagedSettings()
        do { lock = try HistoryLock(dataDirectory: paths.dataDirectory, waitSeconds: 2, readOnly: unwritableData != nil) } catch {
            if case .held(let holder) = error, let pid = holder.pid {
                throw DaemonError(
                    "another ribbitd is already running (pid \(pid), listening on \(holder.socketPath ?? "?")) on the history in \(paths.dataDirectory); `ribbitd stop` stops it"
                )
            }
            guard unwritableData != nil else { throw DaemonError("\(error)") }
            log.warning("\(error); the read-only history is used without its lock")
        }
        if unwritableData == nil { lock?.record(socketPath: socketPath) }
        afterLock()
        openHistory()
        keepListeningForActive()
    }

    /// A damaged ribbitd.conf or calibration.toml that `ribbitd run` started without.
    private func reportDamagedSettings() {
        if let damage = config.damagedConfig {
            storage.report(
                paths.configFile,
                "ribbitd.conf cannot be used (\(damage)); it may hold require-signed, so until it is fixed no new prescription is taken (load and use are refused) and the last one plays, with the default settings"
            )
        }
        if let damage = config.damagedCalibration {
            storage.report(
                CalibrationFile.path(besideConfig: paths.configFile),
                "calibration.toml cannot be used (\(damage)); playing uncalibrated (100 dB SPL assumed at 0 dBFS, +-20 dB): fix the file, or `ribbitd calibrate` again (the damaged file is kept beside it)"
            )
        }
    }

    /// Why no new prescription can be stored now (nil: it can), as the refusal's one line.
    private var changesRefused: String? {
        if config.damagedConfig != nil {
            return
                "ribbitd.conf cannot be used (see `ribbitd status`), and it may hold require-signed: fix it and restart the daemon first; nothing changed, the last prescription plays on"
        }
        if let why = unwritableData {
            return
                "cannot store a new prescription: \(paths.dataDirectory) cannot be written (\(why)); nothing changed, the last prescription plays on"
        }
        return nil
    }

    /// Called once the history is this daemon's, before it is opened: the audio process starts
    /// there, so it loads and opens JACK while the history opens (and a second daemon, which
    /// gets no lock, never touches JACK).
    var afterLock: () -> Void = {}

    func tick(now: Double) {
        // The listening file's outcome only: the copy of the active prescription is best effort
        // (its job says nothing), and a damaged copy's line stays until the next start.
        for (path, problem) in files.takeOutcomes() where path == listeningFile.path {
            if let problem {
                storage.report(path, problem)
            } else if storage.contains(path) {
                storage.clear(path, saying: "\(path) is written again")
            }
        }
    }

    func stop(deadline: Double) {
        if !files.finish(within: deadline - MonotonicClock.seconds()) {
            log.error("the disk did not take \(listeningFile.path) or the copy of the active prescription before the daemon stopped")
        }
        lock?.clear()
    }

    var paused: Bool {
        get { state.paused }
        set { state.paused = newValue }
    }

    var bypassed: Bool {
        get { state.bypassed }
        set { state.bypassed = newValue }
    }

    var testBox: Bool {
        get { state.testBox }
        set { state.testBox = newValue }
    }

    /// The history, with the trusted keys as they are now (a key trusted since the start counts).
    func history() throws(RequestFailure) -> PrescriptionHistory {
        guard let store else {
            throw RequestFailure("the prescription history cannot be used (\(historyProblem ?? "not open")); nothing changed")
        }
        return PrescriptionHistory(store: store, intake: Intake.load(paths: paths, config: config))
    }

    /// Stores an accepted prescription as the active one (a trial for `trialSeconds`).
    func load(_ accepted: Intake.Accepted, source: String, trialSeconds: Int?) throws(RequestFailure) -> PrescriptionHistory.Entry {
        if let refused = changesRefused { throw RequestFailure(refused) }
        let history = try history()
        let deadline = trialSeconds.map { Date().addingTimeInterval(Double($0)) }
        let entry: PrescriptionHistory.Entry
        do { entry = try history.add(accepted, source: source, trialUntil: deadline) } catch {
            throw RequestFailure("\(error.description); the active prescription is unchanged")
        }
        adopt(entry)
        return entry
    }

    /// Makes a checked history entry the active one.
    func use(_ entry: PrescriptionHistory.Entry) throws(RequestFailure) {
        if let refused = changesRefused { throw RequestFailure(refused) }
        do { try history().activate(entry) } catch { throw RequestFailure("\(error); the active prescription is unchanged") }
        adopt(entry)
    }

    /// Ends the trial: keeps it, or goes back to what played before.
    func endTrial(keep: Bool) throws(RequestFailure) {
        let store = try history().store
        if store.isReadOnly {
            try endTrialInMemory(store, keep: keep)
            return
        }
        do {
            _ = try store.endTrial(keep: keep)
            try restoreFromStore()
            keepListeningForActive()
        } catch {
            throw RequestFailure("cannot end the trial: \(error)")
        }
    }

    /// A trial on a history that cannot be written still ends: what it returns to plays (the
    /// history keeps the trial, and says so until it can be written).
    private func endTrialInMemory(_ store: PrescriptionStore, keep: Bool) throws(RequestFailure) {
        guard let trial = state.trial else { return }
        state.trial = nil
        trialEndedUnstored = true
        log.notice(
            "the trial ended, but \(paths.dataDirectory) cannot be written: the history still holds it, and it ends again at the next start"
        )
        guard !keep else { return }
        do {
            let previous = try store.trial()?.previousID.flatMap { try store.record(id: $0) }
            guard let previous else {
                state.active = nil
                return
            }
            let entry = try history().check(previous)
            state.active = .init(
                prescription: entry.accepted.prescription, id: previous.id, signature: previous.signatureText,
                trusted: entry.accepted.isTrusted)
        } catch {
            throw RequestFailure("cannot end the trial (back to \(trial.revertsTo ?? "no prescription")): \(error)")
        }
    }

    /// The new active entry, already checked: no second parse.
    private func adopt(_ entry: PrescriptionHistory.Entry) {
        state.active = .init(
            prescription: entry.accepted.prescription, id: entry.record.id, signature: entry.record.signatureText,
            trusted: entry.accepted.isTrusted)
        // A new prescription starts from its own program at 0 dB (as `FittingState.choice(adopting:)`).
        listening = Listening(prescription: entry.accepted.prescription.fingerprint)
        state.strictestCeilingDBFS = min(state.strictestCeilingDBFS, entry.accepted.prescription.maxOutputDBFS)
        readTrial()
    }

    private func readTrial() {
        guard let store, !trialEndedUnstored, let trial = try? store.trial() else {
            state.trial = nil
            return
        }
        let back = (try? trial.previousID.flatMap { try store.record(id: $0) })??.name
        state.trial = .init(deadline: trial.deadline.timeIntervalSince1970, revertsTo: back)
    }

    /// Opens the history, moving a damaged one aside (the store's recovery); restores what
    /// was active. When it cannot be opened at all the daemon still runs, on the copy of the
    /// last active prescription.
    private func openHistory() {
        let readOnly = unwritableData != nil
        do {
            let (opened, recovery) = try PrescriptionStore.openRecovering(
                path: paths.storePath, readOnly: readOnly,
                copyWrites: { [files] path, write in
                    files.submit(path) {
                        write(); return nil
                    }
                })
            store = opened
            if let recovery {
                historyProblem = recovery
                log.error("\(recovery)")
            }
        } catch {
            // A read-only directory with no history in it: its own line says it all.
            if !(readOnly && !FileManager.default.fileExists(atPath: paths.storePath)) {
                historyProblem =
                    "cannot open the prescription history \(paths.storePath) (\(error)); "
                    + (readOnly ? "the copy of the last active prescription plays" : "load and use are unavailable until it is fixed")
                log.error("\(historyProblem!)")
            }
        }
        let copyPath = PrescriptionStore.activeCopyPath(databasePath: paths.storePath)
        if FileManager.default.fileExists(atPath: copyPath), PrescriptionStore.activeCopy(databasePath: paths.storePath) == nil {
            storage.report(
                copyPath,
                store == nil
                    ? "\(copyPath), the copy of the last active prescription, is damaged, and the history cannot be read either: no prescription plays (sound passes through under the ceiling); `ribbitd load RX` again"
                    : "\(copyPath), the copy of the last active prescription, was damaged"
                        + (readOnly ? "; the history's own entry plays" : "; it was written again from the history"))
        }
        do {
            if let store, !readOnly {
                try takeInLegacyActiveFile(store)
                store.saveActiveCopy()  // also for a history made before the copy existed
            }
            try restoreFromStore()
        } catch {
            state.active = nil
            log.error("\(error); starting without a prescription (sound passes through unchanged)")
        }
    }

    /// The remembered program and volume, if they were chosen for the prescription that plays
    /// now, within its volume range; else its defaults. After every change of the active
    /// prescription that did not go through `adopt` (the start, the end of a trial).
    private func keepListeningForActive() {
        guard let rx = state.active?.prescription else { return }
        let kept = state.listening.belonging(to: rx)
        var remembered = state.listening
        remembered.prescription = nil
        if kept.prescription != state.listening.prescription, remembered != Listening() {
            log.notice("the remembered volume and program were not chosen for \(rx.name); it plays its own program at 0 dB")
        } else if kept.volumeDB != state.listening.volumeDB {
            log.notice("the remembered volume is outside \(rx.name)'s range; it plays at \(Prescription.number(kept.volumeDB)) dB")
        }
        listening = kept
    }

    /// The daemon's start with `run --rx`: that prescription becomes the active one.
    func loadAtStart(_ input: PrescriptionInput) throws {
        if let refused = changesRefused {
            storage.report(input.path, "\(input.path) was not loaded at start: \(refused)")
            return
        }
        let accepted: Intake.Accepted
        do { accepted = try Intake.load(paths: paths, config: config).check(input) } catch {
            throw DaemonError("\(error.description); the active prescription is unchanged")
        }
        _ = try load(accepted, source: input.path, trialSeconds: nil)
    }

    func logActive() {
        guard let active = state.active else {
            log.notice("no prescription loaded: sound passes through unchanged until `ribbitd load RX`")
            return
        }
        log.info("prescription \(active.prescription.name) (\(active.prescription.environment)) from the history")
    }

    /// Version 0.0 kept the active prescription in $XDG_STATE_HOME/ribbit/active.rx: taken into
    /// an empty history once, then removed.
    private func takeInLegacyActiveFile(_ store: PrescriptionStore) throws {
        let path = paths.stateDirectory + "/active.rx"
        guard try store.active() == nil, let bytes = try? BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) else { return }
        let accepted = try Intake.load(paths: paths, config: config).check(String(decoding: bytes, as: UTF8.self), source: path)
        _ = try store.add(accepted.record(source: path))
        unlink(path)
        log.notice("took \(path) into the history")
    }

    /// Reads the active prescription and trial from the store. A damaged active entry, or no
    /// store at all, plays the copy kept beside the history when it is intact.
    private func restoreFromStore() throws {
        let intake = Intake.load(paths: paths, config: config)
        let copy = PrescriptionStore.activeCopy(databasePath: paths.storePath)
        guard let store else {
            state.active = try copy.map {
                let accepted = try intake.check($0.payload, source: "the copy of the last active prescription")
                return .init(prescription: accepted.prescription, id: $0.id, signature: $0.signatureText, trusted: accepted.isTrusted)
            }
            return
        }
        readTrial()
        state.strictestCeilingDBFS = try store.all().compactMap { try? Prescription.parse(Array($0.intactPayload().utf8)).maxOutputDBFS }
            .reduce(Prescription.defaultMaxOutputDBFS) { min($0, $1) }
        guard let record = try store.active() else {
            state.active = nil
            return
        }
        var payload: String
        do { payload = try record.intactPayload() } catch {
            guard let copy, copy.id == record.id else { throw DaemonError("\(error.description) (in \(store.path))") }
            payload = copy.payload
            historyProblem = "\(error.description); playing its intact copy from \(store.activeCopyPath)"
            log.error("\(historyProblem!)")
        }
        do {
            let accepted = try intake.check(payload, source: "history entry \(record.id ?? 0)")
            state.active = .init(
                prescription: accepted.prescription, id: record.id, signature: record.signatureText, trusted: accepted.isTrusted)
        } catch {
            throw DaemonError("\(error.description) (stored in \(store.path))")
        }
    }
}

/// A request the daemon refuses: one line for the user, ending in what happened.
struct RequestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Why the daemon cannot start (or, inside, a step that failed).
public struct DaemonError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
