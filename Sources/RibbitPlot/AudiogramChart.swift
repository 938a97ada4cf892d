import RibbitPrescription

/// The audiogram form (ASHA 1990 guidelines, ANSI S3.21): frequency on a log axis from 125 Hz to
/// 8 kHz with octave grid lines (half octaves dashed), hearing level in dB HL growing downward
/// from -10 to 120, and a square grid: one octave as wide as 20 dB is tall.
public struct AudiogramScale: Sendable, Equatable {
    public static let lowHz = 125.0, highHz = 8000.0
    public static let octaveTicksHz = [125, 250, 500, 1000, 2000, 4000, 8000]
    public static let halfOctaveTicksHz = [750, 1500, 3000, 6000]
    /// dB HL at the top and the bottom edge.
    public static let topDBHL = -10.0, bottomDBHL = 120.0
    public static let levelTicksDBHL = roundTicks(from: topDBHL, to: bottomDBHL, step: 10)
    /// The square grid: an octave is as wide as this many dB are tall.
    public static let decibelsPerOctave = 20.0

    public let frequency: LogFrequencyAxis
    public let top: Double

    /// The chart with its 125 Hz line at `left` and -10 dB HL at `top`.
    public init(left: Double, top: Double, pixelsPerOctave: Double) {
        frequency = LogFrequencyAxis(left: left, lowHz: Self.lowHz, highHz: Self.highHz, pixelsPerOctave: pixelsPerOctave)
        self.top = top
    }

    public var left: Double { frequency.left }
    public var pixelsPerDB: Double { frequency.pixelsPerOctave / Self.decibelsPerOctave }
    public var width: Double { frequency.width }
    public var height: Double { (Self.bottomDBHL - Self.topDBHL) * pixelsPerDB }

    public func x(_ hz: Double) -> Double { frequency.x(hz) }
    /// Downward: more hearing loss is lower on the page. Clamped to the form.
    public func y(_ dBHL: Double) -> Double { top + (min(max(dBHL, Self.topDBHL), Self.bottomDBHL) - Self.topDBHL) * pixelsPerDB }
}

/// One threshold on the audiogram.
public struct AudiogramPoint: Sendable, Equatable {
    public var frequencyHz: Int
    public var dBHL: Int
    /// No response at `dBHL`, the level tested: drawn with a downward arrow, not joined.
    public var noResponse: Bool
    /// Measured with masking noise in the other ear: drawn with the masked symbol.
    public var masked: Bool

    public init(frequencyHz: Int, dBHL: Int, noResponse: Bool = false, masked: Bool = false) {
        self.frequencyHz = frequencyHz
        self.dBHL = dBHL
        self.noResponse = noResponse
        self.masked = masked
    }

    /// The symbol it is drawn with.
    public func symbol(_ ear: Ear) -> AudiogramSymbol { masked ? ear.maskedAudiogramSymbol : ear.audiogramSymbol }

    /// The ear's audiogram from a prescription, by frequency (empty when the ear is not given).
    public static func of(_ prescription: Prescription, ear: Ear) -> [AudiogramPoint] {
        let silent = prescription.noResponse[ear] ?? []
        return (prescription.thresholds[ear] ?? [:]).sorted { $0.key < $1.key }.map {
            AudiogramPoint(frequencyHz: $0.key, dBHL: $0.value, noResponse: silent.contains($0.key))
        }
    }
}

/// An audiogram as an SVG fragment: the form, and per ear its symbols joined by a line of its
/// colour. Scripts and tests find the parts by id and class: `audiogram-EAR` (the line, a path
/// of segments between responses), `audiogram-EAR-mark` (one element per threshold, with
/// `data-symbol` O or X, `data-hz`, `data-db-hl` and `data-no-response`), grid lines of class
/// `audiogram-grid-hz` / `audiogram-grid-hz-minor` / `audiogram-grid-db` with `data-hz` or
/// `data-db-hl`.
public enum AudiogramSVG {
    /// Radius of the O and half the width of the X, px.
    public static let symbolRadius = 5.5

