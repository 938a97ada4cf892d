import Crypto
import Foundation
import Glibc
import NIOSSL
import SwiftASN1
import X509

/// HTTPS for the web app on a LAN: a self-signed certificate for the address it listens on,
/// made once and kept (so a phone that accepted it keeps accepting it) in
/// `$XDG_CONFIG_HOME/ribbit/web-tls/` (the key 0600, the directory 0700). No authority signs it,
/// so a browser warns once; the pairing link carries its SHA-256 fingerprint for the wearer to
/// compare with what the browser shows before accepting it.
struct WebTLS {
    let certificatePEM: String
    let keyPEM: String
    /// SHA-256 of the certificate's DER bytes, as browsers show it: `AB:CD:...`.
    let fingerprint: String

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Two years and a few days: within the 825 days browsers accept for a server certificate.
    static let validDays = 800

    /// The kept certificate when it is readable, names `host` and is valid for a week more;
    /// otherwise a new one, written before it is used.
    static func loadOrMake(directory: String, host: String, now: Date = Date()) throws(Failure) -> WebTLS {
        let certificatePath = directory + "/certificate.pem"
        let keyPath = directory + "/key.pem"
        if let certificatePEM = try? String(contentsOfFile: certificatePath, encoding: .utf8),
            let keyPEM = try? String(contentsOfFile: keyPath, encoding: .utf8),
            let kept = try? WebTLS(certificatePEM: certificatePEM, keyPEM: keyPEM),
            kept.names(host: host, validAt: now.addingTimeInterval(7 * 86400))
        {
            return kept
        }
        let made = try make(host: host, now: now)
        do throws(PrivateFile.Failure) {
            try PrivateFile.write(made.keyPEM, to: keyPath)
            try PrivateFile.write(made.certificatePEM, to: certificatePath)
        } catch {
            throw Failure(description: error.description)
        }
        return made
    }

    init(certificatePEM: String, keyPEM: String) throws {
        let certificate = try Certificate(pemEncoded: certificatePEM)
        let key = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
        // A pair left half-written (the key renewed, the certificate not) is made anew.
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw Failure(description: "the key is not the certificate's")
        }
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
        self.fingerprint = SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    static func make(host: String, now: Date) throws(Failure) -> WebTLS {
        do {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName {
                OrganizationName("ribbit")
                CommonName("ribbit web app on \(host)")
            }
            let subjectNames = SubjectAlternativeNames([try generalName(host)])
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                subjectNames
            }
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(Double(validDays) * 86400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
                issuerPrivateKey: .init(key))
            return try WebTLS(certificatePEM: certificate.serializeAsPEM().pemString, keyPEM: key.pemRepresentation)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot make the web app's certificate: \(error)")
        }
    }

    /// An IPv4 or IPv6 address as its bytes; anything else as a DNS name.
    static func generalName(_ host: String) throws(Failure) -> GeneralName {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return .ipAddress(ASN1OctetString(contentBytes: ArraySlice(withUnsafeBytes(of: &v4) { Array($0) })))
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return .ipAddress(ASN1OctetString(contentBytes: ArraySlice(withUnsafeBytes(of: &v6) { Array($0) })))
        }
        return .dnsName(host)
    }

    /// Whether the certificate names `host` and is valid at `date`.
    func names(host: String, validAt date: Date) -> Bool {
        guard let certificate = try? Certificate(pemEncoded: certificatePEM), let wanted = try? Self.generalName(host),
            certificate.notValidBefore <= date, date <= certificate.notValidAfter,
            let names = try? certificate.extensions.subjectAlternativeNames
        else { return false }
        return names.contains(wanted)
    }

    /// The server side of NIOSSL's configuration.
    func configuration() throws(Failure) -> TLSConfiguration {
        do {
            return TLSConfiguration.makeServerConfiguration(
                certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))],
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)))
        } catch {
            throw Failure(description: "cannot use the web app's certificate: \(error); remove the web-tls directory to make a new one")
        }
    }
}
