import RibbitSettings

/// Every line the commands print goes through here rather than the standard library's `print`:
/// what they show often came from a file or a peer (a prescription's name, patient and
/// audiologist, a key's name, a history entry, the daemon's reply), and an escape sequence in it
/// must not reach the terminal as one. Control characters are shown escaped (`\u{1B}`); line
/// breaks and tabs stay. Output that means to colour the terminal (the QR code, the live views)
/// writes through `Swift.print` or its own terminal writer.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Swift.print(TerminalText.escapedLines(items.map { "\($0)" }.joined(separator: separator)), terminator: terminator)
}
