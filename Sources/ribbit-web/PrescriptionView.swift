import Foundation
import Hummingbird
import RibbitFitting
import RibbitIntake
import RibbitPlot
import RibbitPrescription
import RibbitStore

/// What the Load screen's preview and the Details screen both show: a prescription as `rx show
/// --json` gives it, its audiogram drawn by RibbitPlot (the SVG the CLI's plots share), and for
/// a history entry the entry as `ribbitd list --json` gives it. /rx-view.js draws it.
struct PrescriptionView: Encodable, Sendable {
    /// The history entry (Details), absent for an upload.
    var entry: HistoryEntry?
    /// The upload's name and what it was, "a QR code" or "a text file" (Load).
    var file: String?
    var kind: String?
    var prescription: PrescriptionReport
    /// The output limit this prescription puts in force per ear ("left", "right"), dB SPL: what
    /// `ribbitd status` reports while it plays (`listening.outputLimitDBSPL`).
    var outputLimitDBSPL: [String: Double]
    /// A standalone `<svg>`, title and desc included.
    var audiogramSVG: String
    /// The gains for soft speech: the rule's target and what plays, per ear, the bands short of
    /// target marked (`gainChart`); absent when no ear is fitted.
    var gainSVG: String?

    /// `trusted`: signed by a trusted key (the limits depend on it), as for the report.
    init(
        _ report: PrescriptionReport, rx: Prescription, trusted: Bool, entry: HistoryEntry? = nil, file: String? = nil,
        kind: String? = nil
    ) {
        self.entry = entry
        self.file = file
        self.kind = kind
        prescription = report
        outputLimitDBSPL = Self.outputLimitsDBSPL(rx, trusted: trusted)
        func points(_ ear: Ear) -> [AudiogramPoint] {
            guard let ear = report.ears[ear.rawValue] else { return [] }
            return ear.thresholdsDBHL.compactMap { hz, db in
                Int(hz).map { AudiogramPoint(frequencyHz: $0, dBHL: db, noResponse: ear.noResponseHz.contains($0)) }
            }.sorted { $0.frequencyHz < $1.frequencyHz }
        }
        audiogramSVG = AudiogramSVG.chart(right: points(.right), left: points(.left), title: "Audiogram: \(report.name)")
        gainSVG = Self.gainChart(report)
    }

    /// Soft speech (50 dB SPL), where the gains are largest and a maximum bites first: per ear
    /// the rule's target (dashed) and what ribbit plays (solid, the ear's symbol at each band),
    /// and a pale bar from one to the other over each band that falls short.
    static func gainChart(_ report: PrescriptionReport) -> String? {
        var series: [LineChart.Series] = []
        for ear in [Ear.right, .left] {
            guard let bands = report.ears[ear.rawValue]?.bands, !bands.isEmpty else { continue }
            let name = ear == .right ? "Right" : "Left"
            let short = bands.filter { $0.cappedBy[0] != nil }
            if !short.isEmpty {
                series.append(
                    LineChart.Series(
                        color: ear.plotColor, dash: "6 4", label: "\(name): target", points: bands.map { ($0.centreHz, $0.target50DB) }))
            }
            series.append(
                LineChart.Series(
                    color: ear.plotColor, dash: "", label: "\(name): plays", points: bands.map { ($0.centreHz, $0.gain50DB) },
                    marker: ear == .right ? .circle : .cross))
            for (i, band) in short.enumerated() {
                series.append(
                    LineChart.Series(
                        color: ear.plotColor, dash: "", label: "\(name): short",
                        points: [(band.centreHz, band.gain50DB), (band.centreHz, band.target50DB)], width: 8, inLegend: i == 0))
            }
        }
        guard !series.isEmpty else { return nil }
        return LineChart.svg(
            id: "gains", title: "Gain for soft speech (50 dB SPL)", x: .logFrequency(200, 8000), xLabel: "Frequency (Hz)",
            yLabel: "Insertion gain (dB)", series: series, yIncluding: [0])
    }

    var response: Response { WebApp.json(HistoryEntry.json(self)) }

    /// Per ear, the highest of its bands' output limits, as the daemon computes it for the
    /// status: the compressor's settings, or the pass-through's for an ear left out.
    static func outputLimitsDBSPL(_ rx: Prescription, trusted: Bool) -> [String: Double] {
        Dictionary(
            uniqueKeysWithValues: Ear.allCases.map { ear in
                let settings =
                    CompressorFitting.settings(rx, ear: ear, trusted: trusted) ?? CompressorFitting.passThrough(rx, trusted: trusted)
                return (ear.rawValue, ((settings.bands.map(\.limitDBSPL).max() ?? CompressorFitting.otcLimitDBSPL) * 10).rounded() / 10)
            })
    }

    /// The renderer both screens' scripts start with (one copy, served in each).
    static let javaScript = Web.text(PackageResources.prescription_view_js)

    static let css = Web.text(PackageResources.prescription_view_css)
}
