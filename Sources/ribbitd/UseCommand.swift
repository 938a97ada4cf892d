import ArgumentParser
import RibbitControl
import RibbitDaemon
import RibbitStore

struct UseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Switch to a prescription from the history (by id or name), or the newest for an environment.",
        discussion: "The running daemon crossfades to it; with no daemon it becomes the active one for the next start.")

    @Argument(help: ArgumentHelp("A history id or name (`ribbitd list`).", valueName: "ID|NAME"))
    var selector: String?

    @Option(help: ArgumentHelp("The newest prescription for this environment (quiet, noisy, music ...).", valueName: "ENV"))
    var env: String?

    func validate() throws {
        guard (selector == nil) != (env == nil) else { throw ValidationError("give an id or name, or --env ENV") }
    }

    func run() throws {
        let answer = try askDaemon(ControlRequest(command: .use, selector: selector, environment: env))
        if case .answered(let status) = answer {
            if let rx = status?.prescription { print("using \(rx.name) (\(rx.environment)), history entry \(rx.id ?? 0)") }
        } else {
            let paths = RibbitPaths()
            let lock = try lockHistory(paths)
            defer { withExtendedLifetime(lock) {} }
            let store = try openStore(paths)
            let found = try? (env.map { try store.newest(environment: $0) } ?? store.find(selector!))
            guard let record = found ?? nil, let id = record.id else {
                throw RibbitError.data("no prescription \(env.map { "for the environment '\($0)'" } ?? "'\(selector!)'") in the history; `ribbitd list` shows them")
            }
            let intake = Intake.load(paths: paths, config: try loadConfig(paths))
            do { _ = try intake.check(try record.intactPayload(), source: "history entry \(id)") } catch {
                throw RibbitError.data("\(error); nothing changed")
            }
            do { try store.activate(id: id) } catch { throw RibbitError.cannotCreate("\(error); nothing changed") }
            print("\(record.name) (\(record.environment)) is now the active prescription; ribbitd is not running and will use it when it starts")
        }
    }
}
