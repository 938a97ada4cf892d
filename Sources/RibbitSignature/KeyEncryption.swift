import Foundation

/// A private key protected by a passphrase, as minisign and ssh-keygen protect theirs.
///
/// The file is one line: `ribbit-ed25519-private-encrypted NAME scrypt:LOGN:R:P:SALT BOX`, where
/// the key for ChaCha20-Poly1305 comes from the passphrase by scrypt (2^LOGN rounds, block size
/// R, parallelism P, a random 16-byte salt) and BOX is nonce, ciphertext and tag in base64. The
/// line up to BOX is the authenticated data, so the name and the KDF settings cannot be changed
/// either. scrypt, not HKDF: a passphrase is guessable, so each guess must cost memory and time
/// (2^15 x 8 x 128 bytes = 32 MiB and about 0.1 s here).
extension PrescriptionSignature.PrivateKey {
    public static let encryptedTag = "ribbit-ed25519-private-encrypted"

    /// scrypt's cost: 2^15 rounds, block size 8, parallelism 1 (RFC 7914's interactive setting).
    static let scryptLogRounds = 15
    /// A file asking for more would take over a GiB of memory: refused, not tried.
    static let maxScryptLogRounds = 20
    /// scrypt takes 128 x R x 2^LOGN bytes; libsodium would try any amount.
    static let maxScryptMemory = 1 << 31

    /// Whether a key file's text is a passphrase-protected key.
    public static func isEncrypted(_ text: String) -> Bool {
        text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix(encryptedTag + " ")
    }

    /// Why a key file's text did not give a key (`open(fileText:passphrase:)`).
    public enum FileProblem: Error {
        /// The key is protected and no passphrase was given.
        case needsPassphrase
        /// A protected key that did not open: a wrong passphrase, or a damaged file.
        case locked(SignatureError)
        /// A plain key file that is not a key.
        case unreadable(SignatureError)
    }

    /// A key file's key, the one way the CLI and the web app open one: a plain key as it is, a
    /// protected one with the passphrase `passphrase` gives (called only for a protected key; nil
    /// or empty: none). Throws a `FileProblem`, or what `passphrase` threw.
    public static func open(fileText text: String, passphrase: () throws -> String?) throws -> Self {
        guard isEncrypted(text) else {
            do { return try parse(text) } catch { throw FileProblem.unreadable(error) }
        }
        guard let passphrase = try passphrase(), !passphrase.isEmpty else { throw FileProblem.needsPassphrase }
        do { return try parse(text, passphrase: passphrase) } catch { throw FileProblem.locked(error) }
    }

    /// The key file's text, protected by `passphrase`.
    public func encryptedFileText(passphrase: String) throws(SignatureError) -> String {
        let salt = Data(Sodium.random(count: 16))
        let header = "\(Self.encryptedTag) \(name) scrypt:\(Self.scryptLogRounds):8:1:\(salt.base64EncodedString())"
        let key = try Self.derive(passphrase, salt: salt, logRounds: Self.scryptLogRounds, blockSize: 8, parallelism: 1)
        let box = Sodium.seal(seed, key: key, authenticating: Array(header.utf8))
        return "\(header) \(Data(box).base64EncodedString())\n"
    }

    /// A passphrase-protected key file's key; a wrong passphrase (or a changed file) throws.
    public static func parse(_ text: String, passphrase: String) throws(SignatureError) -> Self {
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = line.split(separator: " ")
        let form = "expected '\(encryptedTag) NAME scrypt:LOGN:R:P:SALT BOX'"
        guard parts.count >= 4, parts[0] == encryptedTag else { throw SignatureError("not a ribbit private key (\(form))") }
        let settings = parts[parts.count - 2].split(separator: ":")
        guard settings.count == 5, settings[0] == "scrypt", let logRounds = Int(settings[1]), let blockSize = Int(settings[2]),
            let parallelism = Int(settings[3]), let salt = Data(base64Encoded: String(settings[4])),
            let combined = Data(base64Encoded: String(parts[parts.count - 1]))
        else { throw SignatureError("a damaged protected key (\(form))") }
        guard (10...maxScryptLogRounds).contains(logRounds), (1...32).contains(blockSize), (1...16).contains(parallelism),
            salt.count >= 8, 128 * blockSize << logRounds <= maxScryptMemory
        else {
            throw SignatureError(
                "the key's scrypt settings are out of range (2^10 to 2^\(maxScryptLogRounds) rounds, at most \(maxScryptMemory >> 30) GiB)")
        }
        let header = line.dropLast(parts[parts.count - 1].count + 1)
        let key = try derive(passphrase, salt: salt, logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
        guard let raw = Sodium.open(Array(combined), key: key, authenticating: Array(header.utf8)), raw.count == Sodium.seedBytes
        else { throw SignatureError("wrong passphrase (or the key file was changed)") }
        return Self(name: parts[1..<(parts.count - 2)].joined(separator: " "), seed: raw)
    }

    private static func derive(
        _ passphrase: String, salt: Data, logRounds: Int, blockSize: Int, parallelism: Int
    ) throws(SignatureError) -> [UInt8] {
        guard
            let key = Sodium.scrypt(
                Array(passphrase.utf8), salt: Array(salt), logRounds: logRounds, blockSize: blockSize, parallelism: parallelism, count: 32)
        else { throw SignatureError("scrypt failed (2^\(logRounds) rounds, block size \(blockSize), parallelism \(parallelism))") }
        return key
    }
}
