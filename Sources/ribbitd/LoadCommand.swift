import ArgumentParser
import RibbitControl
import RibbitIntake
import RibbitSettings

struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Apply a prescription (a .rx file, or a PNG/JPEG of its QR code) and keep it in the history.",
        discussion: """
            Checked here and again by the daemon, applied with a 1.3 ms crossfade, stored in the history \
            as the active prescription. With no daemon running it is stored as the active one for the next \
            start. On any error nothing changes. With --trial it reverts to the current one when the time is \
            up, unless `ribbitd keep`; `ribbitd revert` goes back at once.
            """)

    @Argument(help: "The prescription: a .rx text file, or a PNG or JPEG image of its QR code.", completion: .prescriptionFile)
    var prescription: String

    @Option(help: ArgumentHelp("Apply it as a trial for this long, e.g. 15m, 90s, 2h.", valueName: "DURATION"))
    var trial: String?

    func run() throws {
        let seconds = try trial.map(parseDuration)
        let trialLength: TrialLength?
        do { trialLength = try seconds.map { seconds throws(RequestError) in try TrialLength(seconds: seconds) } } catch {
            throw RibbitError(error)
        }
        let paths = RibbitPaths()
        let intake = Intake.load(paths: paths, config: try loadConfig(paths))
        let (input, accepted) = try readPrescription(prescription, intake: intake)  // a clear error before anything else
        let name = "\(accepted.prescription.name) (\(accepted.prescription.environment))"
        switch try askDaemonIfRunning(.load(PrescriptionUpload(text: accepted.payload, source: prescription, trial: trialLength))) {
        case .some:
            print(
                "loaded \(name) from \(input.kind), \(accepted.verdict.description)\(seconds.map { ", as a trial for \(formatDuration($0))" } ?? "")"
            )
        case nil:
            guard seconds == nil else {
                throw RibbitError.unavailable("a trial needs the daemon running (it reverts when the time is up); start it first")
            }
            let lock = try lockHistory(paths)
            defer { withExtendedLifetime(lock) {} }
            let history = PrescriptionHistory(store: try openStore(paths), intake: intake)
            do { _ = try history.add(accepted, source: prescription) } catch { throw RibbitError(error, then: "nothing changed") }
            print(
                "stored \(name) as the active prescription, \(accepted.verdict.description); ribbitd is not running and will use it when it starts"
            )
        }
    }
}
