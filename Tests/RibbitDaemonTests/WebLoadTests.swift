import Foundation
import Glibc
import RibbitControl
import RibbitTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Load and Details screens against a real daemon on a private jackd: a QR code's picture
/// previewed and loaded through the daemon as `ribbitd load` does, `ribbitd load`'s refusals,
/// a history entry's details, and both pages in headless Chromium.
extension WebDaemonTests {
    /// The preview's JSON, as much as the tests read.
    struct WebPreview: Decodable {
        struct Report: Decodable {
            struct Ear: Decodable {
                var processed: Bool
                var thresholdsDBHL: [String: Int]
                var targetGainDB: [String: Double?]
            }
            var name: String
            var environment: String
            var audiologist: String?
            var rule: String
            var signature: String
            var ears: [String: Ear]
        }
        struct Entry: Decodable {
            var id: Int64
            var active: Bool
        }
        var prescription: Report
        var audiogramSVG: String
        var gainSVG: String?
        var kind: String?
        var entry: Entry?
    }

    @Test func webLoadPreviewsAndLoadsAQRCodeAsRibbitdLoadDoes() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let web = try WebAppUnderTest(daemon: daemon)
        let quiet = "Mild sloping high-frequency loss", music = "Moderate flat loss, music"
        let png = web.directory.appendingPathComponent("code.png")
        let made = try daemon.ribbitd(["rx", "make", TestPaths.prescription("moderate-flat-music.rx").path, "-o", png.path])
        #expect(made.status == 0, "\(made.stderr)")
        let picture = try Data(contentsOf: png)

        for path in ["/load", "/load.js", "/details", "/details.js"] {
            let shell = try web.request("GET", path, withSession: false)
            #expect(shell.status == 200 && !shell.text.contains(quiet), "\(path): a page shell, no data")
        }
        #expect(try web.request("GET", "/api/details?id=1", withSession: false).status == 401)
        #expect(try web.upload("/api/preview?name=code.png", picture, withSession: false).status == 401)
        _ = try web.logIn()
        let listBefore = try daemon.ribbitd(["list"]).stdout

        // The preview: everything `rx show` gives, and the audiogram; nothing changes yet.
        let answer = try web.upload("/api/preview?name=code.png", picture)
        #expect(answer.status == 200 && answer.headers["content-type"] == "application/json", "\(answer.text)")
        let preview = try JSONDecoder().decode(WebPreview.self, from: answer.body)
        #expect(preview.prescription.name == music && preview.prescription.environment == "music" && preview.kind == "a QR code")
        #expect(preview.prescription.rule == "pogo2" && preview.prescription.signature == "unsigned")
        #expect(preview.prescription.audiologist == "Dr. A. Example, Aud.")
        let right = try #require(preview.prescription.ears["right"])
        #expect(right.processed && right.thresholdsDBHL["4000"] == 60 && right.thresholdsDBHL.count == 10)
        #expect(try #require(preview.prescription.ears["left"]).thresholdsDBHL["250"] == 45)
        // The same targets as `ribbitd rx show --json`.
        let shown = try daemon.ribbitd(["rx", "show", "--json", png.path])
        let cli = try JSONDecoder().decode(WebPreview.Report.self, from: Data(shown.stdout.utf8))
        #expect(cli.ears["right"]?.targetGainDB == right.targetGainDB && cli.ears["left"]?.targetGainDB["1000"] != nil)
        let svg = preview.audiogramSVG
        #expect(svg.hasPrefix("<svg") && svg.contains("Right ear (O): 250 Hz 45 dB HL") && svg.contains("Left ear (X): 250 Hz 45 dB HL"))
        #expect(svg.components(separatedBy: "class=\"audiogram-right-mark\"").count == 11)
        print("ribbit-web load screen: audiogram SVG \(svg.utf8.count) B, preview JSON \(answer.body.count) B")
        #expect(try daemon.status().prescription?.name == quiet)
        #expect(try daemon.ribbitd(["list"]).stdout == listBefore)

