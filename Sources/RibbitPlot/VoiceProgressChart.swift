import Glibc
import RibbitVoice

/// A child's voice-exercise progress over weeks as one standalone SVG, for the therapist's
/// screen: four panels sharing the week axis: sessions per week (bars), time in target (% of
/// the voiced time), attempts per success (1 is every sound counting), and the pitch range
/// used (a band from the lowest to the highest f0 of the week). Sized by its viewBox, 360 wide,
/// so it reads on a phone; no script; white paper. Parts by id and class for tests and scripts:
/// `voice-progress-PANEL` groups (sessions, target, attempts, pitch), their marks of class
/// `voice-progress-PANEL-mark` with `data-week` and the value(s).
public enum VoiceProgressChart {
    public static let width = 360.0
    static let (left, right, panelHeight) = (44.0, 12.0, 92.0)
    /// A panel: title (22), plot, week labels (16), gap (14).
    static let panelStep = 22 + panelHeight + 30
    static let top = 58.0

    public static var height: Double { top + 4 * panelStep + 18 }

    /// `weeks` as `VoiceProgress.weeks` makes them; `game` picks one game's figures (nil: all games).
    public static func svg(weeks: [VoiceProgressWeek], childName: String, game: VoiceGameKind? = nil) -> String {
        let figures: [VoiceProgressFigures] = weeks.map { week in game.map { week.perGame[$0] ?? VoiceProgressFigures() } ?? week.overall }
        let labels = weeks.map(\.week.label)
        let title = "Progress: \(childName)" + (game.map { " (\($0.rawValue))" } ?? "")
        var out =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"voice-progress-chart\" viewBox=\"0 0 \(svgNumber(width)) \(svgNumber(height))\" "
            + "role=\"img\" aria-labelledby=\"voice-progress-title voice-progress-desc\" font-family=\"system-ui, sans-serif\" font-size=\"11\">\n"
        out += "<title id=\"voice-progress-title\">\(xmlEscaped(title))</title>\n"
        out += "<desc id=\"voice-progress-desc\">\(xmlEscaped(description(labels, figures)))</desc>\n"
        out += "<rect width=\"\(svgNumber(width))\" height=\"\(svgNumber(height))\" fill=\"white\"/>\n"
        out += svgText(
            width / 2, 22, fitted(title, width: width - 20, fontSize: 16, bold: true), anchor: "middle", size: 16, weight: "bold")
        let span =
            labels.isEmpty
            ? "no sessions yet" : labels.count == 1 ? "week \(labels[0])" : "weeks \(labels[0]) to \(labels[labels.count - 1])"
        out += svgText(width / 2, 40, span, anchor: "middle", size: 12, color: "#555")

        let sessions = figures.map { Double($0.sessions) }
        out += panel(
            0, id: "sessions", title: "Sessions per week", labels: labels, range: 0...niceCeiling(sessions.max() ?? 0, least: 4),
            marks: bars(sessions, color: "#3a6fc8", labels: labels, panel: "sessions"))
        let target = figures.map(\.targetPercent)
        out += panel(
            1, id: "target", title: "Time in target (% of voiced time)", labels: labels, range: 0...100,
            marks: line(target, color: "#1a8a3a", labels: labels, panel: "target"))
        let attempts = figures.map(\.attemptsPerSuccess)
        out += panel(
            2, id: "attempts", title: "Attempts per success (1 is best)", labels: labels,
            range: 0...niceCeiling(attempts.compactMap { $0 }.max() ?? 0, least: 2),
            marks: line(attempts, color: "#c05a00", labels: labels, panel: "attempts"))
        let lows = figures.map(\.f0LowHz), highs = figures.map(\.f0HighHz)
        let voiced = zip(lows, highs).compactMap { low, high in low.flatMap { l in high.map { (l, $0) } } }
        let pitchRange =
            voiced.isEmpty
            ? 100.0...400.0 : niceFloor(voiced.map(\.0).min()!, step: 50)...niceCeiling(voiced.map(\.1).max()!, least: 0, step: 50)
        out += panel(
            3, id: "pitch", title: "Pitch range used (Hz)", labels: labels,
            range: pitchRange.lowerBound...max(pitchRange.upperBound, pitchRange.lowerBound + 50),
            marks: bands(lows, highs, labels: labels))
        return out + "</svg>\n"
    }

