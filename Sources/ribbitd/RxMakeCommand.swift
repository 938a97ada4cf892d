import ArgumentParser
import Foundation
import RibbitImage
import RibbitPrescription
import RibbitQR
import RibbitSignature
import RibbitSystem

struct RxMakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make",
        abstract: "Make a prescription's QR code (PNG, or text for the terminal) or its signed text: the audiologist's tool.",
        discussion: """
            From a .rx file, or from the options (--name, --env, --rule and --left and/or --right are \
            needed; thresholds as FREQ=dBHL pairs separated by commas). The code holds the prescription's \
            canonical text (docs/prescription-format.md); the PNG is read back before this command \
            succeeds, so what you hand over decodes to exactly what you made. -o NAME.rx writes that text \
            itself (signed with --sign), for e-mail or `ribbitd load`. A key protected by a passphrase \
            asks for it on the terminal; scripts give --passphrase-file FILE (its first line).
            """)

    @Argument(
        help: ArgumentHelp("A prescription file to encode (or give the options below).", valueName: "RX"), completion: .prescriptionText)
    var source: String?

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("Write the QR code (FILE.png) or the prescription's text (FILE.rx).", valueName: "FILE"),
        completion: .exportFile)
    var output: String?

    @Flag(help: "Print the code to the terminal (Unicode blocks, black on white; terminal colours with NO_COLOR or TERM=dumb).")
    var text = false

    @Option(
        help: ArgumentHelp("Sign it with this private key (from `ribbitd rx keygen`).", valueName: "KEY"),
        completion: .file(extensions: ["key"]))
    var sign: String?

    @Option(
        help: ArgumentHelp("Read the key's passphrase from the first line of FILE (- for standard input).", valueName: "FILE"),
        completion: .file())
    var passphraseFile: String?

    @Option(help: "Pixels per module in the PNG.")
    var scale = 8

    @Option(help: "Error correction: M (15 %), Q (25 %) or H (30 % of the code may be damaged).")
    var correction: QRCode.Correction = .m

    @Option var name: String?
    @Option(help: "The listening environment: quiet, noisy, music, ...") var env: String?
    @Option var audiologist: String?
    @Option var patient: String?
    @Option(help: "YYYY-MM-DD.") var date: String?
    @Option(help: "camfit (compressive, the default), nal-r, half-gain, pogo2 or explicit (the default with --gain-*/--g50-*/--g80-*).")
    var rule: String?
    @Option(help: ArgumentHelp("Left thresholds, dB HL.", valueName: "FREQ=DB,...")) var left: String?
    @Option(help: ArgumentHelp("Right thresholds, dB HL.", valueName: "FREQ=DB,...")) var right: String?
    @Option(help: ArgumentHelp("Explicit left gains, dB (rule explicit).", valueName: "FREQ=DB,...")) var gainLeft: String?
    @Option(help: ArgumentHelp("Explicit right gains, dB (rule explicit).", valueName: "FREQ=DB,...")) var gainRight: String?
    @Option(help: ArgumentHelp("Left gains for 50 dB SPL speech, dB (rule explicit).", valueName: "FREQ=DB,...")) var g50Left: String?
    @Option(help: ArgumentHelp("Left gains for 80 dB SPL speech, dB (rule explicit).", valueName: "FREQ=DB,...")) var g80Left: String?
    @Option(help: ArgumentHelp("Right gains for 50 dB SPL speech, dB (rule explicit).", valueName: "FREQ=DB,...")) var g50Right: String?
    @Option(help: ArgumentHelp("Right gains for 80 dB SPL speech, dB (rule explicit).", valueName: "FREQ=DB,...")) var g80Right: String?
    @Option(help: ArgumentHelp("Left uncomfortable loudness levels, dB HL.", valueName: "FREQ=DB,...")) var uclLeft: String?
    @Option(help: ArgumentHelp("Right uncomfortable loudness levels, dB HL.", valueName: "FREQ=DB,...")) var uclRight: String?
    @Option(
        help: ArgumentHelp(
            "The headphones the UCLs were measured with: tdh39, hda200, er3a or consumer (default).", valueName: "HEADPHONES"))
    var uclTransducer: String?
    @Option(help: ArgumentHelp("Compressor attack time in ms.", valueName: "MS")) var attack: String?
    @Option(help: ArgumentHelp("Compressor release time in ms.", valueName: "MS")) var release: String?
    @Option(help: ArgumentHelp("off, on or the expansion knee in dB SPL.", valueName: "KNEE")) var expansion: String?
    @Option(help: ArgumentHelp("Output limit per band in dB SPL.", valueName: "DBSPL")) var limit: String?
    @Option(help: ArgumentHelp("How far the wearer may turn the volume up or down (0-20 dB; default 10).", valueName: "DB"))
    var volumeRange: String?
    @Option(help: ArgumentHelp("Low-pass corner in Hz, or none.", valueName: "HZ")) var lowpass: String?
    @Option(help: ArgumentHelp("Output ceiling in dBFS.", valueName: "DBFS")) var maxOutput: String?
    @Option var note: String?

    func validate() throws {
        guard output != nil || text else { throw ValidationError("say where the code goes: -o FILE.png, -o FILE.rx and/or --text") }
        guard scale >= 1 && scale <= 64 else { throw ValidationError("--scale must be from 1 to 64 pixels per module") }
        let fields =
            [name, env, audiologist, patient, date, rule, left, right, gainLeft, gainRight, lowpass, maxOutput, note] + version2Fields
        if source != nil && fields.contains(where: { $0 != nil }) {
            throw ValidationError("give a prescription file or the options, not both")
        }
        if source == nil && (name == nil || env == nil) {
            throw ValidationError("without a prescription file, --name and --env are needed (and --left and/or --right)")
        }
    }

    /// What -o writes, by the file's extension.
    enum OutputKind { case png, text }

    func run() throws {
        // Before any work: an unknown extension would once get a PNG under its name.
        let kind = try output.map { path throws(RibbitError) in
            switch (path as NSString).pathExtension.lowercased() {
            case "png": OutputKind.png
            case "rx": OutputKind.text
            default: throw .usage("\(path): -o writes a QR code (.png) or the prescription's text (.rx); name it so; nothing written")
            }
        }
        if passphraseFile != nil && sign == nil { throw RibbitError.usage("--passphrase-file is for the key given with --sign") }
        let prescription = try source.map { try loadPrescription($0) } ?? fromOptions()
        var unsigned = prescription
        unsigned.signature = nil
        var payload = Data(unsigned.text.utf8)
        if let sign {
            let key = try Passphrase.privateKey(sign, passphraseFile: passphraseFile)
            do { payload = try key.sign(payload) } catch { throw RibbitError.data("\(sign): \(error)") }
        }
        if let output, kind == .text {
            try Self.writeText(payload, to: output)
            print("wrote \(output): the prescription's text, \(sign == nil ? "unsigned" : "signed"), \(payload.count) bytes")
            guard text else { return }
        }
        if let output, kind == .png {
            let code = try Self.writeChecked(payload, correction: correction, scale: scale, to: output)
            print("wrote \(output): \(code.size) x \(code.size) modules, correction \(correction.rawValue), \(payload.count) bytes")
        }
        guard text else { return }
        let code: QRCode
        do { code = try QRCode(payload, correction: correction) } catch { throw RibbitError.data(error.description) }
        Swift.print(TerminalStyle.colorAllowed ? code.terminalText : code.plainTerminalText)  // colours on purpose
    }

    /// The bytes next to PATH, then renamed over it: never half a prescription (or half its
    /// code) under its name.
    static func writeText(_ payload: Data, to path: String) throws(RibbitError) {
        do { try AtomicFile.write([UInt8](payload), to: path) } catch { throw .cannotCreate(error.description) }
    }

    /// The options only format version 2 knows.
    private var version2Fields: [String?] {
        [g50Left, g80Left, g50Right, g80Right, uclLeft, uclRight, uclTransducer, attack, release, expansion, limit, volumeRange]
    }

    /// The options as prescription text, checked by the same parser as every prescription.
    /// Version 2 when a version-2 option or rule is given, else version 1 (as before).
    private func fromOptions() throws(RibbitError) -> Prescription {
        // New prescriptions compress: camfit unless another rule (or explicit gains) is asked for.
        let explicitGains = [gainLeft, gainRight, g50Left, g80Left, g50Right, g80Right].contains { $0 != nil }
        let rule = self.rule ?? (explicitGains ? FittingRule.explicit.rawValue : FittingRule.camfit.rawValue)
        let version2 =
            version2Fields.contains { $0 != nil } || FittingRule(rawValue: rule).map { $0.formatVersion >= 2 } == true
        var lines = [version2 ? "RIBBIT-RX 2" : Prescription.header]
        func add(_ key: String, _ value: String?, pairs: Bool = false) {
            guard let value else { return }
            lines.append("\(key): " + (pairs ? value.replacingOccurrences(of: ",", with: " ") : value))
        }
        add("name", name)
        add("env", env)
        add("audiologist", audiologist)
        add("patient", patient)
        add("date", date)
        add("rule", rule)
        add("left", left, pairs: true)
        add("right", right, pairs: true)
        add("gain-left", gainLeft, pairs: true)
        add("gain-right", gainRight, pairs: true)
        add("ucl-left", uclLeft, pairs: true)
        add("ucl-right", uclRight, pairs: true)
        add("ucl-transducer", uclTransducer)
        add("g50-left", g50Left, pairs: true)
        add("g80-left", g80Left, pairs: true)
        add("g50-right", g50Right, pairs: true)
        add("g80-right", g80Right, pairs: true)
        add("attack", attack)
        add("release", release)
        add("expansion", expansion)
        add("limit", limit)
        add("volume-range", volumeRange)
        add("lowpass", lowpass)
        add("max-output", maxOutput)
        add("note", note)
        do {
            return try Prescription.parse(Array((lines.joined(separator: "\n") + "\n").utf8))
        } catch {
            throw .usage("the options do not make a valid prescription: \(error)")
        }
    }

    /// The code as a PNG (read back before it is written) next to PATH, then renamed over it
    /// (also `audiogram fit --qr`).
    @discardableResult
    static func writeChecked(_ payload: Data, correction: QRCode.Correction = .m, scale: Int = 8, to path: String) throws(RibbitError)
        -> QRCode
    {
        let made: (code: QRCode, png: Data)
        do { made = try QRCode.checkedPNG(payload, correction: correction, scale: scale) } catch {
            throw .data("\(path): \(error.description)")
        }
        try writeText(made.png, to: path)
        return made.code
    }
}

extension QRCode.Correction: ExpressibleByArgument {}