        // N7 of IEC 60118-15 (a severe loss) from its QR code: previewed, never refused; the
        // gain chart draws the rule's target and what plays, a bar over each band short of it,
        // and the report carries the same shortfall and note as `rx show --json`.
        struct Shortfall: Decodable {
            struct Ear: Decodable {
                struct Band: Decodable { var centreHz: Double; var gain50DB, target50DB: Double; var cappedBy: [String?] }
                var bands: [Band]?
            }
            var ears: [String: Ear]
            var clinicalNote: String?
        }
        let severe = try Data(contentsOf: TestPaths.prescription("iec-n7.png"))
        let severeAnswer = try web.upload("/api/preview?name=iec-n7.png", severe)
        #expect(severeAnswer.status == 200, "\(severeAnswer.text)")
        let severePreview = try JSONDecoder().decode(WebPreview.self, from: severeAnswer.body)
        struct Wrapped: Decodable { var prescription: Shortfall }
        let severeReport = try JSONDecoder().decode(Wrapped.self, from: severeAnswer.body).prescription
        let severeCLI = try JSONDecoder().decode(
            Shortfall.self, from: Data(try daemon.ribbitd(["rx", "show", "--json", TestPaths.prescription("iec-n7.png").path]).stdout.utf8))
        let shortBands = try #require(severeReport.ears["right"]?.bands).filter { $0.cappedBy[0] != nil }
        #expect(!shortBands.isEmpty && severeReport.clinicalNote != nil && severeReport.clinicalNote == severeCLI.clinicalNote)
        #expect(shortBands.map(\.centreHz) == severeCLI.ears["right"]?.bands?.filter { $0.cappedBy[0] != nil }.map(\.centreHz))
        let gainSVG = try #require(severePreview.gainSVG)
        if let keep = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"] {
            try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
            try Data(gainSVG.utf8).write(to: URL(fileURLWithPath: keep).appendingPathComponent("web-gains-n7.svg"))
        }
        #expect(gainSVG.hasPrefix("<svg") && gainSVG.contains("Gain for soft speech (50 dB SPL)"))
        #expect(gainSVG.contains("Right: target") && gainSVG.contains("Left: plays") && gainSVG.contains("Left: short"))
        // One pale bar per short band and ear, both ears the same audiogram.
        #expect(gainSVG.components(separatedBy: "stroke-width=\"8.0\" stroke-opacity").count - 1 == 2 * shortBands.count + 2, "\(gainSVG)")
        #expect(try daemon.status().prescription?.name == quiet)

        // A broken file: `ribbitd load`'s own line as a 4xx; nothing changes.
        let broken = web.directory.appendingPathComponent("broken.rx")
        try Data("RIBBIT-RX 1\nname: Broken\nleft: 250=oops\n".utf8).write(to: broken)
        let refused = try web.upload("/api/preview?name=broken.rx", try Data(contentsOf: broken))
        let line = refused.text.trimmingCharacters(in: .newlines)
        #expect(refused.status == 422 && !line.isEmpty && !line.contains("\n"), "\(refused.status) \(line)")
        let loadCLI = try daemon.ribbitd(["load", broken.path])
        #expect(
            loadCLI.status == 65 && loadCLI.stderr.replacingOccurrences(of: broken.path, with: "broken.rx").contains(line),
            "\(loadCLI.stderr) | \(line)")
        #expect(line.hasPrefix("broken.rx: ") && line.hasSuffix("the prescription was not used"), "\(line)")
        let notRx = try web.upload("/api/preview?name=notes.txt", Data("hello".utf8))
        #expect(notRx.status == 422 && notRx.text.contains("not a ribbit prescription"), "\(notRx.text)")
        let noCode = try web.upload("/api/load?name=photo.png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]))
        #expect(noCode.status == 422 && noCode.text.hasPrefix("photo.png: "), "\(noCode.text)")
        #expect(try web.upload("/api/preview?name=empty.rx", Data()).status == 400)
        #expect(try daemon.status().prescription?.name == quiet)
        #expect(try daemon.ribbitd(["list"]).stdout == listBefore)

        // Without the session: 401, nothing changes. Over 16 MiB: 413.
        #expect(try web.upload("/api/load?name=code.png", picture, withSession: false).status == 401)
        #expect(try web.upload("/api/preview?name=code.png", picture, withSession: false).status == 401)
        #expect(try web.upload("/api/load?name=big.png", Data(count: 16 * 1024 * 1024 + 1)).status == 413)
        #expect(try web.upload("/api/use?name=code.png", picture).status == 413, "4 KiB elsewhere")
        #expect(try daemon.status().prescription?.name == quiet)

        // Load: the daemon plays it and the history keeps it, the web upload named as its source.
        let loaded = try web.upload("/api/load?name=code.png", picture)
        #expect(loaded.status == 200, "\(loaded.text)")
        #expect(try JSONDecoder().decode(DaemonStatus.self, from: loaded.body).prescription?.name == music)
        #expect(try daemon.ribbitd(["status"]).stdout.contains(music))
        let list = try daemon.ribbitd(["list", "--json"]).stdout
        #expect(list.contains("web upload: code.png"), "\(list)")
        // As a trial: the daemon reports it and goes back when it ends.
        #expect(try web.upload("/api/load?name=code.png&trial=0", picture).status == 400)
        let trial = try web.upload("/api/load?name=code.png&trial=900", picture)
        let trialStatus = try daemon.status()
        #expect(trial.status == 200 && trialStatus.trial != nil, "\(trial.text)")
        #expect(try daemon.ribbitd(["revert"]).status == 0)
        // What the uploads left in memory (16 MiB refused, 5 pictures checked).
        let status = (try? String(contentsOfFile: "/proc/\(web.process.processIdentifier)/status", encoding: .utf8)) ?? ""
        print("ribbit-web after the uploads: \(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? "VmRSS: ?")")
    }

    @Test func webDetailsShowAHistoryEntryWithItsAudiogram() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server, then: ["moderate-flat-music.rx"])
        let web = try WebAppUnderTest(daemon: daemon)
        _ = try web.logIn()
        let answer = try web.request("GET", "/api/details?id=1")
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let details = try JSONDecoder().decode(WebPreview.self, from: answer.body)
        #expect(details.prescription.name == "Mild sloping high-frequency loss" && details.entry?.id == 1 && details.entry?.active == false)
        // Its audiogram, as `ribbitd show 1 --json` lists it.
        struct Shown: Decodable { var prescription: WebPreview.Report }
        let cli = try JSONDecoder().decode(Shown.self, from: Data(try daemon.ribbitd(["show", "1", "--json"]).stdout.utf8))
        #expect(details.prescription.ears["left"]?.thresholdsDBHL == cli.prescription.ears["left"]?.thresholdsDBHL)
        #expect(details.prescription.ears["right"]?.targetGainDB == cli.prescription.ears["right"]?.targetGainDB)
        let levels = try #require(cli.prescription.ears["right"]?.thresholdsDBHL.sorted { Int($0.key)! < Int($1.key)! }.first)
        #expect(details.audiogramSVG.contains("Right ear (O): \(levels.key) Hz \(levels.value) dB HL"), "\(details.audiogramSVG)")
        #expect(try JSONDecoder().decode(WebPreview.self, from: web.request("GET", "/api/details?id=2").body).entry?.active == true)
        for path in ["/api/details?id=9", "/api/details?id=x", "/api/details"] {
            #expect(try web.request("GET", path).status == 404, "\(path)")
        }
        // A login link to it is the page (its script trades the token and keeps the rest of the
        // query: the browser test below sees it), the same for everybody: no entry in it.
        let shell = try web.request("GET", "/details?id=1&token=\(web.accessToken)", withSession: false)
        #expect(shell.status == 200 && !shell.text.contains("Mild sloping") && shell.headers["set-cookie"] == nil)
    }

    /// Headless Chromium: /details draws the audiogram and the tables; on /load a QR code's
    /// picture is chosen in the file input over DevTools (a headless browser has no file picker
    /// to click), previewed, and loaded through the daemon. No console message, no CSP violation.
    /// RIBBIT_WEB_SCREENSHOTS=DIR keeps the screenshots (docs/images/web-load-*.png, web-details-*.png).
    @Test func webLoadAndDetailsScreensRenderInAHeadlessBrowser() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is not installed (make dev-deps)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server, then: ["moderate-flat-music.rx"])
        let web = try WebAppUnderTest(daemon: daemon)
        let profile = web.directory.appendingPathComponent("chromium")
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)", "--virtual-time-budget=4000"]
        let details = web.personalURL.replacingOccurrences(of: "/?token=", with: "/details?id=1&token=")
        let load = web.personalURL.replacingOccurrences(of: "/?token=", with: "/load?token=")

        let dom = try Built.run(chromium, common + ["--enable-logging=stderr", "--v=0", "--dump-dom", details], timeoutSeconds: 60)
        #expect(dom.status == 0, "\(dom.stderr)")
        #expect(dom.stdout.contains(#"<h3 class="name">Mild sloping high-frequency loss</h3>"#), "\(dom.stdout)")
        #expect(dom.stdout.contains("<svg") && dom.stdout.contains("audiogram-right-mark") && dom.stdout.contains("<caption>Right ear (O)"))
        #expect(dom.stdout.contains(#"<button type="button" id="use" class="use">Load</button>"#), "not active: Load shows")
        // Soft, average and loud speech per band, each row as `ribbitd show 1 --json` gives the band.
        struct ShownBands: Decodable {
            struct Ear: Decodable { var bands: [ReportedBand]? }
            struct Rx: Decodable { var ears: [String: Ear] }
            var prescription: Rx
        }
        // As the page writes a level: at most one decimal, a real minus sign.
        func decibels(_ db: Double) -> String {
            (db == db.rounded() ? String(Int(db)) : String(format: "%.1f", db)).replacingOccurrences(of: "-", with: "−")
        }
        func signed(_ db: Double) -> String { (db > 0 ? "+" : "") + decibels(db) }
        let cliBands = try JSONDecoder().decode(ShownBands.self, from: Data(try daemon.ribbitd(["show", "1", "--json"]).stdout.utf8))
        for ear in ["right", "left"] {
            let bands = try #require(cliBands.prescription.ears[ear]?.bands, "\(ear): no bands in ribbitd show --json")
            for band in bands {
                let levels = [(band.gain50DB, band.target50DB), (band.gain65DB, band.target65DB), (band.gain80DB, band.target80DB)]
                let cells = zip(levels, band.cappedBy).map { level, capped in
                    capped.map {
                        #"<td class="capped" title="the rule asks for \#(signed(level.1)) dB; \#($0) holds it">\#(signed(level.1))<span class="plays"> → \#(signed(level.0))</span></td>"#
                    }
                        ?? "<td>\(signed(level.0))</td>"
                }
                let row =
                    #"<tr><th scope="row">\#(Int(band.centreHz))</th>"# + cells.joined()
                    + "<td>\(band.kneeDBSPL.map(decibels) ?? "linear")</td><td>\(String(format: "%.2f", band.ratio))</td><td>\(decibels(band.limitDBSPL))</td></tr>"
                #expect(dom.stdout.contains(row), "\(ear): no row \(row)")
            }
        }
        var console = dom.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "the page wrote to the console: \(console)")
        let loadDOM = try Built.run(chromium, common + ["--enable-logging=stderr", "--v=0", "--dump-dom", load], timeoutSeconds: 60)
        #expect(loadDOM.stdout.contains(#"accept="image/*,.rx,text/plain""#) && loadDOM.stdout.contains(#"aria-current="page">Load</a>"#))
        console = loadDOM.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "the page wrote to the console: \(console)")

        let keep = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
        func check(_ data: Data, _ name: String, _ width: Int, _ height: Int) throws {
            let size = [16, 20].map { offset in data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
            #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]) && size == [width, height], "\(name) screenshot is \(size)")
            if let keep {
                try? FileManager.default.createDirectory(at: keep, withIntermediateDirectories: true)
                try data.write(to: keep.appendingPathComponent(name))
            }
        }
        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            let png = web.directory.appendingPathComponent("web-details-\(label).png")
            let shot = try Built.run(
                chromium, common + ["--hide-scrollbars", "--window-size=\(width),\(height)", "--screenshot=\(png.path)", details],
                timeoutSeconds: 60)
            #expect(shot.status == 0, "\(shot.stderr)")
            try check(try Data(contentsOf: png), png.lastPathComponent, width, height)
        }

        // /load with a QR code's picture chosen in the file input, as a person picks one: the
        // preview, then Load, and the daemon plays it.
        let code = web.directory.appendingPathComponent("ski-slope.png")
        #expect(try daemon.ribbitd(["rx", "make", TestPaths.prescription("ski-slope.rx").path, "-o", code.path]).status == 0)
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: load)
        try browser.wait(for: #"document.readyState === "complete" && document.getElementById("file") !== null"#)
        try browser.chooseFile(code.path, in: "#file")
        try browser.wait(for: #"!document.getElementById("preview").hidden"#)
        let shown = try browser.evaluate(#"document.getElementById("rx-view").textContent"#) as? String ?? ""
        let skiSlope = try #require(
            try String(contentsOf: TestPaths.prescription("ski-slope.rx"), encoding: .utf8).split(separator: "\n")
                .first { $0.hasPrefix("name: ") }?.dropFirst(6))
        #expect(shown.contains(skiSlope) && shown.contains("Target gain (dB)"), "\(shown)")
        // The gain chart and what it cannot do: ski-slope's rule plays its whole target, and
        // the note names the bands no gain makes speech audible in.
        let shortfall = try browser.evaluate(#"document.getElementById("rx-shortfall").textContent"#) as? String ?? ""
        #expect(shortfall.contains("Every band plays its target") && shortfall.contains("Note for the audiologist"), "\(shortfall)")
        #expect(try browser.evaluate(##"document.querySelectorAll("#rx-view figure.gain-figure svg").length"##) as? Int == 1)
        let marks = try browser.evaluate(##"document.querySelectorAll("#rx-view svg .audiogram-right-mark").length"##) as? Int
        #expect((marks ?? 0) > 0)
        #expect(try daemon.status().prescription?.name != String(skiSlope), "nothing changes before Load")
        try check(try browser.screenshot(width: 390, height: 844), "web-load-phone.png", 390, 844)
        _ = try browser.evaluate("window.scrollTo(0, 0)")
        try check(try browser.screenshot(width: 1280, height: 800), "web-load-laptop.png", 1280, 800)
        _ = try browser.evaluate(#"document.querySelector(".gain-chart").scrollIntoView()"#)
        try check(try browser.screenshot(width: 1280, height: 800), "web-load-gains-laptop.png", 1280, 800)
        _ = try browser.evaluate("window.scrollTo(0, 0)")
        _ = try browser.evaluate(#"document.getElementById("load").click()"#)
        try browser.wait(for: #"document.getElementById("connection").textContent.startsWith("Now using")"#)
        #expect(try daemon.status().prescription?.name == String(skiSlope))
        // Details of the first entry, from a login link: the token leaves the address bar, the
        // rest of the query stays; Load (Use) makes it the active one again.
        try browser.call("Page.navigate", ["url": details])
        try browser.wait(for: #"document.getElementById("rx-view").textContent.includes("Mild sloping")"#)
        #expect(try browser.evaluate("location.pathname + location.search") as? String == "/details?id=1")
        try browser.wait(for: #"!document.getElementById("use").hidden"#)
        _ = try browser.evaluate(#"document.getElementById("use").click()"#)
        try browser.wait(for: #"document.getElementById("use").hidden"#)
        #expect(try daemon.status().prescription?.id == 1)
        #expect(browser.problems.isEmpty, "the page wrote to the console: \(browser.problems)")
        _ = try web.logIn()
        let weights = ["/load", "/load.js", "/details?id=1", "/details.js", "/common.js", "/app.css", "/api/details?id=1"].map { path in
            "\(path) \((try? web.request("GET", path).body.count) ?? -1) B"
        }
        print("ribbit-web load and details screens: \(weights.joined(separator: ", "))")
    }
}

extension WebAppUnderTest {
    /// POSTs `bytes` as they are (the Load screen's upload), with the session unless told not to.
    func upload(_ path: String, _ bytes: Data, withSession: Bool = true) throws -> Answer {
        try request("POST", path, bytes: bytes, withSession: withSession)
    }
}