    /// The empty form with its axis labels (outside it: 44 px to the left, 34 px below).
    public static func form(_ scale: AudiogramScale) -> String {
        let (left, top, right, bottom) = (scale.left, scale.top, scale.left + scale.width, scale.top + scale.height)
        var out = ""
        for hz in AudiogramScale.halfOctaveTicksHz {
            let x = scale.x(Double(hz))
            out +=
                "<line class=\"audiogram-grid-hz-minor\" data-hz=\"\(hz)\" x1=\"\(svgNumber(x))\" y1=\"\(svgNumber(top))\" x2=\"\(svgNumber(x))\" y2=\"\(svgNumber(bottom))\" stroke=\"#d8d8d8\" stroke-dasharray=\"3 3\"/>\n"
        }
        for hz in AudiogramScale.octaveTicksHz {
            let x = scale.x(Double(hz))
            out +=
                "<line class=\"audiogram-grid-hz\" data-hz=\"\(hz)\" x1=\"\(svgNumber(x))\" y1=\"\(svgNumber(top))\" x2=\"\(svgNumber(x))\" y2=\"\(svgNumber(bottom))\" stroke=\"#c8c8c8\"/>\n"
            out += svgText(x, bottom + 14, frequencyLabel(hz), anchor: "middle")
        }
        for db in AudiogramScale.levelTicksDBHL {
            let y = scale.y(db)
            // 0 dB HL, normal hearing, a little stronger.
            let stroke = db == 0 ? "#999" : "#c8c8c8"
            out +=
                "<line class=\"audiogram-grid-db\" data-db-hl=\"\(Int(db))\" x1=\"\(svgNumber(left))\" y1=\"\(svgNumber(y))\" x2=\"\(svgNumber(right))\" y2=\"\(svgNumber(y))\" stroke=\"\(stroke)\"/>\n"
            out += svgText(left - 5, y + 4, String(Int(db)), anchor: "end")
        }
        out +=
            "<rect x=\"\(svgNumber(left))\" y=\"\(svgNumber(top))\" width=\"\(svgNumber(scale.width))\" height=\"\(svgNumber(scale.height))\" fill=\"none\" stroke=\"#777\"/>\n"
        out += svgText(left + scale.width / 2, bottom + 30, "Frequency (Hz)", anchor: "middle", color: "#444")
        let middle = top + scale.height / 2
        out +=
            "<text class=\"audiogram-level-title\" x=\"\(svgNumber(left - 34))\" y=\"\(svgNumber(middle))\" text-anchor=\"middle\" fill=\"#444\" transform=\"rotate(-90 \(svgNumber(left - 34)) \(svgNumber(middle)))\">Hearing level (dB HL)</text>\n"
        return out
    }

    /// One ear's thresholds: the line joining the responses, then the symbols over it.
    public static func ear(_ ear: Ear, _ points: [AudiogramPoint], on scale: AudiogramScale) -> String {
        let color = ear.plotColor
        // Segments between neighbouring responses; a no response breaks the line.
        var path = ""
        var previous: AudiogramPoint?
        for point in points.sorted(by: { $0.frequencyHz < $1.frequencyHz }) {
            defer { previous = point }
            guard !point.noResponse else { continue }
            let xy = "\(svgNumber(scale.x(Double(point.frequencyHz)))) \(svgNumber(scale.y(Double(point.dBHL))))"
            path += ((previous.map { !$0.noResponse } ?? false) ? " L" : (path.isEmpty ? "M" : " M")) + xy
        }
        var out =
            "<path id=\"audiogram-\(ear.rawValue)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" d=\"\(path)\"/>\n"
        for point in points { out += symbol(ear, point, on: scale) }
        return out
    }

