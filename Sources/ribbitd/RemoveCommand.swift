import ArgumentParser
import RibbitControl
import RibbitSettings

struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a prescription from the history (not the active one).")

    @Argument(help: ArgumentHelp("The history id (`ribbitd list`).", valueName: "ID"))
    var id: Int64

    func run() throws {
        let store = try openStore(RibbitPaths())
        do { try store.remove(id: id) } catch { throw RibbitError.data("\(error); nothing changed") }
        print("removed history entry \(id)")
    }
}
