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
    static let javaScript = #"""
        // A prescription as /api/preview and /api/details give it: the fields, the audiogram
        // (the server's SVG, parsed as SVG, never as HTML) and a table per ear of its hearing
        // levels and target gains.
        function field(list, label, value) {
          if (value === undefined || value === null || value === "") return;
          list.append(el("dt", { text: label }), el("dd", { text: String(value) }));
        }

        function earTable(rx, ear, title) {
          const report = rx.ears[ear];
          const table = el("table", { class: "gains " + ear });
          const caption = el("caption", { text: title });
          if (!report.processed) caption.append(el("span", { class: "note", text: " — not prescribed: passed through unchanged" }));
          table.append(caption);
          table.append(el("thead", {}, el("tr", {},
            el("th", { scope: "col", text: "Frequency (Hz)" }), el("th", { scope: "col", text: "Hearing level (dB HL)" }),
            el("th", { scope: "col", text: "Target gain (dB)" }))));
          const frequencies = Object.keys(report.targetGainDB).map(Number).sort((a, b) => a - b);
          const body = el("tbody");
          for (const hz of frequencies) {
            const level = report.thresholdsDBHL[hz];
            const heard = level === undefined ? "–" : String(level).replace("-", "−") + (report.noResponseHz.includes(hz) ? " no response" : "");
            const gain = report.targetGainDB[hz];
            // One decimal, as `rx show` prints them.
            const target = !report.processed ? "–" : gain === null ? "off" : (gain > 0 ? "+" : "") + gain.toFixed(1).replace("-", "−");
            body.append(el("tr", {}, el("th", { scope: "row", text: String(hz) }), el("td", { text: heard }), el("td", { text: target })));
          }
          table.append(body);
          return table;
        }

        function showPrescription(box, data) {
          const rx = data.prescription;
          box.replaceChildren();
          box.append(el("h3", { class: "name", text: rx.name }));
          const facts = el("dl", { class: "facts" });
          field(facts, "Environment", rx.environment);
          field(facts, "Rule", rx.rule);
          field(facts, "Audiologist", rx.audiologist);
          field(facts, "Patient", rx.patient);
          field(facts, "Date", rx.date);
          if (data.entry) field(facts, "Loaded", data.entry.loadedAt.replace("T", " ").replace("Z", " UTC"));
          field(facts, "Signature", rx.signature);
          facts.append(el("dt", { text: "Output limit" }), el("dd", {}, ...earLimits(data.outputLimitDBSPL.left, data.outputLimitDBSPL.right)));
          field(facts, "Digital ceiling", decibels(rx.maxOutputDBFS) + " dBFS");
          field(facts, "Low-pass", rx.lowpassHz ? rx.lowpassHz + " Hz" : "none");
          field(facts, "Note", rx.note);
          if (data.file) field(facts, "File", data.file + " (" + data.kind + ")");
          if (data.entry) field(facts, "History id", data.entry.id);
          const figure = svgFigure(data.audiogramSVG, "audiogram");
          // The chart first (on a phone it is what shows), the facts beside it on a wide screen.
          const grid = el("div", { class: "rx-grid" }, figure, facts);
          if (data.gainSVG) grid.append(el("div", { class: "gain-chart" }, svgFigure(data.gainSVG, "gain-figure"), shortfall(rx)));
          grid.append(el("div", { class: "tables" }, earTable(rx, "right", "Right ear (O)"), earTable(rx, "left", "Left ear (X)")));
          box.append(grid);
        }

        function signed(db) { return (db > 0 ? "+" : "") + decibels(db); }

        // A server-made chart, parsed as SVG (never as HTML).
        function svgFigure(text, kind) {
          const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
          const figure = el("figure", { class: kind });
          if (svg.nodeName === "svg") figure.append(document.importNode(svg, true));
          return figure;
        }

        // Where the fitting plays less than its rule asks, per ear and band (the largest gap of
        // soft, average and loud speech), and the note for the audiologist: the same facts as
        // `ribbitd rx show`.
        function shortfall(rx) {
          const box = el("div", { class: "shortfall", id: "rx-shortfall" });
          const levels = [50, 65, 80];
          const items = [];
          for (const ear of ["right", "left"]) {
            for (const band of (rx.ears[ear] && rx.ears[ear].bands) || []) {
              const targets = [band.target50DB, band.target65DB, band.target80DB];
              const gains = [band.gain50DB, band.gain65DB, band.gain80DB];
              let worst = -1;
              for (let i = 0; i < 3; i++) if (band.cappedBy[i] && (worst < 0 || targets[i] - gains[i] > targets[worst] - gains[worst])) worst = i;
              if (worst < 0) continue;
              items.push(el("li", { class: ear, text: (ear === "right" ? "Right " : "Left ") + band.centreHz + " Hz: "
                + signed(targets[worst]) + " → " + signed(gains[worst]) + " dB at " + levels[worst] + " dB SPL (" + band.cappedBy[worst] + ")" }));
            }
          }
          if (items.length === 0) {
            box.append(el("p", { text: "Every band plays its target (ribbit's maximum gain: +" + rx.maximumGainDB + " dB)." }));
          } else {
            box.append(el("p", { text: "Short of target (ribbit plays at most +" + rx.maximumGainDB + " dB; the output limits protect the ears):" }));
            box.append(el("ul", {}, ...items));
          }
          if (rx.clinicalNote) box.append(el("p", { class: "clinical-note", text: "Note for the audiologist: " + rx.clinicalNote }));
          return box;
        }

        """#

    static let css = #"""
        .rx-screen { display: block; }
        .rx-screen > .hint { margin: 0.2rem 0 0.8rem; }
        .rx-view h3.name { font-size: 1.5rem; margin: 0.6rem 0 0.4rem; }
        .rx-grid { display: grid; grid-template-columns: 1fr; gap: 1rem; }
        @media (min-width: 60rem) { .rx-grid { grid-template-columns: minmax(0, 34rem) 1fr; align-items: start; } .rx-grid .tables { grid-column: 1 / -1; } }
        .audiogram, .gain-figure { margin: 0; }
        .gain-figure svg { display: block; width: 100%; max-width: 44rem; height: auto; background: #fff; border: 3px solid var(--line);
          border-radius: 0.6rem; }
        .gain-chart { grid-column: 1 / -1; }
        .shortfall ul { margin: 0.2rem 0; padding-left: 1.2rem; columns: 2 16rem; }
        .shortfall li.right { color: #d00000; }
        .shortfall li.left { color: var(--accent); }
        .clinical-note { font-weight: 700; }
        .audiogram svg { display: block; width: 100%; max-width: 34rem; height: auto; background: #fff; border: 3px solid var(--line);
          border-radius: 0.6rem; }
        .tables { display: grid; gap: 1rem; grid-template-columns: 1fr; }
        @media (min-width: 40rem) { .tables { grid-template-columns: 1fr 1fr; } }
        table.gains { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        table.gains caption { text-align: left; font-weight: 700; font-size: 1.1rem; padding-bottom: 0.3rem; }
        table.gains.right caption { color: #d00000; }
        table.gains.left caption { color: var(--accent); }
        table.gains .note { color: var(--muted); font-weight: 400; font-size: 0.9rem; }
        table.gains th, table.gains td { border: 2px solid var(--line); padding: 0.15rem 0.4rem; text-align: right; }
        table.gains thead th { font-size: 0.8rem; vertical-align: bottom; }
        .file-label { display: block; font-weight: 700; font-size: 1.2rem; margin: 0.4rem 0; }
        input[type="file"] { font: inherit; width: 100%; max-width: 40rem; padding: 0.5rem; border: 3px dashed var(--line);
          border-radius: 0.5rem; }
        input[type="file"]::file-selector-button { font: inherit; font-weight: 700; min-height: 3rem; margin-right: 0.8rem; padding: 0.4rem 1rem;
          border: 3px solid var(--line); border-radius: 0.5rem; background: var(--accent); color: #fff; cursor: pointer; }
        #preview { margin-top: 1rem; border-top: 3px solid var(--line); }
        #preview-title:focus { outline: none; box-shadow: none; }
        @media (prefers-color-scheme: dark) {
          table.gains.right caption { color: #ff8080; }
          .shortfall li.right { color: #ff8080; }
          input[type="file"]::file-selector-button { color: #000; }
        }

        """#
}
