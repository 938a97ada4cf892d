import Dispatch
import Foundation
import RibbitFitting
import RibbitImage
import RibbitIntake
import RibbitPrescription
import RibbitQR
import RibbitSettings
import RibbitSignature

/// What the Fitting screen sends: the audiogram per ear (frequency in Hz → dB HL, null for a
/// blank box), the rule and, for a trial or a QR code, the prescription's fields.
struct FittingForm: Decodable {
    var rule: String
    var left: [String: Double?]?
    var right: [String: Double?]?
    var name: String?
    var env: String?
    var audiologist: String?
    var patient: String?
    /// Trial only: minutes.
    var minutes: Int?
    /// QR only: a key's name from /api/fitting/keys and, for a protected key, its passphrase
    /// (used once for this request, never stored).
    var key: String?
    var passphrase: String?

    /// The rules with a formula (explicit gains are the CLI's: `ribbitd rx make --rule explicit`).
    static let rules: [FittingRule] = [.camfit, .nalR, .halfGain, .pogo2]
    /// The audiogram's frequencies on the screen (125 Hz is rarely measured for a fitting).
    static let frequencies = Prescription.audiometricFrequencies.filter { $0 >= 250 }
    /// The sample rate `ribbitd rx show` computes the target gains at.
    static let sampleRate = 48000.0

    /// Why the form cannot make a prescription: one line, 400 (422 for a key that will not open).
    struct Failure: Error {
        var status: Int = 400
        var message: String
    }

