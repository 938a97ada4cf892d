import Foundation
import RibbitFitting
import RibbitPrescription

/// A prescription as `rx show` prints it: fields, and per ear the thresholds and target gains.
struct PrescriptionReport: Encodable {
    struct EarReport: Encodable {
        /// false: the prescription leaves this ear out and it is passed through unchanged.
        var processed: Bool
        /// dB HL by frequency in Hz, as given.
        var thresholdsDBHL: [String: Int]
        /// The frequencies whose threshold is a no response at that level (`8000=90nr`), ascending.
        var noResponseHz: [Int]
        /// Target insertion gain in dB by frequency in Hz; null where the low-pass stops all sound.
        var targetGainDB: [String: Double?]
    }

    var name: String
    var environment: String
    var audiologist: String?
    var patient: String?
    var date: String?
    var note: String?
    var rule: String
    var lowpassHz: Int?
    var maxOutputDBFS: Double
    /// The signature's verdict in words, checked by the caller (the file's against the trusted
    /// keys, or the history's as recorded at load): "unsigned", "signed by NAME (trusted)",
    /// "signed, unknown key KEYID".
    var signature: String
    var ears: [String: EarReport]

    init(_ rx: Prescription, fitting: Fitting, signature: String) {
        name = rx.name
        environment = rx.environment
        audiologist = rx.audiologist
        patient = rx.patient
        date = rx.date
        note = rx.note
        rule = rx.rule.rawValue
        lowpassHz = rx.lowpassHz
        maxOutputDBFS = rx.maxOutputDBFS
        self.signature = signature
        ears = Dictionary(
            uniqueKeysWithValues: Ear.allCases.map { ear in
                let gains = Prescription.audiometricFrequencies.map { f -> (String, Double?) in
                    let db = fitting.targetGainDB(for: ear, atHz: Double(f))
                    return (String(f), db.isFinite ? (db * 10).rounded() / 10 : nil)
                }
                return (
                    ear.rawValue,
                    EarReport(
                        processed: rx.targetGains(for: ear) != nil,
                        thresholdsDBHL: Dictionary(uniqueKeysWithValues: (rx.thresholds[ear] ?? [:]).map { (String($0.key), $0.value) }),
                        noResponseHz: (rx.noResponse[ear] ?? []).sorted(),
                        targetGainDB: Dictionary(uniqueKeysWithValues: gains))
                )
            })
    }

    var text: String {
        let ruleNames = ["nal-r": "NAL-R", "half-gain": "half-gain", "pogo2": "POGO II", "explicit": "explicit gains"]
        var lines = [name]
        func field(_ label: String, _ value: String?) {
            if let value { lines.append("  " + label.padding(toLength: 13, withPad: " ", startingAt: 0) + value) }
        }
        field("environment", environment)
        field("audiologist", audiologist)
        field("patient", patient)
        field("date", date)
        field("rule", ruleNames[rule] ?? rule)
        field("low-pass", lowpassHz.map { "\($0) Hz, nothing above \(Int(Double($0) * 1.25)) Hz" } ?? "none")
        field("max output", "\(Prescription.number(maxOutputDBFS)) dBFS")
        field("signature", signature)
        field("note", note)
        lines.append("")
        let frequencies = Prescription.audiometricFrequencies
        func row(_ label: String, _ cells: [String]) -> String {
            label.padding(toLength: 18, withPad: " ", startingAt: 0) + cells.map { $0.leftPadded(to: 6) }.joined()
        }
        lines.append(row("frequency (Hz)", frequencies.map(String.init)))
        // The right ear first, as audiograms, fitting software and audiometer print-outs give it.
        for ear in [Ear.right, .left] {
            let report = ears[ear.rawValue]!
            let label = ear == .left ? "left " : "right"
            lines.append(
                row(
                    "\(label) HL (dB)",
                    frequencies.map { f in
                        report.thresholdsDBHL[String(f)].map { "\($0)" + (report.noResponseHz.contains(f) ? "nr" : "") } ?? "-"
                    }))
            if report.processed {
                lines.append(
                    row(
                        "\(label) gain (dB)",
                        frequencies.map { f in
                            (report.targetGainDB[String(f)] ?? nil).map { String(format: "%.1f", $0) } ?? "off"
                        }))
            } else {
                lines.append("\(label) gain (dB)   not prescribed: this ear is passed through unchanged")
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
