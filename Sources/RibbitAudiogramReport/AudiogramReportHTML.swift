import Foundation
import RibbitAudiometry
import RibbitPlot
import RibbitPrescription
import RibbitSettings

/// A hearing test as one self-contained, printable HTML page (A4) for the wearer's doctor: the
/// disclaimer boxed at the top, the audiogram (RibbitPlot's chart: right red O, left blue X,
/// no-response arrows), the thresholds with the noise they were measured in, the reliability
/// indicators and flags, the headphones and calibration. No scripts, no external resources.
public enum AudiogramReportHTML {
    /// The chart's points for an ear: thresholds, and no responses at the level tested, masked
    /// ones marked; undetermined frequencies are not drawn (the table says so).
    public static func points(_ result: HearingTestResult, ear: Ear) -> [AudiogramPoint] { points(result.frequencies, ear: ear) }

    public static func points(_ frequencies: [FrequencyResult], ear: Ear) -> [AudiogramPoint] {
        frequencies.audiogram(ear: ear).compactMap { measured in
            switch measured.status {
            case .threshold:
                measured.thresholdDBHL.map { AudiogramPoint(frequencyHz: measured.frequencyHz, dBHL: $0, masked: measured.isMasked) }
            case .noResponse:
                AudiogramPoint(
                    frequencyHz: measured.frequencyHz, dBHL: measured.maximumTestedDBHL, noResponse: true, masked: measured.isMasked)
            case .undetermined: nil
            }
        }
    }