    /// The prescription the form describes, checked by the parser every prescription goes
    /// through. `named`: the trial and the QR code need a name and an environment; the
    /// targets alone do not (placeholders, never shown).
    func prescription(named: Bool, date: String? = nil) throws(Failure) -> Prescription {
        guard let rule = FittingRule(rawValue: rule), Self.rules.contains(rule) else {
            throw Failure(message: "rule '\(rule)' is unknown here; use one of \(Self.rules.map(\.rawValue).joined(separator: ", "))")
        }
        var thresholds = [Ear: [Int: Int]]()
        for (ear, values) in [(Ear.left, left), (.right, right)] {
            if let ear = try Self.thresholds(ear, values ?? [:]) { thresholds[ear.0] = ear.1 }
        }
        guard !thresholds.isEmpty else {
            throw Failure(message: "enter the audiogram of at least one ear (500, 1000, 2000 and 4000 Hz at least)")
        }
        var fields = [String: String]()
        for (label, value) in [("name", name), ("environment", env), ("audiologist", audiologist), ("patient", patient)] {
            let text = (value ?? "").trimmingCharacters(in: .whitespaces)
            // A line end would smuggle another key into the prescription's text.
            guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw Failure(message: "the \(label) must be one line of text")
            }
            if !text.isEmpty { fields[label] = text }
        }
        if named {
            guard fields["name"] != nil else { throw Failure(message: "give the prescription a name (the wearer sees it)") }
            guard fields["environment"] != nil else { throw Failure(message: "give the environment it is for: quiet, noisy, music, ...") }
        }
        do {
            return try Prescription.authored(
                name: fields["name"] ?? "fitting", environment: fields["environment"] ?? "quiet", audiologist: fields["audiologist"],
                patient: fields["patient"], date: date, rule: rule, thresholds: thresholds)
        } catch {
            throw Failure(message: "not a valid prescription: \(error.message)")
        }
    }

    /// One ear's thresholds, nil when every box is blank (that ear is not fitted).
    private static func thresholds(_ ear: Ear, _ values: [String: Double?]) throws(Failure) -> (Ear, [Int: Int])? {
        var result = [Int: Int]()
        for (key, value) in values {
            guard let frequency = Int(key), frequencies.contains(frequency) else {
                throw Failure(
                    message:
                        "\(ear.rawValue) ear: '\(key)' is not one of the frequencies \(frequencies.map(String.init).joined(separator: ", ")) Hz"
                )
            }
            guard let value else { continue }
            let range = Prescription.thresholdRange
            guard value.isFinite, value == value.rounded() else {
                throw Failure(
                    message: "\(ear.rawValue) ear, \(frequency) Hz: give whole dB HL from \(range.lowerBound) to \(range.upperBound)")
            }
            guard value >= Double(range.lowerBound) && value <= Double(range.upperBound) else {
                throw Failure(
                    message:
                        "\(ear.rawValue) ear, \(frequency) Hz: \(Int(value)) dB HL is out of range; thresholds are \(range.lowerBound) to \(range.upperBound) dB HL"
                )
            }
            result[frequency] = Int(value)
        }
        guard !result.isEmpty else { return nil }
        let missing = Prescription.requiredFrequencies.filter { result[$0] == nil }
        guard missing.isEmpty else {
            throw Failure(
                message:
                    "\(ear.rawValue) ear: \(missing.map(String.init).joined(separator: ", ")) Hz missing; a fitting needs 500, 1000, 2000 and 4000 Hz (or leave the whole ear blank)"
            )
        }
        return (ear, result)
    }

    /// The target insertion gains per ear at the screen's frequencies, as `ribbitd rx show`
    /// computes them (RibbitFitting, low-pass included, 0.1 dB): null for an ear not fitted,
    /// and at a frequency the low-pass stops.
    struct Targets: Encodable {
        var rule: String
        var version: Int
        var frequenciesHz: [Int]
        var left: [String: Double?]?
        var right: [String: Double?]?
        /// What plays at the same frequencies (the target up to ribbit's maximum gain,
        /// `Fitting.playedGainDB`), per fitted ear ("left", "right").
        var played: [String: [String: Double?]]
        /// The bands that play less than the target (`CompressorFitting.shortfallSummary`), and
        /// the clinical note for a loss amplification cannot serve; null when there is none.
        var shortfall: String?
        var clinicalNote: String?
        /// Per fitted ear, its compressor bands as `ribbitd rx show --json` gives them: the
        /// gain played and the target for speech at 50, 65 and 80 dB SPL, knee, ratio, limit.
        var bands: [String: [PrescriptionReport.BandReport]]

        private enum CodingKeys: String, CodingKey {
            case rule, version, frequenciesHz, left, right, played, shortfall, clinicalNote, bands
        }

        /// An ear not fitted as null, not left out: the page tells "not fitted" from "not sent".
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(rule, forKey: .rule)
            try container.encode(version, forKey: .version)
            try container.encode(frequenciesHz, forKey: .frequenciesHz)
            try container.encode(left, forKey: .left)
            try container.encode(right, forKey: .right)
            try container.encode(played, forKey: .played)
            try container.encode(shortfall, forKey: .shortfall)
            try container.encode(clinicalNote, forKey: .clinicalNote)
            try container.encode(bands, forKey: .bands)
        }
    }

    static func targets(_ rx: Prescription) throws(Failure) -> Targets {
        let fitting: Fitting
        do { fitting = try Fitting(prescription: rx, sampleRate: sampleRate) } catch {
            throw Failure(status: 500, message: "cannot fit it: \(error)")
        }
        func ear(_ ear: Ear, _ gainDB: (Ear, Double) -> Double) -> [String: Double?]? {
            guard rx.targetGains(for: ear) != nil else { return nil }
            return Dictionary(
                uniqueKeysWithValues: frequencies.map { f in
                    let db = gainDB(ear, Double(f))
                    return (String(f), db.isFinite ? (db * 10).rounded() / 10 + 0 : nil)
                })
        }
        let deliveries = CompressorFitting.deliveries(rx, trusted: false)
        let played = Ear.allCases.compactMap { e in ear(e, fitting.playedGainDB).map { (e.rawValue, $0) } }
        // Unsigned, as the screen's fitting is until its QR code is made (and as a trial plays it).
        let report = PrescriptionReport(rx, fitting: fitting, signature: "unsigned", trusted: false)
        return Targets(
            rule: rx.rule.rawValue, version: rx.version, frequenciesHz: frequencies, left: ear(.left, fitting.targetGainDB),
            right: ear(.right, fitting.targetGainDB), played: Dictionary(uniqueKeysWithValues: played),
            shortfall: CompressorFitting.shortfallSummary(rx), clinicalNote: ClinicalNote.text(rx, deliveries: deliveries),
            bands: report.ears.compactMapValues(\.bands))
    }
}

