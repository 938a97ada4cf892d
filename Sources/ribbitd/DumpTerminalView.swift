import Foundation
import Glibc
import RibbitControl
import RibbitIntake
import RibbitMonitor
import RibbitPlot
import RibbitPrescription

/// `ribbitd dump`'s live view: per ear, its name, third-octave bars of input (░) and output (█,
/// with eighth blocks for the top, in the ear's colour), the level the target gain asks for (◂
/// beside the output bar, or ─ above it), levels, and a header with the prescription, latency
/// and xruns; the right ear on the left, as in every plot. Drawn in the alternate screen at the
/// terminal's current size; `restore()` gives the terminal back as it was (the caller runs it on
/// q, Ctrl-C, SIGTERM and every error).
///
/// `NO_COLOR` (set and not empty, no-color.org) draws the same without colour escapes. A dumb
/// terminal (`TERM=dumb` or unset: Emacs' shell, a CI log, a braille display or screen reader)
/// cannot redraw in place, and bars repainted ten times a second would scroll past unread; it
/// gets plain lines instead, no escape at all: what plays, then once a second the levels of
/// each ear averaged over that second and the xruns (`DumbTerminalLog`).
final class TerminalView {
    static let refreshSeconds = 0.1
    /// The bars span this many dB below full scale.
    static let rangeDB = 90.0

