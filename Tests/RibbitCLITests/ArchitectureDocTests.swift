import Foundation
import RibbitTestSupport
import Testing

/// docs/architecture.md drawn from the code as it is: every module is in its chart, and the
/// modules it says import no Foundation (so `ribbit-audio` links none) do not.
@Suite struct ArchitectureDocTests {
    let root = TestPaths.packageRoot

    func modules() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path).filter { !$0.hasPrefix(".") }
            .sorted()
    }

    @Test func everyModuleIsInTheChart() throws {
        let doc = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let missing = try modules().filter { module in
            doc.range(of: "\\b\(module)\\b", options: .regularExpression) == nil
        }
        #expect(missing.isEmpty, "docs/architecture.md does not name \(missing)")
    }

    @Test func theModulesWithoutFoundationImportNone() throws {
        let pure = [
            "RibbitRealtime", "RibbitDSP", "RibbitJack", "RibbitFitting", "RibbitPrescription", "RibbitAudioLink", "RibbitPlot",
            "RibbitAudiometry", "RibbitVoice", "RibbitMeasure", "RibbitVerify",
        ]
        let doc = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        for module in pure {
            let directory = root.appendingPathComponent("Sources/\(module)")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
            #expect(!files.isEmpty, "\(module) has no Swift files")
            for file in files {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                let imports = text.split(separator: "\n").filter { $0.hasPrefix("import Foundation") }
                #expect(imports.isEmpty, "\(module)/\(file) imports Foundation")
            }
            #expect(doc.contains(module), "\(module) is not in docs/architecture.md")
        }
    }
}
