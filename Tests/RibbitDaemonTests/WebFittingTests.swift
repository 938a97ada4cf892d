import Foundation
import RibbitControl
import RibbitFitting
import RibbitPrescription
import RibbitTestSupport
import Testing

/// The Fitting screen against a real daemon on a private jackd: the targets are RibbitFitting's,
/// a trial changes what `ribbitd status` says and Revert undoes it, and the QR code the web app
/// signs reads back with `ribbitd rx show` exactly as it was entered.
extension WebDaemonTests {
    /// An audiogram as the page sends it: the right ear complete, the left with blanks.
    static let fittingAudiogram =
        #""right":{"250":10,"500":15,"750":20,"1000":25,"1500":30,"2000":35,"3000":40,"4000":45,"6000":45,"8000":40},"#
        + #""left":{"250":null,"500":20,"750":null,"1000":25,"1500":null,"2000":30,"3000":null,"4000":40,"6000":null,"8000":40}"#
    static let fittingThresholds: [Ear: [Int: Int]] = [
        .right: [250: 10, 500: 15, 750: 20, 1000: 25, 1500: 30, 2000: 35, 3000: 40, 4000: 45, 6000: 45, 8000: 40],
        .left: [500: 20, 1000: 25, 2000: 30, 4000: 40, 8000: 40],
    ]

    /// Keys as the audiologist makes them: `ribbitd rx keygen -d` into the keys folder, one
    /// protected by a passphrase; the unprotected one trusted.
    static func fittingKeys(_ daemon: DaemonUnderTest) throws -> String {
        let keys = try #require(daemon.environment["XDG_CONFIG_HOME"]) + "/ribbit/keys"
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        #expect(try daemon.ribbitd(["rx", "keygen", "Dr Ada Test", "-d", keys, "--no-passphrase"]).status == 0)
        let secret = keys + "/../passphrase.txt"
        try "open sesame\n".write(toFile: secret, atomically: true, encoding: .utf8)
        #expect(try daemon.ribbitd(["rx", "keygen", "Dr Bo", "-d", keys, "--passphrase-file", secret]).status == 0)
        #expect(try daemon.ribbitd(["rx", "trust", keys + "/Dr-Ada-Test.pub"]).status == 0)
        return keys
    }

    @Test func webFittingComputesTargetsTriesAndMakesASignedCode() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let keys = try Self.fittingKeys(daemon)
        let web = try WebAppUnderTest(daemon: daemon)
        let original = try #require(try daemon.status().prescription?.name)
        let shell = try web.request("GET", "/fitting", withSession: false)
        #expect(shell.status == 200 && !shell.text.contains(original), "the page holds no personal data")
        #expect(try web.request("GET", "/api/fitting/start", withSession: false).status == 401)
        #expect(try web.logIn().status == 200)

