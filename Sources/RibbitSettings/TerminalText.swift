/// Text that came from a file or a peer (a key's name, a prescription's fields, a QR code, a
/// history entry, an error quoting input), made safe to show on a terminal: control characters
/// (C0, DEL, C1: ESC starts the sequences that move the cursor, retitle the window or rewrite
/// the screen) and the bidirectional overrides that reorder what is shown, each written as a
/// visible `\u{1B}` instead.
public enum TerminalText {
    /// Every such character escaped (one-line quotes: line breaks too).
    public static func escaped(_ text: String) -> String { escaped(text, keeping: []) }

    /// The same, keeping line breaks and tabs (whole lines of output).
    public static func escapedLines(_ text: String) -> String { escaped(text, keeping: ["\n", "\t"]) }

    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x202A...0x202E, 0x2066...0x2069: true  // bidi embeddings, overrides, isolates
        default: false
        }
    }

    private static func escaped(_ text: String, keeping: Set<Unicode.Scalar>) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0) && !keeping.contains($0) }) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) && !keeping.contains(scalar) {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }
}
