import Foundation
import Glibc
import RibbitAudiometry
import RibbitControl
import RibbitPrescription

/// `ribbitd hearing-test`'s full-screen view: instructions, then which ear and frequency, the
/// progress, an acknowledgement per answer (never whether a beep played) and the thresholds so
/// far; 24 lines of 80 columns at most, plain text and one colour per ear, so it works over ssh.
/// Keys one by one, unechoed: Space or Enter answers, q stops. A dumb terminal (TERM unset or
/// dumb) gets plain lines instead, one per change, and answers with Enter.
final class HearingTestScreen {
    static let refreshSeconds = 0.1
    /// An answer names the ear with the arrow keys (or l and r) when the test asks which.
    enum Key: Equatable { case answer(Ear?), quit }

    private let headphones: Transducer
    private let namesEar: Bool
    private let terminal: RawTerminal
    private var stdinIsTerminal: Bool { terminal.stdinIsTerminal }
    private var dumb: Bool { terminal.dumb }
    private var colors: Bool { terminal.colors }
    private var acknowledgedUntil = 0.0
    private var lastLine = ""

    init(headphones: Transducer, namesEar: Bool = false, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.headphones = headphones
        self.namesEar = namesEar
        terminal = RawTerminal(environment: environment, alwaysFullScreen: false)
    }

    func restore() { terminal.restore() }

    /// The instructions; true when the listener is ready (Enter or Space), false on q.
    func showInstructions() -> Bool {
        let lines = [
            "ribbit hearing test (\(headphones.rawValue) headphones)",
            "",
            "  1. Sit in a quiet room. Noise that would hide the beeps pauses the test.",
            "  2. Put the headphones on: the red or R side on your right ear. Set the computer's",
            "     volume as it was calibrated and do not touch it until the end.",
            "  3. You will hear short beeps, three at a time, in one ear, then the other.",
            namesEar
                ? "     Press the Left or Right arrow for the ear you hear them in, however faint."
                : "     Press Space or Enter whenever you hear them, however faint.",
            "     Some are very quiet on purpose, and some are not played at all:",
            "     only answer what you really hear.",
            "  4. It takes about 10 minutes. Press q to stop; what was measured is kept.",
            "",
            "The hearing aid is off during the test and comes back by itself.",
            "This is a screening you take alone, not a clinical audiogram.",
            "",
            "Press Enter to start, or q to leave.",
        ]
        if !stdinIsTerminal {
            // Driven by a program (a pipe): it has read the instructions already.
            print(lines.dropLast().joined(separator: "\n"))
            return true
        }
        if dumb {
            print(lines.joined(separator: "\n"))
        } else {
            terminal.emit("\u{1B}[H\u{1B}[2J" + lines.joined(separator: "\r\n"))
        }
        while true {
            switch key(timeoutSeconds: 3600) {
            case .answer: return true
            case .quit: return false
            case .none: break
            }
        }
    }

    /// A key typed within the timeout (the rest of a burst stays for the next call).
    func key(timeoutSeconds: Double) -> Key? {
        guard let byte = terminal.byte(timeoutSeconds: timeoutSeconds) else { return nil }
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"): return .answer(nil)
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .quit
        case UInt8(ascii: "l"), UInt8(ascii: "L"): return .answer(.left)
        case UInt8(ascii: "r"), UInt8(ascii: "R"): return .answer(.right)
        case 0x1B:
            // An arrow key: ESC [ D (left) or ESC [ C (right).
            guard let rest = terminal.escapeSequence(), rest[0] == UInt8(ascii: "[") else { return nil }
            return rest[1] == UInt8(ascii: "D") ? .answer(.left) : rest[1] == UInt8(ascii: "C") ? .answer(.right) : nil
        default: return nil
        }
    }

    /// Shows for half a second that the answer was taken.
    func acknowledge(_ status: HearingTestStatus) {
        acknowledgedUntil = MonotonicClock.seconds() + 0.5
        draw(status)
    }

    func draw(_ status: HearingTestStatus) {
        let where_ = status.ear.map { "\($0 == .right ? "RIGHT" : "LEFT") ear, \(status.frequencyHz ?? 0) Hz" } ?? ""
        if dumb || !stdinIsTerminal {
            let line =
                status.state == .pausedForNoise
                ? "paused: \(noiseText(status.noise))" : "testing \(where_) (\(status.done) of \(status.total) done)"
            if line != lastLine { print(line) }
            lastLine = line
            return
        }
        let elapsed = "\(Int(status.elapsedSeconds) / 60) min \(Int(status.elapsedSeconds) % 60) s"  // a duration, not a time of day
        let width = 50
        let filled = status.total > 0 ? width * status.done / status.total : 0
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        let earColour = status.ear == .right ? "\u{1B}[1;31m" : "\u{1B}[1;34m"
        var lines = [
            "ribbit hearing test (\(headphones.rawValue) headphones)".padding(toLength: 79 - elapsed.count, withPad: " ", startingAt: 0)
                + elapsed,
            "",
            "  Testing: " + (colors ? earColour + where_ + "\u{1B}[0m" : where_),
            "  \(bar) \(status.done)/\(status.total)",
            "",
        ]
        if status.state == .pausedForNoise {
            lines.append("  PAUSED: \(noiseText(status.noise))")
            lines.append("  Find a quieter place; the test goes on by itself when it is quiet.")
        } else {
            lines.append(
                namesEar
                    ? "  Press Left or Right (the ear) whenever you hear a beep, however faint."
                    : "  Press Space or Enter whenever you hear a beep, however faint.")
            if let noisy = status.maskingEar {
                lines.append(
                    "  A rushing noise plays in your \(noisy == .right ? "RIGHT" : "LEFT") ear now: ignore it, answer only the beeps.")
            }
            lines.append(MonotonicClock.seconds() < acknowledgedUntil ? "  >>> answer taken <<<" : "")
        }
        lines += HearingTestSummary.table(status.frequencies).map { "  " + $0 }
        lines.append("")
        lines.append("  q: stop (what was measured is kept)")
        terminal.draw(lines)
    }

    private func noiseText(_ noise: HearingTestStatus.Noise?) -> String {
        guard let noise, let band = noise.loudBandHz, let level = noise.levelDBSPL, let limit = noise.limitDBSPL else {
            return "quiet again: the test goes on in a moment"
        }
        return String(format: "too loud here: the %d Hz band is %.0f dB SPL, the test allows %.0f", band, level, limit)
    }
}
