import Foundation
import RibbitPrescription
import RibbitSignature
import RibbitTestSupport
import Testing

@Suite struct SignatureTests {
    let key = PrescriptionSignature.PrivateKey.generate(name: "Dr. A. Example")
    let payload = Data(try! Prescription.parse(Data(contentsOf: TestPaths.prescription("ski-slope.rx"))).text.utf8)

    @Test func signedByATrustedKeyVerifiesAndParses() throws {
        let signed = try key.sign(payload)
        #expect(PrescriptionSignature.verify(signed, trusted: [key.publicKey]) == .trusted(signer: "Dr. A. Example"))
        #expect(PrescriptionSignature.verify(signed, trusted: []) == .unknownKey(keyID: key.publicKey.keyID))
        #expect(PrescriptionSignature.verify(payload, trusted: [key.publicKey]) == .unsigned)
        #expect(try Prescription.parse(signed).signature?.hasPrefix("ed25519:\(key.publicKey.keyID):") == true)
        // Keys survive their files.
        #expect(try PrescriptionSignature.PublicKey.parse(key.publicKey.fileText) == key.publicKey)
        #expect(try PrescriptionSignature.PrivateKey.parse(key.fileText).publicKey == key.publicKey)
    }

    /// Every single-byte change of a signed payload loses the trusted verdict (every byte, each
    /// with its lowest bit flipped): in the signed text the signature no longer matches, in the
    /// sig line it is malformed, unknown or gone.
    @Test func flippingAnyByteMakesItFail() throws {
        let signed = try key.sign(payload)
        let bodyCount = signed.count - (signed.split(separator: 0x0A).last!.count + 1)
        for index in signed.indices {
            var tampered = signed
            tampered[index] ^= 0x01
            let verdict = PrescriptionSignature.verify(tampered, trusted: [key.publicKey])
            #expect(verdict != .trusted(signer: "Dr. A. Example"), "byte \(index)")
            if index < bodyCount {
                // In the signed text: refused outright, or (the newline before the sig line)
                // the sig merges into a line that no longer parses.
                let refused = { if case .bad = verdict { true } else { false } }()
                #expect(refused || (try? Prescription.parse(tampered)) == nil, "byte \(index) in the signed text: \(verdict)")
            }
        }
    }

    @Test func anotherKeysSignatureWithTheSameIdIsBad() throws {
        let other = PrescriptionSignature.PrivateKey.generate(name: "Mallory")
        let forged = try other.sign(payload)
        // Pretend it carries the trusted key's id.
        let text = String(decoding: forged, as: UTF8.self).replacingOccurrences(of: other.publicKey.keyID, with: key.publicKey.keyID)
        guard case .bad = PrescriptionSignature.verify(Data(text.utf8), trusted: [key.publicKey]) else {
            Issue.record("a forged signature was not refused")
            return
        }
    }

    /// The form is checked before the key is looked up: a malformed line is bad, never
    /// "signed, unknown key", whether or not its key id is trusted.
    @Test func malformedSigLinesAreRefusedWhateverTheKey() throws {
        let id = key.publicKey.keyID
        let good = String(decoding: try key.sign(payload), as: UTF8.self).split(separator: "\n").last!.split(separator: ":").last!
        let sixtyFive = Data(repeating: 7, count: 65).base64EncodedString()
        for line in [
            "sig: ed25519:0011223344556677:AAAA",  // a 3-byte signature (the review's example)
            "sig: ed25519:\(id):AAAA",
            "sig: ed25519:\(id.dropLast()):\(good)",  // 15 hex digits
            "sig: ed25519:\(id.uppercased()):\(good)",
            "sig: ed25519:00112233445566zz:\(good)",
            "sig: ed25519:\(id):\(sixtyFive)",
            "sig: ed25519::\(good)",
            "sig: ed25519:\(id)",
            "sig: rsa:\(id):\(good)",
        ] {
            let text = Data((String(decoding: payload, as: UTF8.self) + line + "\n").utf8)
            for trusted in [[], [key.publicKey]] {
                let verdict = PrescriptionSignature.verify(text, trusted: trusted)
                let refused = { if case .bad = verdict { true } else { false } }()
                #expect(refused, "\(line) with \(trusted.count) trusted key(s): \(verdict)")
            }
        }
    }

    @Test func signingTwiceOrWithoutNewlineIsRefused() throws {
        let signed = try key.sign(payload)
        #expect(throws: SignatureError.self) { try key.sign(signed) }
        #expect(throws: SignatureError.self) { try key.sign(payload.dropLast()) }
    }
}
