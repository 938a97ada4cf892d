import Glibc
import RibbitPrescription

/// Line charts for reports and web pages: series of (x, y) points over a log-frequency or a
/// linear axis, legend on the right, as `ribbitd verify`'s report and the web app's gain charts
/// draw them. A standalone `<svg>` with its title. No Foundation.
public enum LineChart {
    public enum Marker: Sendable { case circle, cross }

    public struct Series: Sendable {
        public var color: String
        /// An SVG `stroke-dasharray` ("" solid).
        public var dash: String
        public var label: String
        public var points: [(Double, Double)]
        public var marker: Marker?
        /// Stroke width in pixels (a wide, pale stroke marks a range rather than a curve).
        public var width: Double
        /// Whether the legend lists it (one label stands for a set of marks).
        public var inLegend: Bool

        public init(
            color: String, dash: String, label: String, points: [(Double, Double)], marker: Marker? = nil, width: Double = 1.6,
            inLegend: Bool = true
        ) {
            self.color = color
            self.dash = dash
            self.label = label
            self.points = points
            self.marker = marker
            self.width = width
            self.inLegend = inLegend
        }
    }

    public enum XAxis: Sendable {
        case logFrequency(Double, Double)
        case linear(Double, Double, step: Double)
    }

    public static func svg(
        id: String, title: String?, x: XAxis, xLabel: String, yLabel: String, series: [Series], diagonal: Bool = false,
        yIncluding: [Double] = []
    ) -> String {
        let width = 660.0, height = 300.0
        let left = 58.0, right = 150.0, top = title == nil ? 14.0 : 30.0, bottom = 44.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let values = series.flatMap { $0.points.map(\.1) } + yIncluding
        var low = ((values.min() ?? 0) / 10).rounded(.down) * 10, high = ((values.max() ?? 10) / 10).rounded(.up) * 10
        if diagonal {
            low = min(low, 40)
            high = max(high, 100)
        }
        if high - low < 20 { high = low + 20 }
        let yStep = high - low > 80 ? 20.0 : 10.0
        func y(_ v: Double) -> Double { top + plotHeight * (high - min(max(v, low), high)) / (high - low) }
        let xOf: (Double) -> Double
        var xTicks: [(Double, String)] = []
        switch x {
        case .logFrequency(let lo, let hi):
            let axis = LogFrequencyAxis(left: left, width: plotWidth, lowHz: lo, highHz: hi)
            xOf = axis.x
            xTicks = axis.octaveTicksHz.map { (Double($0), frequencyLabel($0)) }
        case .linear(let lo, let hi, let step):
            xOf = { left + plotWidth * (min(max($0, lo), hi) - lo) / (hi - lo) }
            xTicks = roundTicks(from: lo, to: hi, step: step).map { ($0, num($0)) }
        }
        var svg: [String] = []
        svg.append(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"\(id)\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"11\">"
        )
        svg.append("<title>\(xmlEscaped(title ?? yLabel))</title>")
        if let title { svg.append("<text x=\"\(f(left))\" y=\"18\" font-size=\"12\" font-weight=\"bold\">\(xmlEscaped(title))</text>") }
        svg.append(
            "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#444\"/>")
        for (value, label) in xTicks {
            let px = xOf(value)
            svg.append("<line x1=\"\(f(px))\" y1=\"\(f(top))\" x2=\"\(f(px))\" y2=\"\(f(top + plotHeight))\" stroke=\"#ddd\"/>")
            svg.append("<text x=\"\(f(px))\" y=\"\(f(top + plotHeight + 14))\" text-anchor=\"middle\">\(label)</text>")
        }
        for value in roundTicks(from: low, to: high, step: yStep) {
            let py = y(value)
            svg.append("<line x1=\"\(f(left))\" y1=\"\(f(py))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(py))\" stroke=\"#ddd\"/>")
            svg.append("<text x=\"\(f(left - 5))\" y=\"\(f(py + 4))\" text-anchor=\"end\">\(num(value))</text>")
        }
        svg.append("<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 8))\" text-anchor=\"middle\">\(xmlEscaped(xLabel))</text>")
        svg.append(
            "<text x=\"14\" y=\"\(f(top + plotHeight / 2))\" text-anchor=\"middle\" transform=\"rotate(-90 14 \(f(top + plotHeight / 2)))\">\(xmlEscaped(yLabel))</text>"
        )
        if diagonal {
            let a = max(low, 40.0), b = min(high, 100.0)
            svg.append(
                "<line x1=\"\(f(xOf(a)))\" y1=\"\(f(y(a)))\" x2=\"\(f(xOf(b)))\" y2=\"\(f(y(b)))\" stroke=\"#999\" stroke-dasharray=\"1 3\"/>"
            )
        }
        for s in series where !s.points.isEmpty {
            let path = s.points.map { "\(f(xOf($0.0))),\(f(y($0.1)))" }.joined(separator: " ")
            let dash = s.dash.isEmpty ? "" : " stroke-dasharray=\"\(s.dash)\""
            svg.append(
                "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"\(f(s.width))\"\(dash)\(s.width > 3 ? " stroke-opacity=\"0.35\"" : "")/>"
            )
            for p in s.points {
                svg.append(marker(s.marker, x: xOf(p.0), y: y(p.1), color: s.color))
            }
        }
        // Legend, right of the plot.
        for (i, s) in series.filter(\.inLegend).enumerated() {
            let ly = top + 10 + Double(i) * 16
            let lx = left + plotWidth + 10
            let dash = s.dash.isEmpty ? "" : " stroke-dasharray=\"\(s.dash)\""
            svg.append(
                "<line x1=\"\(f(lx))\" y1=\"\(f(ly))\" x2=\"\(f(lx + 22))\" y2=\"\(f(ly))\" stroke=\"\(s.color)\" stroke-width=\"\(f(s.width))\"\(dash)\(s.width > 3 ? " stroke-opacity=\"0.35\"" : "")/>"
            )
            svg.append(marker(s.marker, x: lx + 11, y: ly, color: s.color))
            svg.append("<text x=\"\(f(lx + 27))\" y=\"\(f(ly + 4))\" font-size=\"10\">\(xmlEscaped(s.label))</text>")
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }

    static func marker(_ marker: Marker?, x: Double, y: Double, color: String) -> String {
        switch marker {
        case .circle: "<circle cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"3.5\" fill=\"white\" stroke=\"\(color)\" stroke-width=\"1.4\"/>"
        case .cross:
            "<path d=\"M\(f(x - 3.5)) \(f(y - 3.5))L\(f(x + 3.5)) \(f(y + 3.5))M\(f(x - 3.5)) \(f(y + 3.5))L\(f(x + 3.5)) \(f(y - 3.5))\" stroke=\"\(color)\" stroke-width=\"1.4\"/>"
        case nil: ""
        }
    }

    static func f(_ v: Double) -> String { String(fixed: v, 1) }
    static func num(_ v: Double) -> String { Prescription.number(v) }
}

extension String {
    /// A number with `digits` decimals, without Foundation ("-0.0" becomes "0.0").
    public init(fixed value: Double, _ digits: Int) {
        guard value.isFinite else {
            self = value.isNaN ? "nan" : value > 0 ? "inf" : "-inf"
            return
        }
        let scale = pow(10, Double(digits))
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled - Double(whole) * scale)
        var text = String(whole)
        if digits > 0 {
            let f = String(fraction)
            text += "." + String(repeating: "0", count: digits - f.count) + f
        }
        self = (value < 0 && scaled > 0 ? "-" : "") + text
    }
}
