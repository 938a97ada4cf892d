import Foundation
import Glibc
import RibbitTestSupport
import Testing

/// `make deb-package` (what `make deb` runs once the release binaries are built; `make test`
/// builds them before `swift test`): the package holds what a Debian user expects where they
/// expect it, declares the libraries it loads, passes lintian, and its ribbitd runs from the
/// files as dpkg unpacks them, with its audio process found in ../libexec/ribbit/.
@Suite(.serialized, .endToEnd) struct DebianPackageTests {
    static let root = TestPaths.packageRoot
    static let make = URL(fileURLWithPath: "/usr/bin/make")

    static func tool(_ name: String) throws -> URL {
        try #require(Built.tool(name), "\(name) is needed (make deps installs it)")
    }

    /// The package, built once for the tests below.
    static let built: Result<URL, SnapshotError> = {
        do {
            let result = try Built.run(make, ["-C", root.path, "--no-print-directory", "deb-package"], timeoutSeconds: 900)
            guard result.status == 0 else {
                return .failure(
                    SnapshotError(
                        "make deb-package failed (\(result.status)):\n\(result.stdout.suffix(3000))\n\(result.stderr.suffix(3000))"))
            }
            // lintian's verdict: make fails on errors and warnings; nothing else may be left either.
            let tags = result.stdout.split(separator: "\n").filter { $0.hasPrefix("E: ") || $0.hasPrefix("W: ") || $0.hasPrefix("I: ") }
            guard tags.isEmpty else { return .failure(SnapshotError("lintian: \(tags.joined(separator: "\n"))")) }
            let folder = root.appendingPathComponent(".build/deb")
            let name = try FileManager.default.contentsOfDirectory(atPath: folder.path).first {
                $0.hasPrefix("ribbit_") && $0.hasSuffix(".deb")
            }
            guard let name else { return .failure(SnapshotError("no ribbit_*.deb in .build/deb")) }
            return .success(folder.appendingPathComponent(name))
        } catch {
            return .failure(SnapshotError("make deb-package: \(error)"))
        }
    }()

    static func deb() throws -> URL { try built.get() }

    @Test(.runningLimit(minutes: 10)) func controlDeclaresTheLibrariesItLoads() throws {
        let deb = try Self.deb()
        let fields = try Built.run(try Self.tool("dpkg-deb"), ["--field", deb.path, "Package", "Version", "Depends"])
        #expect(fields.status == 0, "\(fields.stderr)")
        let version = try Built.run(
            try Self.tool("dpkg-parsechangelog"), ["-l", Self.root.appendingPathComponent("debian/changelog").path, "-S", "Version"])
        #expect(fields.stdout.contains("Package: ribbit\n") && fields.stdout.contains("Version: \(version.stdout)"), "\(fields.stdout)")
        let depends = fields.stdout.split(separator: "\n").first { $0.hasPrefix("Depends:") }.map(String.init) ?? ""
        for library in ["libjack", "libfftw3", "libzbar", "libqrencode", "libpng16", "libturbojpeg", "libsndfile1", "libsqlite3"] {
            #expect(depends.contains(library), "Depends has no \(library): \(depends)")
        }
        // Every library the binaries load directly is there (dpkg-shlibdeps saw them all).
        for binary in ["ribbitd", "ribbit-audio", "ribbit-web"] {
            let needed = try Built.run(try Self.tool("readelf"), ["-d", Self.root.appendingPathComponent(".build/release/\(binary)").path])
            let libraries = needed.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            #expect(libraries.count >= (binary == "ribbitd" ? 9 : 3), "\(needed.stdout)")
            #expect(!needed.stdout.contains("libswift") && !needed.stdout.contains("libFoundation"), "\(binary) loads the Swift runtime")
        }
    }

    /// Where Debian keeps examples: the sample prescriptions and their codes.
    static let examples = "/usr/share/doc/ribbit/examples"

    @Test func filesAreWhereDebianLooks() throws {
        let deb = try Self.deb()
        let contents = try Built.run(try Self.tool("dpkg-deb"), ["--contents", deb.path])
        let paths = Set(contents.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map { String($0.dropFirst()) } })
        let expected = [
            "/usr/bin/ribbitd", "/usr/libexec/ribbit/ribbit-audio", "/usr/libexec/ribbit/ribbit-web", "/usr/share/man/man1/ribbitd.1.gz",
            "/usr/share/man/man5/ribbitd.conf.5.gz", "/usr/share/man/man5/ribbit-rx.5.gz", "/usr/lib/systemd/user/ribbitd.service",
            "/usr/lib/systemd/user/ribbit-web.service",
            "/usr/share/bash-completion/completions/ribbitd", "/usr/share/zsh/vendor-completions/_ribbitd",
            "/usr/share/fish/vendor_completions.d/ribbitd.fish", "\(Self.examples)/mild-presbycusis.rx",
            "\(Self.examples)/mild-presbycusis.png", "\(Self.examples)/ribbitd-pipewire.conf", "/usr/share/doc/ribbit/copyright",
        ]
        for path in expected { #expect(paths.contains(path), "the package has no \(path)") }
        #expect(!paths.contains { $0.hasPrefix("/usr/share/ribbit/") }, "the samples are examples, not data ribbitd reads")
        let samples = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Prescriptions").path)
        for sample in samples where sample.hasSuffix(".rx") || sample.hasSuffix(".png") {
            #expect(paths.contains("\(Self.examples)/\(sample)"), "the package has no \(Self.examples)/\(sample)")
        }
        // Owned by root, whoever built it.
        #expect(!contents.stdout.split(separator: "\n").contains { !$0.contains(" root/root ") }, "\(contents.stdout)")
        // The debug symbols are in ribbit-dbgsym, not here.
        let dbgsym = deb.deletingLastPathComponent().appendingPathComponent(
            deb.lastPathComponent.replacingOccurrences(of: "ribbit_", with: "ribbit-dbgsym_"))
        let debug = try Built.run(try Self.tool("dpkg-deb"), ["--contents", dbgsym.path])
        #expect(debug.status == 0 && debug.stdout.contains("/usr/lib/debug/.build-id/"), "\(debug.stderr)")
    }

