import ArgumentParser
import Foundation
import Glibc
import RibbitAudiometry
import RibbitControl
import RibbitPrescription
import RibbitSettings

struct HearingTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearing-test",
        abstract: "Test your hearing: a pure-tone audiogram, taken alone in about 10 minutes.",
        discussion: """
            The daemon plays short beeps in one ear at a time, at 1000, 2000, 3000, 4000, 6000 and \
            8000 Hz, 1000 Hz again, then 500 and 250 Hz; press Space or Enter whenever you hear one, \
            however faint. Some beeps are silent on purpose: answering them is counted. The hearing \
            aid is off during the test and comes back at the end. A room too loud for the test \
            pauses it until it is quiet again.

            The result is stored (`ribbitd audiogram list`). It is a self-administered screening \
            result, not a clinical audiogram: show it to an audiologist.
            """)

    @Option(help: "The headphones: consumer, tdh39, hda200 or er3a (their RETSPL table).") var headphones: Transducer = .consumer
    @Option(name: .customLong("better-ear"), help: "The ear you hear better with, tested first: left or right.")
    var betterEar: Ear?
    @Option(help: "Test one ear only: left or right.") var ear: Ear?
    @Option(
        help: ArgumentHelp("The frequencies, in the order tested (default the clinical order with the 1 kHz retest).", valueName: "HZ,..."))
    var frequencies: String?
    @Option(help: ArgumentHelp("Replays the waits and silent beeps of an earlier test (for testing ribbit).", visibility: .hidden))
    var seed: UInt64?
    @Flag(
        name: .customLong("name-ear"),
        help: "Answer with the Left or Right arrow (or l, r) for the ear that heard it; some beeps then play in the other ear.")
    var nameEar = false
    @Flag(help: "Stop the test that is running (what was measured is kept).") var stop = false
    @Flag(help: "At the end, propose a prescription from the result (camfit) and try it as a 15-minute trial.") var fit = false

    func run() throws {
        if stop {
            _ = try sendToDaemon(.hearingTestStop)
            print("hearing test stopped; what was measured is kept (`ribbitd audiogram list`)")
            return
        }
        let first = ear ?? betterEar ?? .right
        var frequenciesHz = HearingTest.Plan.clinicalOrder
        if let frequencies {
            let values = frequencies.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else {
                throw RibbitError.usage("--frequencies takes whole numbers of Hz separated by commas, like 1000,2000,4000")
            }
            frequenciesHz = values.map { $0! }
        }
        let request: ControlRequest
        do {
            request = .hearingTestStart(
                try HearingTestRequest(
                    transducer: headphones, ears: ear != nil ? [first] : [first, first == .right ? .left : .right],
                    frequenciesHz: frequenciesHz, answersNameTheEar: nameEar, seed: seed))
        } catch { throw RibbitError(error) }
        let screen = HearingTestScreen(headphones: headphones, namesEar: nameEar)
        defer { screen.restore() }
        guard screen.showInstructions() else {
            screen.restore()
            print("no test was started")
            return
        }
        let stopSignals = StopSignals()
        // The test runs while this connection stays open: if this command ends in any way (its
        // terminal closed, a kill), the daemon stops the test and the hearing aid plays again.
        let held = try holdAtDaemon(request)
        defer { held.close() }
        var final: HearingTestStatus?
        var stopped = false
        while final == nil {
            if stopSignals.requested { stopped = true }
            switch screen.key(timeoutSeconds: HearingTestScreen.refreshSeconds) {
            case .answer(let ear):
                if let status = try sendToDaemon(.hearingTestAnswer(ear: ear)).hearingTest { screen.acknowledge(status) }
            case .quit: stopped = true
            case .none: break
            }
            if stopped {
                _ = try? sendToDaemon(.hearingTestStop)
            }
            guard let status = try sendToDaemon(.status).hearingTest else {
                throw RibbitError.unavailable("the daemon lost the hearing test (did it restart?)")
            }
            if status.state == .finished || status.state == .stopped { final = status } else { screen.draw(status) }
        }
        screen.restore()
        print(HearingTestSummary.lines(final!).joined(separator: "\n"))
        if fit, let id = final!.recordID {
            print("")
            let command = try AudiogramFitCommand.parse(["\(id)", "--trial", "15m"])
            try command.run()
            print("`ribbitd keep` keeps it; `ribbitd revert` (or 15 minutes) goes back.")
        }
    }
}

