import Foundation
import Glibc
import RibbitTestSupport
import Testing

/// Files that are not small regular files, given where ribbitd reads one (issue 10, defect 7):
/// each is refused at once in one line that says what it is; nothing is read whole or waited on.
@Suite struct InputFileTests {
    let directory: URL
    let environment: [String: String]

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A 3 GiB sparse file (no disk used) and a symlink to it named `link`.
    func hugeFileLink(_ link: String) throws -> String {
        let huge = path("huge-\(link).bin")
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 3 << 30) == 0)
        try FileManager.default.createSymbolicLink(atPath: path(link), withDestinationPath: huge)
        return path(link)
    }

    func fifo(_ name: String) -> String {
        #expect(mkfifo(path(name), 0o600) == 0)
        return path(name)
    }

    func folder(_ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path(name), withIntermediateDirectories: true)
        return path(name)
    }

    /// ribbitd with this suite's private XDG directories, killed after `timeout` seconds.
    func ribbitd(_ arguments: [String], timeout: Double = 10) throws -> (result: Ribbitd.Result, seconds: Double) {
        let start = Date()
        let result = try runWithTimeout(Ribbitd.binary, arguments, environment: environment, timeout: timeout)
        return (result, Date().timeIntervalSince(start))
    }

    @Test func aSymlinkToAHugeFileIsRefusedAtOnce() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["link.rx", "link.png"] {
            let (result, seconds) = try ribbitd(["rx", "show", try hugeFileLink(name)])
            #expect(result.status == 65, "\(result.stderr)")
            // Reading 3 GiB whole takes longer than this however idle the machine; starting takes
            // less however busy it is.
            #expect(seconds < 3, "took \(seconds) s")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("3072 MiB is over the limit"), "\(result.stderr)")
        }
    }

    @Test func aFIFODeviceOrDirectoryAsThePrescriptionIsNamedInOneLine() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases = [
            (fifo("fifo.rx"), "a named pipe (FIFO), not a file"), ("/dev/zero", "a character device, not a file"),
            (try folder("folder.rx"), "a directory, not a file"),
        ]
        for (file, words) in cases {
            for command in [["rx", "show"], ["load"]] {
                let (result, seconds) = try ribbitd(command + [file])
                #expect(result.status == 66, "\(command) \(file): \(result.stderr)")
                #expect(seconds < 5, "\(command) \(file) took \(seconds) s")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(result.stderr.contains("\(file): \(words)"), "\(result.stderr)")
            }
        }
    }

    /// `trusted/*.pub` is read at every load and use, by the daemon too: a .pub that is a FIFO,
    /// /dev/zero or a huge file is skipped (not trusted), never waited on or read whole.
    @Test func oddTrustedKeyFilesAreSkipped() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let trusted = try folder("config/ribbit/trusted")
        try FileManager.default.createSymbolicLink(atPath: trusted + "/zero.pub", withDestinationPath: "/dev/zero")
        #expect(mkfifo(trusted + "/fifo.pub", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: trusted + "/huge.pub", withDestinationPath: try hugeFileLink("huge.pub"))
        let (result, seconds) = try ribbitd(["rx", "show", rx("flat.rx")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(seconds < 5, "took \(seconds) s")
        #expect(result.stdout.contains("unsigned"))
    }

    /// Keys and the config file: the same one-line refusals.
    @Test func oddKeyAndConfigFilesAreNamedInOneLine() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let pipe = fifo("fifo.pub")
        let huge = try hugeFileLink("huge.key")
        let cases: [([String], Int32, String)] = [
            (["rx", "trust", pipe], 66, "\(pipe): a named pipe (FIFO), not a file"),
            (["rx", "trust", "/dev/zero"], 66, "/dev/zero: a character device, not a file"),
            (["rx", "make", rx("flat.rx"), "--text", "--sign", huge], 65, "\(huge): 3072 MiB is over the limit of 64 KiB"),
            (["rx", "make", rx("flat.rx"), "--text", "--sign", try folder("keys")], 66, "keys: a directory, not a file"),
            (["run", "--config", pipe], 66, "\(pipe): a named pipe (FIFO), not a file"),
            (["run", "--config", huge], 66, "\(huge): 3072 MiB is over the limit of 64 KiB"),
        ]
        for (arguments, status, words) in cases {
            let (result, seconds) = try ribbitd(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(seconds < 5, "\(arguments) took \(seconds) s")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains(words), "\(result.stderr)")
        }
    }
}

/// Runs a program with its output captured; after `timeout` seconds it is killed (SIGKILL, by
/// its PID) and the result says so in `stderr`, so a hang fails the test instead of stalling it.
func runWithTimeout(_ executable: URL, _ arguments: [String], environment: [String: String], timeout: Double) throws -> Ribbitd.Result {
    let process = ChildProcess()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    let (out, err) = (Pipe(), Pipe())
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    nonisolated(unsafe) var stdout = Data(), stderr = Data()
    let done = DispatchGroup()
    for (pipe, isOut) in [(out, true), (err, false)] {
        done.enter()
        Thread {
            let data = (try? pipe.fileHandleForReading.readAll()) ?? Data("(could not be read)".utf8)
            if isOut { stdout = data } else { stderr = data }
            done.leave()
        }.start()
    }
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    let timedOut = process.isRunning
    if timedOut { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    done.wait()
    let said = String(decoding: stderr, as: UTF8.self)
    return Ribbitd.Result(
        status: timedOut ? -1 : process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: timedOut ? "killed after \(timeout) s; \(said)" : said)
}