    /// Unpacked as dpkg does (`dpkg -x`), with a private home: --version, rx show of a sample,
    /// and `run` finding its audio process beside it (while ribbitd alone refuses for lack of it).
    @Test func unpackedRibbitdRuns() throws {
        let deb = try Self.deb()
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let unpacked = directory.appendingPathComponent("root")
        #expect(try Built.run(try Self.tool("dpkg"), ["-x", deb.path, unpacked.path]).status == 0)
        // A real (dummy) JACK server, so the audio process stays connected and can be seen: with
        // none it exits and is restarted, and a look at the children may fall between the two.
        let server = try JackTestServer()
        defer { server.stop() }
        var env = try TestPaths.privateHome(in: directory, base: server.environment)
        env.removeValue(forKey: "RIBBIT_AUDIO")
        let ribbitd = unpacked.appendingPathComponent("usr/bin/ribbitd")

        let sections = try Built.run(try Self.tool("readelf"), ["-S", "-W", ribbitd.path]).stdout
        #expect(!sections.contains(".debug_info") && sections.contains(".gnu_debuglink"), "ribbitd is not stripped")
        let version = try Built.run(ribbitd, ["--version"], environment: env)
        let changelog = try Built.run(
            try Self.tool("dpkg-parsechangelog"), ["-l", Self.root.appendingPathComponent("debian/changelog").path, "-S", "Version"])
        #expect(
            version.status == 0 && version.stdout.contains(changelog.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(version)")
        let show = try Built.run(
            ribbitd, ["rx", "show", unpacked.appendingPathComponent("\(Self.examples.dropFirst())/mild-presbycusis.rx").path],
            environment: env)
        #expect(show.status == 0 && show.stdout.contains("Mild sloping high-frequency loss") && show.stdout.contains("gain"), "\(show)")
        // The PipeWire drop-in runs the installed ribbitd through pw-jack.
        let dropIn = try String(
            contentsOf: unpacked.appendingPathComponent("\(Self.examples.dropFirst())/ribbitd-pipewire.conf"), encoding: .utf8)
        #expect(dropIn.contains("\nExecStart=\nExecStart=/usr/bin/pw-jack /usr/bin/ribbitd run\n"), "\(dropIn)")

        // ribbitd alone, without ../libexec/ribbit/ribbit-audio, refuses: so the run below found it.
        let alone = directory.appendingPathComponent("alone/ribbitd")
        try FileManager.default.createDirectory(at: alone.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: ribbitd, to: alone)
        let refused = try Built.run(alone, ["run", "--no-connect"], environment: env, timeoutSeconds: 10)
        #expect(refused.status == 69 && refused.stderr.contains("ribbit-audio is missing"), "\(refused)")

        let daemon = ChildProcess()
        daemon.executableURL = ribbitd
        daemon.arguments = ["run", "--no-connect"]
        daemon.environment = env
        let log = directory.appendingPathComponent("run.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        daemon.standardError = try FileHandle(forWritingTo: log)
        daemon.standardOutput = daemon.standardError
        try daemon.run()
        defer { stopProcess(daemon) }
        let audio = unpacked.appendingPathComponent("usr/libexec/ribbit/ribbit-audio").path
        var status: RunResult?
        var children: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            status = try Built.run(ribbitd, ["status"], environment: env, timeoutSeconds: 5)
            children = Self.children(of: daemon.processIdentifier)
            if status?.status == 0 && children.contains(audio) { break }
            usleep(100_000)
        }
        #expect(
            status?.status == 0 && status?.stdout.contains("no JACK server") == false,
            "\(String(describing: status))\n\(String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self))")
        #expect(children.contains(audio), "the daemon's children: \(children)")
        #expect(try Built.run(ribbitd, ["stop"], environment: env, timeoutSeconds: 10).status == 0)
        let stopped = Date().addingTimeInterval(10)
        while daemon.isRunning && Date() < stopped { usleep(50_000) }
        #expect(!daemon.isRunning && daemon.terminationStatus == 0)
    }

    /// The executables of a process's children, from /proc.
    static func children(of parent: pid_t) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> String? in
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            guard fields.count > 1, Int32(fields[1]) == parent else { return nil }
            return try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        }
    }
}