        // The page: native controls, a label or aria-label on each, no inline script or style.
        let page = String(decoding: try web.request("GET", "/fitting").body, as: UTF8.self)
        #expect(!page.contains("tabindex") && !page.contains("onclick") && !page.contains("style=") && !page.contains("<script>"))
        #expect(page.contains(#"<a href="/clinic" aria-current="true">Clinic</a>"#))
        #expect(page.components(separatedBy: "aria-label=\"Right ear, ").count - 1 == 10)
        #expect(page.components(separatedBy: "aria-label=\"Left ear, ").count - 1 == 10)
        // The form as the screen's code reads it: an input per ear at every audiogram frequency
        // from 250 Hz, and an option per rule the form offers.
        for frequency in Prescription.audiometricFrequencies where frequency >= 250 {
            for ear in ["right", "left"] { #expect(page.contains(#"id="t-\#(ear)-\#(frequency)""#), "\(ear) \(frequency) Hz") }
        }
        for rule in [FittingRule.camfit, .nalR, .halfGain, .pogo2] {
            #expect(page.contains(#"<option value="\#(rule.rawValue)">"#), "\(rule)")
        }

        // The targets: what RibbitFitting computes for the same audiogram (as `rx show` does).
        for rule in [FittingRule.camfit, .nalR, .halfGain, .pogo2] {
            let answer = try web.request(
                "POST", "/api/fitting/targets", json: #"{"rule":"\#(rule.rawValue)",\#(Self.fittingAudiogram)}"#)
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            struct Targets: Decodable {
                var frequenciesHz: [Int]
                var left: [String: Double?]?
                var right: [String: Double?]?
            }
            let targets = try JSONDecoder().decode(Targets.self, from: answer.body)
            var rx = Prescription(name: "fitting", environment: "quiet", rule: rule, thresholds: Self.fittingThresholds)
            rx.version = rule.formatVersion
            let fitting = try Fitting(prescription: rx, sampleRate: 48000)
            #expect(targets.frequenciesHz == [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000])
            for (ear, gains) in [(Ear.left, targets.left), (.right, targets.right)] {
                let gains = try #require(gains)
                for f in targets.frequenciesHz {
                    let db = fitting.targetGainDB(for: ear, atHz: Double(f))
                    let expected = db.isFinite ? (db * 10).rounded() / 10 + 0 : nil
                    #expect(gains[String(f)] == .some(expected), "\(rule) \(ear) \(f) Hz")
                }
            }
        }
        let oneEar = try web.request(
            "POST", "/api/fitting/targets",
            json: #"{"rule":"nal-r","left":{"500":30,"1000":30,"2000":30,"4000":30},"right":{"500":null}}"#)
        #expect(oneEar.status == 200 && String(decoding: oneEar.body, as: UTF8.self).contains(#""right" : null"#))

        // A loss camfit wants more than +50 dB for is fitted: the band plays at +50 and the shortfall is said.
        let deep = try web.request(
            "POST", "/api/fitting/targets", json: #"{"rule":"camfit","right":{"500":20,"1000":30,"2000":40,"4000":60}}"#)
        let deepText = String(decoding: deep.body, as: UTF8.self)
        #expect(deep.status == 200 && deepText.contains(#""shortfall" : "right "#) && deepText.contains("(maximum gain)"), "\(deepText)")
        // What plays beside the target (the screen's, for 65 dB SPL speech): the target up to
        // +50 dB, as the fitting plays it. A severe loss asks for more even for average speech.
        struct Played: Decodable { var right: [String: Double?]; var played: [String: [String: Double?]] }
        let severe = try web.request(
            "POST", "/api/fitting/targets", json: #"{"rule":"camfit","right":{"500":40,"1000":60,"2000":80,"4000":100}}"#)
        let deepTargets = try JSONDecoder().decode(Played.self, from: severe.body)
        var deepRx = Prescription(
            name: "fitting", environment: "quiet", rule: .camfit, thresholds: [.right: [500: 40, 1000: 60, 2000: 80, 4000: 100]])
        deepRx.version = FittingRule.camfit.formatVersion
        let deepFitting = try Fitting(prescription: deepRx, sampleRate: 48000)
        #expect(deepTargets.played["left"] == nil && deepTargets.played["right"]?.count == deepTargets.right.count)
        for (f, target) in deepTargets.right {
            let played = try #require(deepTargets.played["right"]?[f] ?? nil)
            #expect(abs(played - min(try #require(target), 50)) <= 0.05, "\(f) Hz: \(played) for \(String(describing: target))")
            #expect(abs(played - deepFitting.playedGainDB(for: .right, atHz: Double(f)!)) <= 0.05)
        }
        #expect(deepTargets.right.values.contains { ($0 ?? 0) > 50 }, "a band asks for more than +50 dB")

        // Bad audiograms: one line, 4xx, and nothing changes.
        let bad = [
            #"{"rule":"camfit","right":{"500":20,"1000":130,"2000":40,"4000":50}}"#: "130 dB HL is out of range",
            #"{"rule":"camfit","right":{"500":20,"2000":40,"4000":50}}"#: "1000 Hz missing",
            #"{"rule":"camfit","right":{"500":20,"1000":12.5,"2000":40,"4000":50}}"#: "whole dB",
            #"{"rule":"camfit","right":{"500":20,"1000":20,"2000":40,"4000":50,"125":10}}"#: "not one of the frequencies",
            #"{"rule":"camfit","left":{},"right":{"500":null}}"#: "at least one ear",
            #"{"rule":"explicit","right":{"500":20,"1000":20,"2000":40,"4000":50}}"#: "rule 'explicit' is unknown",
            #"{"rule":"camfit","right":{"500":"loud"}}"#: "not the JSON",
        ]
        for (json, reason) in bad {
            for path in ["/api/fitting/targets", "/api/fitting/trial"] {
                let answer = try web.request(
                    "POST", path, json: json.replacingOccurrences(of: "{\"rule\"", with: #"{"name":"x","env":"quiet","rule""#)
                )
                let text = String(decoding: answer.body, as: UTF8.self)
                #expect(answer.status == 400 && text.contains(reason) && text.split(separator: "\n").count == 1, "\(path) \(json): \(text)")
            }
        }
        let valid = #""rule":"camfit",\#(Self.fittingAudiogram)"#
        for (json, reason) in [
            #"{"env":"quiet",\#(valid)}"#: "give the prescription a name",
            #"{"name":"A\nrule: explicit","env":"quiet",\#(valid)}"#: "one line of text",
            #"{"name":"A","env":"quiet","minutes":500,\#(valid)}"#: "1 to 120 minutes",
        ] {
            let answer = try web.request("POST", "/api/fitting/trial", json: json)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == 400 && text.contains(reason) && text.split(separator: "\n").count == 1, "\(json): \(text)")
        }
        // No session: 401 for every POST, and nothing changes.
        let trialJSON =
            #"{"name":"Web fitting trial","env":"quiet","audiologist":"Dr Ada Test","patient":"P. Test","minutes":15,\#(valid)}"#
        for path in ["/api/fitting/targets", "/api/fitting/trial", "/api/fitting/qr", "/api/keep", "/api/revert"] {
            #expect(try web.request("POST", path, json: trialJSON, withSession: false).status == 401, "\(path)")
        }
        let unchanged = try daemon.status()
        #expect(unchanged.prescription?.name == original && unchanged.trial == nil)

        // The trial: `ribbitd status` shows it; Revert goes back; a second one kept stays.
        let tried = try web.request("POST", "/api/fitting/trial", json: trialJSON)
        #expect(tried.status == 200, "\(String(decoding: tried.body, as: UTF8.self))")
        let during = try daemon.status()
        #expect(during.prescription?.name == "Web fitting trial" && (during.trial?.secondsLeft ?? 0) > 800, "\(during)")
        #expect(try daemon.ribbitd(["status"]).stdout.contains("Web fitting trial"))
        #expect(try web.request("POST", "/api/revert").status == 200)
        let after = try daemon.status()
        #expect(after.prescription?.name == original && after.trial == nil)
        #expect(try daemon.ribbitd(["status"]).stdout.contains(original))
        #expect(try web.request("POST", "/api/revert").status == 409)
        #expect(try web.request("POST", "/api/fitting/trial", json: trialJSON).status == 200)
        #expect(try web.request("POST", "/api/keep").status == 200)
        let kept = try daemon.status()
        #expect(kept.prescription?.name == "Web fitting trial" && kept.trial == nil)

        // The keys: names only, never a key's bytes.
        let listing = try web.request("GET", "/api/fitting/keys")
        let listingText = String(decoding: listing.body, as: UTF8.self)
        #expect(listing.status == 200 && !listingText.contains("ribbit-ed25519"))
        struct Listing: Decodable {
            struct Key: Decodable, Equatable {
                var name: String
                var protected: Bool
            }
            var directory: String
            var keys: [Key]
        }
        let listed = try JSONDecoder().decode(Listing.self, from: listing.body)
        #expect(
            listed.directory == keys
                && listed.keys == [.init(name: "Dr-Ada-Test", protected: false), .init(name: "Dr-Bo", protected: true)])

        // The code, signed by the chosen key: `ribbitd rx show` reads back what was entered.
        struct Made: Decodable {
            var fileName: String
            var rx: String
            var png: String
            var signedBy: String
        }
        let qrJSON = trialJSON.replacingOccurrences(of: #""minutes":15"#, with: #""key":"Dr-Ada-Test""#)
        let started = Date()
        let answer = try web.request("POST", "/api/fitting/qr", json: qrJSON)
        let milliseconds = Date().timeIntervalSince(started) * 1000
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let made = try JSONDecoder().decode(Made.self, from: answer.body)
        #expect(made.fileName == "ribbit-web-fitting-trial" && made.signedBy == "Dr Ada Test")
        let png = try #require(Data(base64Encoded: made.png))
        let pngFile = web.directory.appendingPathComponent("fitting.png"), rxFile = web.directory.appendingPathComponent("fitting.rx")
        try png.write(to: pngFile)
        try Data(made.rx.utf8).write(to: rxFile)
        let shown = try daemon.ribbitd(["rx", "show", "--json", pngFile.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        struct Shown: Decodable {
            struct EarReport: Decodable {
                var thresholdsDBHL: [String: Int]
                var targetGainDB: [String: Double?]
            }
            var name: String
            var environment: String
            var audiologist: String?
            var patient: String?
            var rule: String
            var signature: String
            var ears: [String: EarReport]
        }
        let report = try JSONDecoder().decode(Shown.self, from: Data(shown.stdout.utf8))
        #expect(report.name == "Web fitting trial" && report.environment == "quiet" && report.rule == "camfit")
        #expect(report.audiologist == "Dr Ada Test" && report.patient == "P. Test")
        #expect(report.signature == "signed by Dr Ada Test (trusted)", "\(report.signature)")
        for (ear, thresholds) in Self.fittingThresholds {
            #expect(
                report.ears[ear.rawValue]?.thresholdsDBHL == Dictionary(uniqueKeysWithValues: thresholds.map { (String($0.key), $0.value) })
            )
        }
        let text = try daemon.ribbitd(["rx", "show", pngFile.path]).stdout
        #expect(text.contains("signed by Dr Ada Test (trusted)") && text.contains("Web fitting trial"), "\(text)")

        // Soft, average and loud speech per band: the screen's table is `rx show --json`'s, for
        // the fitting as the screen tries it (unsigned: the signature line left off).
        struct Bands: Decodable {
            struct Ear: Decodable { var bands: [ReportedBand]? }
            var ears: [String: Ear]?
            var bands: [String: [ReportedBand]]?
        }
        let unsigned = web.directory.appendingPathComponent("fitting-unsigned.rx")
        try Data(made.rx.split(separator: "\n").filter { !$0.hasPrefix("sig:") }.map { $0 + "\n" }.joined().utf8).write(to: unsigned)
        let cli = try JSONDecoder().decode(Bands.self, from: Data(try daemon.ribbitd(["rx", "show", "--json", unsigned.path]).stdout.utf8))
        let screen = try JSONDecoder().decode(Bands.self, from: try web.request("POST", "/api/fitting/targets", json: qrJSON).body)
        for ear in ["right", "left"] {
            let expected = try #require(cli.ears?[ear]?.bands, "rx show --json has no bands for the \(ear) ear")
            #expect(expected.count >= 8 && screen.bands?[ear] == expected, "\(ear): \(String(describing: screen.bands?[ear]))")
        }
        // The bytes `ribbitd rx make --sign` writes for the same prescription and key.
        let cliPNG = web.directory.appendingPathComponent("cli.png")
        let remade = try daemon.ribbitd(["rx", "make", rxFile.path, "--sign", keys + "/Dr-Ada-Test.key", "-o", cliPNG.path])
        #expect(remade.status == 0, "\(remade.stderr)")
        #expect(try Data(contentsOf: cliPNG) == png)

        // A protected key: its passphrase in the POST, once; without it or wrong, one line and nothing made.
        let protected = qrJSON.replacingOccurrences(of: "Dr-Ada-Test", with: "Dr-Bo")
        for (json, status) in [
            (protected, 422), (protected.replacingOccurrences(of: #""key""#, with: #""passphrase":"wrong","key""#), 422),
            (protected.replacingOccurrences(of: #""key""#, with: #""passphrase":"open sesame","key""#), 200),
            (qrJSON.replacingOccurrences(of: "Dr-Ada-Test", with: "../keys/Dr-Ada-Test"), 400),
        ] {
            let answer = try web.request("POST", "/api/fitting/qr", json: json)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == status && (status == 200 || text.split(separator: "\n").count == 1), "\(json): \(text)")
        }
        let weights = ["/fitting", "/common.js", "/fitting.js", "/app.css"].map { path in
            "\(path) \((try? web.request("GET", path).body.count) ?? -1) B"
        }
        print(
            "ribbit-web fitting screen: \(weights.joined(separator: ", ")); POST to signed QR PNG \(Int(milliseconds)) ms, \(png.count) B")
    }

    /// Headless Chromium: /fitting starts from the active prescription's audiogram, draws the
    /// targets from the server, writes nothing to the console; RIBBIT_WEB_SCREENSHOTS=DIR keeps
    /// the screenshots (the README's are docs/images/web-fitting-*.png).
    @Test func webFittingScreenRendersInAHeadlessBrowser() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is not installed (make dev-deps)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        _ = try Self.fittingKeys(daemon)
        let web = try WebAppUnderTest(daemon: daemon)
        let link = web.personalURL.replacingOccurrences(of: "/?token=", with: "/fitting?token=")
        let profile = web.directory.appendingPathComponent("chromium")
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)", "--virtual-time-budget=4000"]

        let dom = try Built.run(chromium, common + ["--enable-logging=stderr", "--v=0", "--dump-dom", link], timeoutSeconds: 60)
        #expect(dom.status == 0, "\(dom.stderr)")
        #expect(dom.stdout.contains(#"<a href="/clinic" aria-current="true">Clinic</a>"#))
        #expect(dom.stdout.contains(#"<option value="Dr-Ada-Test">Dr-Ada-Test</option>"#), "\(dom.stdout)")
        #expect(dom.stdout.contains(#"<tr><th scope="row">1000</th><td>+"#), "the targets table is empty: \(dom.stdout)")
        #expect(dom.stdout.contains(#"class="trace right""#) && dom.stdout.contains("No trial running"))
        let console = dom.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "the page wrote to the console: \(console)")

        try web.screenshots(chromium, common, of: link, name: "web-fitting")

        // A severe loss typed in: the cells where camfit asks for more than ribbit plays say
        // both ("+65.4 → +50"), and the chart draws the rule's target dashed above what plays.
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: link)
        // After the page has filled itself from the active prescription (its targets drawn).
        try browser.wait(for: ##"document.querySelectorAll("#targets-body tr").length > 0"##)
        _ = try browser.evaluate(
            #"document.getElementById("f-rule").value = "camfit"; for (const [f, v] of [[500, 40], [1000, 60], [2000, 80], [4000, 100]]) { const input = document.getElementById("t-right-" + f); input.value = String(v); input.dispatchEvent(new Event("input", { bubbles: true })); }"#
        )
        try browser.wait(for: ##"document.querySelectorAll("#targets-body td.capped").length > 0"##)
        let capped =
            try browser.evaluate(##"[...document.querySelectorAll("#targets-body td.capped")].map((td) => td.textContent).join("; ")"##)
            as? String ?? ""
        #expect(capped.contains("+65.4 → +50"), "\(capped)")
        #expect(try browser.evaluate(##"document.querySelectorAll("#gain-chart .trace.wish.right").length"##) as? Int == 1)
        #expect(try browser.evaluate(#"document.getElementById("targets-shortfall").hidden"#) as? Bool == false)
        // The band table draws what the server computed: the right ear's rows, capped cells with
        // the rule's target and what plays, against /api/fitting/targets for the same form.
        let drawn =
            try browser.evaluate(
                ##"JSON.stringify([...document.querySelectorAll("#bands table.right tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent)))"##
            ) as? String ?? "[]"
        let rows = try #require(try? JSONSerialization.jsonObject(with: Data(drawn.utf8)) as? [[String]], "\(drawn)")
        // Asked with the page's own session and form.
        let reply = try browser.evaluate(#"postJSON("/api/fitting/targets", form()).then((r) => r.text())"#) as? String ?? ""
        let answer = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any]
        let bands = try #require((answer?["bands"] as? [String: Any])?["right"] as? [[String: Any]], "\(reply)")
        #expect(rows.count == bands.count && !rows.isEmpty, "\(rows)")
        func signed(_ db: Double) -> String {
            (db > 0 ? "+" : "")
                + (db == db.rounded() ? String(Int(db)) : String(format: "%.1f", db)).replacingOccurrences(of: "-", with: "−")
        }
        for (row, band) in zip(rows, bands) {
            let capped = band["cappedBy"] as? [Any] ?? []
            let played = ["gain50DB", "gain65DB", "gain80DB"].map { band[$0] as? Double ?? .nan }
            let target = ["target50DB", "target65DB", "target80DB"].map { band[$0] as? Double ?? .nan }
            var expected = [String(band["centreHz"] as? Int ?? Int(band["centreHz"] as? Double ?? 0))]
            for level in 0..<3 {
                expected.append(capped[level] is String ? signed(target[level]) + " → " + signed(played[level]) : signed(played[level]))
            }
            #expect(Array(row.prefix(4)) == expected, "\(row) against \(band)")
        }
        #expect(rows.contains { $0[1].contains("→") }, "the severe loss's soft speech is capped somewhere: \(rows)")
        if let keep = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"] {
            for (label, width, height) in [("laptop", 1280, 800), ("phone", 390, 844)] {
                try browser.call(
                    "Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
                _ = try browser.evaluate(#"document.getElementById("bands-card").scrollIntoView(); true"#)
                try browser.screenshot(width: width, height: height).write(
                    to: URL(fileURLWithPath: keep).appendingPathComponent("web-fitting-bands-\(label).png"))
            }
        }
        let shot = try browser.screenshot(width: 1280, height: 800)
        if let keep = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"] {
            try shot.write(to: URL(fileURLWithPath: keep).appendingPathComponent("web-fitting-capped-laptop.png"))
        }
    }
}

/// A compressor band as `ribbitd rx show --json` and `show --json` report it (PrescriptionReport.BandReport).
struct ReportedBand: Decodable, Equatable {
    var centreHz: Double
    var gain50DB, gain65DB, gain80DB, target50DB, target65DB, target80DB: Double
    var cappedBy: [String?]
    var kneeDBSPL: Double?
    var ratio: Double
    var limitDBSPL: Double
}