extension Transducer: ExpressibleByArgument {}

/// The result as the terminal prints it after a test.
enum HearingTestSummary {
    static func lines(_ status: HearingTestStatus) -> [String] {
        var lines: [String] = []
        let minutes = Int(status.elapsedSeconds) / 60
        let seconds = Int(status.elapsedSeconds) % 60
        lines.append(
            status.state == .finished
                ? "Hearing test finished in \(minutes) min \(seconds) s."
                : "Hearing test stopped after \(minutes) min \(seconds) s: \(status.problem ?? "stopped")."
        )
        lines += table(status.frequencies)
        if !status.flags.isEmpty {
            lines.append("")
            lines.append("Check this result:")
            lines += status.flags.map { "  - " + describe($0) }
        }
        if let findings = status.findings, !findings.lines.isEmpty {
            lines.append("")
            lines += findings.lines.map { "! " + $0 }
        }
        lines.append("")
        if let id = status.recordID {
            lines.append(
                "Stored as audiogram \(id): `ribbitd audiogram show \(id)`; a fitting from it: `ribbitd audiogram fit \(id) --trial 15m`.")
        } else if status.frequencies.isEmpty {
            lines.append("Nothing was measured, so nothing was stored.")
        }
        if let problem = status.problem, status.recordID == nil, !status.frequencies.isEmpty { lines.append("Not stored: \(problem)") }
        lines.append(HearingTestRecord.disclaimer)
        return lines
    }

    /// dB HL per ear and frequency: a number, ">N" for no response at N, "?" undetermined.
    static func table(_ results: [FrequencyResult]) -> [String] {
        let frequencies = Set(results.map(\.frequencyHz)).sorted()
        guard !frequencies.isEmpty else { return [] }
        func label(_ hz: Int) -> String { hz >= 1000 ? "\(hz / 1000)k" + (hz % 1000 == 0 ? "" : "\(hz % 1000 / 100)") : "\(hz)" }
        func pad(_ text: String) -> String { String(repeating: " ", count: max(0, 6 - text.count)) + text }
        var lines = ["", "dB HL   " + frequencies.map { pad(label($0)) }.joined()]
        for ear in [Ear.right, .left] where results.contains(where: { $0.ear == ear }) {
            let cells = frequencies.map { hz -> String in
                guard let r = results.kept(ear: ear, frequencyHz: hz) else { return pad("-") }
                return pad(cell(r))
            }
            lines.append((ear == .right ? "Right   " : "Left    ") + cells.joined())
        }
        for ear in [Ear.right, .left] {
            guard let pair = results.retestPair(ear: ear) else { continue }
            lines.append(
                "\(ear == .right ? "Right" : "Left") ear 1 kHz: first \(cell(pair.first)), retest \(cell(pair.retest)) (the better is kept)"
            )
        }
        return lines
    }

    static func cell(_ r: FrequencyResult) -> String {
        switch r.status {
        case .threshold: r.thresholdDBHL.map(String.init) ?? "?"
        case .noResponse: ">\(r.maximumTestedDBHL)"
        case .undetermined: "?"
        }
    }

    static func describe(_ flag: ReliabilityFlag) -> String {
        switch flag {
        case .falseAlarms: "many answers came when no beep was played: the thresholds may be too good; take the test again, calmly"
        case .retestDifference:
            "the two 1000 Hz measurements differ by more than \(HearingTestResult.maximumRetestDifferenceDB) dB: take the test again"
        case .undetermined: "some frequencies (?) gave no consistent answer: take the test again"
        case .noResponseAnywhere: "no beep was heard at all: check the headphones are plugged in, on and not muted"
        case .incomplete: "the test was stopped before the end"
        }
    }
}
