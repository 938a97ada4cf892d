import CSodium
import Foundation

/// The few libsodium calls the signatures need, on byte arrays. libsodium's Ed25519 is RFC 8032
/// (deterministic), its ChaCha20-Poly1305 the IETF one (RFC 8439, 12-byte nonce): the same
/// signatures and key files swift-crypto made.
enum Sodium {
    static let seedBytes = 32
    static let publicKeyBytes = 32
    static let signatureBytes = 64
    static let nonceBytes = 12
    static let tagBytes = 16

    /// `sodium_init` once per process (it picks the fastest implementations and seeds the
    /// random generator); later calls return at once.
    private static let ready: Bool = sodium_init() >= 0

    static func random(count: Int) -> [UInt8] {
        precondition(ready, "libsodium could not start")
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }

    /// The public key of a 32-byte Ed25519 seed (the private key's raw form).
    static func publicKey(seed: [UInt8]) -> [UInt8] {
        keyPair(seed: seed).publicKey
    }

    static func sign(_ message: Data, seed: [UInt8]) -> [UInt8] {
        var secret = keyPair(seed: seed).secret
        defer { sodium_memzero(&secret, secret.count) }
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        message.withUnsafeBytes { bytes in
            _ = crypto_sign_ed25519_detached(
                &signature, nil, bytes.bindMemory(to: UInt8.self).baseAddress, UInt64(bytes.count), secret)
        }
        return signature
    }

    static func isValid(signature: [UInt8], for message: Data, publicKey: [UInt8]) -> Bool {
        precondition(ready, "libsodium could not start")
        guard signature.count == signatureBytes, publicKey.count == publicKeyBytes else { return false }
        return message.withUnsafeBytes { bytes in
            crypto_sign_ed25519_verify_detached(signature, bytes.bindMemory(to: UInt8.self).baseAddress, UInt64(bytes.count), publicKey)
        } == 0
    }

    static func sha256(_ data: Data) -> [UInt8] {
        precondition(ready, "libsodium could not start")
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        data.withUnsafeBytes { bytes in
            _ = crypto_hash_sha256(&digest, bytes.bindMemory(to: UInt8.self).baseAddress, UInt64(bytes.count))
        }
        return digest
    }

    /// scrypt (RFC 7914) with N = 2^logRounds; nil when libsodium refuses the settings or the memory.
    static func scrypt(_ passphrase: [UInt8], salt: [UInt8], logRounds: Int, blockSize: Int, parallelism: Int, count: Int) -> [UInt8]? {
        precondition(ready, "libsodium could not start")
        var key = [UInt8](repeating: 0, count: count)
        let status = crypto_pwhash_scryptsalsa208sha256_ll(
            passphrase, passphrase.count, salt, salt.count, UInt64(1) << UInt64(logRounds), UInt32(blockSize), UInt32(parallelism),
            &key, count)
        return status == 0 ? key : nil
    }

    /// nonce + ciphertext + tag (swift-crypto's `ChaChaPoly.SealedBox.combined`).
    static func seal(_ plain: [UInt8], key: [UInt8], authenticating header: [UInt8]) -> [UInt8] {
        precondition(key.count == Int(crypto_aead_chacha20poly1305_ietf_KEYBYTES), "a ChaCha20-Poly1305 key is 32 bytes")
        let nonce = random(count: nonceBytes)
        var sealed = [UInt8](repeating: 0, count: plain.count + tagBytes)
        var length: UInt64 = 0
        _ = crypto_aead_chacha20poly1305_ietf_encrypt(
            &sealed, &length, plain, UInt64(plain.count), header, UInt64(header.count), nil, nonce, key)
        return nonce + sealed.prefix(Int(length))
    }

    /// The plain text of `seal`'s output; nil when the key, the header or the box is wrong.
    static func open(_ combined: [UInt8], key: [UInt8], authenticating header: [UInt8]) -> [UInt8]? {
        guard combined.count >= nonceBytes + tagBytes, key.count == Int(crypto_aead_chacha20poly1305_ietf_KEYBYTES) else { return nil }
        let nonce = Array(combined.prefix(nonceBytes)), sealed = Array(combined.dropFirst(nonceBytes))
        var plain = [UInt8](repeating: 0, count: sealed.count - tagBytes)
        var length: UInt64 = 0
        let status = crypto_aead_chacha20poly1305_ietf_decrypt(
            &plain, &length, nil, sealed, UInt64(sealed.count), header, UInt64(header.count), nonce, key)
        return status == 0 ? Array(plain.prefix(Int(length))) : nil
    }

    private static func keyPair(seed: [UInt8]) -> (publicKey: [UInt8], secret: [UInt8]) {
        precondition(ready && seed.count == seedBytes, "an Ed25519 seed is 32 bytes")
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        var secret = [UInt8](repeating: 0, count: Int(crypto_sign_ed25519_SECRETKEYBYTES))
        _ = crypto_sign_ed25519_seed_keypair(&publicKey, &secret, seed)
        return (publicKey, secret)
    }
}
