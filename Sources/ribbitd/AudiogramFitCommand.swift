import ArgumentParser
import Foundation
import RibbitAudiogramReport
import RibbitAudiometry
import RibbitFitting
import RibbitPrescription
import RibbitQR

struct AudiogramFitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fit",
        abstract: "Propose a prescription from a stored hearing test; write it, its QR code, or try it.",
        discussion: """
            Named "self-test DATE", its note saying it is self-measured; unsigned. A no response is \
            fitted at the level tested (the real threshold is higher); undetermined and untested \
            frequencies are left out. An unreliable test (false alarms, a 1 kHz retest difference, \
            nothing heard) is refused unless --force, and so is one with thresholds the other ear may have \
            heard (unmasked). A gain above ribbit's maximum of +50 dB plays at \
            +50 dB, and the shortfall is said, as `rx show` says it. Without -o, --qr or --trial the text is printed. \
            --trial applies it through the daemon as `ribbitd load --trial` does.
            """)

    @Argument(help: ArgumentHelp("The test's id (`ribbitd audiogram list`).", valueName: "ID")) var id: Int64
    @Option(help: "The fitting rule: camfit (compressive, the default), nal-r, half-gain or pogo2.") var rule = "camfit"
    @Option(help: "The listening environment it is for.") var env = "quiet"
    @Option(
        name: .shortAndLong, help: ArgumentHelp("Write the prescription's text (FILE.rx).", valueName: "FILE.rx"),
        completion: .file(extensions: ["rx"]))
    var output: String?
    @Option(help: ArgumentHelp("Write its QR code (FILE.png).", valueName: "FILE.png"), completion: .file(extensions: ["png"]))
    var qr: String?
    @Option(help: ArgumentHelp("Apply it as a trial for this long (e.g. 15m), through the running daemon.", valueName: "DURATION"))
    var trial: String?
    @Flag(help: "Fit an unreliable test anyway.") var force = false

    func run() throws {
        guard let rule = FittingRule(rawValue: rule), rule != .explicit else {
            throw RibbitError.usage("--rule \(rule): use camfit, nal-r, half-gain or pogo2")
        }
        if let output, (output as NSString).pathExtension.lowercased() != "rx" {
            throw RibbitError.usage("\(output): -o writes the prescription's text; name it FILE.rx; nothing written")
        }
        if let qr, (qr as NSString).pathExtension.lowercased() != "png" {
            throw RibbitError.usage("\(qr): --qr writes a PNG; name it FILE.png; nothing written")
        }
        if let trial { _ = try parseDuration(trial) }  // a bad duration before anything is written
        let record = try findHearingTest(id)
        let fitting: ProposedFitting
        do { fitting = try record.proposedFitting(rule: rule, environment: env, force: force) } catch {
            throw RibbitError.data(error.description)
        }
        let prescription = fitting.prescription
        let payload = Data(prescription.text.utf8)

        print("proposed \"\(prescription.name)\" (\(prescription.environment)), rule \(rule.rawValue), from hearing test \(id), unsigned")
        if record.result.isUnreliable || record.result.flags.contains(.noResponseAnywhere) {
            print("warning: the test is flagged (\(record.flagsText)); fitted anyway (--force)")
        }
        // See a doctor first; unmasked thresholds fitted only with --force.
        for line in record.findings.lines { print("warning: " + line) }
        print(HearingTestRecord.disclaimer)
        for line in Self.notes(fitting) { print(line) }

        if let output {
            try RxMakeCommand.writeText(payload, to: output)
            print("wrote \(output): the prescription's text, unsigned, \(payload.count) bytes")
        }
        if let qr {
            let code = try RxMakeCommand.writeChecked(payload, to: qr)
            print("wrote \(qr): \(code.size) x \(code.size) modules, \(payload.count) bytes")
        }
        if let trial {
            try loadAsTrial(payload, name: prescription.name, trial: trial)
        } else if output == nil && qr == nil {
            print("")
            print(prescription.text, terminator: "")
        }
    }

    /// What was done to the thresholds, one line per kind.
    static func notes(_ fitting: ProposedFitting) -> [String] {
        func list(_ points: [ProposedFitting.Point], level: Bool) -> String {
            points.map { "\($0.ear.rawValue) \($0.frequencyHz) Hz" + (level ? " (\($0.dBHL ?? 0) dB HL)" : "") }.joined(separator: ", ")
        }
        var lines: [String] = []
        if !fitting.noResponseAt.isEmpty {
            lines.append(
                "no response, fitted at the level tested though the real threshold is higher: \(list(fitting.noResponseAt, level: true))")
        }
        if !fitting.undetermined.isEmpty { lines.append("undetermined, left out: \(list(fitting.undetermined, level: false))") }
        let untested = fitting.untested.filter { point in !fitting.earsLeftOut.contains { $0.ear == point.ear } }
        if !untested.isEmpty { lines.append("not tested, left out: \(list(untested, level: false))") }
        let rx = fitting.prescription
        if let short = CompressorFitting.shortfallSummary(rx) { lines.append("short of target: \(short)") }
        let deliveries = CompressorFitting.deliveries(rx, trusted: false)
        if let note = ClinicalNote.text(rx, deliveries: deliveries) { lines.append("note: \(note)") }
        for (ear, missing) in fitting.earsLeftOut {
            lines.append(
                "the \(ear.rawValue) ear is left out (not fitted): it has no level at \(missing.map(String.init).joined(separator: ", ")) Hz, which every prescription needs"
            )
        }
        return lines
    }

    /// Through `ribbitd load --trial`'s own code: the file written (-o), or a private copy.
    private func loadAsTrial(_ payload: Data, name: String, trial: String) throws {
        var path = output
        var directory: String?
        if path == nil {
            var template = Array((NSTemporaryDirectory() + "/ribbit-fit-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                throw RibbitError.cannotCreate("cannot make a temporary directory (\(String(cString: strerror(errno))))")
            }
            directory = String(cString: made)
            path = directory! + "/\(name.replacingOccurrences(of: " ", with: "-")).rx"
            try RxMakeCommand.writeText(payload, to: path!)
        }
        defer { if let directory { try? FileManager.default.removeItem(atPath: directory) } }
        let load = try LoadCommand.parse([path!, "--trial", trial])
        try load.run()
    }
}
