import Foundation
import Glibc
import RibbitImage
import RibbitPrescription
import RibbitQR
import RibbitTestSupport
import Testing

/// Large images cost bounded time and memory (issue 10, defect 8): a 76 KB PNG of 8000 x 8000
/// white pixels used to be scanned, inverted and cleaned up at full size (7 s and 650 MB in a
/// release build, an out-of-memory kill on a 1 GB board), yet a small code in a large photo
/// still reads.
@Suite struct DecompressionBombTests {
    /// 8000 x 8000 white, written by libpng: 76 KB.
    static func whiteBomb(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("bomb.png")
        try ImageFile.writePNG(GreyImage(width: 8000, height: 8000, fill: 255), to: url.path)
        return url
    }

    /// Decoded at full size and searched in-process, in whatever build the tests are: the old
    /// code took 72 s here in a debug build; now about 4 s (the 64 MP reduction in unoptimised
    /// Swift is most of it).
    @Test func aWhite64MegapixelPNGIsSearchedInBoundedTime() throws {
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try Data(contentsOf: try Self.whiteBomb(in: directory))
        #expect(data.count < 200_000)
        // The cost is this thread's CPU time, not the wall clock: on a busy machine (load 10) the
        // same work took 38 s of wall time.
        func cpuSeconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
        let start = cpuSeconds(), wall = Date()
        let image = try ImageFile.decode(data)
        #expect(QRDecoder.payloads(in: image).isEmpty)
        let seconds = cpuSeconds() - start
        print(
            "8000 x 8000 white PNG: decoded and searched in \(String(format: "%.2f", seconds)) s of CPU "
                + "(\(String(format: "%.2f", Date().timeIntervalSince(wall))) s of wall time)")
        #expect(seconds < 20, "took \(seconds) s of CPU")
    }

    /// What `ribbitd rx show bomb.png` costs, measured on the child process: the release build
    /// when there is one (RIBBITD_RELEASE), else the debug build. Before: 633 MiB and 5.6 s
    /// (release); now about 93 MiB and 0.7 s.
    @Test func theCLIRefusesTheBombInLittleMemory() throws {
        let (binary, release) = try Self.ribbitd()
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bomb = try Self.whiteBomb(in: directory)
        let (status, seconds, maxRSSBytes, _) = try runMeasured(binary, ["rx", "show", bomb.path])
        print(
            "ribbitd rx show bomb.png (\(binary.lastPathComponent), \(binary.deletingLastPathComponent().lastPathComponent)): "
                + "\(String(format: "%.2f", seconds.cpu)) s of CPU (\(String(format: "%.2f", seconds.wall)) s of wall time), "
                + "max RSS \(maxRSSBytes >> 20) MiB")
        #expect(status == 65)
        #expect(maxRSSBytes < 150 << 20, "max RSS \(maxRSSBytes >> 20) MiB")
        // Memory is the sharp test; the CPU time catches a gross regression (the wall clock on a
        // machine at load 10 took 7.3 s for the same 0.7 s of work).
        #expect(seconds.cpu < (release ? 6 : 20), "took \(seconds.cpu) s of CPU")
    }

    /// zbar's matching of finder patterns grows faster than the picture: 2449 x 2449 pixels tiled
    /// with finder patterns of one pixel a module held one scan for 18 s (the old code took 45 s
    /// in all). The CLI gives up after its limit (10 s) in one line; a machine fast enough to
    /// finish first says there is no code.
    @Test func aPictureThatKeepsZbarBusyIsGivenUp() throws {
        let (binary, _) = try Self.ribbitd()
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let side = 2449
        // A finder pattern (dark 7 x 7 ring, light ring, dark 3 x 3 core) and a light gap: 8 x 8.
        let tile = (0..<64).map { i -> UInt8 in
            let (x, y) = (i % 8, i / 8)
            guard x < 7, y < 7 else { return 255 }
            return [0, 1, 3].contains(max(abs(x - 3), abs(y - 3))) ? 0 : 255
        }
        let finders = GreyImage(width: side, height: side, pixels: (0..<(side * side)).map { i in tile[(i / side % 8) * 8 + i % side % 8] })
        let png = directory.appendingPathComponent("finders.png")
        try ImageFile.writePNG(finders, to: png.path)
        // Longer than the scan's bound on the clock (PrescriptionInput.qrScanWallLimitSeconds, 60 s):
        // a busy machine gives the scan a fraction of a core.
        let (status, seconds, _, stderr) = try runMeasured(binary, ["rx", "show", png.path], timeout: 75)
        print(
            "ribbitd rx show finders.png: \(String(format: "%.2f", seconds.cpu)) s of CPU, \(String(format: "%.2f", seconds.wall)) s: \(stderr)"
        )
        #expect(status == 65)
        #expect(seconds.cpu < 20, "took \(seconds.cpu) s of CPU")
        #expect(stderr.split(separator: "\n").count == 1, "\(stderr)")
        #expect(stderr.contains("took over 10 s of processor time") || stderr.contains("no QR code found"), "\(stderr)")
    }

