import ArgumentParser
import Foundation
import RibbitControl
import RibbitDaemon
import RibbitStore

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

    @Argument(help: "The prescription: a .rx text file, or a PNG or JPEG image of its QR code.")
    var prescription: String

    @Option(help: ArgumentHelp("Apply it as a trial for this long, e.g. 15m, 90s, 2h.", valueName: "DURATION"))
    var trial: String?

    func run() throws {
        let seconds = try trial.map(parseDuration)
        let source = try readPrescription(prescription)  // a clear error before anything else
        let paths = RibbitPaths()
        let intake = Intake.load(paths: paths, config: try loadConfig(paths))
        let accepted: Intake.Accepted
        do { accepted = try intake.check(source.payload, source: prescription) } catch {
            throw RibbitError.data("\(error.description); the prescription was not used")
        }
        let name = "\(accepted.prescription.name) (\(accepted.prescription.environment))"
        switch try askDaemon(ControlRequest(command: .load, prescription: source.payload, source: prescription, trialSeconds: seconds)) {
        case .answered:
            print("loaded \(name) from \(source.kind), \(accepted.verdict.description)\(seconds.map { ", as a trial for \(formatDuration($0))" } ?? "")")
        case .notRunning:
            guard seconds == nil else { throw RibbitError.unavailable("a trial needs the daemon running (it reverts when the time is up); start it first") }
            let lock = try lockHistory(paths)
            defer { withExtendedLifetime(lock) {} }
            let store = try openStore(paths)
            do { try store.add(accepted.record(payload: source.payload, source: prescription)) } catch {
                throw RibbitError.cannotCreate("cannot store the prescription in \(store.path) (\(error)); nothing changed")
            }
            print("stored \(name) as the active prescription, \(accepted.verdict.description); ribbitd is not running and will use it when it starts")
        }
    }
}

/// "15m", "90s", "2h", "1h30m" -> seconds.
func parseDuration(_ text: String) throws(RibbitError) -> Int {
    var total = 0, number = ""
    for character in text {
        if character.isNumber {
            number.append(character)
        } else if let value = Int(number), let unit = ["s": 1, "m": 60, "h": 3600, "d": 86400][String(character)] {
            total += value * unit
            number = ""
        } else {
            throw .usage("'\(text)' is not a duration; write it like 90s, 15m or 2h")
        }
    }
    guard number.isEmpty, total > 0 else { throw .usage("'\(text)' is not a duration; write it like 90s, 15m or 2h") }
    return total
}

func formatDuration(_ seconds: Int) -> String {
    seconds >= 3600 ? "\(seconds / 3600) h \(seconds % 3600 / 60) min" : seconds >= 60 ? "\(seconds / 60) min \(seconds % 60) s" : "\(seconds) s"
}

func loadConfig(_ paths: RibbitPaths) throws(RibbitError) -> DaemonConfig {
    do { return try DaemonConfig.load(path: paths.configFile) } catch { throw .usage(error.description) }
}

