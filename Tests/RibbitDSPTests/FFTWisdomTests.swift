import CFFTW
import Foundation
import Testing

@testable import RibbitDSP
@testable import RibbitWisdomFile

/// The wisdom file: what one process measured, the next plans at once; a damaged file or one
/// from another FFTW build is ignored (nothing imported) and rewritten. Lengths no other test
/// plans, serialized: FFTW's wisdom is process-wide.
@Suite(.serialized) struct FFTWisdomTests {
    let length = 210

    /// Whether this process's wisdom holds the measured plans for `length` (both directions).
    func knows(_ length: Int) -> Bool {
        let real = RealFFT.allocateReal(length)
        let complex = RealFFT.allocateComplex(length / 2 + 1)
        defer {
            RealFFT.free(real)
            RealFFT.free(complex)
        }
        return RealFFT.planner.withLock { _ in
            let flags = UInt32(FFTW_MEASURE) | UInt32(FFTW_WISDOM_ONLY)
            let forward = fftwf_plan_dft_r2c_1d(Int32(length), real, RealFFT.asComplex(complex), flags)
            let inverse = fftwf_plan_dft_c2r_1d(Int32(length), RealFFT.asComplex(complex), real, flags)
            defer { for plan in [forward, inverse] { if let plan { fftwf_destroy_plan(plan) } } }
            return forward != nil && inverse != nil
        }
    }

    func temporaryFile() throws -> (directory: URL, file: WisdomFile) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ribbit-wisdom-\(UUID().uuidString)")
        // The cache directory does not exist yet: the first write makes it.
        return (directory, WisdomFile(cacheDirectory: directory.appendingPathComponent("cache/ribbit").path))
    }

    func text(_ file: WisdomFile) throws -> String { try String(contentsOfFile: file.path, encoding: .utf8) }

    @Test func aMeasuredPlanIsKnownToTheNextProcess() throws {
        let (directory, file) = try temporaryFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        FFTWisdom.forget()
        #expect(file.load() == .missing)
        _ = RealFFT(length: length)
        #expect(file.saveIfNew() == nil)
        let written = try text(file)
        #expect(written.hasPrefix("\(FFTWisdom.header)\n\(FFTWisdom.version)\n(fftw-"))
        #expect(!FileManager.default.fileExists(atPath: file.path + ".\(getpid()).tmp"))

        // A new process: nothing known until the file is read.
        FFTWisdom.forget()
        #expect(!knows(length))
        let reread = WisdomFile(path: file.path)
        #expect(reread.load() == .loaded)
        #expect(knows(length))
        // Nothing new: not written again. Other suites plan FFTs in this process meanwhile (FFTW's
        // wisdom is process-wide: a loaded run once planned one between the read and the save),
        // so whether anything was new is read from the file's writer: it wrote exactly when it
        // learnt plans the file did not hold.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1)], ofItemAtPath: file.path)
        let knownBefore = reread.known
        #expect(reread.saveIfNew() == nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        let rewritten = (attributes[.modificationDate] as? Date) != Date(timeIntervalSince1970: 1)
        #expect(rewritten == (reread.known != knownBefore), "rewritten \(rewritten) with nothing new")
    }

    @Test func wisdomOrEstimateUsesTheWisdomAndNeverAddsToIt() throws {
        FFTWisdom.forget()
        let estimated = RealFFT(length: length, planning: .wisdomOrEstimate)
        #expect(estimated.length == length)
        #expect(!knows(length))
        _ = RealFFT(length: length)
        #expect(knows(length))
        _ = RealFFT(length: length, planning: .wisdomOrEstimate)
    }

    @Test(arguments: ["garbled", "cut short", "not ours", "empty"])
    func aDamagedFileIsIgnoredAndRebuilt(_ damage: String) throws {
        let (directory, file) = try temporaryFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        FFTWisdom.forget()
        _ = RealFFT(length: length)
        #expect(file.saveIfNew() == nil)
        let good = try text(file)
        let bad: String
        switch damage {
        case "garbled": bad = good.replacingOccurrences(of: "#x", with: "#q")
        case "cut short": bad = String(good.prefix(good.count * 2 / 3))
        case "not ours": bad = "# a shell script that got here\nexit 0\n"
        default: bad = ""
        }
        try bad.write(toFile: file.path, atomically: false, encoding: .utf8)

        FFTWisdom.forget()
        let reread = WisdomFile(path: file.path)
        #expect(reread.load() == .damaged)
        #expect(!knows(length))
        _ = RealFFT(length: length)
        #expect(reread.saveIfNew() == nil)
        // Measured again (the plan may differ on a busy machine): whole, and ours.
        #expect(try text(file).hasPrefix("\(FFTWisdom.header)\n\(FFTWisdom.version)\n(fftw-"))
        FFTWisdom.forget()
        #expect(WisdomFile(path: file.path).load() == .loaded)
        #expect(knows(length))
    }

    @Test func wisdomFromAnotherFFTWBuildIsIgnoredAndRebuilt() throws {
        let (directory, file) = try temporaryFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        FFTWisdom.forget()
        _ = RealFFT(length: length)
        #expect(file.saveIfNew() == nil)
        let good = try text(file)
        // The same wisdom, but said to come from another build: FFTW never sees it.
        let foreign = good.replacingOccurrences(of: FFTWisdom.version, with: "fftw-3.3.8-sse2")
        try foreign.write(toFile: file.path, atomically: false, encoding: .utf8)

        FFTWisdom.forget()
        let reread = WisdomFile(path: file.path)
        #expect(reread.load() == .otherVersion("fftw-3.3.8-sse2"))
        #expect(!knows(length))
        _ = RealFFT(length: length)
        #expect(reread.saveIfNew() == nil)
        FFTWisdom.forget()
        #expect(WisdomFile(path: file.path).load() == .loaded)
        #expect(knows(length))
    }
}