    /// The release build when there is one (RIBBITD_RELEASE), else the debug build; and which.
    static func ribbitd() throws -> (binary: URL, isRelease: Bool) {
        let release = Built.product("ribbitd", configuration: "release")
        let binary = FileManager.default.isExecutableFile(atPath: release.path) ? release : Built.product("ribbitd")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw TestSetupError("\(binary.path) is missing: swift build --product ribbitd (or set RIBBITD / RIBBITD_RELEASE)")
        }
        return (binary, binary == release)
    }

    /// A code covering 1 % of a 12 MP photo: about 4 pixels a module, read at the larger level.
    @Test func aSmallCodeInALargePhotoStillReads() throws {
        let convert = try QRCorpusTests.convert()
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let payload = Data(try Prescription.parse(Data(contentsOf: TestPaths.prescription("ski-slope.rx"))).text.utf8)
        let code = try QRCode(payload).image(scale: 4)
        var photo = Self.photo(width: 4000, height: 3000, seed: 7)
        // Printed black and white, photographed: 35 and 215, with the photo's noise.
        for y in 0..<code.height {
            for x in 0..<code.width {
                let (px, py) = (2300 + x, 900 + y)
                let noise = Int(photo[px, py]) - Self.gradient(py, height: 3000)
                photo[px, py] = UInt8(clamping: (code[x, y] < 128 ? 35 : 215) + noise)
            }
        }
        #expect(Double(code.width * code.height) / Double(photo.width * photo.height) < 0.01)
        let png = directory.appendingPathComponent("photo.png")
        let jpeg = directory.appendingPathComponent("photo.jpg")
        try ImageFile.writePNG(photo, to: png.path)
        let made = try Built.run(convert, [png.path, "-blur", "0x0.6", "-quality", "80", jpeg.path])
        #expect(made.status == 0, "\(made.stderr)")
        let data = try Data(contentsOf: jpeg)
        // As the CLI reads it (decoded reduced to what the decoder scans) and at full size.
        let reduced = try ImageFile.decode(data, reducedTo: QRDecoder.maxScanPixels)
        #expect(reduced.width * reduced.height <= QRDecoder.maxScanPixels)
        #expect(QRDecoder.payloads(in: reduced).contains(payload))
        #expect(QRDecoder.payloads(in: try ImageFile.decode(data)).contains(payload))
    }

    /// A JPEG much larger than needed is decoded at a TurboJPEG scale, never at full size.
    @Test func aLargeJPEGIsDecodedReduced() throws {
        let convert = try QRCorpusTests.convert()
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let jpeg = directory.appendingPathComponent("large.jpg")
        let made = try Built.run(convert, ["-size", "6000x4500", "gradient:white-gray40", "-quality", "80", jpeg.path])
        #expect(made.status == 0, "\(made.stderr)")
        let data = try Data(contentsOf: jpeg)
        #expect(try ImageFile.size(of: data) == (6000, 4500))
        for limit in [QRDecoder.maxScanPixels, QRDecoder.cleanupPixels, 1000] {
            let image = try ImageFile.decode(data, reducedTo: limit)
            #expect(image.width * image.height <= limit)
            #expect(image.width * image.height > limit * 9 / 10, "\(image.width) x \(image.height) for \(limit)")
            #expect(abs(Double(image.width) / Double(image.height) - 4.0 / 3.0) < 0.02)
        }
    }

    /// Area averaging: closed-form cases.
    @Test func downscalingAveragesAreas() {
        // 2 x 2 blocks of 0, 100, 200, 40 become their mean, 85.
        let blocks = GreyImage(width: 4, height: 4, pixels: (0..<16).map { i in [0, 100, 200, 40][(i / 4 % 2) * 2 + i % 2] })
        #expect(blocks.downscaled(toAtMost: 4) == GreyImage(width: 2, height: 2, fill: 85))
        // A one-pixel checkerboard halved: 127.5 everywhere, rounded to 128.
        let checker = GreyImage(width: 300, height: 200, pixels: (0..<60000).map { i in (i % 300 + i / 300) % 2 == 0 ? 0 : 255 })
        #expect(checker.downscaled(toAtMost: 15000) == GreyImage(width: 150, height: 100, fill: 128))
        // A ramp by a non-integer factor (2.65): each pixel is the ramp at its area's centre.
        let ramp = GreyImage(width: 300, height: 200, pixels: (0..<60000).map { i in UInt8(i % 300 * 255 / 299) })
        let small = ramp.downscaled(toAtMost: 60000 / 7)
        #expect(small.width == 113 && small.height == 75 && small.width * small.height <= 60000 / 7)
        let step = 300.0 / 113
        for x in 0..<small.width {
            let centre = (Double(x) + 0.5) * step - 0.5
            #expect(abs(Double(small[x, 40]) - centre * 255 / 299) <= 1.5, "column \(x): \(small[x, 40])")
        }
        // Constant stays constant; no larger than asked; a small image is returned as it is.
        #expect(GreyImage(width: 999, height: 333, fill: 77).downscaled(toAtMost: 5000).pixels.allSatisfy { $0 == 77 })
        #expect(checker.downscaled(toAtMost: 60000) == checker)
        // A very thin image keeps one row and gives the long side the rest.
        let thin = GreyImage(width: 100_000, height: 2, fill: 9).downscaled(toAtMost: 1000)
        #expect(thin.height == 1 && thin.width == 1000 && thin.pixels.allSatisfy { $0 == 9 })
    }

    /// The sorting network gives what sorting the nine values gives.
    @Test func medianMatchesSortingTheNeighbourhood() {
        var random = SeededRandom(seed: 3)
        let image = GreyImage(width: 61, height: 47, pixels: (0..<(61 * 47)).map { _ in UInt8(random.next() % 256) })
        let median = ImageFilters.median3(image)
        for y in 0..<47 {
            for x in 0..<61 {
                guard x > 0, y > 0, x < 60, y < 46 else {
                    #expect(median[x, y] == image[x, y])
                    continue
                }
                let window = (-1...1).flatMap { dy in (-1...1).map { dx in image[x + dx, y + dy] } }.sorted()
                #expect(median[x, y] == window[4], "at \(x), \(y)")
            }
        }
    }

    /// The UInt32 integral image wraps past 2^32 / 255 = 16.8 MP of white; every window's sum
    /// must still be exact, so a dark square at the far corner is found and nothing else.
    @Test func localThresholdIsExactPastTheIntegralImagesRange() {
        let side = 4200  // 17.6 MP of 255: the integral image's last corner wraps
        var image = GreyImage(width: side, height: side, fill: 255)
        for y in (side - 40)..<(side - 10) { for x in (side - 40)..<(side - 10) { image[x, y] = 0 } }
        let out = ImageFilters.localThreshold(image)
        #expect(out[side - 20, side - 20] == 0)
        #expect(out.pixels.count { $0 == 0 } == 30 * 30)
    }

    /// A grey gradient from 230 at the top to 90 at the bottom.
    static func gradient(_ y: Int, height: Int) -> Int { 230 - 140 * y / height }

    /// A photo-like background: the gradient with seeded noise of +-24.
    static func photo(width: Int, height: Int, seed: UInt64) -> GreyImage {
        var random = SeededRandom(seed: seed)
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            let base = gradient(y, height: height)
            for x in 0..<width { pixels[y * width + x] = UInt8(clamping: base + Int(random.next() % 49) - 24) }
        }
        return GreyImage(width: width, height: height, pixels: pixels)
    }
}

