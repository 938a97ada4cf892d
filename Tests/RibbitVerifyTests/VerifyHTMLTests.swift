import Foundation
import RibbitDSP
import RibbitPrescription
import RibbitTestSupport
import Testing

@testable import RibbitVerify

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The HTML report: well-formed SVG plots, every plot present, no scripts, A4 print styles,
/// and a real headless browser (Debian's chromium) renders it to PDF and PNG.
@Suite struct VerifyHTMLTests {
    static let html = VerifyHTML.render(VerifierTests.flatReport)

    static func svgs(_ html: String) -> [String] {
        var result: [String] = []
        var rest = html[...]
        while let start = rest.range(of: "<svg "), let end = rest.range(of: "</svg>", range: start.upperBound..<rest.endIndex) {
            result.append(String(rest[start.lowerBound..<end.upperBound]))
            rest = rest[end.upperBound...]
        }
        return result
    }

    @Test func everyPlotIsWellFormedSVGWithAxesAndLegend() throws {
        let svgs = Self.svgs(Self.html)
        #expect(svgs.count == VerifyHTML.plotIDs.count)
        for id in VerifyHTML.plotIDs {
            let svg = try #require(svgs.first { $0.contains("id=\"\(id)\"") }, "plot \(id) missing")
            let parser = XMLParser(data: Data(svg.utf8))
            #expect(parser.parse(), "plot \(id): \(String(describing: parser.parserError))")
            #expect(svg.contains("<polyline"), "plot \(id) has no curve")
            #expect(svg.contains("(dB") || svg.contains("dB SPL)"), "plot \(id) has no unit")
        }
        // Octave ticks on the frequency axes; targets dashed; the ears' colours.
        for label in [">250<", ">500<", ">1k<", ">2k<", ">4k<", ">8k<"] { #expect(Self.html.contains(label)) }
        #expect(svgs.first { $0.contains("id=\"target-65\"") }!.contains("stroke-dasharray=\"6 4\""))
        #expect(Self.html.contains("#d00000") && Self.html.contains("#0050d0"))
    }

    @Test func selfContainedAndPrintsOnA4() {
        #expect(!Self.html.lowercased().contains("<script"))
        #expect(!Self.html.contains("http://") || Self.html.components(separatedBy: "http://").count - 1 == Self.svgs(Self.html).count)
        #expect(!Self.html.contains("https://"))
        #expect(Self.html.contains("@page { size: A4"))
        #expect(Self.html.contains("break-before: page"))
        for term in ["OSPL90", "HFA", "reference test gain", "equivalent input noise", "Attack and release", "+-5 dB"] {
            #expect(Self.html.lowercased().contains(term.lowercased()), "no definition of \(term)")
        }
    }

    /// The report says how it was measured: offline, or live through JACK with the loop's period.
    @Test func saysWhetherItWasMeasuredLive() {
        #expect(Self.html.contains("<strong>offline</strong>") && !Self.html.contains("<strong>live</strong>"))
        var live = VerifierTests.flatReport
        live.live = true
        live.measuredThrough = "live: through the running daemon over JACK (client ribbit, 48000 Hz, 512-frame periods)"
        live.latency.loopFrames = 512
        let html = VerifyHTML.render(live)
        #expect(html.contains("<strong>live</strong>: through the running daemon over JACK (client ribbit"))
        #expect(html.contains("less the 512-sample period the test client's own loop through JACK adds"))
        #expect(!html.contains("<strong>offline</strong>"))
    }

    /// Debian's chromium (`make dev-deps`), headless: --print-to-pdf and --screenshot succeed.
    @Test func rendersInAHeadlessBrowser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ribbit-verify-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("report.html")
        try Data(Self.html.utf8).write(to: page)
        let pdf = directory.appendingPathComponent("report.pdf"), png = directory.appendingPathComponent("report.png")
        for output in ["--print-to-pdf=\(pdf.path)", "--screenshot=\(png.path)"] {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/chromium")
            // What a fresh machine or a container needs: no sandbox as root, /tmp instead of a
            // small /dev/shm, no first-run or crash-reporter work.
            process.arguments = [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-crash-reporter",
                "--no-pdf-header-footer", "--user-data-dir=\(directory.path)/profile", "--window-size=900,1300", output,
                page.absoluteString,
            ]
            let log = directory.appendingPathComponent("chromium.log")
            FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            defer { try? handle.close() }
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            // A browser that hangs must not hold the suite: 60 s, then it is stopped.
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning && Date() < deadline { usleep(50_000) }
            if process.isRunning { stopProcess(process) }
            let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(process.terminationStatus == 0, "chromium \(output): \(said.split(separator: "\n").suffix(8).joined(separator: " | "))")
        }
        let pdfData = try Data(contentsOf: pdf), pngData = try Data(contentsOf: png)
        #expect(pdfData.starts(with: Array("%PDF".utf8)))
        #expect(pngData.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(pdfData.count > 10000 && pngData.count > 10000)
    }
}