    private let terminal: RawTerminal
    private var colors: Bool { terminal.colors }
    /// Set for a dumb terminal: plain lines instead of the full screen.
    private var log: DumbTerminalLog?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        terminal = RawTerminal(environment: environment, alwaysFullScreen: true)
        if terminal.dumb { log = DumbTerminalLog() }  // the terminal stays as it is: lines, and q with Enter
    }

    func restore() { terminal.restore() }

    /// q (or Q) typed since the last look (on a dumb terminal, in canonical mode, q and Enter).
    func quitTyped() -> Bool { terminal.quitTyped() }

    /// Says on the top line that no frame comes (the rest of the screen keeps the last one).
    func waiting(hadFrames: Bool) {
        let text =
            (hadFrames ? "ribbit dump: no new frame for over a second" : "ribbit dump: waiting for the daemon's first frame")
            + " (is JACK running? `ribbitd status`)"
        if let log {
            log.waiting(text, hadFrames: hadFrames)
            return
        }
        let (columns, _) = RawTerminal.size()
        let line = String((text + "  q: quit").prefix(columns))
        terminal.emit("\u{1B}[H" + (colors ? "\u{1B}[7m" + line + "\u{1B}[0m" : line) + "\u{1B}[K")
    }

    func draw(_ frame: DumpFrame, ears: [String]) {
        if let log {
            log.add(frame, ears: ears)
            return
        }
        let (columns, rows) = RawTerminal.size()
        terminal.draw(Self.render(frame, ears: ears, columns: columns, rows: rows, colors: colors))
    }

    // MARK: Layout (pure, so it can be reasoned about per size)

    /// Lines for a `columns` x `rows` terminal, with colour escapes when `colors`; none is wider
    /// than `columns` visible characters and there are at most `rows`.
    static func render(_ frame: DumpFrame, ears: [String], columns: Int, rows: Int, colors: Bool = true) -> [String] {
        let shown = Ear.plotOrder.filter { ears.contains($0.rawValue) && frame.ears[$0.rawValue] != nil }
        let paint = Paint(on: colors)
        let bands = frame.bandsHz.count
        let axis = 4  // "-90│"
        let sideBySide = shown.count > 1 && columns >= 2 * (axis + 1 + 2 * bands) + 2
        let earWidth = sideBySide ? (columns - 2) / shown.count : columns
        // Three columns per band (input, output, target marker), two (no marker column), or
        // one (output only) in a narrow terminal.
        let bandWidth = earWidth >= axis + 1 + 3 * bands ? 3 : earWidth >= axis + 1 + 2 * bands ? 2 : 1
        guard columns >= axis + 1 + bands, rows >= 9 else {
            return [
                String("ribbit dump: the terminal is too small (\(columns) x \(rows); at least \(axis + 1 + bands) x 9)".prefix(columns))
            ]
        }
        let footer = 1, header = 2, perEarExtra = 3  // ear name, frequency labels, levels
        let chartRows = max(
            3,
            sideBySide
                ? rows - header - perEarExtra - footer
                : (rows - header - footer) / max(1, shown.count) - perEarExtra)

        var lines = [summary(frame).0, summary(frame).1].map { String($0.prefix(columns)) }
        let blocks = shown.map {
            earBlock($0, frame.ears[$0.rawValue]!, bands: bands, bandWidth: bandWidth, chartRows: chartRows, width: earWidth, paint: paint)
        }
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
                ? legend.replacingOccurrences(of: "░", with: paint("░", "90")).replacingOccurrences(of: "◂ ─", with: paint("◂ ─", "33"))
                : String(legend.prefix(columns)))
        return Array(lines.prefix(rows))
    }

    /// The header's two lines: what plays, and the engine.
    static func summary(_ frame: DumpFrame) -> (String, String) {
        let mode =
            switch frame.output {
            case .processing: frame.prescription == nil ? "passing through (no prescription)" : "processing"
            case .paused: "PAUSED (silent)"
            case .bypassed: "BYPASSED (unprocessed)"
            }
        let name = frame.prescription.map { "\($0.name) (\($0.environment), \($0.rule.rawValue))" } ?? "no prescription"
        return (
            "ribbit dump  \(name)  \(mode)",
            String(
                format: "%d Hz  latency %d samples (%.2f ms)  xruns %d  ceiling acted on %d  q: quit", frame.sampleRate,
                frame.latencyFrames, Double(frame.latencyFrames) / Double(frame.sampleRate) * 1000, frame.xruns, frame.limitedSamples)
        )
    }

    /// The dB scale's labels by chart row (0 the bottom): 0 and -90 at the ends, -30 and -60 on
    /// the rows that hold those levels when there is room; round numbers only.
    static func scaleLabels(chartRows: Int) -> [Int: String] {
        var labels = [Int: String]()
        let ticks = chartRows >= 6 ? [0.0, -rangeDB, -30, -60] : [0.0, -rangeDB]
        for level in ticks {
            // The row whose span [bottom, top] holds the level (the upper one on a boundary).
            let row = min(chartRows - 1, Int(((level + rangeDB) / rangeDB * Double(chartRows)).rounded(.down)))
            if labels[row] == nil { labels[row] = String(Int(level)).leftPadded(to: 3) }
        }
        return labels
    }

    /// One ear: its name, the chart, the frequency labels and the level line; every line padded to `width`.
    private static func earBlock(
        _ ear: Ear, _ values: DumpFrame.Ear, bands: Int, bandWidth: Int, chartRows: Int, width: Int, paint: Paint
    ) -> [String] {
        let eighths = ["", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        // Height of a level in eighths of a row, 0 at -90 dBFS.
        func height(_ db: Double) -> Int { Int(((min(0, max(-rangeDB, db)) + rangeDB) / rangeDB * Double(chartRows * 8)).rounded()) }
        let title = String(ear.plotTitle.prefix(width))
        var lines = [paint(title, "1;" + ear.terminalColor) + String(repeating: " ", count: max(0, width - title.count))]
        let scale = scaleLabels(chartRows: chartRows)
        for row in stride(from: chartRows - 1, through: 0, by: -1) {
            let label = scale[row] ?? "   "
            var line = label + "│"
            var visible = label.count + 1
            for b in 0..<bands {
                let input = height(values.inputBandsDB[b]), output = height(values.outputBandsDB[b])
                let target = values.targetGainDB[b].map { height(values.inputBandsDB[b] + $0) / 8 }
                let base = row * 8
                if bandWidth > 1 { line += input >= base + 4 ? paint("░", "90") : " " }
                let fill = min(8, max(0, output - base))
                if fill > 0 {
                    line += paint(eighths[fill], ear.terminalColor)
                } else {
                    line += target == row && bandWidth < 3 ? paint("─", "33") : " "
                }
                if bandWidth == 3 { line += target == row ? paint("◂", "33") : " " }
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
        // dBFS, as the legend says; short enough for a side-by-side half of 100 columns.
        let levels = String(
            format: "in %.1f (peak %.1f)  out %.1f (peak %.1f)", values.inputRMSDB, values.inputPeakDB, values.outputRMSDB,
            values.outputPeakDB)
        lines.append(String(levels.prefix(width)).padding(toLength: width, withPad: " ", startingAt: 0))
        return lines
    }

    /// Text in an SGR colour, or as it is without colours.
    struct Paint {
        let on: Bool
        func callAsFunction(_ text: String, _ sgr: String) -> String { on ? "\u{1B}[\(sgr)m" + text + "\u{1B}[0m" : text }
    }
}

/// The dump on a dumb terminal: plain lines, no escapes. What plays (again whenever it changes),
/// then once a second of the daemon's clock the RMS level of each ear's input and output,
/// power-averaged over the frames drawn in that second, and the xruns. (Not the ceiling count:
/// it counts per frame, and this sees only the frames drawn.)
final class DumbTerminalLog {
    private var heading = ""
    private var waitingSaid = ""
    private let started = ProcessInfo.processInfo.systemUptime
    private var since: Double?
    private var power = [String: (input: Double, output: Double)]()
    private var count = 0

    private func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    func waiting(_ text: String, hadFrames: Bool) {
        // The first frame may take a moment; say it only after a second without one.
        guard hadFrames || ProcessInfo.processInfo.systemUptime - started > 1 else { return }
        guard text != waitingSaid else { return }  // once, not ten times a second
        waitingSaid = text
        say(text)
    }

    func add(_ frame: DumpFrame, ears: [String]) {
        waitingSaid = ""
        let now =
            TerminalView.summary(frame).0
            + String(format: "  %d Hz  latency %.2f ms", frame.sampleRate, Double(frame.latencyFrames) / Double(frame.sampleRate) * 1000)
        if now != heading {
            heading = now
            say(now + "  (a line a second; q and Enter, or Ctrl-C, ends it)")
        }
        let shown = Ear.plotOrder.filter { ears.contains($0.rawValue) && frame.ears[$0.rawValue] != nil }
        for ear in shown {
            let values = frame.ears[ear.rawValue]!
            let sum = power[ear.rawValue] ?? (0, 0)
            power[ear.rawValue] = (sum.input + pow(10, values.inputRMSDB / 10), sum.output + pow(10, values.outputRMSDB / 10))
        }
        count += 1
        guard let start = since else {
            since = frame.time
            return
        }
        guard frame.time - start >= 1 else { return }
        let levels = shown.map { ear -> String in
            let sum = power[ear.rawValue] ?? (0, 0)
            func db(_ p: Double) -> Double { max(-140, 10 * log10(p / Double(count))) }
            let dBFS = String(format: "%@ in %.1f out %.1f dBFS", ear.rawValue, db(sum.input), db(sum.output))
            // Silence reads -140 dBFS, the floor: no sound pressure to speak of.
            guard let offsets = frame.dBSPLOffsets(ear: ear.rawValue), db(sum.input) > -140 else { return dBFS }
            return dBFS + String(format: " (%.1f / %.1f dB SPL)", db(sum.input) + offsets.input, db(sum.output) + offsets.output)
        }
        say(String(format: "%.1f s  ", frame.time) + levels.joined(separator: "  ") + "  xruns \(frame.xruns)")
        since = frame.time
        power = [:]
        count = 0
    }
}
