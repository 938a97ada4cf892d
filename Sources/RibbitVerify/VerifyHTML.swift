import Glibc
import RibbitDSP
import RibbitPlot
import RibbitPrescription

/// The verify report as one self-contained HTML page: inline SVG plots (log-frequency axes
/// with octave ticks, dB SPL, targets dashed, right ear red and left ear blue as
/// `ClinicalConventions` draws them), the standard's definition next to each figure, tables of
/// the figures, A4 print styles with a page break between sections. No scripts, no external
/// resources.
public enum VerifyHTML {
    /// The ids of the plots every report holds (one `<svg id=...>` each).
    public static let plotIDs = ["ospl90", "full-on-gain", "io-right", "io-left", "target-50", "target-65", "target-80"]

    /// The whole report: the two-page print-out a test box gives (`printOut`), then what lies
    /// behind it, each part on its own page: the definitions, the target curves and tables, the
    /// wearer's program, the data log and the prescription.
    public static func render(_ report: VerifyReport) -> String {
        var body = printOutPages(report)
        body.append(definitionsSection(report))
        body.append(targetSection(report))
        if let wearer = report.wearerProgram { body.append(wearerSection(wearer)) }
        body.append(wearSection(report))
        body.append(prescriptionSection(report))
        return page(report, body: body)
    }

    /// The print-out alone: two A4 pages, as a test box prints them (`ribbitd verify
    /// --print-out`).
    public static func printOut(_ report: VerifyReport) -> String { page(report, body: printOutPages(report)) }

    /// Page 1: what was measured, ANSI S3.22's figures with ribbit's specification, the
    /// tolerance and the verdict, and the OSPL90 and the response at the reference test
    /// setting. Page 2: the full-on gain, the input/output curves, the target match and the
    /// latency.
    static func printOutPages(_ report: VerifyReport) -> [String] {
        let ospl90 = frequencyChart(
            id: "ospl90", yLabel: "Output (dB SPL)",
            series: report.ears.flatMap { ear in
                [
                    Series(ear: ear.ear, label: "\(earTitle(ear.ear)) OSPL90", points: ear.ospl90),
                    Series(
                        color: earColor(ear.ear), dash: "6 3", label: "\(earTitle(ear.ear)) at RTS, 60 in",
                        points: ear.frequencyResponse.compactMap { p in p.db.map { (p.hz, $0) } }),
                ]
            })
        let fullOn = frequencyChart(
            id: "full-on-gain", yLabel: "Gain (dB)",
            series: report.ears.map { Series(ear: $0.ear, label: "\(earTitle($0.ear)) full-on gain", points: $0.fullOnGain) })
        let first = """
            \(header(report))
            \(figuresTable(report))
            <p class="caption">OSPL90 (solid): output for 90 dB SPL tones, volume full on (+\(num(report.ears.first?.fullOnVolumeDB ?? 10)) dB). \
            Dashed: the frequency response, output for 60 dB SPL tones at the reference test setting (RTS).</p>
            \(ospl90)
            </section>
            """
        let second = """
            <section class="printout">
            <h2>Full-on gain, input/output, target match</h2>
            <p class="caption">Full-on gain: output minus input for 50 dB SPL tones, volume full on.</p>
            \(fullOn)
            <div class="pair">\(ioCharts(report).joined())</div>
            <p class="caption">Input/output at 500, 1000, 2000 and 4000 Hz from 40 to 100 dB SPL at the reference test setting; \
            dotted: output = input.</p>
            \(targetSummary(report))
            \(latencyLine(report))
            <p class="caption">Behind this print-out: the definitions, the target curves and tables at 50, 65 and 80 dB SPL, \
            \(report.wearerProgram == nil ? "" : "the wearer's program as worn, ")the data log and the prescription.</p>
            </section>
            """
        return [first, second]
    }

