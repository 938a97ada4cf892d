import Foundation

/// Where the package lives, for tests that read Prescriptions/ or run the built binary.
public enum TestPaths {
    /// A file's "device:inode", as systemd writes JOURNAL_STREAM for the stream it connected.
    public static func deviceAndInode(_ path: String) throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TestSetupError("cannot stat \(path)") }
        return "\(info.st_dev):\(info.st_ino)"
    }

    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    public static func prescription(_ name: String) -> URL {
        packageRoot.appendingPathComponent("Prescriptions").appendingPathComponent(name)
    }

    /// A fresh private directory for one test, inside this run's directory.
    public static func temporaryDirectory() throws -> URL {
        let url = runDirectory.appendingPathComponent("ribbit-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Everything one test run leaves (directories, jackd logs): `$TMPDIR/ribbit-tests-PID`,
    /// removed when the test process exits. Mode 0755, so a daemon run as `nobody` reaches the
    /// directory a test hands it.
    public static let runDirectory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ribbit-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        atexit { try? FileManager.default.removeItem(at: TestPaths.runDirectory) }
        return url
    }()
}

/// Reference signal operations in double precision.
public enum Reference {
    /// y[n] = sum_k h[k] x[n - k], same length as x.
    public static func convolve(_ x: [Float], _ h: [Double]) -> [Double] {
        var y = [Double](repeating: 0, count: x.count)
        for n in 0..<x.count {
            var acc = 0.0
            for k in 0..<min(h.count, n + 1) where h[k] != 0 { acc += h[k] * Double(x[n - k]) }
            y[n] = acc
        }
        return y
    }

    /// Residual of `output` against `expected`, in dB relative to the RMS of `expected`, over
    /// the samples from `from`.
    public static func residualDB(_ output: [Float], _ expected: [Double], from: Int = 0) -> Double {
        var error = 0.0, power = 0.0
        for i in from..<min(output.count, expected.count) {
            error += (Double(output[i]) - expected[i]) * (Double(output[i]) - expected[i])
            power += expected[i] * expected[i]
        }
        return 10 * log10(max(error, 1e-300) / power)
    }

    public static func delayed(_ x: [Float], by d: Int) -> [Double] {
        (0..<x.count).map { $0 >= d ? Double(x[$0 - d]) : 0 }
    }
}

extension TestPaths {
    /// A private home for ribbitd under `directory`, over `base`: HOME, and the XDG runtime
    /// (`run`, mode 0700), state, config and data directories, so nothing touches the user's own.
    public static func privateHome(in directory: URL, base: [String: String] = ProcessInfo.processInfo.environment) throws
        -> [String: String]
    {
        var env = base
        env["XDG_RUNTIME_DIR"] = directory.appendingPathComponent("run").path
        env["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        env["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        env["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        env["HOME"] = directory.path
        let run = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: run.path)
        return env
    }
}
