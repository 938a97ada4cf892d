import Foundation
import Glibc
import RibbitControl
import RibbitMonitor

/// `ribbitd dump`'s live view: per ear, third-octave bars of input (░) and output (█, with
/// eighth blocks for the top), the level the target gain asks for (◂ beside the output bar, or
/// ─ above it), levels, and a header with the prescription, latency and xruns. Drawn in the
/// alternate screen at the terminal's current size; `restore()` gives the terminal back as it
/// was (the caller runs it on q, Ctrl-C, SIGTERM and every error).
final class TerminalView {
    static let refreshSeconds = 0.1
    /// The bars span this many dB below full scale.
    static let rangeDB = 90.0

    private var saved = termios()
    private let stdinIsTerminal = isatty(0) == 1
    private var restored = false

    init() {
        if stdinIsTerminal {
            tcgetattr(0, &saved)
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)  // keys one by one, unechoed; Ctrl-C still signals
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 0
                cc[Int(VTIME)] = 0
            }
            tcsetattr(0, TCSANOW, &raw)
        }
        emit("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    }

    func restore() {
        guard !restored else { return }
        restored = true
        emit("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        if stdinIsTerminal { tcsetattr(0, TCSANOW, &saved) }
    }

    /// q (or Q) typed since the last look.
    func quitTyped() -> Bool {
        var byte: UInt8 = 0
        while stdinIsTerminal && read(0, &byte, 1) == 1 {
            if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") { return true }
        }
        return false
    }

    /// Says on the top line that no frame comes (the rest of the screen keeps the last one).
    func waiting(hadFrames: Bool) {
        let (columns, _) = Self.size()
        let text =
            (hadFrames ? "ribbit dump: no new frame for over a second" : "ribbit dump: waiting for the daemon's first frame")
            + " (is JACK running? `ribbitd status`)  q: quit"
        emit("\u{1B}[H\u{1B}[7m" + String(text.prefix(columns)) + "\u{1B}[0m\u{1B}[K")
    }

    func draw(_ frame: DumpFrame, ears: [String]) {
        let (columns, rows) = Self.size()
        let lines = Self.render(frame, ears: ears, columns: columns, rows: rows)
        emit("\u{1B}[H" + lines.joined(separator: "\u{1B}[K\r\n") + "\u{1B}[K\u{1B}[J")
    }

    // MARK: Layout (pure, so it can be reasoned about per size)

    /// Lines for a `columns` x `rows` terminal, with colour escapes; none is wider than `columns`
    /// visible characters and there are at most `rows`.
    static func render(_ frame: DumpFrame, ears: [String], columns: Int, rows: Int) -> [String] {
        let shown = ears.filter { frame.ears[$0] != nil }
        let bands = frame.bandsHz.count
        let axis = 4  // "-90│"
        let sideBySide = shown.count > 1 && columns >= 2 * (axis + 1 + 2 * bands) + 2
        let earWidth = sideBySide ? (columns - 2) / shown.count : columns
        // Three columns per band (input, output, target marker), two (no marker column), or
        // one (output only) in a narrow terminal.
        let bandWidth = earWidth >= axis + 1 + 3 * bands ? 3 : earWidth >= axis + 1 + 2 * bands ? 2 : 1
        guard columns >= axis + 1 + bands, rows >= 8 else {
            return [
                String("ribbit dump: the terminal is too small (\(columns) x \(rows); at least \(axis + 1 + bands) x 8)".prefix(columns))
            ]
        }
        let footer = 1, header = 2, perEarExtra = 2  // frequency labels, levels
        let chartRows = max(
            3,
            sideBySide
                ? rows - header - perEarExtra - footer
                : (rows - header - footer) / max(1, shown.count) - perEarExtra)

        let mode =
            switch frame.output {
            case .processing: frame.prescription == nil ? "passing through (no prescription)" : "processing"
            case .paused: "PAUSED (silent)"
            case .bypassed: "BYPASSED (unprocessed)"
            }
        let name = frame.prescription.map { "\($0.name) (\($0.environment), \($0.rule))" } ?? "no prescription"
        var lines = [
            "ribbit dump  \(name)  \(mode)",
            String(
                format: "%d Hz  latency %d samples (%.2f ms)  xruns %d  ceiling acted on %d  q: quit", frame.sampleRate,
                frame.latencyFrames, Double(frame.latencyFrames) / Double(frame.sampleRate) * 1000, frame.xruns, frame.limitedSamples),
        ].map { String($0.prefix(columns)) }

        let blocks = shown.map { earBlock($0, frame.ears[$0]!, bands: bands, bandWidth: bandWidth, chartRows: chartRows, width: earWidth) }
        if sideBySide {
            for i in 0..<(blocks.first?.count ?? 0) {
                lines.append(blocks.map { $0[i] }.joined(separator: "  "))
            }
        } else {
            for block in blocks { lines += block }
        }
        let legend = "░ input  █ output  ◂ ─ input + target gain  (dBFS per third octave)"
        lines.append(
            legend.count <= columns
                ? legend.replacingOccurrences(of: "░", with: "\u{1B}[90m░\u{1B}[0m").replacingOccurrences(
                    of: "█", with: "\u{1B}[32m█\u{1B}[0m"
                )
                .replacingOccurrences(of: "◂ ─", with: "\u{1B}[33m◂ ─\u{1B}[0m")
                : String(legend.prefix(columns)))
        return Array(lines.prefix(rows))
    }

    /// One ear: the chart, the frequency labels and the level line; every line padded to `width`.
    private static func earBlock(_ name: String, _ ear: DumpFrame.Ear, bands: Int, bandWidth: Int, chartRows: Int, width: Int) -> [String] {
        let eighths = ["", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        // Height of a level in eighths of a row, 0 at -90 dBFS.
        func height(_ db: Double) -> Int { Int(((min(0, max(-rangeDB, db)) + rangeDB) / rangeDB * Double(chartRows * 8)).rounded()) }
        var lines = [String]()
        for row in stride(from: chartRows - 1, through: 0, by: -1) {
            // The scale: 0 dBFS at the top edge, -90 at the bottom edge, the middle row's top edge.
            let label =
                switch row {
                case chartRows - 1: "  0"
                case 0: "-90"
                case chartRows / 2: String(format: "%3.0f", (-rangeDB + rangeDB * Double(row + 1) / Double(chartRows)).rounded())
                default: "   "
                }
            var line = label + "│"
            var visible = label.count + 1
            for b in 0..<bands {
                let input = height(ear.inputBandsDB[b]), output = height(ear.outputBandsDB[b])
                let target = ear.targetGainDB[b].map { height(ear.inputBandsDB[b] + $0) / 8 }
                let base = row * 8
                if bandWidth > 1 { line += input >= base + 4 ? "\u{1B}[90m░\u{1B}[0m" : " " }
                let fill = min(8, max(0, output - base))
                if fill > 0 {
                    line += "\u{1B}[32m" + eighths[fill] + "\u{1B}[0m"
                } else {
                    line += target == row && bandWidth < 3 ? "\u{1B}[33m─\u{1B}[0m" : " "
                }
                if bandWidth == 3 { line += target == row ? "\u{1B}[33m◂\u{1B}[0m" : " " }
                visible += bandWidth
            }
            lines.append(line + String(repeating: " ", count: max(0, width - visible)))
        }
        var labels = [Character](repeating: " ", count: max(width, 4 + bands * bandWidth))
        let octaves = [("125", 0), ("250", 3), ("500", 6), ("1k", 9), ("2k", 12), ("4k", 15), ("8k", 18)]
        for (text, band) in bandWidth > 1 ? octaves : [octaves[0], octaves[3], octaves[6]] where band < bands {
            for (i, c) in text.enumerated() where 4 + band * bandWidth + i < labels.count { labels[4 + band * bandWidth + i] = c }
        }
        lines.append(String(String(labels).prefix(width)))
        let levels = String(
            format: "%@ in %.1f dBFS (peak %.1f)  out %.1f dBFS (peak %.1f)", name == "left" ? "L" : "R",
            ear.inputRMSDB, ear.inputPeakDB, ear.outputRMSDB, ear.outputPeakDB)
        lines.append(String(levels.prefix(width)).padding(toLength: width, withPad: " ", startingAt: 0))
        return lines
    }

    private func emit(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

    /// The terminal's size (TIOCGWINSZ on standard output), read at every draw so a resize
    /// takes effect at the next refresh; 80 x 24 when it cannot be read.
    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}