    /// The ear's symbol at a threshold; for a no response, with an arrow pointing down and away
    /// from the chart's middle (right ear: down-left, left ear: down-right), as ASHA draws it.
    public static func symbol(_ ear: Ear, _ point: AudiogramPoint, on scale: AudiogramScale) -> String {
        let (x, y, r) = (scale.x(Double(point.frequencyHz)), scale.y(Double(point.dBHL)), symbolRadius)
        let color = ear.plotColor
        let shape = shape(point.symbol(ear), color: color, x: x, y: y)
        var arrow = ""
        if point.noResponse {
            // From the symbol's lower outer edge, 45 degrees down, with a head.
            let sign = ear == .right ? -1.0 : 1.0
            let (x0, y0) = (x + sign * r * 0.75, y + r * 0.75)
            let (x1, y1) = (x0 + sign * 11, y0 + 11)
            let head =
                "M\(svgNumber(x1 - sign * 5)) \(svgNumber(y1)) L\(svgNumber(x1)) \(svgNumber(y1)) L\(svgNumber(x1)) \(svgNumber(y1 - 5))"
            arrow =
                "<path d=\"M\(svgNumber(x0)) \(svgNumber(y0)) L\(svgNumber(x1)) \(svgNumber(y1)) \(head)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\"/>"
        }
        return
            "<g class=\"audiogram-\(ear.rawValue)-mark\" data-symbol=\"\(point.symbol(ear).rawValue)\" data-hz=\"\(point.frequencyHz)\" data-db-hl=\"\(point.dBHL)\" data-no-response=\"\(point.noResponse)\">\(shape)\(arrow)</g>\n"
    }
}

extension AudiogramSVG {
    /// The ear's O or X centred at (x, y).
    static func shape(_ ear: Ear, x: Double, y: Double) -> String { shape(ear.audiogramSymbol, color: ear.plotColor, x: x, y: y) }

    /// A symbol centred at (x, y).
    static func shape(_ symbol: AudiogramSymbol, color: String, x: Double, y: Double) -> String {
        let r = symbolRadius
        return switch symbol {
        case .triangle:
            "<path d=\"M\(svgNumber(x)) \(svgNumber(y - r * 1.15)) L\(svgNumber(x + r)) \(svgNumber(y + r * 0.85)) L\(svgNumber(x - r)) \(svgNumber(y + r * 0.85)) Z\" fill=\"white\" stroke=\"\(color)\" stroke-width=\"1.8\"/>"
        case .square:
            "<rect x=\"\(svgNumber(x - r * 0.9))\" y=\"\(svgNumber(y - r * 0.9))\" width=\"\(svgNumber(r * 1.8))\" height=\"\(svgNumber(r * 1.8))\" fill=\"white\" stroke=\"\(color)\" stroke-width=\"1.8\"/>"
        case .circle:
            "<circle cx=\"\(svgNumber(x))\" cy=\"\(svgNumber(y))\" r=\"\(svgNumber(r))\" fill=\"white\" stroke=\"\(color)\" stroke-width=\"1.8\"/>"
        case .cross:
            "<path d=\"M\(svgNumber(x - r)) \(svgNumber(y - r)) L\(svgNumber(x + r)) \(svgNumber(y + r)) M\(svgNumber(x - r)) \(svgNumber(y + r)) L\(svgNumber(x + r)) \(svgNumber(y - r))\" stroke=\"\(color)\" stroke-width=\"1.8\"/>"
        }
    }

    /// Width and height of `chart`'s viewBox, px.
    public static let chartSize = (width: 440.0, height: 476.0)

