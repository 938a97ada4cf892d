import Foundation
import RibbitPrescription
import RibbitSettings
import RibbitSignature
import RibbitStore

/// What every prescription passes before it is stored or played, in the CLI and the daemon
/// alike: the text format, then the signature against the wearer's trusted keys and policy.
/// Each process checks a prescription once and carries the `Accepted` value from then on.
public struct Intake: Sendable {
    public let trusted: [PrescriptionSignature.PublicKey]
    public let requireSigned: Bool

    public init(trusted: [PrescriptionSignature.PublicKey], requireSigned: Bool) {
        self.trusted = trusted
        self.requireSigned = requireSigned
    }

    /// The trusted keys in `trusted/*.pub` and `require-signed` from the config.
    public static func load(paths: RibbitPaths, config: DaemonConfig) -> Intake {
        let directory = paths.trustedKeysDirectory
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let keys = files.filter { $0.hasSuffix(".pub") }.sorted().compactMap { file in
            // A .pub that is not a small regular file (a FIFO, /dev/zero, a huge file) is skipped: not trusted.
            (try? BoundedFile.read(directory + "/" + file, maxBytes: BoundedFile.keyOrConfigMaxBytes))
                .flatMap { try? PrescriptionSignature.PublicKey.parse(String(decoding: $0, as: UTF8.self)) }
        }
        return Intake(trusted: keys, requireSigned: config.requireSigned)
    }

    /// A prescription that passed: parsed, its signature judged, the policy met.
    public struct Accepted: Sendable {
        public let prescription: Prescription
        public let verdict: PrescriptionSignature.Verdict
        /// The exact text, as it is stored.
        public let payload: String

        /// Signed by a key trusted now: its output limit may go above the OTC caps.
        public var isTrusted: Bool {
            if case .trusted = verdict { return true }
            return false
        }

        /// A history record for it.
        public func record(source: String) -> PrescriptionStore.Record {
            let signer: String? = if case .trusted(let name) = verdict { name } else { nil }
            return PrescriptionStore.Record(
                name: prescription.name, environment: prescription.environment, audiologist: prescription.audiologist,
                source: source, payload: payload, signature: verdict.storeValue, signer: signer)
        }
    }

    /// Parses and judges what was read from a file or a picture.
    public func check(_ input: PrescriptionInput) throws(IntakeError) -> Accepted {
        try check(input.payload, source: input.path, parsePrefix: input.errorPrefix)
    }

    /// `check`, its error ending as `ribbitd load` and `rx show` say it.
    public func take(_ input: PrescriptionInput) throws(IntakeError) -> Accepted {
        do { return try check(input) } catch { throw IntakeError("\(error.description); the prescription was not used", kind: error.kind) }
    }

    /// Parses and judges a payload; the error is one line ending in what happens next.
    public func check(_ payload: String, source: String) throws(IntakeError) -> Accepted {
        try check(payload, source: source, parsePrefix: "\(source): ")
    }

    private func check(_ payload: String, source: String, parsePrefix: String) throws(IntakeError) -> Accepted {
        let prescription: Prescription
        do {
            prescription = try Prescription.parse(Array(payload.utf8))
        } catch {
            throw IntakeError("\(parsePrefix)\(error)")
        }
        let verdict = PrescriptionSignature.verify(Data(payload.utf8), trusted: trusted)
        switch verdict {
        case .bad(let why):
            throw IntakeError("\(source): bad signature: \(why); refused")
        case .unsigned where requireSigned:
            throw IntakeError("\(source): unsigned, and require-signed is on; ask the audiologist for a signed code")
        case .unknownKey(let keyID) where requireSigned:
            throw IntakeError(
                "\(source): signed with key \(keyID), which is not trusted, and require-signed is on; `ribbitd rx trust KEY.pub` first")
        default:
            return Accepted(prescription: prescription, verdict: verdict, payload: payload)
        }
    }
}

/// Why a prescription was not taken in: one line; `kind` picks the exit code.
public struct IntakeError: Error, CustomStringConvertible {
    public enum Kind: Sendable {
        /// The file cannot be read (exit 66).
        case unreadable
        /// What it holds is not an acceptable prescription, or no such entry (exit 65).
        case invalid
        /// The history cannot take the change (exit 73).
        case storage
    }
    public let description: String
    public let kind: Kind
    public init(_ description: String, kind: Kind = .invalid) {
        self.description = description
        self.kind = kind
    }
}
