import RibbitControl
import RibbitPrescription

/// What the wearer should hear: the active prescription, a trial, pause and bypass. A pure
/// value (no JACK, no socket, no store): the services change it, and whatever plays is derived
/// from it (`filterChoice`, `output`), so the rules are in one place and tested on their own.
struct FittingState: Equatable {
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
    /// The lowest max-output in the history and the default: the ceiling with no prescription.
    var strictestCeilingDBFS = Prescription.defaultMaxOutputDBFS

    /// The prescription's filters; in bypass a pure delay under its ceiling; with none, a pure
    /// delay under the strictest ceiling the history knows. No mode is without a ceiling.
    var filterChoice: FilterChoice {
        guard let active else { return .delay(ceilingDBFS: strictestCeilingDBFS) }
        return bypassed
            ? .delay(ceilingDBFS: active.prescription.maxOutputDBFS) : .prescription(active.prescription, trusted: active.trusted)
    }

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
                rule: $0.prescription.rule.rawValue, signature: $0.signature, patient: $0.prescription.patient, date: $0.prescription.date)
        }
    }
}
