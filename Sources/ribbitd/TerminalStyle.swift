import Foundation
import RibbitQR

/// Whether output may carry ANSI colours: not when NO_COLOR is set to anything
/// (https://no-color.org) or the terminal says it is dumb (TERM=dumb, as Emacs' shell sets).
enum TerminalStyle {
    static var colorAllowed: Bool {
        let environment = ProcessInfo.processInfo.environment
        return (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }
}

extension QRCode {
    /// The code as text in the terminal's own colours: it scans where the background is light.
    var plainTerminalText: String {
        terminalText.replacingOccurrences(of: "\u{1B}[30;47m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
    }
}
