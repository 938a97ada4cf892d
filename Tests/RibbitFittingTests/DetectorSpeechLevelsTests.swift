import Foundation
import RibbitDSP
import RibbitPrescription
import RibbitTestSupport
import Synchronization
import Testing

@testable import RibbitFitting

/// The detector's speech reading, made from targets read once per band layout and the
/// detector's recursion per fitting, equals what a whole engine with the fitting's own
/// detectors reads (the way it was measured before, kept here as the reference).
@Suite struct DetectorSpeechLevelsTests {
    /// The reference: 3 s of the speech-like signal through an engine with these settings, the
    /// power-weighted mean of each band's smoothed level after the first half second, less the
    /// rule's band level.
    static func engineReading(_ settings: CompressorSettings, geometry: EngineGeometry, sampleRate: Double) throws -> [Double] {
        let centres = settings.bands.map(\.centreHz)
        let config = CompressorConfig(
            settings: [settings], amplitude: [{ _ in 1 }], calibration: .uncalibrated, taps: geometry.filterLength,
            fftLength: geometry.fftLength, hopSize: geometry.hopSize, sampleRate: sampleRate)
        var unity = [Double](repeating: 0, count: geometry.filterLength)
        unity[geometry.filterLength / 2] = 1
        let engine = try OverlapSaveEngine(
            geometry: geometry, sampleRate: sampleRate, filters: FilterSet(taps: [unity], fftLength: geometry.fftLength, ceilingDBFS: 0),
            blockSize: geometry.hopSize, fftPlanning: .wisdomOrEstimate)
        try engine.publish(config)
        let signal = SpeechLikeSignal.generate(
            count: Int(sampleRate * DetectorSpeechLevels.seconds), sampleRate: sampleRate,
            levelDBFS: 65 - Calibration.uncalibrated.inputDBSPLAtFullScale, seed: DetectorSpeechLevels.seed)
        let hop = geometry.hopSize
        var weighted = [Double](repeating: 0, count: centres.count), power = weighted
        var start = 0
        while start + hop <= signal.count {
            _ = engine.process([Array(signal[start..<(start + hop)])], blockSize: hop)
            start += hop
            guard start > Int(sampleRate / 2) else { continue }
            for (b, level) in engine.compressorLevels(channel: 0).enumerated() where level.isFinite {
                let p = pow(10, Double(level) / 10)
                weighted[b] += p * Double(level)
                power[b] += p
            }
        }
        let rule = Camfit.speechBandLevelsDBSPL(centresHz: centres, overallDBSPL: 65)
        return centres.indices.map { power[$0] > 0 ? weighted[$0] / power[$0] - rule[$0] : 0 }
    }

    @Test func theRecursionOverSharedTargetsReadsWhatTheEngineReads() throws {
        let geometry = EngineGeometry.standard(sampleRate: 48000)
        var compared = 0
        var worst = 0.0
        for sample in ["camfit-sloping.rx", "iec-n3.rx", "iec-s2.rx"] {
            let rx = try Prescription.parse(Array(try String(contentsOf: TestPaths.prescription(sample), encoding: .utf8).utf8))
            for ear in [Ear.left, .right] {
                let speech = try #require(CompressorFitting.settings(rx, ear: ear, trusted: false))
                var music = speech
                (music.attackMs, music.releaseMs) = CompressorSettings.musicTimes
                for program in Program.allCases {
                    for settings in [speech, music] {
                        let expanded = program.expand(settings, prescription: rx)
                        let reading = DetectorSpeechLevels.measure(expanded, geometry: geometry, sampleRate: 48000)
                        let reference = try Self.engineReading(expanded, geometry: geometry, sampleRate: 48000)
                        for (a, b) in zip(reading, reference) {
                            worst = max(worst, abs(a - b))
                            compared += 1
                        }
                        #expect(
                            zip(reading, reference).allSatisfy { abs($0 - $1) < 0.01 },
                            "\(sample) \(ear) \(program): \(reading) against \(reference)")
                    }
                }
            }
        }
        print("detector readings: \(compared) bands compared, worst difference \(String(format: "%.5f", worst)) dB")
        #expect(compared > 100)
    }

    /// A store between runs: the first reading keeps every hop of every band under a one-line
    /// name of the layout, the next takes the same targets from there; a store that holds a
    /// different count is not used.
    @Test func targetsKeptBetweenRunsAreReadBackTheSame() throws {
        final class Memory: DetectorTargetsStore {
            let kept = Mutex<[String: [Float]]>([:])
            func load(_ key: String, count: Int) -> [Float]? { kept.withLock { $0[key] }.flatMap { $0.count == count ? $0 : nil } }
            func save(_ key: String, _ values: [Float]) -> String? {
                kept.withLock { $0[key] = values }
                return nil
            }
        }
        let geometry = EngineGeometry.standard(sampleRate: 48000)
        let rx = try Prescription.parse(Array(try String(contentsOf: TestPaths.prescription("camfit-sloping.rx"), encoding: .utf8).utf8))
        let settings = try #require(CompressorFitting.settings(rx, ear: .left, trusted: false))
        let key = DetectorSpeechLevels.LayoutKey(
            centresHz: settings.bands.map(\.centreHz), geometry: [geometry.fftLength, geometry.hopSize, geometry.filterLength],
            sampleRate: 48000)
        #expect(!key.text.contains("\n") && key.text.contains("hop \(geometry.hopSize)"), "\(key.text)")
        let memory = Memory()
        #expect(DetectorSpeechLevels.kept(key, geometry: geometry, in: memory) == nil)
        let read = DetectorSpeechLevels.read(settings, key: key, geometry: geometry, into: memory)
        let hops = 48000 * 3 / geometry.hopSize
        #expect(read.count == hops && read.allSatisfy { $0.count == settings.bands.count })
        #expect(memory.kept.withLock { $0[key.text]?.count } == hops * settings.bands.count)
        let again = try #require(DetectorSpeechLevels.kept(key, geometry: geometry, in: memory))
        #expect(again.map { $0.map(\.bitPattern) } == read.map { $0.map(\.bitPattern) })
        memory.kept.withLock { _ = $0[key.text]!.removeLast() }
        #expect(DetectorSpeechLevels.kept(key, geometry: geometry, in: memory) == nil)
    }
}
