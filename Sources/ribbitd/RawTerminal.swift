import Foundation
import Glibc

/// The terminal as the live views use it (`dump`, `hearing-test`, `voice`): the alternate
/// screen with the cursor hidden, keys one by one and unechoed (Ctrl-C still signals), and
/// `restore()` to give it back as it was (the caller runs it on q, Ctrl-C, SIGTERM and every
/// error). A dumb terminal (TERM unset, empty or "dumb") is left alone: the views print plain
/// lines instead. `NO_COLOR` (set and not empty, no-color.org) turns colour escapes off.
final class RawTerminal {
    let colors: Bool
    let dumb: Bool
    let stdinIsTerminal = isatty(0) == 1
    /// The alternate screen is on (not dumb, and a keyboard or `alwaysFullScreen`).
    let fullScreen: Bool
    private var saved = termios()
    private var restored = false

    /// `alwaysFullScreen`: draw full screen even when the keys come from a pipe (the dump's view
    /// only reads q; the hearing test, driven by a program, prints lines then).
    init(environment: [String: String] = ProcessInfo.processInfo.environment, alwaysFullScreen: Bool) {
        dumb = Self.isDumb(environment)
        colors = Self.wantsColor(environment)
        fullScreen = !dumb && (stdinIsTerminal || alwaysFullScreen)
        if !dumb && stdinIsTerminal {
            tcgetattr(0, &saved)
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 0
                cc[Int(VTIME)] = 0
            }
            tcsetattr(0, TCSANOW, &raw)
        }
        if fullScreen { emit("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J") }
    }

    /// no-color.org: NO_COLOR present and not empty, whatever its value. A dumb terminal gets
    /// no colour either.
    static func wantsColor(_ environment: [String: String]) -> Bool {
        (environment["NO_COLOR"] ?? "").isEmpty && !isDumb(environment)
    }

    /// As systemd judges it: TERM unset, empty or "dumb".
    static func isDumb(_ environment: [String: String]) -> Bool { (environment["TERM"] ?? "").isEmpty || environment["TERM"] == "dumb" }

    func restore() {
        guard !restored else { return }
        restored = true
        if fullScreen { emit((colors ? "\u{1B}[0m" : "") + "\u{1B}[?25h\u{1B}[?1049l") }
        if !dumb && stdinIsTerminal { tcsetattr(0, TCSANOW, &saved) }
    }

    /// A byte typed within the timeout (the rest of a burst stays for the next call); nil when
    /// none came. At the end of input (a closed pipe) nothing more will come: it waits as if
    /// nothing was typed (at most the timeout, at most 0.1 s) and says nil.
    func byte(timeoutSeconds: Double) -> UInt8? {
        var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, Int32(timeoutSeconds * 1000)) == 1 else { return nil }
        var byte: UInt8 = 0
        guard read(0, &byte, 1) == 1 else {
            usleep(UInt32(min(timeoutSeconds, 0.1) * 1e6))
            return nil
        }
        return byte
    }

    /// The bytes after an escape (an arrow key's "[C"), already all in the buffer.
    func escapeSequence() -> [UInt8]? {
        var rest: [UInt8] = [0, 0]
        guard read(0, &rest, 2) == 2 else { return nil }
        return rest
    }

    /// q (or Q) typed since the last look (on a dumb terminal, in canonical mode, q and Enter).
    func quitTyped() -> Bool {
        while stdinIsTerminal, let byte = byte(timeoutSeconds: 0) {
            if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") { return true }
        }
        return false
    }

    func emit(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

    /// Lines drawn from the top left, each line's rest and the screen's rest cleared.
    func draw(_ lines: [String]) { emit("\u{1B}[H" + lines.joined(separator: "\u{1B}[K\r\n") + "\u{1B}[K\u{1B}[J") }

    /// The terminal's size (TIOCGWINSZ on standard output), read at every draw so a resize
    /// takes effect at the next refresh; 80 x 24 when it cannot be read.
    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}
