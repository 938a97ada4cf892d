import ArgumentParser
import Foundation
import RibbitSettings
import RibbitStore

/// `ribbitd log`: the data log, read from its file (no daemon needed, as `list`).
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "Show the data log: per day, hours worn per program, input levels, events.",
        discussion: """
            The daemon logs, per day: the time processing in each program, bypassed and paused; the \
            input levels (1-s levels in dB SPL, in 5 dB bins); the time with noise reduction on; \
            program switches, volume changes, xruns and daemon starts. Nothing else, and nothing \
            leaves the machine. The log is $XDG_DATA_HOME/ribbit/wearlog.sqlite; `log = false` in \
            ribbitd.conf stops it, `ribbitd log --erase` erases it.
            """)

    @Option(help: ArgumentHelp("Only the days from this date on (local).", valueName: "YYYY-MM-DD"))
    var since: String?

    @Flag(help: "Print JSON for machines: an array of days, oldest first ([] when nothing is logged; docs/json-output.md).")
    var json = false

    @Flag(help: "Erase the whole data log (asks first on a terminal).")
    var erase = false

    @Flag(help: "With --erase: do not ask.")
    var yes = false

    func validate() throws {
        if let since, since.wholeMatch(of: /\d{4}-\d\d-\d\d/) == nil {
            throw ValidationError("--since takes a date as YYYY-MM-DD, not '\(since)'")
        }
        if erase && (since != nil || json) { throw ValidationError("--erase erases every day; it takes no --since or --json") }
        if yes && !erase { throw ValidationError("--yes goes with --erase") }
    }

    /// One day as `log --json` prints it.
    struct Day: Encodable {
        var date: String
        var wornSeconds: Double
        /// By program name ("none": no prescription loaded).
        var processingSeconds: [String: Double]
        var bypassedSeconds: Double
        var pausedSeconds: Double
        var noiseReductionSeconds: Double
        /// By the bin's lower edge in dB SPL ("15": below 20, "120": 120 and up).
        var levelSeconds: [String: Int]
        var programSwitches: Int
        var volumeChanges: Int
        var xruns: Int
        var starts: Int
    }

    func run() throws {
        let path = WearLog.path(dataDirectory: RibbitPaths().dataDirectory)
        guard FileManager.default.fileExists(atPath: path) else {
            if erase {
                print("nothing to erase: there is no data log (\(path))")
            } else if json {
                printJSON([Day]())
            } else {
                print("nothing logged yet (\(path)); `ribbitd run` logs while it runs")
            }
            return
        }
        let log: WearLog
        do { log = try WearLog.openRecovering(path: path).log } catch {
            throw RibbitError.noInput("cannot open the data log \(path) (\(error))")
        }
        if erase { return try eraseLog(log) }
        let days: [WearLog.Day]
        do { days = try log.days(since: since) } catch { throw RibbitError.noInput("cannot read the data log \(path) (\(error))") }
        if json {
            printJSON(days.map(Day.init))
            return
        }
        guard !days.isEmpty else {
            print(since == nil ? "nothing logged yet (\(path))" : "nothing logged since \(since!)")
            return
        }
        print(days.map(Self.describe).joined(separator: "\n"), terminator: "")
    }

    private func eraseLog(_ log: WearLog) throws {
        let count = (try? log.days().count) ?? 0
        if !yes && isatty(0) == 1 {
            FileHandle.standardError.write(Data("erase the data log (\(count) day\(count == 1 ? "" : "s")) in \(log.path)? [y/N] ".utf8))
            guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                print("nothing erased")
                return
            }
        }
        do { try log.erase() } catch { throw RibbitError.cannotCreate("cannot erase the data log \(log.path) (\(error))") }
        print("erased the data log (\(count) day\(count == 1 ? "" : "s"))")
    }

    /// A day in text: hours, events, and a histogram of the input levels.
    static func describe(_ day: WearLog.Day) -> String {
        func hours(_ seconds: Double) -> String { String(format: "%.1f h", seconds / 3600) }
        var modes = day.processingSeconds.sorted { $0.key < $1.key }.map { "\($0.key) \(hours($0.value))" }
        if day.bypassedSeconds > 0 { modes.append("bypassed \(hours(day.bypassedSeconds))") }
        if day.pausedSeconds > 0 { modes.append("paused \(hours(day.pausedSeconds))") }
        var lines = ["\(day.date)  worn \(hours(day.wornSeconds))" + (modes.isEmpty ? "" : ": " + modes.joined(separator: ", "))]
        func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
        lines.append(
            "  noise reduction \(hours(day.noiseReductionSeconds)), \(count(day.programSwitches, "program switch", "program switches")), "
                + "\(count(day.volumeChanges, "volume change", "volume changes")), \(count(day.xruns, "xrun", "xruns")), "
                + count(day.starts, "start", "starts"))
        let heard = day.levelSeconds.filter { $0.value > 0 }
        if let low = heard.keys.min(), let high = heard.keys.max() {
            let total = heard.values.reduce(0, +)
            let most = heard.values.max() ?? 1
            lines.append("  input level, dB SPL (1-s levels, \(hours(Double(total))) measured):")
            for edge in stride(from: low, through: high, by: 5) {
                let seconds = heard[edge] ?? 0
                let label = edge == 15 ? "<20" : edge == 120 ? ">=120" : "\(edge)-\(edge + 5)"
                let bar = String(repeating: "#", count: seconds == 0 ? 0 : max(1, seconds * 30 / most))
                let share = String(format: "%3.0f%%", Double(seconds) * 100 / Double(total))
                lines.append("  " + label.padding(toLength: 7, withPad: " ", startingAt: 0) + share + "  " + bar)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension LogCommand.Day {
    init(_ day: WearLog.Day) {
        self.init(
            date: day.date, wornSeconds: day.wornSeconds, processingSeconds: day.processingSeconds, bypassedSeconds: day.bypassedSeconds,
            pausedSeconds: day.pausedSeconds, noiseReductionSeconds: day.noiseReductionSeconds,
            levelSeconds: Dictionary(uniqueKeysWithValues: day.levelSeconds.map { (String($0.key), $0.value) }),
            programSwitches: day.programSwitches, volumeChanges: day.volumeChanges, xruns: day.xruns, starts: day.starts)
    }
}
