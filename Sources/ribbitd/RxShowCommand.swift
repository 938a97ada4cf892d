import ArgumentParser
import Foundation
import RibbitFitting
import RibbitPrescription
import RibbitControl
import RibbitDaemon
import RibbitSignature

struct RxShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Check a prescription and print it with its target gains per ear.",
        discussion: """
            The gains are insertion gains in dB at each audiometric frequency, low-pass included. \
            The signature is checked against your trusted keys (`ribbitd rx trust`): unsigned, signed by NAME \
            (trusted), or signed, unknown key KEYID; a bad signature is refused (exit 65). --json prints the same \
            fields, the verdict as `signature` in the same words.
            """
    )

    @Argument(help: ArgumentHelp("The prescription: .rx text, or a PNG/JPEG of its QR code.", valueName: "RX")) var path: String
    @Flag(help: "Print JSON for machines.") var json = false

    func run() throws {
        let source = try readPrescription(path)
        let rx = source.prescription
        let paths = RibbitPaths()
        let verdict = PrescriptionSignature.verify(
            Data(source.payload.utf8), trusted: Intake.load(paths: paths, config: try loadConfig(paths)).trusted)
        if case .bad(let why) = verdict { throw RibbitError.data("\(path): bad signature: \(why); refused") }
        // The targets do not depend on the rate; 48 kHz only sizes the (unused) engine.
        let fitting = try Fitting(prescription: rx, sampleRate: 48000)
        let report = PrescriptionReport(rx, fitting: fitting, signature: verdict.description)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.text)
        }
    }
}

/// A prescription as `rx show` prints it: fields, and per ear the thresholds and target gains.
struct PrescriptionReport: Encodable {
    struct EarReport: Encodable {
        /// false: the prescription leaves this ear out and it is passed through unchanged.
        var processed: Bool
        /// dB HL by frequency in Hz, as given.
        var thresholdsDBHL: [String: Int]
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
        ears = Dictionary(uniqueKeysWithValues: Ear.allCases.map { ear in
            let gains = Prescription.audiometricFrequencies.map { f -> (String, Double?) in
                let db = fitting.targetGainDB(for: ear, atHz: Double(f))
                return (String(f), db.isFinite ? (db * 10).rounded() / 10 : nil)
            }
            return (ear.rawValue, EarReport(
                processed: rx.targetGains(for: ear) != nil,
                thresholdsDBHL: Dictionary(uniqueKeysWithValues: (rx.thresholds[ear] ?? [:]).map { (String($0.key), $0.value) }),
                targetGainDB: Dictionary(uniqueKeysWithValues: gains)))
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
        for ear in Ear.allCases {
            let report = ears[ear.rawValue]!
            let label = ear == .left ? "left " : "right"
            lines.append(row("\(label) HL (dB)", frequencies.map { report.thresholdsDBHL[String($0)].map(String.init) ?? "-" }))
            if report.processed {
                lines.append(row("\(label) gain (dB)", frequencies.map { f in
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