    static func page(_ report: VerifyReport, body: [String]) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>ribbit verify: \(escape(report.prescriptionName))</title>
        <style>
        @page { size: A4; margin: 12mm; }
        body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; font-size: 9.5pt; color: #111; max-width: 186mm; margin: auto; }
        h1 { font-size: 15pt; margin: 0 0 3pt 0; }
        h2 { font-size: 12pt; margin: 8pt 0 3pt 0; border-bottom: 1px solid #999; }
        section { page-break-before: always; break-before: page; }
        section.first { page-break-before: auto; break-before: auto; }
        .definition { font-size: 9pt; color: #333; background: #f4f4f4; padding: 4pt 6pt; margin: 4pt 0; }
        .caption { font-size: 8.5pt; color: #333; margin: 2pt 0; }
        table { border-collapse: collapse; font-size: 8.5pt; margin: 3pt 0; }
        th, td { border: 1px solid #bbb; padding: 1.2pt 4pt; text-align: right; }
        th { background: #eee; }
        td.l, th.l { text-align: left; }
        .pass { color: #006400; } .fail { color: #b00000; font-weight: bold; }
        .right { color: \(Ear.right.plotColor); } .left { color: \(Ear.left.plotColor); }
        svg { display: block; margin: 3pt 0; max-width: 100%; height: auto; }
        .printout svg { width: 100%; }
        .pair { display: flex; gap: 3mm; }
        .pair svg { width: 50%; }
        pre { font-size: 8.5pt; background: #f8f8f8; padding: 4pt; white-space: pre-wrap; }
        </style>
        </head>
        <body>
        \(body.joined(separator: "\n"))
        </body>
        </html>

        """
    }

    // MARK: Sections

    static func header(_ r: VerifyReport) -> String {
        let cal = r.calibration
        let calibration =
            "\(escape(cal.label)): 0 dBFS in = \(num(cal.inputDBSPLAtFullScale)) dB SPL, out left \(num(cal.outputLeftDBSPLAtFullScale)) / right \(num(cal.outputRightDBSPLAtFullScale)) dB SPL"
            + (cal.uncertaintyDB.map { "; every level is uncertain by about +-\(num($0)) dB" } ?? "")
        // "live: through ..." / "offline: ribbit's engine ...": the mode in bold.
        let parts = r.measuredThrough.split(separator: ":", maxSplits: 1).map(String.init)
        let measured =
            parts.count == 2 ? "<strong>\(escape(parts[0]))</strong>:\(escape(parts[1]))" : escape(r.measuredThrough)
        let driven =
            r.live
            ? "a test client took the daemon's JACK inputs and outputs (microphone and earphones disconnected meanwhile) and drove the whole path"
            : "the engine is driven"
        return """
            <section class="first printout">
            <h1>ribbit test-box print-out: ANSI S3.22, as a coupler measures</h1>
            <table>
            <tr><th class="l">Prescription</th><td class="l">\(escape(r.prescriptionName)) (rule \(escape(r.rule))\(r.trusted ? ", signed by a trusted key" : ""))</td></tr>
            <tr><th class="l">Program</th><td class="l">\(escape(r.program)), adaptive features off (noise reduction, steady-noise detector), as ANSI S3.22 measures</td></tr>
            <tr><th class="l">Calibration</th><td class="l">\(calibration)</td></tr>
            <tr><th class="l">Measured</th><td class="l">\(measured); \(num(r.sampleRate)) Hz, \(escape(r.engine)); \(escape(r.date)); run time \(String(fixed: r.runSeconds, 1)) s</td></tr>
            </table>
            <p class="caption">A software test box: \(driven) with generated signals and its output is read through \
            the calibration. It measures the digital processing only, not the microphone, the earphone or the ear.</p>
            """
    }

    /// ANSI S3.22's figures as a test box prints them: per ear ribbit's specification (its data
    /// sheet for this fitting), what was measured and the verdict, with the tolerance.
    static func figuresTable(_ r: VerifyReport) -> String {
        func verdict(_ pass: Bool?) -> String { pass.map(passWord) ?? "-" }
        func row(_ name: String, _ tolerance: String, _ cells: (EarReport) -> (spec: String, measured: String, pass: Bool?)) -> String {
            "<tr><th class=\"l\">\(name)</th><td class=\"l\">\(tolerance)</td>"
                + r.ears.map { ear in
                    let c = cells(ear)
                    return "<td>\(c.spec)</td><td>\(c.measured)</td><td>\(verdict(c.pass))</td>"
                }.joined() + "</tr>"
        }
        let head =
            "<tr><th class=\"l\" rowspan=\"2\">ANSI S3.22 figure</th><th class=\"l\" rowspan=\"2\">Tolerance</th>"
            + r.ears.map { "<th colspan=\"3\" class=\"\($0.ear)\">\(earTitle($0.ear))</th>" }.joined() + "</tr><tr>"
            + r.ears.map { _ in "<th>Spec</th><th>Measured</th><th>Verdict</th>" }.joined() + "</tr>"
        let rows = [
            row("OSPL90 maximum (dB SPL)", "spec +\(num(EarReport.ospl90MaxToleranceDB)) at most") {
                (opt($0.specOSPL90MaxDBSPL), "\(opt($0.ospl90MaxDBSPL)) at \(num($0.ospl90MaxHz)) Hz", $0.ospl90MaxPass)
            },
            row("HFA-OSPL90 (dB SPL)", "+-\(num(EarReport.hfaOSPL90ToleranceDB)) dB") {
                (opt($0.specHFAOSPL90DBSPL), opt($0.hfaOSPL90DBSPL), $0.hfaOSPL90Pass)
            },
            row("HFA full-on gain (dB)", "+-\(num(EarReport.hfaFullOnGainToleranceDB)) dB") {
                (opt($0.specHFAFullOnGainDB), opt($0.hfaFullOnGainDB), $0.hfaFullOnGainPass)
            },
            row("Reference test gain (dB)", "-") { ("-", opt($0.referenceTestGainDB), nil) },
            row("Reference test setting: volume (dB); HFA gain at 60", "-") {
                ("-", "\(String(fixed: $0.referenceVolumeDB, 1)); \(opt($0.referenceHFAGainDB))", nil)
            },
            row("THD 500 / 800 Hz at 70, 1600 Hz at 65 dB SPL (%)", "\(num(EarReport.thdTolerancePercent)) % at most") {
                ("0", $0.distortion.map { opt($0.thdPercent, 2) }.joined(separator: " / "), $0.distortionPass)
            },
            row("Equivalent input noise of the processing (dB SPL)", "spec +3 dB at most") {
                ("none", $0.noise.einDBSPL.map { String(fixed: $0, 1) } ?? "none added", $0.noise.einDBSPL == nil ? true : nil)
            },
            row("Attack / release at 2 kHz (ms)", "+-5 ms or +-50 %") { ear in
                if ear.timesNotJudged != nil { return ("-", "\(opt(ear.attackMs)) / \(opt(ear.releaseMs)) (not judged)", nil) }
                let both = [ear.attackPass, ear.releasePass]
                return (
                    "\(num(ear.designedAttackMs)) / \(num(ear.designedReleaseMs))", "\(opt(ear.attackMs)) / \(opt(ear.releaseMs))",
                    both.contains { $0 == nil } ? nil : both.allSatisfy { $0 == true }
                )
            },
        ]
        let notJudged = r.ears.compactMap { ear in
            ear.timesNotJudged.map { "<p class=\"caption\">\(earTitle(ear.ear)), attack and release not judged: \(escape($0)).</p>" }
        }
        return """
            <table>\(head)\(rows.joined())</table>
            \(notJudged.joined())
            <p class="caption">Program \(escape(r.program)) in the test mode: adaptive features off (noise reduction, \
            steady-noise detector), as ANSI S3.22 measures. Spec: ribbit's data sheet for this fitting, what its filter, \
            the band's static curve and the output limit give a pure tone. HFA: the mean at 1000, 1600 and 2500 Hz.</p>
            """
    }

    /// Per ear and speech level: the target match's verdict and its worst deviation.
    static func targetSummary(_ r: VerifyReport) -> String {
        var rows: [String] = []
        for ear in r.ears {
            for match in ear.targetMatch {
                rows.append(
                    "<tr><td class=\"l \(ear.ear)\">\(earTitle(ear.ear))</td><td>\(num(match.levelDBSPL))</td>"
                        + "<td>\(passWord(match.pass))</td><td>\(passWord(match.strictPass))</td>"
                        + "<td>\(signed(match.worstDeviationDB)) at \(num(match.worstHz)) Hz</td>"
                        + "<td class=\"l\">\(match.outputLimited ? "output limit" : "")\(match.cappedRows.isEmpty ? "" : (match.outputLimited ? "; " : "") + "capped at \(match.cappedRows.count) frequencies")</td></tr>"
                )
            }
        }
        return """
            <table>
            <tr><th class="l">Target match</th><th>Speech (dB SPL)</th><th>+-5 dB</th><th>+-3 dB, 250-2000 Hz</th>\
            <th>Worst deviation (dB)</th><th class="l">Notes</th></tr>
            \(rows.joined(separator: "\n"))
            </table>
            """
    }

    static func latencyLine(_ r: VerifyReport) -> String {
        let latency = r.latency
        return """
            <p class="caption">Added latency: \(latency.measuredFrames) samples (\(String(fixed: latency.measuredMs, 2)) ms), \
            measured by an impulse\(latency.loopFrames.map { " (less the \($0)-sample period the test client's own loop through JACK adds)" } ?? ""); \
            the engine reports \(latency.reportedFrames) samples (\(String(fixed: latency.reportedMs, 2)) ms) to JACK.</p>
            """
    }

    static func ioCharts(_ r: VerifyReport) -> [String] {
        r.ears.map { ear -> String in
            let series = ear.ioCurves.enumerated().map { i, curve in
                Series(
                    color: earColor(ear.ear), dash: ["", "6 3", "2 2", "8 2 2 2"][i % 4], label: "\(frequencyLabel(Int(curve.hz))) Hz",
                    points: curve.points.compactMap { p in p.outputDBSPL.map { (p.inputDBSPL, $0) } })
            }
            return chart(
                id: "io-\(ear.ear)", title: "\(earTitle(ear.ear)): input/output", x: .linear(40, 100, step: 10), xLabel: "Input (dB SPL)",
                yLabel: "Output (dB SPL)", series: series, diagonal: true)
        }
    }

    /// What each figure means, as the standard defines it.
    static func definitionsSection(_ r: VerifyReport) -> String {
        let fullOn = num(r.ears.first?.fullOnVolumeDB ?? 10)
        return """
            <section>
            <h2>What the print-out measures</h2>
            <p class="definition">A software test box: \(r.live ? "a test client took the daemon's JACK inputs and outputs (microphone and earphones disconnected meanwhile) and drove the whole path" : "the engine is driven") \
            with generated signals and its output is read through the calibration, as ANSI S3.22 / IEC 60118-0 measure a \
            hearing aid in a coupler. It measures the digital processing only: not the microphone, the earphone or the ear. \
            Levels in dB SPL hold only as far as the calibration does. A test box compares each figure with the \
            manufacturer's data sheet; ribbit's data sheet for a fitting is what its linear filter, the static curve of the \
            band nearest the tone (at the volume of the test) and the output limit (the limiter holds a steady sine \
            \(num(PeakLimiter.kneeBelowCeilingDB)) dB under the sample ceiling) give a pure tone.</p>
            <p class="definition">OSPL90 (ANSI S3.22 / IEC 60118-0): the output sound pressure level for a 90 dB SPL pure-tone \
            input with the gain control full on, swept over frequency (here one-third-octave tones from 200 to 8000 Hz, volume \
            at +\(fullOn) dB). HFA-OSPL90 is its mean at 1000, 1600 and 2500 Hz; the maximum may exceed the specification by \
            at most 3 dB, the HFA value differ by at most 4 dB.</p>
            <p class="definition">Full-on gain (ANSI S3.22): the gain (output minus input, dB) for a 50 dB SPL pure-tone input \
            with the gain control full on; ribbit's full on is the wearer's volume at its top, +\(fullOn) dB over the \
            prescription. HFA full-on gain: its mean at 1000, 1600 and 2500 Hz, within 5 dB of the specification.</p>
            <p class="definition">Reference test setting (ANSI S3.22): the reference test gain is HFA-OSPL90 minus 77 dB, or \
            the HFA full-on gain when that is lower; the reference test setting is the volume that brings the HFA gain for a \
            60 dB SPL input to it. The frequency response is the output for 60 dB SPL pure tones at that setting; the \
            input/output curves, distortion, noise and attack/release are measured there too.</p>
            <p class="definition">Distortion (ANSI S3.22): total harmonic distortion, 100 x sqrt(sum of the 2nd to 5th \
            harmonics' squared amplitudes) / the fundamental, at the reference test setting; at most the specification plus \
            3 %. Equivalent input noise (ANSI S3.22): the output noise level less the HFA gain for a 50 dB SPL input at the \
            reference test setting. A software measurement can only say what the digital path adds: digital silence in, and \
            "none added" when silence comes out. It cannot measure the microphone's own noise, which then sets the aid's EIN. \
            Attack and release (ANSI S3.22): a 2 kHz tone steps from 55 to 90 dB SPL and back at the reference test setting; \
            attack is the time until the output stays within 3 dB of its level at 90, release until it stays within 4 dB of \
            its level at 55; each passes within +-5 ms or +-50 % of the time set, whichever is larger. Where the 2 kHz band \
            does not compress (a linear fitting), or the 90 dB SPL step drives the output into the output limiter, what is \
            timed is the limiter, and there is no verdict.</p>
            </section>
            """
    }

    static func targetSection(_ r: VerifyReport) -> String {
        let levels = Verifier.speechLevelsDBSPL
        var parts: [String] = []
        for (i, level) in levels.enumerated() {
            var series: [Series] = []
            for ear in r.ears where i < ear.targetMatch.count {
                let match = ear.targetMatch[i]
                series.append(
                    Series(
                        color: earColor(ear.ear), dash: "", label: "\(earTitle(ear.ear)) measured",
                        points: match.rows.map { ($0.hz, $0.measuredGainDB) }, marker: ear.ear == "right" ? .circle : .cross))
                series.append(
                    Series(
                        color: earColor(ear.ear), dash: "6 4", label: "\(earTitle(ear.ear)) target",
                        points: match.rows.map { ($0.hz, $0.targetGainDB) }))
                if !match.cappedRows.isEmpty {
                    series.append(
                        Series(
                            color: earColor(ear.ear), dash: "2 3", label: "\(earTitle(ear.ear)) played (capped)",
                            points: match.rows.map { ($0.hz, $0.deliveredGainDB) }))
                }
            }
            parts.append(
                chart(
                    id: "target-\(num(level))", title: "Insertion gain for speech at \(num(level)) dB SPL",
                    x: .logFrequency(200, 8000), xLabel: "Frequency (Hz)", yLabel: "Insertion gain (dB)", series: series))
            let limited = r.ears.filter { i < $0.targetMatch.count && $0.targetMatch[i].outputLimited }.map { earTitle($0.ear) }
            if !limited.isEmpty {
                parts.append(
                    "<p>\(limited.joined(separator: " and ")): at \(num(level)) dB SPL the output reached its ceiling (output limit); "
                        + "the gains above are what the limit leaves.</p>")
            }
            parts.append(targetTable(r, index: i))
        }
        return """
            <section>
            <h2>Target match</h2>
            <p class="definition">A speech-shaped, speech-modulated noise (the idea of the international speech test signal: \
            the long-term average speech spectrum of Byrne et al. 1994, about four syllables a second, with pauses) at 50, 65 \
            and 80 dB SPL, as worn (volume 0). Measured insertion gain: the output's long-term one-third-octave level less \
            the input's, per audiometric frequency. Targets (dashed): the prescription's gains for that speech level \
            (compressive fits: g50, g65, g80; linear fits: the one target), with its low-pass. Where a band's target is \
            more than ribbit plays (its maximum gain, the digital gain the calibration allows, or the output limit: \
            "capped by"), a dotted line shows what it plays, and the deviation is measured from that: the report judges \
            whether ribbit plays what it means to, and the "target" and "plays" columns show by how much the fitting \
            falls short of the rule. Clinics accept +-5 dB; the \
            stricter column asks +-3 dB from 250 to 2000 Hz. Where the output's peaks reach the output ceiling (marked \
            "output limit"), loud speech cannot get its target gain: the limit protects the wearer's ears, and only the \
            wearer's measured UCLs or a trusted audiologist's signature raise it.</p>
            \(parts.joined(separator: "\n"))
            </section>
            """
    }

    static func targetTable(_ r: VerifyReport, index: Int) -> String {
        var rows: [String] = []
        for ear in r.ears where index < ear.targetMatch.count {
            let match = ear.targetMatch[index]
            for row in match.rows {
                rows.append(
                    "<tr><td class=\"l \(ear.ear)\">\(earTitle(ear.ear))</td><td>\(num(row.hz))</td><td>\(String(fixed: row.inputDBSPL, 1))</td>"
                        + "<td>\(String(fixed: row.measuredGainDB, 1))</td><td>\(String(fixed: row.targetGainDB, 1))</td>"
                        + "<td>\(String(fixed: row.deliveredGainDB, 1))</td><td class=\"l\">\(row.cappedBy?.rawValue ?? "")</td>"
                        + "<td>\(signed(row.deviationDB))</td><td>\(passWord(row.pass))</td><td>\(row.strictPass.map(passWord) ?? "")</td></tr>"
                )
            }
        }
        return """
            <table>
            <tr><th class="l">Ear</th><th>Hz</th><th>In (dB SPL)</th><th>Gain (dB)</th><th>Target (dB)</th><th>Plays (dB)</th><th class="l">Capped by</th><th>Deviation (dB)</th>\
            <th>+-5 dB</th><th>+-3 dB, 250-2000 Hz</th></tr>
            \(rows.joined(separator: "\n"))
            </table>
            """
    }

    /// The wearer's program beside the test mode: what its adaptive features do to a steady tone.
    static func wearerSection(_ w: VerifyReport.WearerProgram) -> String {
        let rows = w.rows.map {
            "<tr><td class=\"l\">\(earTitle($0.ear))</td><td>\(num($0.hz)) Hz</td><td>\(opt($0.testModeGainDB))</td>"
                + "<td>\(opt($0.onsetGainDB))</td><td>\(opt($0.steadyGainDB))</td></tr>"
        }
        return """
            <section>
            <h2>The wearer's program, \(escape(w.program)), as worn</h2>
            <p class="definition">Everything above is measured in the test mode, with the adaptive features off as ANSI S3.22 \
            asks. The wearer's program has \(escape(w.features.joined(separator: " and "))) on: here a steady 60 dB SPL tone \
            at each HFA frequency, as worn (volume 0), in the test mode, from 0.25 to 0.5 s into the tone (what a reading \
            right after the start sees) and over the last half second of \(num(w.steadySeconds)) s (what a steady sound, \
            which the program takes for noise, gets).</p>
            <table><tr><th class="l">Ear</th><th>Tone</th><th>Test mode gain (dB)</th><th>0.25 to 0.5 s (dB)</th>\
            <th>After \(num(w.steadySeconds)) s (dB)</th></tr>
            \(rows.joined(separator: "\n"))
            </table>
            </section>
            """
    }

    /// The data log: hours worn by program, and the levels the wearer lives in (a bar per 5 dB
    /// of input level, as a share of the logged time).
    static func wearSection(_ r: VerifyReport) -> String {
        guard let w = r.wear, w.days > 0 else {
            return """
                <section>
                <h2>What the wearer's days sound like</h2>
                <p>No data log on this machine (nothing worn yet, or <code>log = false</code> in ribbitd.conf).</p>
                </section>
                """
        }
        let programs = w.processingHours.keys.sorted().map { "\(escape($0)) \(f(w.processingHours[$0]!)) h" }
        let rows = [
            ("Days logged", "\(w.days) (\(escape(w.firstDay)) to \(escape(w.lastDay)))"),
            ("Hours worn", "\(f(w.wornHours)) (\(f(w.wornHours / Double(w.days))) a day)"),
            ("Processing, by program", programs.isEmpty ? "-" : programs.joined(separator: ", ")),
            ("Bypassed / paused", "\(f(w.bypassedHours)) h / \(f(w.pausedHours)) h"),
            ("Noise reduction active", "\(f(w.noiseReductionHours)) h"),
            (
                "Median / 90th percentile input level",
                "\(w.level(percentile: 0.5).map { "\($0) dB SPL" } ?? "-") / \(w.level(percentile: 0.9).map { "\($0) dB SPL" } ?? "-")"
            ),
            ("Program switches, volume changes", "\(w.programSwitches), \(w.volumeChanges)"),
            ("xruns, daemon starts", "\(w.xruns), \(w.starts)"),
        ]
        let table = "<table>" + rows.map { "<tr><th class=\"l\">\($0.0)</th><td class=\"l\">\($0.1)</td></tr>" }.joined() + "</table>"
        return """
            <section>
            <h2>What the wearer's days sound like</h2>
            <div class="definition">From the data log (<code>ribbitd log</code>): the time worn and the input levels at the \
            microphone, each second's level in dB SPL through the calibration, counted while the hearing aid processed. \
            It is kept on this machine only; the wearer can switch it off and erase it.</div>
            \(table)
            \(levelHistogram(w))
            </section>
            """
    }

    /// Bars of the share of time per 5 dB input bin, 15 to 120 dB SPL.
    static func levelHistogram(_ w: WearSummary) -> String {
        let total = Double(max(w.levelSeconds.values.reduce(0, +), 1))
        let (left, top, width, height) = (50.0, 10.0, 560.0, 160.0)
        let bins = Array(stride(from: 15, through: 120, by: 5))
        let share = bins.map { Double(w.levelSeconds[$0] ?? 0) / total * 100 }
        let peak = share.max() ?? 0
        let high = max(10, (peak / 10).rounded(.up) * 10)
        let barWidth = width / Double(bins.count)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"210\" id=\"wear-levels\">"
        svg += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(width)\" height=\"\(height)\" fill=\"none\" stroke=\"#999\"/>"
        for (i, value) in share.enumerated() where value > 0 {
            let h = height * value / high
            svg +=
                "<rect x=\"\(f(left + Double(i) * barWidth + 1))\" y=\"\(f(top + height - h))\" width=\"\(f(barWidth - 2))\" height=\"\(f(h))\" fill=\"#555\"/>"
        }
        for (i, bin) in bins.enumerated() where bin % 20 == 0 {
            svg +=
                "<text x=\"\(f(left + Double(i) * barWidth))\" y=\"\(f(top + height + 14))\" font-size=\"10\" text-anchor=\"middle\">\(bin)</text>"
        }
        svg += "<text x=\"\(f(left - 6))\" y=\"\(f(top + 4))\" font-size=\"10\" text-anchor=\"end\">\(Int(high)) %</text>"
        svg += "<text x=\"\(f(left - 6))\" y=\"\(f(top + height))\" font-size=\"10\" text-anchor=\"end\">0</text>"
        svg +=
            "<text x=\"\(f(left + width / 2))\" y=\"\(f(top + height + 32))\" font-size=\"11\" text-anchor=\"middle\">Input level (dB SPL), share of the time worn</text>"
        return svg + "</svg>"
    }

    static func prescriptionSection(_ r: VerifyReport) -> String {
        """
        <section>
        <h2>The prescription</h2>
        <pre>\(escape(r.prescriptionText))</pre>
        </section>
        """
    }

    // MARK: Charts

    typealias Series = LineChart.Series

    static func chart(
        id: String, title: String?, x: LineChart.XAxis, xLabel: String, yLabel: String, series: [Series], diagonal: Bool = false
    ) -> String {
        LineChart.svg(id: id, title: title, x: x, xLabel: xLabel, yLabel: yLabel, series: series, diagonal: diagonal)
    }

    static func frequencyChart(id: String, yLabel: String, series: [Series]) -> String {
        chart(id: id, title: nil, x: .logFrequency(200, 8000), xLabel: "Frequency (Hz)", yLabel: yLabel, series: series)
    }

    // MARK: Text

    static func earColor(_ ear: String) -> String { (Ear(rawValue: ear) ?? .right).plotColor }
    static func earTitle(_ ear: String) -> String { (Ear(rawValue: ear) ?? .right).plotTitle }
    static func passWord(_ pass: Bool) -> String { pass ? "<span class=\"pass\">pass</span>" : "<span class=\"fail\">FAIL</span>" }

    static func f(_ v: Double) -> String { String(fixed: v, 1) }
    static func num(_ v: Double) -> String { Prescription.number(v) }
    static func opt(_ v: Double?, _ digits: Int = 1) -> String { v.map { String(fixed: $0, digits) } ?? "-" }
    static func signed(_ v: Double) -> String { (v >= 0 ? "+" : "") + String(fixed: v, 1) }

    /// Text for HTML: RibbitPlot's own escaping, which the plots use too.
    public static func escape(_ text: String) -> String { xmlEscaped(text) }
}

extension LineChart.Series {
    init(ear: String, label: String, points: [FrequencyPoint]) {
        self.init(
            color: VerifyHTML.earColor(ear), dash: "", label: label, points: points.compactMap { p in p.db.map { (p.hz, $0) } },
            marker: ear == "right" ? .circle : .cross)
    }
}
