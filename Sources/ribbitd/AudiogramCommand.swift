import ArgumentParser
import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSettings
import RibbitStore

/// `ribbitd audiogram ...`: the stored hearing tests, read without the daemon.
struct AudiogramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audiogram",
        abstract: "The hearing tests you took: list, show, fit, a report, a FHIR bundle, calibrate headphones.",
        discussion: """
            Every result is self-measured and in situ: a screening, not a clinical audiogram; every \
            output says so. `ribbitd hearing-test` takes a test.
            """,
        subcommands: [
            AudiogramListCommand.self, AudiogramShowCommand.self, AudiogramFitCommand.self, AudiogramReportCommand.self,
            AudiogramFHIRCommand.self, AudiogramReferenceCommand.self,
        ]
    )
}

/// The hearing tests in the history's file. Reading only: no lock, so it works while the daemon runs.
func openHearingTests(_ paths: RibbitPaths) throws(RibbitError) -> HearingTestStore {
    do { return try HearingTestStore(path: paths.storePath) } catch {
        throw .noInput("cannot read the hearing tests in \(paths.storePath) (\(error))")
    }
}

/// One stored test, or the one-line error that names `ribbitd audiogram list`.
func findHearingTest(_ id: Int64, paths: RibbitPaths = RibbitPaths()) throws(RibbitError) -> HearingTestRecord {
    let store = try openHearingTests(paths)
    do { return try store.find(id: id) } catch { throw .data("\(error)") }
}

extension HearingTestRecord {
    /// The ears measured, right first ("right, left").
    var earsText: String {
        let ears = Ear.plotOrder.filter { ear in result.frequencies.contains { $0.ear == ear } }
        return ears.isEmpty ? "none" : ears.map(\.rawValue).joined(separator: ", ")
    }

    var flagsText: String { result.flags.isEmpty ? "-" : result.flags.map(\.rawValue).joined(separator: ", ") }

    /// The date as the wearer's clock shows it (the record keeps UTC).
    var localDate: String {
        let parser = ISO8601DateFormatter()
        guard let date = parser.date(from: self.date) else { return self.date }
        return ListCommand.date.string(from: date)
    }

    /// The headphones and how the levels were set, in one line.
    var calibrationText: String {
        let profile = calibrationProfile.map { "profile \($0)" } ?? "uncalibrated (the documented defaults)"
        var text =
            "\(profile): 0 dBFS at 1 kHz = \(Self.number(outputLeftDBSPL)) dB SPL left, \(Self.number(outputRightDBSPL)) dB SPL right, "
            + "microphone \(Self.number(inputDBSPL)) dB SPL"
        if let uncertaintyDB { text += "; levels uncertain by about +-\(Self.number(uncertaintyDB)) dB" }
        return text
    }

    var transducerText: String {
        transducerName
            + (retsplIsStandard
                ? " (standard RETSPL)"
                : biologicalReferenceDBHL == nil
                    ? " (no standard RETSPL and no biological calibration: levels as for TDH-39, uncertain)"
                    : " (no standard RETSPL: 0 dB HL by biological calibration)")
    }

    var transducerName: String {
        switch transducer {
        case .tdh39: "TDH-39 supra-aural"
        case .hda200: "HDA 200 circumaural"
        case .er3a: "ER-3A insert earphones"
        case .consumer: "consumer headphones"
        }
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}

extension ReliabilityFlag {
    /// The flag spelled out, for people.
    var explanation: String {
        switch self {
        case .falseAlarms:
            "false alarms: more than \(Int(HearingTestResult.maximumFalseAlarmRate * 100)) % of the chances to press with nothing playing were answered"
        case .retestDifference:
            "retest difference: the two 1 kHz measurements of an ear differ by more than \(HearingTestResult.maximumRetestDifferenceDB) dB"
        case .undetermined: "undetermined: some frequency found no threshold (answers too inconsistent); retest it"
        case .noResponseAnywhere:
            "no response anywhere: nothing heard at any frequency; check the headphones are on, plugged in and not muted"
        case .incomplete: "incomplete: the test was stopped before every frequency was measured"
        }
    }
}

extension FrequencyResult {
    /// "35 dB HL", "no response at 90", "undetermined".
    var levelText: String {
        switch status {
        case .threshold: thresholdDBHL.map { "\($0) dB HL" } ?? "undetermined"
        case .noResponse: "no response at \(maximumTestedDBHL)"
        case .undetermined: "undetermined"
        }
    }
}