    /// What a screen reader says: every week's figures.
    static func description(_ labels: [String], _ figures: [VoiceProgressFigures]) -> String {
        guard !labels.isEmpty else { return "No sessions yet." }
        return zip(labels, figures).map { label, f in
            var parts = ["\(f.sessions) session" + (f.sessions == 1 ? "" : "s"), "\(roundedText(f.minutesPlayed)) min"]
            if let target = f.targetPercent { parts.append("\(roundedText(target)) % in target") }
            if let ratio = f.attemptsPerSuccess { parts.append("\(roundedText(ratio)) attempts per success") }
            if let low = f.f0LowHz, let high = f.f0HighHz { parts.append("pitch \(Int(low.rounded()))-\(Int(high.rounded())) Hz") }
            return "\(label): " + parts.joined(separator: ", ")
        }.joined(separator: ". ") + "."
    }

    /// One decimal at most.
    static func roundedText(_ value: Double) -> String { svgNumber(value) }

    // MARK: Panels

    /// Where a panel's plot is, and how its marks map values to it.
    struct Frame {
        var top: Double, height: Double, range: ClosedRange<Double>, weeks: Int
        var plotLeft: Double { VoiceProgressChart.left }
        var plotWidth: Double { VoiceProgressChart.width - VoiceProgressChart.left - VoiceProgressChart.right }
        var slot: Double { plotWidth / Double(max(weeks, 1)) }
        func x(_ week: Int) -> Double { plotLeft + (Double(week) + 0.5) * slot }
        func y(_ value: Double) -> Double {
            let clamped = min(max(value, range.lowerBound), range.upperBound)
            return top + height - (clamped - range.lowerBound) / (range.upperBound - range.lowerBound) * height
        }
    }

    static func panel(
        _ index: Int, id: String, title: String, labels: [String], range: ClosedRange<Double>, marks: (Frame) -> String
    ) -> String {
        let panelTop = top + Double(index) * panelStep
        let frame = Frame(top: panelTop + 22, height: panelHeight, range: range, weeks: labels.count)
        var out = "<g id=\"voice-progress-\(id)\">\n"
        out += svgText(
            frame.plotLeft, panelTop + 12, fitted(title, width: width - frame.plotLeft, fontSize: 13, bold: true), size: 13, weight: "bold")
        for tick in roundTicks(from: range.lowerBound, to: range.upperBound, step: tickStep(range)) {
            let y = frame.y(tick)
            out +=
                "<line class=\"voice-progress-grid\" x1=\"\(svgNumber(frame.plotLeft))\" y1=\"\(svgNumber(y))\" x2=\"\(svgNumber(frame.plotLeft + frame.plotWidth))\" y2=\"\(svgNumber(y))\" stroke=\"#ddd\"/>\n"
            out += svgText(frame.plotLeft - 5, y + 4, svgNumber(tick), anchor: "end", color: "#444")
        }
        out +=
            "<rect x=\"\(svgNumber(frame.plotLeft))\" y=\"\(svgNumber(frame.top))\" width=\"\(svgNumber(frame.plotWidth))\" height=\"\(svgNumber(frame.height))\" fill=\"none\" stroke=\"#888\"/>\n"
        // Week labels as "W48", as many as fit 30 px apart, the first always.
        let every = max(1, Int((30 / frame.slot).rounded(.up)))
        for (i, label) in labels.enumerated() where i % every == 0 {
            let week = label.split(separator: "-").last.map(String.init) ?? label
            out += svgText(frame.x(i), frame.top + frame.height + 13, week, anchor: "middle", color: "#444")
        }
        if labels.isEmpty {
            out += svgText(
                frame.plotLeft + frame.plotWidth / 2, frame.top + frame.height / 2 + 4, "no sessions yet", anchor: "middle", color: "#777")
        }
        return out + marks(frame) + "</g>\n"
    }

