import RibbitControl
import RibbitFitting
import RibbitPrescription

/// What the wearer should hear: the active prescription, a trial, pause and bypass. A pure
/// value (no JACK, no socket, no store): the services change it, and whatever plays is derived
/// from it (`filterChoice`, `output`), so the rules are in one place and tested on their own.
struct FittingState: Equatable {
    static func == (a: FittingState, b: FittingState) -> Bool {
        a.active == b.active && a.trial == b.trial && a.paused == b.paused && a.bypassed == b.bypassed && a.listening == b.listening
            && a.automaticPick?.program == b.automaticPick?.program && a.automaticPick?.reason == b.automaticPick?.reason
            && a.strictestCeilingDBFS == b.strictestCeilingDBFS && a.testBox == b.testBox
    }

    /// The prescription that plays, as the history holds it.
    struct Active: Equatable {
        let prescription: Prescription
        /// The history entry (nil: played from the copy of the last active one, no history).
        let id: Int64?
        /// "signed by ... (trusted)", "unsigned" ... as the history records it.
        let signature: String
        /// Signed by a key trusted now: its output limit may exceed the OTC caps.
        var trusted = false
    }

    /// A trial: when it ends (monotonic-free wall clock, seconds since 1970) and what it goes back to.
    struct Trial: Equatable {
        let deadline: Double
        let revertsTo: String?
    }

    var active: Active?
    var trial: Trial?
    var paused = false
    var bypassed = false
    /// The wearer's program choice and volume (remembered across restarts; a new prescription
    /// starts again from its own default program at 0 dB).
    var listening = Listening()
    /// With `listening.automatic`: what the scene classifier picked, and why.
    var automaticPick: (program: Program, reason: String)?
    /// The lowest max-output in the history and the default: the ceiling with no prescription.
    var strictestCeilingDBFS = Prescription.defaultMaxOutputDBFS
    /// A live measurement runs (`verify --live`): the prescription plays as a test box measures
    /// it, adaptive features off (`Fitting.compressorPlan`).
    var testBox = false

    /// The prescription's filters; in bypass a pure delay under its ceiling; with none, a pure
    /// delay under the strictest ceiling the history knows. No mode is without a ceiling.
    var filterChoice: FilterChoice {
        guard let active else { return .delay(ceilingDBFS: strictestCeilingDBFS) }
        guard !bypassed else { return .delay(ceilingDBFS: active.prescription.maxOutputDBFS) }
        return .prescription(active.prescription, trusted: active.trusted, program: program, adaptive: !testBox)
    }

    /// The wearer's volume as the compressor's trim: 0 without a prescription or for a volume
    /// set for another one (a live measurement's restore), else within its `volume-range`.
    var trimDB: Double { active.map { listening.belonging(to: $0.prescription).volumeDB } ?? 0 }

    /// The program that plays: the automatic pick (the prescription's default until there is
    /// one), the wearer's choice, or the one the prescription's env selects.
    var program: Program {
        let standard = active.map { Program.default(forEnvironment: $0.prescription.environment) } ?? .quiet
        if listening.automatic { return automaticPick?.program ?? standard }
        return listening.program ?? standard
    }

    /// What would play once `rx` is the active prescription: it starts from its own default
    /// program (or the automatic pick) at 0 dB, as `FittingService.adopt` sets the state.
    func choice(adopting rx: Prescription, trusted: Bool) -> FilterChoice {
        var next = self
        next.active = .init(prescription: rx, id: nil, signature: "", trusted: trusted)
        next.listening.program = nil
        next.listening.volumeDB = 0
        return next.filterChoice
    }

    /// Who chose `program`, as `status` says it.
    var programChosenBy: ProgramChooser { listening.automatic ? .auto : listening.program == nil ? .prescription : .wearer }

    var output: DaemonStatus.Output { paused ? .paused : bypassed ? .bypassed : .processing }

    /// Whether the trial's time is up at `wallClock` (seconds since 1970).
    func trialIsOver(at wallClock: Double) -> Bool { trial.map { wallClock >= $0.deadline } ?? false }

    /// "Name (environment)", or what plays without one.
    var title: String { active.map { "\($0.prescription.name) (\($0.prescription.environment))" } ?? "no prescription (unchanged sound)" }

    /// One line for systemd's STATUS=.
    func statusLine(connected: Bool) -> String {
        let mode = paused ? "paused" : bypassed ? "bypassed" : "processing"
        return connected ? "\(mode): \(title)" : "\(mode), \(title), waiting for JACK"
    }

    /// The active prescription as `status` reports it.
    var description: DaemonStatus.ActivePrescription? {
        active.map {
            .init(
                id: $0.id, name: $0.prescription.name, environment: $0.prescription.environment, audiologist: $0.prescription.audiologist,
                rule: $0.prescription.rule, signature: $0.signature, patient: $0.prescription.patient, date: $0.prescription.date)
        }
    }
}
