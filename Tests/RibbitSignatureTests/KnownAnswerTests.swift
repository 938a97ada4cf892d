import Foundation
import Testing

@testable import RibbitSignature

/// The primitives against published vectors and a key file made by independent code, so the
/// keys and signatures ribbit wrote before (with swift-crypto) still open and verify.
@Suite struct KnownAnswerTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    /// RFC 8032 section 7.1, tests 1 and 2: public key and signature of a seed.
    @Test(arguments: [
        (
            "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "",
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ),
        (
            "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "72",
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        ),
    ])
    func ed25519MatchesRFC8032(seed: String, message: String, publicKey: String, signature: String) {
        let message = Data(Self.bytes(message))
        #expect(Sodium.publicKey(seed: Self.bytes(seed)) == Self.bytes(publicKey))
        #expect(Sodium.sign(message, seed: Self.bytes(seed)) == Self.bytes(signature))
        #expect(Sodium.isValid(signature: Self.bytes(signature), for: message, publicKey: Self.bytes(publicKey)))
        #expect(!Sodium.isValid(signature: Self.bytes(signature), for: message + [0], publicKey: Self.bytes(publicKey)))
    }

    /// RFC 7914 section 12, the second vector.
    @Test func scryptMatchesRFC7914() {
        let key = Sodium.scrypt(Array("password".utf8), salt: Array("NaCl".utf8), logRounds: 10, blockSize: 8, parallelism: 16, count: 64)
        #expect(
            key
                == Self.bytes(
                    "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
                ))
    }

    /// A protected key file written by Python's hashlib.scrypt and the `cryptography` package's
    /// ChaCha20Poly1305 (RFC 8032's first seed, passphrase "correct horse", salt 0...15, nonce
    /// 100...111): it opens to that seed, and not with another passphrase or a changed name.
    @Test func aKeyFileFromIndependentCodeOpens() throws {
        let file =
            "ribbit-ed25519-private-encrypted Dr. Vector scrypt:10:8:1:AAECAwQFBgcICQoLDA0ODw== ZGVmZ2hpamtsbW5vu4y7Y2MuBG4lpafHlXLl4fRckg1P6DL62fZ9LJ3g5sbs3glzH1QJOXwtTp0DGK/4\n"
        let key = try PrescriptionSignature.PrivateKey.parse(file, passphrase: "correct horse")
        #expect(key.name == "Dr. Vector")
        #expect(key.publicKey.raw == Data(Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")))
        #expect(throws: SignatureError.self) { try PrescriptionSignature.PrivateKey.parse(file, passphrase: "correct horsE") }
        #expect(throws: SignatureError.self) {
            try PrescriptionSignature.PrivateKey.parse(
                file.replacingOccurrences(of: "Dr. Vector", with: "Dr. Vectór"), passphrase: "correct horse")
        }
        // And back: ribbit's own file for it opens with the passphrase.
        let written = try key.encryptedFileText(passphrase: "another one")
        #expect(try PrescriptionSignature.PrivateKey.parse(written, passphrase: "another one").publicKey == key.publicKey)
    }

    /// A file asking scrypt for more than 2 GiB is refused before any memory is taken.
    @Test func aKeyFileAskingForTooMuchMemoryIsRefused() {
        let file =
            "ribbit-ed25519-private-encrypted X scrypt:20:32:1:AAECAwQFBgcICQoLDA0ODw== ZGVmZ2hpamtsbW5vu4y7Y2MuBG4lpafHlXLl4fRckg1P6DL62fZ9LJ3g5sbs3glzH1QJOXwtTp0DGK/4\n"
        #expect(throws: SignatureError.self) { try PrescriptionSignature.PrivateKey.parse(file, passphrase: "x") }
    }
}
