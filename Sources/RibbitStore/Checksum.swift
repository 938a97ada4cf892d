import Foundation

/// CRC-32 (IEEE 802.3, as zlib and PNG use it): catches the damage a disk or a careless edit
/// does to a stored payload (every burst up to 32 bits). Not a defence against a forger: that is
/// the signature's job.
public enum Checksum {
    public static func crc32<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// The CRC-32 of a text's UTF-8 bytes as 8 hex digits.
    public static func crc32Hex(_ text: String) -> String { String(format: "%08x", crc32(text.utf8)) }
}

extension JSONEncoder {
    /// Dates as ISO 8601, so a copy on disk reads plainly.
    static var iso8601: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }
}

extension JSONDecoder {
    static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
