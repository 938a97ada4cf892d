import Foundation

/// Ed25519 signatures on prescriptions.
///
/// A signed prescription ends with one line `sig: ed25519:KEYID:BASE64`, the signature over
/// every byte before that line. KEYID is the first 8 bytes of SHA-256 of the public key, in hex.
/// Key files are one line: `ribbit-ed25519-public NAME BASE64` (or `-private`).
public enum PrescriptionSignature {
    public enum Verdict: Equatable, Sendable {
        case unsigned
        case trusted(signer: String)
        case unknownKey(keyID: String)
        /// A signature that does not verify, or a malformed sig line: always refused.
        case bad(String)

        /// How `show` and `load` say it.
        public var description: String {
            switch self {
            case .unsigned: "unsigned"
            case .trusted(let signer): "signed by \(signer) (trusted)"
            case .unknownKey(let keyID): "signed, unknown key \(keyID)"
            case .bad(let why): "bad signature: \(why)"
            }
        }

        /// The store's short form.
        public var storeValue: String {
            switch self {
            case .unsigned: "unsigned"
            case .trusted: "trusted"
            case .unknownKey: "unknown key"
            case .bad: "bad"
            }
        }
    }

    public static let linePrefix = "sig: ed25519:"

    public struct PublicKey: Sendable, Equatable {
        public let name: String
        public let raw: Data
        public var keyID: String { PrescriptionSignature.keyID(raw) }

        public init(name: String, raw: Data) {
            self.name = name
            self.raw = raw
        }

        public var fileText: String { "ribbit-ed25519-public \(name) \(raw.base64EncodedString())\n" }

        public static func parse(_ text: String) throws(SignatureError) -> PublicKey {
            let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
            guard parts.count >= 3, parts[0] == "ribbit-ed25519-public", let raw = Data(base64Encoded: String(parts.last!)),
                raw.count == Sodium.publicKeyBytes
            else { throw SignatureError("not a ribbit public key (expected 'ribbit-ed25519-public NAME BASE64')") }
            let name = parts[1..<(parts.count - 1)].joined(separator: " ")
            // The name is shown on terminals ("signed by NAME"): no escape sequences, no reordering.
            if let control = name.unicodeScalars.first(where: {
                $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value)
                    || (0x2066...0x2069).contains($0.value)
            }) {
                throw SignatureError(
                    "the key's name holds the control character U+\(String(control.value, radix: 16, uppercase: true)); a name is plain text: ask for the key again"
                )
            }
            return PublicKey(name: name, raw: raw)
        }
    }

    public struct PrivateKey {
        public let name: String
        /// The 32-byte Ed25519 seed (RFC 8032's private key).
        let seed: [UInt8]

        public static func generate(name: String) -> PrivateKey { PrivateKey(name: name, seed: Sodium.random(count: Sodium.seedBytes)) }

        public var publicKey: PublicKey { PublicKey(name: name, raw: Data(Sodium.publicKey(seed: seed))) }
        public var fileText: String { "ribbit-ed25519-private \(name) \(Data(seed).base64EncodedString())\n" }

        public static func parse(_ text: String) throws(SignatureError) -> PrivateKey {
            let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
            guard parts.count >= 3, parts[0] == "ribbit-ed25519-private", let raw = Data(base64Encoded: String(parts.last!)),
                raw.count == Sodium.seedBytes
            else { throw SignatureError("not a ribbit private key (expected 'ribbit-ed25519-private NAME BASE64')") }
            return PrivateKey(name: parts[1..<(parts.count - 1)].joined(separator: " "), seed: Array(raw))
        }

        /// The payload with its signature line appended. The payload must end with a newline
        /// and carry no signature yet.
        public func sign(_ payload: Data) throws(SignatureError) -> Data {
            guard payload.last == 0x0A else { throw SignatureError("the prescription must end with a newline to be signed") }
            guard split(payload) == nil else { throw SignatureError("the prescription is signed already") }
            let signature = Data(Sodium.sign(payload, seed: seed))
            return payload + Data("\(linePrefix)\(publicKey.keyID):\(signature.base64EncodedString())\n".utf8)
        }
    }

    public static func keyID(_ raw: Data) -> String {
        Sodium.sha256(raw).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The signed bytes and the sig line's value, when the payload's last line is a sig line.
    static func split(_ payload: Data) -> (signed: Data, keyID: String, signature: String)? {
        var body = payload
        if body.last == 0x0A { body.removeLast() }
        let lineStart = body.lastIndex(of: 0x0A).map { $0 + 1 } ?? body.startIndex
        let line = String(decoding: body[lineStart...], as: UTF8.self)
        guard line.hasPrefix("sig:") else { return nil }
        let value = line.dropFirst("sig:".count).trimmingCharacters(in: .whitespaces)
        let parts = value.split(separator: ":", maxSplits: 2)
        guard parts.count == 3, parts[0] == "ed25519" else { return (payload[..<lineStart], "", "") }
        return (payload[..<lineStart], String(parts[1]), String(parts[2]))
    }

    /// Judges a payload against the trusted keys.
    public static func verify(_ payload: Data, trusted: [PublicKey]) -> Verdict {
        guard let (signed, keyID, signature) = split(payload) else {
            // A sig line anywhere but last would not cover what follows it.
            let text = String(decoding: payload, as: UTF8.self)
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("sig:") }) {
                return .bad("the sig line must be the last line")
            }
            return .unsigned
        }
        // The form first, whatever the key: a malformed line is refused, never "unknown key".
        guard keyID.utf8.count == 16, keyID.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            let signatureBytes = Data(base64Encoded: signature), signatureBytes.count == 64
        else {
            return .bad("the sig line must read 'sig: ed25519:KEYID:BASE64', with a key id of 16 hex digits and a 64-byte signature")
        }
        guard let key = trusted.first(where: { $0.keyID == keyID }) else { return .unknownKey(keyID: keyID) }
        guard Sodium.isValid(signature: Array(signatureBytes), for: signed, publicKey: Array(key.raw)) else {
            return .bad("it does not match the prescription (changed or damaged after signing)")
        }
        return .trusted(signer: key.name)
    }
}

public struct SignatureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
