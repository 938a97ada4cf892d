import Foundation
import RibbitControl
import RibbitMonitor
import RibbitPlot
import RibbitPrescription

/// The dump as a picture (`--svg`), laid out as fitting software and audiometer print-outs are:
/// a header with the prescription, patient and date; then a column per ear, the right ear on
/// the left in red, the left ear on the right in blue, each with its input and output spectra,
/// the gain the prescription asks for (the combination window), the filter applies and the
/// sound got, and its audiogram on the square form (RibbitPlot). Every series has an id
/// (docs/dump-format.md).
public enum DumpSVG {
    static let columnWidth = 460.0, margin = 10.0
    static let width = 2 * margin + 2 * columnWidth
    static let plotLeft = 50.0, plotRight = 15.0
    static let earTitleY = 134.0
    static let spectraTop = 166.0, spectraHeight = 170.0
    static let gainTop = 386.0, gainHeight = 170.0
    static let audiogramTop = 608.0
    /// Axis ranges of the spectra and gain panels; the audiogram's are RibbitPlot's.
    static let frequencyRange = (low: 100.0, high: 10000.0)
    static let levelRange = (low: -100.0, high: 0.0)
    static let gainRange = (low: -20.0, high: 60.0)
    static let colors = (input: "#8a8a8a", applied: "#111111", text: "#222222", note: "#555555")