    /// A whole audiogram as one standalone `<svg>` (the web app's Load and Details screens): the
    /// form, a legend, both ears, and for screen readers a `<title>` and a `<desc>` that read every
    /// threshold out. Sized by its viewBox only, so the page scales it; white paper, so it reads
    /// the same in dark mode.
    public static func chart(right: [AudiogramPoint], left: [AudiogramPoint], title: String = "Audiogram") -> String {
        let scale = AudiogramScale(left: 60, top: 44, pixelsPerOctave: 60)
        func spoken(_ ear: Ear, _ points: [AudiogramPoint]) -> String {
            let name = "\(ear.plotTitle) (\(ear.audiogramSymbol.rawValue))"
            guard !points.isEmpty else { return "\(name): not tested" }
            let levels = points.sorted { $0.frequencyHz < $1.frequencyHz }.map {
                "\($0.frequencyHz) Hz \($0.dBHL) dB HL" + ($0.noResponse ? " no response" : "") + ($0.masked ? " masked" : "")
            }
            return "\(name): " + levels.joined(separator: ", ")
        }
        let description =
            "Hearing level in dB HL by frequency in Hz, more loss lower. " + spoken(.right, right) + ". " + spoken(.left, left) + "."
        let (width, height) = chartSize
        var out =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"audiogram-chart\" viewBox=\"0 0 \(svgNumber(width)) \(svgNumber(height))\" "
            + "role=\"img\" aria-labelledby=\"audiogram-title audiogram-desc\" font-family=\"system-ui, sans-serif\" font-size=\"15\">\n"
        out += "<title id=\"audiogram-title\">\(xmlEscaped(title))</title>\n<desc id=\"audiogram-desc\">\(xmlEscaped(description))</desc>\n"
        out += "<rect width=\"\(svgNumber(width))\" height=\"\(svgNumber(height))\" fill=\"white\"/>\n"
        // The legend above the form, the right ear first as everywhere.
        var x = scale.left
        // With masked thresholds the legend names their symbols too, in a smaller size to fit.
        let masked = (right + left).contains(where: \.masked)
        let size = masked ? 14.0 : 17.0
        out += "<g class=\"audiogram-legend\">\n"
        for ear in Ear.plotOrder {
            out += shape(ear, x: x + symbolRadius, y: 20)
            let label = "\(ear.plotTitle) (\(ear.audiogramSymbol.rawValue))"
            out += svgText(x + 2 * symbolRadius + 6, 25.5, label, size: size, color: ear.plotColor, weight: "bold")
            x += 2 * symbolRadius + 6 + estimatedTextWidth(label, fontSize: size, bold: true) + 16
        }
        if masked {
            for ear in Ear.plotOrder {
                out += shape(ear.maskedAudiogramSymbol, color: ear.plotColor, x: x + symbolRadius, y: 20)
                x += 2 * symbolRadius + 4
            }
            out += svgText(x + 2, 25.5, "masked", size: size, color: "#222", weight: "bold")
        }
        out += "</g>\n"
        out += form(scale)
        for (ear, points) in [(Ear.right, right), (.left, left)] where !points.isEmpty { out += Self.ear(ear, points, on: scale) }
        return out + "</svg>\n"
    }
}

/// A number for SVG attributes: one decimal, no "-0", no exponent (Foundation-free).
public func svgNumber(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    let sign = tenths < 0 ? "-" : ""
    let magnitude = abs(tenths)
    return magnitude % 10 == 0 ? "\(sign)\(magnitude / 10)" : "\(sign)\(magnitude / 10).\(magnitude % 10)"
}

/// A text element, its content escaped.
public func svgText(
    _ x: Double, _ y: Double, _ content: String, anchor: String = "start", size: Double? = nil, color: String? = nil,
    weight: String? = nil, className: String? = nil
) -> String {
    var attributes = "x=\"\(svgNumber(x))\" y=\"\(svgNumber(y))\""
    if anchor != "start" { attributes += " text-anchor=\"\(anchor)\"" }
    if let size { attributes += " font-size=\"\(svgNumber(size))\"" }
    if let color { attributes += " fill=\"\(color)\"" }
    if let weight { attributes += " font-weight=\"\(weight)\"" }
    if let className { attributes = "class=\"\(className)\" " + attributes }
    return "<text \(attributes)>\(xmlEscaped(content))</text>\n"
}

public func xmlEscaped(_ text: String) -> String {
    var out = ""
    for c in text {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default: out.append(c)
        }
    }
    return out
}

/// A generous estimate of the width of `text` in a sans-serif font, in px: DejaVu Sans (what
/// rsvg and browsers on Debian pick, among the widest) measures at most this for Latin text,
/// so text shortened to it does not run past the edge.
public func estimatedTextWidth(_ text: String, fontSize: Double, bold: Bool = false) -> Double {
    var ems = 0.0
    for c in text.unicodeScalars {
        switch c {
        case "i", "j", "l", ".", ",", ":", ";", "!", "|", "'", " ", "(", ")", "[", "]", "f", "t", "r", "I": ems += 0.42
        case "m", "w", "M", "W", "@", "%", "…": ems += 1.04
        case "A"..."Z": ems += 0.8
        default: ems += 0.66
        }
    }
    return ems * fontSize * (bold ? 1.14 : 1)
}

/// `text` shortened with "…" to fit `width` px (estimated), or whole if it fits.
public func fitted(_ text: String, width: Double, fontSize: Double, bold: Bool = false) -> String {
    guard estimatedTextWidth(text, fontSize: fontSize, bold: bold) > width else { return text }
    var kept = Substring(text)
    while !kept.isEmpty && estimatedTextWidth(kept + "…", fontSize: fontSize, bold: bold) > width { kept = kept.dropLast() }
    return kept + "…"
}
