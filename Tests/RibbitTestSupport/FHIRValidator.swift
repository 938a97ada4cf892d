import Foundation

/// The FHIR R4 (4.0.1) validator `make test-tools` installs: fhir.resources 6.4.0's models, run
/// by scripts/fhir-r4-validate.py.
public enum FHIRValidator {
    /// Its exit status (0: valid) and output for `json`; throws when it is not installed.
    public static func validate(_ json: Data) throws -> (Int32, String) {
        let root = TestPaths.packageRoot
        let models = root.appendingPathComponent(".build/test-tools/fhir-r4/fhir/resources/__init__.py")
        guard FileManager.default.fileExists(atPath: models.path) else {
            throw TestSetupError("no FHIR R4 validator at \(models.path): run `make test-tools`")
        }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ribbit-fhir-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).json")
        try json.write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/fhir-r4-validate.py").path]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = root.appendingPathComponent(".build/test-tools/fhir-r4").path
        process.environment = environment
        process.standardInput = try FileHandle(forReadingFrom: input)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: try output.fileHandleForReading.readAll(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