    static func bars(_ values: [Double], color: String, labels: [String], panel: String) -> (Frame) -> String {
        { frame in
            var out = ""
            for (i, value) in values.enumerated() {
                let (x, y) = (frame.x(i), frame.y(value))
                let barWidth = min(frame.slot * 0.6, 28)
                out +=
                    "<rect class=\"voice-progress-\(panel)-mark\" data-week=\"\(labels[i])\" data-value=\"\(svgNumber(value))\" x=\"\(svgNumber(x - barWidth / 2))\" y=\"\(svgNumber(y))\" width=\"\(svgNumber(barWidth))\" height=\"\(svgNumber(frame.y(frame.range.lowerBound) - y))\" fill=\"\(color)\"/>\n"
            }
            return out
        }
    }

    /// Points joined week to week; a week without a value breaks the line.
    static func line(_ values: [Double?], color: String, labels: [String], panel: String) -> (Frame) -> String {
        { frame in
            var path = "", points = "", previous = false
            for (i, value) in values.enumerated() {
                guard let value else {
                    previous = false
                    continue
                }
                let xy = "\(svgNumber(frame.x(i))) \(svgNumber(frame.y(value)))"
                path += (previous ? " L" : (path.isEmpty ? "M" : " M")) + xy
                previous = true
                points +=
                    "<circle class=\"voice-progress-\(panel)-mark\" data-week=\"\(labels[i])\" data-value=\"\(svgNumber(value))\" cx=\"\(svgNumber(frame.x(i)))\" cy=\"\(svgNumber(frame.y(value)))\" r=\"3.5\" fill=\"\(color)\"/>\n"
            }
            return (path.isEmpty ? "" : "<path fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" d=\"\(path)\"/>\n") + points
        }
    }

    static func bands(_ lows: [Double?], _ highs: [Double?], labels: [String]) -> (Frame) -> String {
        { frame in
            var out = ""
            for i in lows.indices {
                guard let low = lows[i], let high = highs[i] else { continue }
                let barWidth = min(frame.slot * 0.6, 28)
                let (yHigh, yLow) = (frame.y(high), frame.y(low))
                out +=
                    "<rect class=\"voice-progress-pitch-mark\" data-week=\"\(labels[i])\" data-low-hz=\"\(svgNumber(low))\" data-high-hz=\"\(svgNumber(high))\" x=\"\(svgNumber(frame.x(i) - barWidth / 2))\" y=\"\(svgNumber(yHigh))\" width=\"\(svgNumber(barWidth))\" height=\"\(svgNumber(max(yLow - yHigh, 1.5)))\" fill=\"#7a4fd0\" fill-opacity=\"0.35\" stroke=\"#7a4fd0\"/>\n"
            }
            return out
        }
    }

    // MARK: Round axes

    /// 1, 2 or 5 times a power of ten, giving 2 to 5 ticks over the range.
    static func tickStep(_ range: ClosedRange<Double>) -> Double {
        let span = range.upperBound - range.lowerBound
        let power = pow(10, (log10(span / 4)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where span / (factor * power) <= 5 { return factor * power }
        return 10 * power
    }

    /// The value rounded up to a tick (at least `least`), so the top of the axis is labelled.
    static func niceCeiling(_ value: Double, least: Double, step: Double? = nil) -> Double {
        let top = max(value, least)
        guard top > 0 else { return 1 }
        let step = step ?? tickStep(0...top)
        return (top / step).rounded(.up) * step
    }

    static func niceFloor(_ value: Double, step: Double) -> Double { (value / step).rounded(.down) * step }
}
