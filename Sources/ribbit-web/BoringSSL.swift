import CNIOBoringSSL

/// The few certificate and digest calls the web app needs, made on the BoringSSL that NIOSSL
/// already compiles in (its C module): a second crypto library (swift-crypto and
/// swift-certificates) cost the build its own BoringSSL, 2 minutes on two quiet cores and 10
/// on busy ones.
/// Every pointer returned here is the caller's to free.
enum BoringSSL {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        _ = SHA256(bytes, bytes.count, &digest)
        return digest
    }

    /// The first certificate in a PEM text.
    static func certificate(pem: String) -> OpaquePointer? {
        reading(pem) { PEM_read_bio_X509($0, nil, nil, nil) }
    }

    /// A private key in a PEM text (PKCS #8 or the older EC form).
    static func privateKey(pem: String) -> OpaquePointer? {
        reading(pem) { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
    }

    /// A certificate's DER bytes (what a browser's fingerprint is the SHA-256 of).
    static func der(_ certificate: OpaquePointer) -> [UInt8] {
        let count = i2d_X509(certificate, nil)
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(count))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(certificate, &cursor)
        }
        return bytes
    }

    static func newP256Key() -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1,
            EVP_PKEY_keygen(context, &key) == 1
        else {
            EVP_PKEY_free(key)
            return nil
        }
        return key
    }

    /// A positive 127-bit random serial number (RFC 5280: unique per issuer, at most 20 bytes).
    static func setRandomSerial(_ certificate: OpaquePointer) -> Bool {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        bytes[0] = bytes[0] & 0x7F | 0x40
        guard let number = BN_bin2bn(bytes, bytes.count, nil) else { return false }
        defer { BN_free(number) }
        guard let serial = BN_to_ASN1_INTEGER(number, nil) else { return false }
        defer { ASN1_INTEGER_free(serial) }
        return X509_set_serialNumber(certificate, serial) == 1
    }

    /// Subject and issuer (self-signed: the same name), fields in the order given.
    static func setName(_ certificate: OpaquePointer, _ fields: KeyValuePairs<String, String>) -> Bool {
        guard let name = X509_NAME_new() else { return false }
        defer { X509_NAME_free(name) }
        for (field, value) in fields {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, bytes.count, -1, 0) == 1 else { return false }
        }
        return X509_set_subject_name(certificate, name) == 1 && X509_set_issuer_name(certificate, name) == 1
    }

    /// An extension in OpenSSL's configuration syntax ("critical,CA:FALSE", "IP:192.168.1.5").
    static func addExtension(_ certificate: OpaquePointer, nid: Int32, value: String) -> Bool {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, certificate, certificate, nil, nil, 0)
        guard let ext = X509V3_EXT_nconf_nid(nil, &context, nid, value) else { return false }
        defer { X509_EXTENSION_free(ext) }
        return X509_add_ext(certificate, ext, -1) == 1
    }

    /// What `write` puts in a memory BIO, as text.
    static func pem(_ write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        var contents: UnsafePointer<UInt8>?
        var count = 0
        guard BIO_mem_contents(bio, &contents, &count) == 1, let contents else { return nil }
        return String(decoding: UnsafeBufferPointer(start: contents, count: count), as: UTF8.self)
    }

    private static func reading<T>(_ text: String, _ read: (OpaquePointer) -> T?) -> T? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { raw -> T? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, raw.count) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
    }
}
