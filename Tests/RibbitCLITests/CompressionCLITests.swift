import Foundation
import RibbitTestSupport
import Testing

/// `rx show` and `rx make` with format version 2 (compression).
@Suite struct CompressionCLITests {
    /// The right ear's 1000 Hz band of camfit-ucl.rx (docs/prescription-format.md's worked
    /// example): g50 23.3, g65 19.2, g80 15.1 dB, knee 35.8 dB SPL, ratio 1.38, limit
    /// 95 + 7.0 - 5 = 97.0 dB SPL (UCL 95 dB HL measured with TDH-39 earphones, whose RETSPL at
    /// 1 kHz is 7.0 dB SPL in the NBS 9-A coupler (ANSI S3.6), 5 dB margin).
    @Test func rxShowJSONGivesEveryBandAndItsLimit() throws {
        let result = try Ribbitd.run(["rx", "show", "--json", rx("camfit-ucl.rx")])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["rule"] as? String == "camfit" && object["formatVersion"] as? Int == 2)
        #expect(
            object["attackMs"] as? Double == 5 && object["releaseMs"] as? Double == 100 && object["expansionKneeDBSPL"] as? Double == 38)
        let right = try #require((object["ears"] as? [String: Any])?["right"] as? [String: Any])
        let bands = try #require(right["bands"] as? [[String: Any]])
        #expect(bands.count == 10)
        let band = try #require(bands.first { $0["centreHz"] as? Double == 1000 })
        #expect(band["gain50DB"] as? Double == 23.3 && band["gain65DB"] as? Double == 19.2 && band["gain80DB"] as? Double == 15.1)
        #expect(band["kneeDBSPL"] as? Double == 35.8 && band["ratio"] as? Double == 1.38 && band["limitDBSPL"] as? Double == 97.0)
        #expect((right["uclDBHL"] as? [String: Any])?["1000"] as? Int == 95)
        #expect(object["uclTransducer"] as? String == "tdh39")
        // The same UCL measured with ER-3A inserts (RETSPL 0.0 dB SPL at 1 kHz in the HA-2
        // coupler): 90.0; unnamed, ISO 389-7's free field: 95 + 2.4 - 5 = 92.4, as before the key.
        let text = try String(contentsOfFile: rx("camfit-ucl.rx"), encoding: .utf8)
        for (line, limit) in [("ucl-transducer: er3a\n", 90.0), ("", 92.4)] {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("ucl-\(limit).rx")
            try text.replacingOccurrences(of: "ucl-transducer: tdh39\n", with: line).write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let shown = try Ribbitd.run(["rx", "show", "--json", file.path])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any], "\(shown.stderr)")
            let ears = json["ears"] as? [String: Any], right = ears?["right"] as? [String: Any]
            let oneK = (right?["bands"] as? [[String: Any]])?.first { $0["centreHz"] as? Double == 1000 }
            #expect(oneK?["limitDBSPL"] as? Double == limit, "\(line)")
        }
        let doc = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/json-output.md"), encoding: .utf8)
        for key in Array(object.keys) + Array(right.keys) + Array(band.keys) { #expect(doc.contains("`\(key)`"), "\(key)") }
    }

    /// Unsigned, no UCL: the OTC rule's 117 dB SPL (the ear compresses); a linear v1 rule: 111.
    @Test func rxShowTextGivesTheOTCLimitWithoutUCLs() throws {
        let camfit = try Ribbitd.run(["rx", "show", rx("camfit-sloping.rx")])
        #expect(camfit.status == 0)
        let limits = camfit.stdout.split(separator: "\n").filter { $0.hasPrefix("  right limit (dB SPL)") }
        #expect(limits.count == 1 && limits[0].split(separator: " ").suffix(10).allSatisfy { $0 == "117.0" }, "\(limits)")
        let linear = try Ribbitd.run(["rx", "show", rx("mild-presbycusis.rx")])
        let ratio = try #require(linear.stdout.split(separator: "\n").first { $0.hasPrefix("  left ratio") })
        #expect(ratio.split(separator: " ").suffix(10).allSatisfy { $0 == "1.00" })
        #expect(linear.stdout.contains("  left limit (dB SPL)  111.0"))
    }

    @Test func rxMakeWritesVersion2OnlyWhenAVersion2OptionIsGiven() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v2 = folder.appendingPathComponent("v2.rx").path, v1 = folder.appendingPathComponent("v1.rx").path
        let base = ["rx", "make", "--name", "A", "--env", "quiet", "--left", "500=20,1000=30,2000=40,4000=50"]
        #expect(
            try Ribbitd.run(base + ["--rule", "camfit", "--ucl-left", "500=100,1000=100,2000=95,4000=95", "--limit", "100", "-o", v2])
                .status == 0)
        #expect(
            try String(contentsOfFile: v2, encoding: .utf8)
                == "RIBBIT-RX 2\nname: A\nenv: quiet\nrule: camfit\nleft: 500=20 1000=30 2000=40 4000=50\nucl-left: 500=100 1000=100 2000=95 4000=95\nlimit: 100\nlowpass: 8000\nmax-output: -1\n"
        )
        #expect(try Ribbitd.run(base + ["--rule", "nal-r", "-o", v1]).status == 0)
        #expect(try String(contentsOfFile: v1, encoding: .utf8).hasPrefix("RIBBIT-RX 1\n"))
        let bad = try Ribbitd.run(base + ["--rule", "nal-r", "--attack", "0", "-o", v1])
        #expect(bad.status == 64 && bad.stderr.contains("line 6: attack '0' must be a time in ms from 1 to 200"), "\(bad.stderr)")
        // No rule: new prescriptions compress (camfit, version 2).
        let fresh = folder.appendingPathComponent("fresh.rx").path
        #expect(try Ribbitd.run(base + ["-o", fresh]).status == 0)
        #expect(try String(contentsOfFile: fresh, encoding: .utf8).hasPrefix("RIBBIT-RX 2\nname: A\nenv: quiet\nrule: camfit\n"))
    }
}