/// SplitMix64: the same numbers on every run.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Runs a program to its end (killed by its PID after `timeout` seconds); its exit status (-1
/// when killed), wall time, peak resident memory and standard error. The peak is the child's own
/// VmHWM, polled from /proc while it runs (it only grows): wait4's ru_maxrss would count the test
/// process too, as posix_spawn's child shares its memory until exec.
/// Runs a child to its end: its exit status, its wall-clock and CPU seconds (user and system,
/// the last reading of /proc/PID/stat before it ended, so a few ms short at most on a quiet
/// machine), its peak resident memory and what it wrote to stderr.
func runMeasured(_ executable: URL, _ arguments: [String], timeout: Double = 60)
    throws -> (status: Int32, seconds: (wall: Double, cpu: Double), maxRSSBytes: Int, stderr: String)
{
    let process = ChildProcess()
    process.executableURL = executable
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    nonisolated(unsafe) var stderr = Data()
    let read = DispatchSemaphore(value: 0)
    let start = Date()
    try process.run()
    Thread {
        stderr = (try? errors.fileHandleForReading.readAll()) ?? Data("(stderr could not be read)".utf8)
        read.signal()
    }.start()
    var peakKiB = 0
    var cpuTicks = 0
    while process.isRunning {
        // utime and stime, fields 14 and 15, counted after the name's closing parenthesis.
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        if let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) { cpuTicks = max(cpuTicks, user + system) }
        }
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        {
            peakKiB = max(peakKiB, kib)
        }
        if Date().timeIntervalSince(start) > timeout { kill(process.processIdentifier, SIGKILL) }
        usleep(2000)
    }
    process.waitUntilExit()
    read.wait()
    let killed = process.terminationReason == .uncaughtSignal
    return (
        killed ? -1 : process.terminationStatus, (Date().timeIntervalSince(start), Double(cpuTicks) / Double(sysconf(Int32(_SC_CLK_TCK)))),
        peakKiB * 1024, String(decoding: stderr, as: UTF8.self)
    )
}
