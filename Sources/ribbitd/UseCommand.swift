import ArgumentParser
import RibbitControl
import RibbitIntake
import RibbitSettings

struct UseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Switch to a prescription from the history (by id or name), or the newest for an environment.",
        discussion: "The running daemon crossfades to it; with no daemon it becomes the active one for the next start.")

    @Argument(
        help: ArgumentHelp("A history id or name (`ribbitd list`).", valueName: "ID|NAME"), completion: .custom(HistoryCompletion.names))
    var selector: String?

    @Option(
        help: ArgumentHelp("The newest prescription for this environment (quiet, noisy, music ...).", valueName: "ENV"),
        completion: .custom(HistoryCompletion.environments))
    var env: String?

    func validate() throws {
        guard (selector == nil) != (env == nil) else { throw ValidationError("give an id or name, or --env ENV") }
    }

    func run() throws {
        if let status = try askDaemonIfRunning(.use(env.map { .newest(environment: $0) } ?? .entry(selector ?? ""))) {
            if let rx = status.prescription { print("using \(rx.name) (\(rx.environment)), history entry \(rx.id ?? 0)") }
            return
        }
        // No daemon: the same transaction on the history, under its lock.
        let paths = RibbitPaths()
        let lock = try lockHistory(paths)
        defer { withExtendedLifetime(lock) {} }
        let history = PrescriptionHistory(store: try openStore(paths), intake: Intake.load(paths: paths, config: try loadConfig(paths)))
        do {
            let entry = try history.find(selector: selector, environment: env)
            try history.activate(entry)
            print(
                "\(entry.record.name) (\(entry.record.environment)) is now the active prescription; ribbitd is not running and will use it when it starts"
            )
        } catch {
            throw RibbitError(error, then: "nothing changed")
        }
    }
}
