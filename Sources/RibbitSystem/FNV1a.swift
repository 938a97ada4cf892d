/// FNV-1a, 64 bits: a short name for a text that is the same in every process and run (Swift's
/// `Hasher` is seeded per process). An identity, never a signature.
public enum FNV1a {
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// `value` in lowercase hex, zero-padded to `digits`.
    public static func hex(_ value: UInt64, digits: Int = 16) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