/// The audiologist's signing keys: the NAME.key files `ribbitd rx keygen -d DIR` writes, in
/// `$XDG_CONFIG_HOME/ribbit/keys/`. Only names leave this process, never a key's bytes; signing
/// runs on a queue of its own (scrypt takes a tenth of a second, QR decoding more).
final class SigningKeys: Sendable {
    let directory: String
    private let queue = DispatchQueue(label: "ribbit-web.signing")

    init(directory: String) { self.directory = directory }

    struct Listed: Encodable {
        var name: String
        /// Protected by a passphrase: the page asks for it.
        var protected: Bool
    }

    struct Listing: Encodable {
        var directory: String
        var keys: [Listed]
    }

    func list() -> Listing {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let keys = files.filter { $0.hasSuffix(".key") && !$0.hasPrefix(".") }.sorted().compactMap { file -> Listed? in
            guard let text = try? BoundedFile.read(directory + "/" + file, maxBytes: BoundedFile.keyOrConfigMaxBytes) else { return nil }
            return Listed(
                name: String(file.dropLast(4)),
                protected: PrescriptionSignature.PrivateKey.isEncrypted(String(decoding: text, as: UTF8.self)))
        }
        return Listing(directory: directory, keys: keys)
    }

    /// What "Make the QR code" answers: the signed text (the .rx download) and its QR code,
    /// the bytes `ribbitd export` writes for it, read back before it is handed out.
    struct Made: Encodable {
        var fileName: String
        var rx: String
        var png: String
        var signedBy: String
        var keyID: String
        var payloadBytes: Int
    }

    func make(_ rx: Prescription, keyName: String, passphrase: String?) async -> Result<Made, FittingForm.Failure> {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: Result { () throws(FittingForm.Failure) in try makeNow(rx, keyName, passphrase) })
            }
        }
    }

    private func makeNow(_ rx: Prescription, _ keyName: String, _ passphrase: String?) throws(FittingForm.Failure) -> Made {
        // Only a listed name: never a path from the browser.
        guard list().keys.contains(where: { $0.name == keyName }) else {
            throw FittingForm.Failure(message: "no key '\(keyName)' in \(directory); `ribbitd rx keygen NAME -d \(directory)` makes one")
        }
        let path = directory + "/" + keyName + ".key"
        let text: String
        do { text = String(decoding: try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes), as: UTF8.self) } catch {
            throw FittingForm.Failure(status: 500, message: "\(error); nothing made")
        }
        let key: PrescriptionSignature.PrivateKey
        do { key = try .open(fileText: text, passphrase: { passphrase }) } catch let problem as PrescriptionSignature.PrivateKey.FileProblem
        {
            switch problem {
            case .needsPassphrase:
                throw FittingForm.Failure(status: 422, message: "the key '\(keyName)' is protected: type its passphrase; nothing made")
            case .locked(let error): throw FittingForm.Failure(status: 422, message: "the key '\(keyName)': \(error); nothing made")
            case .unreadable(let error): throw FittingForm.Failure(status: 500, message: "\(path): \(error); nothing made")
            }
        } catch {
            throw FittingForm.Failure(status: 500, message: "\(path): \(error); nothing made")
        }
        let payload: Data
        let png: Data
        do {
            payload = try key.sign(Data(rx.text.utf8))
            // As `ribbitd rx make` does: what is handed over decodes to exactly what was made.
            png = try QRCode.checkedPNG(payload).png
        } catch {
            throw FittingForm.Failure(status: 500, message: "\(error); nothing made")
        }
        let stem = rx.name.lowercased().map { ($0.isASCII && ($0.isLetter || $0.isNumber)) ? $0 : "-" }
        return Made(
            fileName: "ribbit-" + String(stem).split(separator: "-").joined(separator: "-").prefix(40),
            rx: String(decoding: payload, as: UTF8.self),
            png: png.base64EncodedString(), signedBy: key.name, keyID: key.publicKey.keyID, payloadBytes: payload.count)
    }
}