/// The print-out, as a clinician prints it: two A4 pages.
extension VerifyHTMLTests {
    /// Renders HTML to PDF with Debian's chromium; returns the PDF's bytes.
    static func pdf(_ html: String, name: String) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ribbit-printout-\(getpid())-\(name)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("\(name).html"), pdf = directory.appendingPathComponent("\(name).pdf")
        try Data(html.utf8).write(to: page)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chromium")
        process.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-crash-reporter",
            "--no-pdf-header-footer", "--user-data-dir=\(directory.path)/profile", "--print-to-pdf=\(pdf.path)", page.absoluteString,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { stopProcess(process) }
        let data = try Data(contentsOf: pdf)
        if let keep = ProcessInfo.processInfo.environment["RIBBIT_VERIFY_PDF"] {
            try? data.write(to: URL(fileURLWithPath: keep).appendingPathComponent("\(name).pdf"))
        }
        return data
    }

    /// Pages in a PDF: its page objects (`/Type /Page`, not `/Pages`).
    static func pageCount(_ pdf: Data) -> Int {
        let text = String(decoding: pdf, as: UTF8.self)
        return text.components(separatedBy: "/Type /Page").count - 1 - (text.components(separatedBy: "/Type /Pages").count - 1)
    }

    /// The print-out is two A4 pages for a compressive fitting measured with its wearer's program
    /// (the longest report), and the whole report starts with the same two pages and goes on.
    @Test func thePrintOutIsTwoA4Pages() throws {
        let rx = try Prescription.parse(Array(try String(contentsOf: TestPaths.prescription("camfit-sloping.rx"), encoding: .utf8).utf8))
        let verifier = Verifier(
            prescription: rx, trusted: false, calibration: .uncalibrated, program: .noisy, toneSeconds: 0.25, speechSeconds: 2)
        let report = try verifier.report(calibrationInfo: VerifierTests.info, date: "2026-11-29", prescriptionText: "RIBBIT-RX 2")
        #expect(report.wearerProgram != nil)
        let printOut = VerifyHTML.printOut(report)
        let pages = Self.pageCount(try Self.pdf(printOut, name: "print-out"))
        #expect(pages == 2, "the print-out takes \(pages) pages")
        let whole = VerifyHTML.render(report)
        #expect(whole.contains(VerifyHTML.printOutPages(report).joined(separator: "\n")))
        let all = Self.pageCount(try Self.pdf(whole, name: "report"))
        #expect(all > 2, "the whole report takes \(all) pages")
        // Page 1 holds the S3.22 table with its verdicts and the OSPL90 chart; page 2 the rest.
        let first = VerifyHTML.printOutPages(report)[0]
        for part in ["HFA-OSPL90", "Tolerance", "Verdict", "id=\"ospl90\"", "class=\"pass\""] { #expect(first.contains(part), "\(part)") }
        let second = VerifyHTML.printOutPages(report)[1]
        for part in ["id=\"full-on-gain\"", "id=\"io-right\"", "id=\"io-left\"", "Target match", "Added latency"] {
            #expect(second.contains(part), "\(part)")
        }
        print("verify print-out: \(pages) pages; the whole report \(all) pages")
    }
}
