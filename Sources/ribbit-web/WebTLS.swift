import CNIOBoringSSL
import Foundation
import Glibc
import NIOSSL

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

    init(certificatePEM: String, keyPEM: String) throws(Failure) {
        guard let certificate = BoringSSL.certificate(pem: certificatePEM) else {
            throw Failure(description: "the certificate is unreadable")
        }
        defer { X509_free(certificate) }
        guard let key = BoringSSL.privateKey(pem: keyPEM) else { throw Failure(description: "the key is unreadable") }
        defer { EVP_PKEY_free(key) }
        // A pair left half-written (the key renewed, the certificate not) is made anew.
        guard X509_check_private_key(certificate, key) == 1 else {
            throw Failure(description: "the key is not the certificate's")
        }
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
        self.fingerprint = BoringSSL.sha256(BoringSSL.der(certificate)).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// A new P-256 key and a certificate it signs for `host`: not a certificate authority, for
    /// TLS servers only, valid from an hour ago for `validDays`.
    static func make(host: String, now: Date) throws(Failure) -> WebTLS {
        func failed(_ step: String) -> Failure { Failure(description: "cannot make the web app's certificate: \(step) failed") }
        guard let key = BoringSSL.newP256Key() else { throw failed("making a key") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw failed("allocating") }
        defer { X509_free(certificate) }
        let start = Int(now.timeIntervalSince1970) - 3600
        guard X509_set_version(certificate, Int(X509_VERSION_3)) == 1,
            BoringSSL.setRandomSerial(certificate),
            ASN1_TIME_set(X509_getm_notBefore(certificate), start) != nil,
            ASN1_TIME_set(X509_getm_notAfter(certificate), start + 3600 + validDays * 86400) != nil,
            X509_set_pubkey(certificate, key) == 1
        else { throw failed("filling in the certificate") }
        guard BoringSSL.setName(certificate, ["O": "ribbit", "CN": "ribbit web app on \(host)"]) else { throw failed("naming") }
        let subjectName = Self.isAddress(host) ? "IP:\(host)" : "DNS:\(host)"
        let extensions = [
            (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, subjectName),
        ]
        for (nid, value) in extensions where !BoringSSL.addExtension(certificate, nid: nid, value: value) {
            throw failed("the extension \(value)")
        }
        guard X509_sign(certificate, key, EVP_sha256()) > 0,
            let certificatePEM = BoringSSL.pem({ PEM_write_bio_X509($0, certificate) }),
            let keyPEM = BoringSSL.pem({ PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) })
        else { throw failed("signing") }
        return try WebTLS(certificatePEM: certificatePEM, keyPEM: keyPEM)
    }

    /// Whether `host` is an IPv4 or IPv6 address (else it is a DNS name).
    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Whether the certificate names `host` and is valid at `date`.
    func names(host: String, validAt date: Date) -> Bool {
        guard let certificate = BoringSSL.certificate(pem: certificatePEM) else { return false }
        defer { X509_free(certificate) }
        var notBefore: Int64 = 0
        var notAfter: Int64 = 0
        guard ASN1_TIME_to_posix(X509_get0_notBefore(certificate), &notBefore) == 1,
            ASN1_TIME_to_posix(X509_get0_notAfter(certificate), &notAfter) == 1,
            Double(notBefore) <= date.timeIntervalSince1970, date.timeIntervalSince1970 <= Double(notAfter)
        else { return false }
        let named =
            Self.isAddress(host)
            ? X509_check_ip_asc(certificate, host, 0) : X509_check_host(certificate, host, host.utf8.count, 0, nil)
        return named == 1
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
