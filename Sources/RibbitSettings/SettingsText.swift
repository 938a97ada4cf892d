import Foundation

/// The text of a settings file (ribbitd.conf, calibration.toml, hearing-reference.toml) before
/// TOML sees it. TOMLKit hands the text to toml++ as a C string, so a NUL byte would silently
/// end the file there (a `require-signed = true` after it dropped without a word); and a byte
/// that is not UTF-8 would otherwise be refused without saying where. Both are refused here,
/// naming the line.
public enum SettingsText {
    public static func decode(_ bytes: Data, path: String) throws(ConfigError) -> String {
        guard let valid = String(validating: bytes, as: UTF8.self) else {
            let offset = firstInvalidUTF8Offset(bytes) ?? 0
            let line = bytes.prefix(offset).count(where: { $0 == 0x0A }) + 1
            throw ConfigError(
                "\(path):\(line): byte \(offset + 1) (0x\(String(bytes[bytes.startIndex + offset], radix: 16, uppercase: true))) is not UTF-8 text; "
                    + "the file was damaged or saved in another encoding: save it as UTF-8 (nothing in it was used)")
        }
        try refuseNUL(in: valid, path: path)
        return valid
    }

    /// A NUL anywhere in the text is damage (text files hold none): refused with its line.
    public static func refuseNUL(in text: String, path: String) throws(ConfigError) {
        guard let index = text.utf8.firstIndex(of: 0) else { return }
        let line = text.utf8[..<index].count(where: { $0 == 0x0A }) + 1
        throw ConfigError(
            "\(path):\(line): holds a NUL byte, so the file is damaged (a text file has none); "
                + "nothing in it was used: remove the NUL (`tr -d '\\000'`) and check the line")
    }

    /// Where the first byte that breaks UTF-8 is (nil: all valid).
    public static func firstInvalidUTF8Offset(_ bytes: Data) -> Int? {
        var offset = 0
        let array = [UInt8](bytes)
        while offset < array.count {
            let lead = array[offset]
            let length: Int
            switch lead {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return offset
            }
            guard offset + length <= array.count,
                String(validating: array[offset..<offset + length], as: UTF8.self) != nil
            else { return offset }
            offset += length
        }
        return nil
    }
}
