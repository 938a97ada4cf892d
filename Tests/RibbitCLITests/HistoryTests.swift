import Foundation
import Glibc
import RibbitStore
import RibbitTestSupport
import Testing

/// The history without a daemon: what the CLI stores, and what SIGKILL cannot break.
@Suite struct HistoryTests {
    let directory: URL
    let environment: [String: String]

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    func ribbitd(_ arguments: [String]) throws -> RunResult { try Built.run(Ribbitd.binary, arguments, environment: environment) }
    var store: PrescriptionStore {
        get throws { try PrescriptionStore(path: directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path) }
    }

    @Test func listShowUseRemoveExport() throws {
        for sample in ["mild-presbycusis.rx", "moderate-flat-music.rx", "ski-slope.rx"] {
            #expect(try ribbitd(["load", rx(sample)]).status == 0)
        }
        let list = try ribbitd(["list"]).stdout
        #expect(list.contains("*3  Steep ski-slope loss"))
        #expect(list.contains(" 2  Moderate flat loss, music"))
        #expect(try ribbitd(["use", "--env", "music"]).status == 0)
        #expect(try store.active()?.id == 2)
        #expect(try ribbitd(["use", "Mild sloping high-frequency loss"]).status == 0)
        #expect(try store.active()?.id == 1)
        let shown = try ribbitd(["show", "3"])
        #expect(shown.stdout.contains("history entry 3") && shown.stdout.contains("left  gain"))
        let removeActive = try ribbitd(["remove", "1"])
        #expect(removeActive.status == 65 && removeActive.stderr.contains("is the active one"))
        #expect(try ribbitd(["remove", "3"]).status == 0)
        #expect(try store.all().map(\.id) == [1, 2])
        let exported = directory.appendingPathComponent("two.rx").path
        let png = directory.appendingPathComponent("two.png").path
        #expect(try ribbitd(["export", "2", "-o", exported]).status == 0)
        #expect(try ribbitd(["export", "2", "-o", png]).status == 0)
        #expect(try String(contentsOfFile: exported, encoding: .utf8) == store.record(id: 2)?.payload)
        #expect(try ribbitd(["rx", "show", "--json", png]).stdout == ribbitd(["rx", "show", "--json", exported]).stdout)
        #expect(try ribbitd(["use", "7"]).status == 65)
    }

    @Test func requireSignedRefusesUnsignedAndUnknownKeys() throws {
        let keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        #expect(try ribbitd(["rx", "keygen", "Dr. B", "-d", keys.path, "--no-passphrase"]).status == 0)
        let signed = directory.appendingPathComponent("signed.png").path
        #expect(
            try ribbitd(["rx", "make", rx("ski-slope.rx"), "--sign", keys.appendingPathComponent("Dr--B.key").path, "-o", signed]).status
                == 0)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("config/ribbit"), withIntermediateDirectories: true)
        try Data("require-signed = true\n".utf8).write(to: directory.appendingPathComponent("config/ribbit/ribbitd.conf"))

        let unsigned = try ribbitd(["load", rx("mild-presbycusis.rx")])
        #expect(unsigned.status == 65 && unsigned.stderr.contains("unsigned, and require-signed is on"))
        let unknown = try ribbitd(["load", signed])
        #expect(unknown.status == 65 && unknown.stderr.contains("which is not trusted"))
        #expect(try store.all().isEmpty)
        #expect(try ribbitd(["rx", "trust", keys.appendingPathComponent("Dr--B.pub").path]).status == 0)
        let trusted = try ribbitd(["load", signed])
        #expect(trusted.status == 0 && trusted.stdout.contains("signed by Dr. B (trusted)"))
        #expect(try ribbitd(["list"]).stdout.contains("signed by Dr. B (trusted)"))
    }

    /// SIGKILL at a random moment during `load` or `use`: afterwards the database is sound and
    /// the active prescription is the one before or the one asked for, never anything else.
    @Test func sigkillDuringLoadOrUseLeavesOldOrNew() throws {
        // The kills land inside a run: at a random moment within 80 % of how long one takes on
        // this machine now (a fixed window would miss most runs on a fast machine).
        #expect(try ribbitd(["load", rx("mild-presbycusis.rx")]).status == 0)
        // Timed warm (the first load also made the database), on the quicker of the two commands.
        let started = Date()
        #expect(try ribbitd(["use", "1"]).status == 0)
        let runMicroseconds = max(1000, Int(Date().timeIntervalSince(started) * 0.8e6))
        var random = SystemRandomNumberGenerator()
        var interrupted = 0
        for round in 0..<30 {
            let before = try store.activeID()
            let count = try store.all().count
            let useTarget = Int64.random(in: 1...Int64(count), using: &random)
            let isLoad = round % 2 == 0
            let process = ChildProcess()
            process.executableURL = Ribbitd.binary
            process.arguments = isLoad ? ["load", rx(round % 4 == 0 ? "ski-slope.rx" : "flat.rx")] : ["use", "\(useTarget)"]
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(useconds_t(Int.random(in: 0...runMicroseconds, using: &random)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { interrupted += 1 }
            #expect(try store.integrityCheck() == "ok")
            let after = try store.activeID()
            let all = try store.all()
            let allowed: Set<Int64?> = isLoad ? [before, all.last?.id] : [before, useTarget]
            #expect(allowed.contains(after), "round \(round): active \(String(describing: after)), before \(String(describing: before))")
            #expect(all.count == count || (isLoad && all.count == count + 1))
        }
        #expect(interrupted > 5, "only \(interrupted) of 30 runs were killed before they finished (a run took \(runMicroseconds / 800) ms)")
    }

    /// Without its audio process (a partial install), `run` refuses at once in one line, exit 69,
    /// and leaves no socket behind.
    @Test func runWithoutTheAudioProcessSaysSo() throws {
        var env = environment
        env["RIBBIT_AUDIO"] = directory.appendingPathComponent("no-such-ribbit-audio").path
        let result = try Built.run(Ribbitd.binary, ["run", "--no-connect"], environment: env, timeoutSeconds: 10)
        #expect(result.status == 69)
        #expect(result.stderr.contains("the audio process ribbit-audio is missing"), "\(result.stderr)")
        #expect(result.stderr.contains("reinstall ribbit"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("run/ribbit/ribbitd.sock").path))
    }
}