    public static func render(_ frame: DumpFrame, ears: [String], frames: Int, seconds: Double) -> String {
        let columns = Ear.plotOrder.map { ear in ears.contains(ear.rawValue) ? frame.ears[ear.rawValue] : nil }
        // The audiogram shares the panels' frequency scale, so 2 kHz is one vertical line
        // through all three; its grid is square at that scale.
        let axis = frequencyAxis(left: 0)
        let audiogramHeight = AudiogramScale(left: 0, top: 0, pixelsPerOctave: axis.pixelsPerOctave).height
        let levelsTop = audiogramTop + audiogramHeight + 56
        let height = (levelsTop + 2 * 17 + 12).rounded(.up)
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="11">
            <title>\(xmlEscaped(title(frame)))</title>
            <rect x="0" y="0" width="\(Int(width))" height="\(Int(height))" fill="white"/>

            """
        svg += header(frame, frames: frames, seconds: seconds)
        for (index, ear) in Ear.plotOrder.enumerated() {
            let left = margin + columnWidth * Double(index)
            guard let values = columns[index] else {
                svg += svgText(left + plotLeft, earTitleY, "\(ear.plotTitle): not in this dump", size: 16, color: colors.note)
                continue
            }
            svg += "<g id=\"\(ear.rawValue)\">\n"
            svg += svgText(
                left + plotLeft, earTitleY, ear.plotTitle, size: 16, color: ear.plotColor, weight: "bold", className: "ear-title")
            svg += panels(ear, values, left: left, binHz: frame.spectrumBinHz, bandsHz: frame.bandsHz)
            svg += audiogram(ear, values.audiogram, left: left)
            svg += levels(values, offsets: frame.dBSPLOffsets(ear: ear.rawValue), left: left, top: levelsTop)
            svg += "</g>\n"
        }
        return svg + "</svg>\n"
    }

    // MARK: Parts

    /// Who and what: the prescription, the patient and date it names, the audiologist; then the
    /// engine and what the picture averages. Each line shortened to fit the width.
    private static func header(_ frame: DumpFrame, frames: Int, seconds: Double) -> String {
        let textWidth = width - 2 * margin - 10
        var out = "<g id=\"header\">\n"
        out += svgText(margin + 6, 26, fitted(title(frame), width: textWidth, fontSize: 17, bold: true), size: 17, weight: "bold")
        /// "Label: value  ·  Label: value": the first value shortened, so the second (short: a
        /// date, a verdict) always shows.
        func pair(_ first: (String, String), _ second: (String, String)?, y: Double) -> String {
            let tail = second.map { "  ·  \($0.0): \($0.1)" } ?? ""  // "·": SVG collapses runs of spaces
            let room = textWidth - estimatedTextWidth(first.0 + ": " + tail, fontSize: 13)
            return svgText(margin + 6, y, first.0 + ": " + fitted(first.1, width: room, fontSize: 13) + tail, size: 13, color: colors.text)
        }
        if let rx = frame.prescription {
            out += pair(("Patient", rx.patient ?? "not given"), ("Date", rx.date ?? "not given"), y: 48)
            out += pair(("Audiologist", rx.audiologist ?? "not given"), rx.signature.map { ("Signature", $0) }, y: 66)
        } else {
            out += svgText(margin + 6, 48, "No prescription: the sound passes unchanged.", size: 13, color: colors.text)
        }
        let milliseconds = String(format: "%.2f", Double(frame.latencyFrames) / Double(frame.sampleRate) * 1000)
        let engine =
            "\(frame.sampleRate) Hz, latency \(frame.latencyFrames) samples (\(milliseconds) ms); output \(frame.output.rawValue); "
            + "ceiling acted on \(frame.limitedSamples) samples; xruns \(frame.xruns)"
        out += svgText(margin + 6, 86, fitted(engine, width: textWidth, fontSize: 11), color: colors.text)
        let averaged =
            "Power average of \(frames) frame\(frames == 1 ? "" : "s") over \(String(format: "%.2f", seconds)) s; spectra: 1024-point Hann "
            + "(\(String(format: "%.1f", frame.spectrumBinHz)) Hz bins); measured gain: output minus input per third octave"
        out += svgText(margin + 6, 102, fitted(averaged, width: textWidth, fontSize: 11), color: colors.note)
        return out + "</g>\n"
    }

    private static func title(_ frame: DumpFrame) -> String {
        guard let rx = frame.prescription else { return "ribbit dump: no prescription" }
        let rules = ["nal-r": "NAL-R", "half-gain": "half-gain", "pogo2": "POGO II", "explicit": "explicit gains"]
        return "ribbit dump: \(rx.name) (\(rx.environment), \(rules[rx.rule.rawValue] ?? rx.rule.rawValue))"
    }

    private static func frequencyAxis(left: Double) -> LogFrequencyAxis {
        LogFrequencyAxis(
            left: left + plotLeft, width: columnWidth - plotLeft - plotRight, lowHz: frequencyRange.low, highHz: frequencyRange.high)
    }

    private static func panels(_ ear: Ear, _ values: DumpFrame.Ear, left: Double, binHz: Double, bandsHz: [Double]) -> String {
        let name = ear.rawValue, color = ear.plotColor
        let x = frequencyAxis(left: left)
        let spectra = ValueAxis(top: spectraTop, height: spectraHeight, range: levelRange)
        let gain = ValueAxis(top: gainTop, height: gainHeight, range: gainRange)
        var out = svgText(x.left, spectraTop - 13, "Spectra (dBFS) by frequency (Hz)", size: 12, color: colors.text)
        out += grid(x, spectra, step: 20)
        let bins = values.inputSpectrumDB.indices.map { Double($0) * binHz }
        func series(_ values: [Double?], on axis: ValueAxis) -> [(Double, Double)] {
            zip(bins, values).compactMap { hz, v in
                guard let v, hz >= frequencyRange.low, hz <= frequencyRange.high else { return nil }
                return (x.x(hz), axis.position(v))
            }
        }
        out += polyline("\(name)-input-spectrum", series(values.inputSpectrumDB, on: spectra), stroke: colors.input, width: 1)
        out += polyline("\(name)-output-spectrum", series(values.outputSpectrumDB, on: spectra), stroke: color, width: 1.2)
        out += legend([("input", colors.input, "", 1), ("output", color, "", 1)], x: x.left + 8, y: spectraTop + 14)

        out += svgText(x.left, gainTop - 13, "Gain (dB) by frequency (Hz)", size: 12, color: colors.text)
        out += grid(x, gain, step: 20)
        out += polyline(
            "\(name)-target-gain", series(values.combinationWindowDB, on: gain), stroke: color, width: 3, dash: "8 5", opacity: 0.45)
        out += polyline("\(name)-applied-gain", series(values.appliedGainDB, on: gain), stroke: colors.applied, width: 1)
        // Measured: output minus input per third-octave band, where the input has sound in it.
        let measured = zip(bandsHz, zip(values.outputBandsDB, values.inputBandsDB)).compactMap { hz, levels in
            levels.1 > -120 ? (x.x(hz), gain.position(levels.0 - levels.1)) : nil
        }
        out += polyline("\(name)-measured-gain", measured, stroke: color, width: 1.2)
        for (px, py) in measured { out += "<circle cx=\"\(svgNumber(px))\" cy=\"\(svgNumber(py))\" r=\"2.6\" fill=\"\(color)\"/>\n" }
        out += legend(
            [("target", color, "8 5", 0.45), ("filter response", colors.applied, "", 1), ("measured (output - input)", color, "", 1)],
            x: x.left + 8, y: gainTop + 14)
        return out
    }

    private static func audiogram(_ ear: Ear, _ points: [DumpFrame.AudiogramPoint], left: Double) -> String {
        let axis = frequencyAxis(left: left)
        let scale = AudiogramScale(left: axis.x(AudiogramScale.lowHz), top: audiogramTop, pixelsPerOctave: axis.pixelsPerOctave)
        var out = "<g id=\"audiogram-\(ear.rawValue)-chart\" class=\"audiogram\">\n"
        let symbol = ear.audiogramSymbol == .circle ? "O" : "X"
        out += svgText(
            axis.left, audiogramTop - 14, "Audiogram: \(symbol) air conduction, \(symbol)↓ no response", size: 12, color: colors.text)
        out += AudiogramSVG.form(scale)
        let plotted = points.map { AudiogramPoint(frequencyHz: $0.frequencyHz, dBHL: $0.thresholdDBHL, noResponse: $0.noResponse) }
        out += AudiogramSVG.ear(ear, plotted, on: scale)
        if points.isEmpty {
            let note = "No audiogram: explicit gains, bypass or no prescription"
            out += svgText(scale.left + 10, scale.top + 24, fitted(note, width: scale.width - 20, fontSize: 11), color: colors.note)
        }
        return out + "</g>\n"
    }

    /// The ear's levels, and in dB SPL through the calibration when the frame has one.
    private static func levels(_ values: DumpFrame.Ear, offsets: (input: Double, output: Double)?, left: Double, top: Double) -> String {
        func spl(_ db: Double, _ offset: Double?) -> String { offset.map { String(format: " = %.1f dB SPL", db + $0) } ?? "" }
        let rows = [
            String(format: "Input: %.1f dBFS RMS", values.inputRMSDB) + spl(values.inputRMSDB, offsets?.input)
                + String(format: ", peak %.1f dBFS", values.inputPeakDB),
            String(format: "Output: %.1f dBFS RMS", values.outputRMSDB) + spl(values.outputRMSDB, offsets?.output)
                + String(format: ", peak %.1f dBFS", values.outputPeakDB),
        ]
        return rows.enumerated().map { i, row in svgText(left + plotLeft, top + 17 * Double(i), row, size: 12, color: colors.text) }
            .joined()
    }

    // MARK: Drawing helpers

    struct ValueAxis {
        let top: Double
        let height: Double
        let range: (low: Double, high: Double)
        /// Clamped to the range, so a -140 dB floor sits on the axis instead of off the picture.
        func position(_ value: Double) -> Double {
            top + (1 - (min(max(value, range.low), range.high) - range.low) / (range.high - range.low)) * height
        }
    }

    private static func grid(_ x: LogFrequencyAxis, _ y: ValueAxis, step: Double) -> String {
        var out = ""
        for hz in x.octaveTicksHz {
            let px = svgNumber(x.x(Double(hz)))
            out += "<line x1=\"\(px)\" y1=\"\(svgNumber(y.top))\" x2=\"\(px)\" y2=\"\(svgNumber(y.top + y.height))\" stroke=\"#e3e3e3\"/>\n"
            out += svgText(x.x(Double(hz)), y.top + y.height + 14, frequencyLabel(hz), anchor: "middle")
        }
        for value in roundTicks(from: y.range.low, to: y.range.high, step: step) {
            let py = svgNumber(y.position(value))
            out +=
                "<line x1=\"\(svgNumber(x.left))\" y1=\"\(py)\" x2=\"\(svgNumber(x.left + x.width))\" y2=\"\(py)\" stroke=\"#e3e3e3\"/>\n"
            out += svgText(x.left - 5, y.position(value) + 4, String(Int(value)), anchor: "end", className: "tick")
        }
        return out
            + "<rect x=\"\(svgNumber(x.left))\" y=\"\(svgNumber(y.top))\" width=\"\(svgNumber(x.width))\" height=\"\(svgNumber(y.height))\" fill=\"none\" stroke=\"#999\"/>\n"
    }

    private static func legend(_ entries: [(String, String, String, Double)], x: Double, y: Double) -> String {
        var out = ""
        var at = x
        for (label, color, dash, opacity) in entries {
            let dashAttribute = dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\""
            out +=
                "<line x1=\"\(svgNumber(at))\" y1=\"\(svgNumber(y - 4))\" x2=\"\(svgNumber(at + 20))\" y2=\"\(svgNumber(y - 4))\" stroke=\"\(color)\" stroke-width=\"\(opacity < 1 ? 3 : 2)\" stroke-opacity=\"\(opacity)\"\(dashAttribute)/>\n"
            out += svgText(at + 24, y, label, size: 10, color: "#333")
            at += 34 + estimatedTextWidth(label, fontSize: 10)
        }
        return out
    }

    private static func polyline(
        _ id: String, _ points: [(Double, Double)], stroke: String, width: Double, dash: String = "", opacity: Double = 1
    ) -> String {
        let coordinates = points.map { "\(svgNumber($0.0)),\(svgNumber($0.1))" }.joined(separator: " ")
        let dashAttribute = dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\""
        let opacityAttribute = opacity < 1 ? " stroke-opacity=\"\(opacity)\"" : ""
        return
            "<polyline id=\"\(id)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"\(width)\"\(dashAttribute)\(opacityAttribute) points=\"\(coordinates)\"/>\n"
    }
}
