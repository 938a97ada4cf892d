import Foundation
import RibbitAudiometry
import RibbitPrescription

/// Local time to the minute, as the wearer's clock shows it (TZ): every date ribbit prints for
/// people (`ribbitd list`, the audiogram commands, the report). The JSON keeps UTC.
public enum LocalDate {
    public static let minutes: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        formatter.timeZone = TimeZone.current
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter
    }()
}

extension HearingTestRecord {
    /// The ears measured, right first ("right, left").
    public var earsText: String {
        let ears = Ear.plotOrder.filter { ear in result.frequencies.contains { $0.ear == ear } }
        return ears.isEmpty ? "none" : ears.map(\.rawValue).joined(separator: ", ")
    }

    public var flagsText: String { result.flags.isEmpty ? "-" : result.flags.map(\.rawValue).joined(separator: ", ") }

    /// The date as the wearer's clock shows it (the record keeps UTC).
    public var localDate: String {
        let parser = ISO8601DateFormatter()
        guard let date = parser.date(from: self.date) else { return self.date }
        return LocalDate.minutes.string(from: date)
    }

    /// The headphones and how the levels were set, in one line.
    public var calibrationText: String {
        let profile = calibrationProfile.map { "profile \($0)" } ?? "uncalibrated (the documented defaults)"
        var text =
            "\(profile): 0 dBFS at 1 kHz = \(Self.number(outputLeftDBSPL)) dB SPL left, \(Self.number(outputRightDBSPL)) dB SPL right, "
            + "microphone \(Self.number(inputDBSPL)) dB SPL"
        if let uncertaintyDB { text += "; levels uncertain by about +-\(Self.number(uncertaintyDB)) dB" }
        return text
    }

    public var transducerText: String {
        transducerName
            + (retsplIsStandard
                ? " (standard RETSPL)"
                : biologicalReferenceDBHL == nil
                    ? " (no standard RETSPL and no biological calibration: levels as for TDH-39, uncertain)"
                    : " (no standard RETSPL: 0 dB HL by biological calibration)")
    }

    public var transducerName: String {
        switch transducer {
        case .tdh39: "TDH-39 supra-aural"
        case .hda200: "HDA 200 circumaural"
        case .er3a: "ER-3A insert earphones"
        case .consumer: "consumer headphones"
        }
    }

    public static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}

extension HearingTestResult {
    /// The indicators and flags, one line each (`ribbitd audiogram show` and the report's list).
    public var reliabilityLines: [String] {
        var lines: [String] = []
        let chances = catchTrials + log.count
        lines.append(
            "false alarms: "
                + (falseAlarmRate.map {
                    "\(String(format: "%.0f", $0 * 100)) % (\(catchTrialFalseAlarms + strayPresses) of \(chances) chances: "
                        + "\(catchTrialFalseAlarms) of \(catchTrials) catch trials, \(strayPresses) presses during waits)"
                } ?? "no chances measured"))
        lines.append(
            "1 kHz retest: "
                + (retestDifferences.isEmpty
                    ? "no pair of numbers to compare"
                    : retestDifferences.map { "\($0.ear.rawValue) \($0.differenceDB > 0 ? "+" : "")\($0.differenceDB) dB" }.joined(
                        separator: ", "))
                + " (more than \(HearingTestResult.maximumRetestDifferenceDB) dB is flagged; the better is kept)")
        if !roomNoiseChecked {
            lines.append("room noise: not checked (no microphone signal): noise may have raised the thresholds")
        }
        lines.append("mean response time: " + (meanResponseTimeMs.map { String(format: "%.0f ms", $0) } ?? "no answers"))
        if flags.isEmpty {
            lines.append("flags: none")
        } else {
            lines.append("flags: \(flags.count)\(isUnreliable ? " (UNRELIABLE: the thresholds may be wrong)" : "")")
            lines += flags.map { "- \($0.explanation)" }
        }
        return lines
    }
}

extension ReliabilityFlag {
    /// The flag spelled out, for people.
    public var explanation: String {
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