    public static func render(_ record: HearingTestRecord) -> String {
        let result = record.result
        let chart = AudiogramSVG.chart(
            right: points(result, ear: .right), left: points(result, ear: .left), title: "Audiogram, hearing test \(record.id ?? 0)")
        let frequencies = Set(result.frequencies.map(\.frequencyHz)).sorted()
        var rows = ""
        for frequencyHz in frequencies {
            rows += "<tr><td>\(frequencyHz)</td>"
            for ear in Ear.plotOrder {
                let kept = result.threshold(ear: ear, frequencyHz: frequencyHz)
                let pair = result.frequencies.retestPair(ear: ear).flatMap { $0.first.frequencyHz == frequencyHz ? $0 : nil }
                let (first, retest) = pair.map { ($0.first, Optional($0.retest)) } ?? (kept, nil)
                var level = kept.map(cell) ?? "not tested"
                if let first, let retest {
                    level += "<br><span class=\"small\">first \(cell(first))<br>retest \(cell(retest))</span>"
                }
                let noise =
                    [first, retest].compactMap { $0?.ambientNoiseDBSPL }.max().map { String(format: "%.1f", $0) }
                    ?? (kept == nil ? "-" : "not checked")
                let presentations = [first, retest].compactMap { $0?.presentations }
                rows +=
                    "<td class=\"\(ear.rawValue)\">\(level)</td><td>\(noise)</td><td>\(presentations.isEmpty ? "-" : presentations.map(String.init).joined(separator: " + "))</td>"
            }
            rows += "</tr>\n"
        }
        let reliability = result.reliabilityLines.map { "<li>\(escape($0))</li>" }.joined(separator: "\n")
        let verdict =
            result.isUnreliable
            ? "<p class=\"unreliable\">Flagged UNRELIABLE: the thresholds may be wrong; repeat the test.</p>"
            : ""
        let findings = record.findings.lines.map { "<p>\(escape($0))</p>" }.joined(separator: "\n")
        let referral = findings.isEmpty ? "" : "<div class=\"referral\" id=\"findings\">\(findings)</div>"
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>ribbit hearing test \(record.id ?? 0), \(escape(record.localDate))</title>
            <style>
            @page { size: A4; margin: 12mm; }
            body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; font-size: 9.5pt; color: #111; max-width: 186mm; margin: auto; }
            h1 { font-size: 15pt; margin: 0 0 4pt 0; }
            h2 { font-size: 11.5pt; margin: 8pt 0 3pt 0; border-bottom: 1px solid #999; }
            .disclaimer { border: 2px solid #b00000; background: #fff4f4; padding: 5pt 8pt; margin: 0 0 8pt 0; font-weight: bold; }
            .unreliable { color: #b00000; font-weight: bold; }
            .referral { border: 2px solid #b00000; padding: 2pt 8pt; margin: 4pt 0; font-weight: bold; }
            .columns { display: flex; gap: 6mm; align-items: flex-start; }
            .chart { width: 88mm; flex: none; }
            .chart svg { width: 100%; height: auto; display: block; }
            table { border-collapse: collapse; font-size: 8.5pt; margin: 3pt 0; }
            th, td { border: 1px solid #bbb; padding: 1.5pt 4pt; text-align: right; vertical-align: top; }
            #thresholds th, #thresholds td { white-space: nowrap; }
            th { background: #eee; }
            td.l, th.l { text-align: left; }
            .right { color: \(Ear.right.plotColor); } .left { color: \(Ear.left.plotColor); }
            .small { font-size: 7.5pt; color: #444; }
            ul { margin: 2pt 0; padding-left: 14pt; }
            footer { margin-top: 8pt; font-size: 7.5pt; color: #555; }
            @media print { .columns, table, ul { break-inside: avoid; } }
            </style>
            </head>
            <body>
            <p class="disclaimer" id="disclaimer">\(escape(HearingTestRecord.disclaimer))</p>
            <h1>Pure-tone hearing test (self-administered)</h1>
            <table id="details" style="width: 100%">
            <tr><th class="l">Date</th><td class="l">\(escape(record.localDate)) (\(escape(record.date)) UTC)</td></tr>
            <tr><th class="l">Headphones</th><td class="l">\(escape(record.transducerText))</td></tr>
            <tr><th class="l">Calibration</th><td class="l">\(escape(record.calibrationText))</td></tr>
            <tr><th class="l">Ceiling</th><td class="l">\(HearingTestRecord.number(record.ceilingDBHL)) dB HL: the loudest tone the test could play</td></tr>
            <tr><th class="l">Method</th><td class="l">Pulsed pure tones (3 x 200 ms), modified Hughson-Westlake (down 10, up 5 dB; threshold: 2 of 3 ascending responses), catch trials, 1 kHz retest</td></tr>
            </table>
            \(verdict)
            <div class="columns">
            <div class="chart" id="chart">
            \(chart)
            </div>
            <div>
            <h2>Thresholds (dB HL)</h2>
            <table id="thresholds">
            <tr><th rowspan="2">Hz</th><th colspan="3" class="right">Right ear (O)</th><th colspan="3" class="left">Left ear (X)</th></tr>
            <tr><th class="right">dB HL</th><th>noise</th><th>n</th><th class="left">dB HL</th><th>noise</th><th>n</th></tr>
            \(rows)</table>
            <p class="small">NR N: no response at N dB HL, the most the test played; the threshold is higher (an arrow on the chart). \
            Undetermined: the answers were too inconsistent for a threshold. Noise: the loudest ambient octave band around the \
            frequency, dB SPL, measured by the microphone while the tones played. n: tone presentations. Where 1 kHz was measured \
            twice the better value is the audiogram's (ASHA 2005); the two agree within 5 dB or the test is flagged.</p>
            </div>
            </div>
            \(referral)
            <h2>Reliability</h2>
            <ul id="reliability">
            \(reliability)
            </ul>
            <footer>Made by ribbitd \(escape(RibbitVersion.current)) from hearing test \(record.id ?? 0); every presentation is kept in the record (`ribbitd audiogram show \(record.id ?? 0) --json`).</footer>
            </body>
            </html>

            """
    }

    static func escape(_ text: String) -> String { xmlEscaped(text) }

    /// A threshold as the table shows it: the number, "NR 90" or "undetermined".
    static func cell(_ measured: FrequencyResult) -> String {
        let level =
            switch measured.status {
            case .threshold: measured.thresholdDBHL.map(String.init) ?? "undetermined"
            case .noResponse: "NR \(measured.maximumTestedDBHL)"
            case .undetermined: "undetermined"
            }
        return level + (measured.maskingDBEM.map { "<br><span class=\"small\">masked, \($0) dB EM</span>" } ?? "")
    }
}
