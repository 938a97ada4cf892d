import Foundation
import RibbitControl
import RibbitMonitor

/// The dump as a picture (`--svg`): per ear the input and output spectra, and the gain the
/// prescription asks for (the combination window), the filter applies and the sound got; below,
/// the audiogram by audiology convention: log frequency, dB HL growing downward, right ear O
/// in red, left ear X in blue. Every series is a polyline with an id (docs/dump-format.md).
enum DumpSVG {
    static let panelWidth = 460.0
    static let plotLeft = 50.0, plotRight = 15.0
    static let spectraTop = 70.0, spectraHeight = 190.0
    static let gainTop = 310.0, gainHeight = 190.0
    static let audiogramTop = 560.0, audiogramHeight = 230.0
    static let height = 830.0
    /// Axis ranges.
    static let frequencyRange = (low: 100.0, high: 10000.0)
    static let levelRange = (low: -100.0, high: 0.0)
    static let gainRange = (low: -20.0, high: 60.0)
    static let hearingLevelRange = (low: -10.0, high: 120.0)
    static let colors = (input: "#8a8a8a", output: "#1a7f37", target: "#d97706", applied: "#111111", measured: "#2563eb")

    static func render(_ frame: DumpFrame, ears: [String], frames: Int, seconds: Double) -> String {
        let width = 20 + panelWidth * Double(max(ears.count, 2))
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="11">
            <title>ribbit dump: \(escape(prescriptionLine(frame)))</title>
            <rect width="100%" height="100%" fill="white"/>
            <text x="20" y="22" font-size="15" font-weight="bold">\(escape(prescriptionLine(frame)))</text>
            <text x="20" y="40">\(escape(summaryLine(frame, frames: frames, seconds: seconds)))</text>

            """
        for (index, name) in ears.enumerated() {
            guard let ear = frame.ears[name] else { continue }
            svg += earPanels(name, ear, left: 10 + panelWidth * Double(index), binHz: frame.spectrumBinHz, bandsHz: frame.bandsHz)
        }
        svg += audiogram(frame, left: 10)
        svg += levelsTable(frame, ears: ears, left: 10 + panelWidth)
        return svg + "</svg>\n"
    }

    // MARK: Panels

    private static func earPanels(_ name: String, _ ear: DumpFrame.Ear, left: Double, binHz: Double, bandsHz: [Double]) -> String {
        let x = FrequencyAxis(left: left + plotLeft, width: panelWidth - plotLeft - plotRight)
        let spectra = ValueAxis(top: spectraTop, height: spectraHeight, range: levelRange)
        let gain = ValueAxis(top: gainTop, height: gainHeight, range: gainRange)
        let color = name == "right" ? "#d00" : "#0050d0"
        var out = "<g id=\"\(name)\">\n"
        out += text(left + plotLeft, spectraTop - 12, "\(name) ear: input and output spectra (dBFS)", size: 13, color: color)
        out += grid(x, spectra, step: 20)
        let bins = ear.inputSpectrumDB.indices.map { Double($0) * binHz }
        func series(_ values: [Double?]) -> [(Double, Double)] {
            zip(bins, values).compactMap { hz, v in
                guard let v, hz >= frequencyRange.low, hz <= frequencyRange.high else { return nil }
                return (x.position(hz), spectra.position(v))
            }
        }
        out += polyline("\(name)-input-spectrum", series(ear.inputSpectrumDB), stroke: colors.input, width: 1)
        out += polyline("\(name)-output-spectrum", series(ear.outputSpectrumDB), stroke: colors.output, width: 1.2)
        out += legend([("input", colors.input, ""), ("output", colors.output, "")], x: x.left + 8, y: spectraTop + 14)

        out += text(left + plotLeft, gainTop - 12, "\(name) ear: gain (dB)", size: 13, color: color)
        out += grid(x, gain, step: 20)
        func gainSeries(_ values: [Double?]) -> [(Double, Double)] {
            zip(bins, values).compactMap { hz, v in
                guard let v, hz >= frequencyRange.low, hz <= frequencyRange.high else { return nil }
                return (x.position(hz), gain.position(v))
            }
        }
        out += polyline("\(name)-target-gain", gainSeries(ear.combinationWindowDB), stroke: colors.target, width: 2.5, dash: "7 4")
        out += polyline("\(name)-applied-gain", gainSeries(ear.appliedGainDB), stroke: colors.applied, width: 1)
        // Measured: output minus input per third-octave band, where the input has sound in it.
        let measured = zip(bandsHz, zip(ear.outputBandsDB, ear.inputBandsDB)).compactMap { hz, levels in
            levels.1 > -120 ? (x.position(hz), gain.position(levels.0 - levels.1)) : nil
        }
        out += polyline("\(name)-measured-gain", measured, stroke: colors.measured, width: 1.5)
        for (px, py) in measured { out += "<circle cx=\"\(f(px))\" cy=\"\(f(py))\" r=\"2.5\" fill=\"\(colors.measured)\"/>\n" }
        out += legend(
            [
                ("target", colors.target, "7 4"), ("filter response", colors.applied, ""),
                ("measured (output - input)", colors.measured, ""),
            ],
            x: x.left + 8, y: gainTop + 14)
        return out + "</g>\n"
    }

    private static func audiogram(_ frame: DumpFrame, left: Double) -> String {
        let x = FrequencyAxis(left: left + plotLeft, width: panelWidth - plotLeft - plotRight)
        let y = ValueAxis(top: audiogramTop, height: audiogramHeight, range: hearingLevelRange, downward: true)
        var out = "<g id=\"audiogram\">\n"
        out += text(left + plotLeft, audiogramTop - 12, "audiogram (dB HL): right O, left X", size: 13, color: "#000")
        out += grid(x, y, step: 10)
        var drawn = false
        for (name, color, mark) in [("right", "#d00", "O"), ("left", "#0050d0", "X")] {
            let points = (frame.ears[name]?.audiogram ?? []).map {
                (x.position(Double($0.frequencyHz)), y.position(Double($0.thresholdDBHL)))
            }
            out += polyline("audiogram-\(name)", points, stroke: color, width: 1.2)
            for (px, py) in points {
                out +=
                    "<text class=\"audiogram-\(name)-mark\" x=\"\(f(px))\" y=\"\(f(py + 4.5))\" fill=\"\(color)\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">\(mark)</text>\n"
            }
            drawn = drawn || !points.isEmpty
        }
        if !drawn {
            out += text(x.left + 10, audiogramTop + 24, "no audiogram: no prescription, explicit gains, or bypass", size: 11, color: "#555")
        }
        return out + "</g>\n"
    }

    private static func levelsTable(_ frame: DumpFrame, ears: [String], left: Double) -> String {
        var rows = [
            "sample rate \(frame.sampleRate) Hz, latency \(frame.latencyFrames) samples (\(String(format: "%.2f", Double(frame.latencyFrames) / Double(frame.sampleRate) * 1000)) ms)",
            "output: \(frame.output.rawValue); ceiling acted on \(frame.limitedSamples) samples; xruns \(frame.xruns)",
        ]
        for name in ears {
            guard let e = frame.ears[name] else { continue }
            // Input and output on rows of their own: one row for both ran past the right edge.
            rows.append(String(format: "%@ input: %.1f dBFS RMS, peak %.1f dBFS", name, e.inputRMSDB, e.inputPeakDB))
            rows.append(String(format: "%@ output: %.1f dBFS RMS, peak %.1f dBFS", name, e.outputRMSDB, e.outputPeakDB))
        }
        var out = "<g id=\"levels\">\n"
        out += text(left + plotLeft, audiogramTop - 12, "levels over the dump", size: 13, color: "#000")
        for (i, row) in rows.enumerated() { out += text(left + plotLeft, audiogramTop + 16 + 18 * Double(i), row, size: 11, color: "#000") }
        return out + "</g>\n"
    }

    // MARK: Drawing helpers

    struct FrequencyAxis {
        let left: Double
        let width: Double
        func position(_ hz: Double) -> Double {
            let (low, high) = (log10(frequencyRange.low), log10(frequencyRange.high))
            return left + (log10(min(max(hz, frequencyRange.low), frequencyRange.high)) - low) / (high - low) * width
        }
    }

    struct ValueAxis {
        let top: Double
        let height: Double
        let range: (low: Double, high: Double)
        var downward = false
        /// Clamped to the range, so a -140 dB floor sits on the axis instead of off the picture.
        func position(_ value: Double) -> Double {
            let t = (min(max(value, range.low), range.high) - range.low) / (range.high - range.low)
            return downward ? top + t * height : top + (1 - t) * height
        }
    }

    private static func grid(_ x: FrequencyAxis, _ y: ValueAxis, step: Double) -> String {
        var out =
            "<rect x=\"\(f(x.left))\" y=\"\(f(y.top))\" width=\"\(f(x.width))\" height=\"\(f(y.height))\" fill=\"none\" stroke=\"#999\"/>\n"
        for hz in [125.0, 250, 500, 1000, 2000, 4000, 8000] {
            let px = x.position(hz)
            out += "<line x1=\"\(f(px))\" y1=\"\(f(y.top))\" x2=\"\(f(px))\" y2=\"\(f(y.top + y.height))\" stroke=\"#e5e5e5\"/>\n"
            out +=
                "<text x=\"\(f(px))\" y=\"\(f(y.top + y.height + 14))\" text-anchor=\"middle\">\(hz >= 1000 ? "\(Int(hz / 1000))k" : "\(Int(hz))")</text>\n"
        }
        for value in stride(from: y.range.low, through: y.range.high, by: step) {
            let py = y.position(value)
            out += "<line x1=\"\(f(x.left))\" y1=\"\(f(py))\" x2=\"\(f(x.left + x.width))\" y2=\"\(f(py))\" stroke=\"#e5e5e5\"/>\n"
            guard value.truncatingRemainder(dividingBy: 20) == 0 else { continue }
            out += "<text x=\"\(f(x.left - 5))\" y=\"\(f(py + 4))\" text-anchor=\"end\">\(Int(value))</text>\n"
        }
        out += "<text x=\"\(f(x.left + x.width))\" y=\"\(f(y.top + y.height + 28))\" text-anchor=\"end\" fill=\"#555\">Hz</text>\n"
        return out
    }

    private static func legend(_ entries: [(String, String, String)], x: Double, y: Double) -> String {
        var out = ""
        var at = x
        for (label, color, dash) in entries {
            let dashAttribute = dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\""
            out +=
                "<line x1=\"\(f(at))\" y1=\"\(f(y - 4))\" x2=\"\(f(at + 18))\" y2=\"\(f(y - 4))\" stroke=\"\(color)\" stroke-width=\"2\"\(dashAttribute)/>\n"
            out += text(at + 22, y, label, size: 10, color: "#333")
            at += 30 + Double(label.count) * 5.6
        }
        return out
    }

    private static func polyline(_ id: String, _ points: [(Double, Double)], stroke: String, width: Double, dash: String = "") -> String {
        let coordinates = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
        let dashAttribute = dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\""
        return
            "<polyline id=\"\(id)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"\(width)\"\(dashAttribute) points=\"\(coordinates)\"/>\n"
    }

    private static func text(_ x: Double, _ y: Double, _ content: String, size: Double, color: String) -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(Int(size))\" fill=\"\(color)\">\(escape(content))</text>\n"
    }

    private static func prescriptionLine(_ frame: DumpFrame) -> String {
        guard let rx = frame.prescription else { return "ribbit: no prescription (sound passes unchanged)" }
        return "ribbit: \(rx.name) (\(rx.environment)), \(rx.rule)" + (rx.audiologist.map { ", by \($0)" } ?? "")
    }

    private static func summaryLine(_ frame: DumpFrame, frames: Int, seconds: Double) -> String {
        "power average of \(frames) frame\(frames == 1 ? "" : "s") over \(String(format: "%.2f", seconds)) s; spectra: 1024-point Hann "
            + "(\(String(format: "%.1f", frame.spectrumBinHz)) Hz bins); measured gain: output minus input per third octave"
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
