import Foundation
import RibbitDSP
import RibbitMonitor
import RibbitSignals
import Testing

/// The one frame builder (daemon and `process --dump`) and the per-ear field list it relies on.
@Suite struct DumpFrameBuilderTests {
    let rate = 48000.0
    let tone = Signals.sine(count: 2400, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.1)

    /// Each ear appended reaches its own entry; the frame carries what the caller says and the
    /// change in the limited count, not the count itself.
    @Test func aFrameHoldsEachEarAndTheChangeInLimitedSamples() {
        let builder = DumpFrameBuilder(ears: [.right, .left], sampleRate: rate, limitedSamples: 100)
        builder.append(ear: 0, input: tone, output: tone.map { $0 * 10 })  // right: +20 dB
        builder.append(ear: 1, input: tone, output: tone)
        #expect(builder.pendingFrames == 2400)
        let filters = FilterSet.delay(96, channelCount: 2, fftLength: 256)
        let frame = builder.frame(
            time: 0.05, latencyFrames: 96, xruns: 2, output: .bypassed, prescription: nil, filters: filters, fitting: nil,
            limitedSamples: 130, droppedFrames: 7)
        #expect(builder.pendingFrames == 0)
        #expect((frame.limitedSamples, frame.droppedFrames, frame.xruns, frame.output) == (30, 7, 2, .bypassed))
        let (left, right) = (frame.ears["left"]!, frame.ears["right"]!)
        #expect(abs(right.outputRMSDB - right.inputRMSDB - 20) < 0.01)
        #expect(abs(left.outputRMSDB - left.inputRMSDB) < 0.01)
        #expect(left.appliedGainDB.allSatisfy { $0 == 0 } && left.audiogram.isEmpty)
        let next = builder.frame(
            time: 0.1, latencyFrames: 96, xruns: 2, output: .bypassed, prescription: nil, filters: filters, fitting: nil,
            limitedSamples: 130, droppedFrames: 7)
        #expect(next.limitedSamples == 0)
    }

    /// The gains follow the filters that run: a frame after a switch shows the new filter's response.
    @Test func theAppliedGainFollowsTheRunningFilters() {
        let builder = DumpFrameBuilder(ears: [.left], sampleRate: rate)
        let delay = FilterSet.delay(96, channelCount: 1, fftLength: 256)
        let half = FilterSet(taps: [[0.5]], fftLength: 256, ceilingDBFS: 0)
        func applied(_ filters: FilterSet) -> [Double] {
            builder.append(ear: 0, input: tone, output: tone)
            return builder.frame(
                time: 0, latencyFrames: 0, xruns: 0, output: .processing, prescription: nil, filters: filters, fitting: nil,
                limitedSamples: 0, droppedFrames: 0
            ).ears["left"]!.appliedGainDB
        }
        #expect(applied(delay).allSatisfy { $0 == 0 })
        #expect(applied(half).allSatisfy { $0 == -6.02 })
        #expect(applied(delay).allSatisfy { $0 == 0 })
    }

    /// Levels combine as powers field by field and peaks as the maximum; the gains are left alone.
    @Test func levelsCombineFieldByField() {
        let dump = DumpAnalyzer().analyze(input: tone, output: tone, recentInput: tone[...], recentOutput: tone[...], sampleRate: rate)
        let louder = dump.mapLevels(level: { $0 + 10 }, peak: { $0 + 20 })
        #expect(louder.inputRMSDB == dump.inputRMSDB + 10 && louder.outputPeakDB == dump.outputPeakDB + 20)
        #expect(
            louder.outputSpectrumDB == dump.outputSpectrumDB.map { $0 + 10 } && louder.inputBandsDB == dump.inputBandsDB.map { $0 + 10 })
        let sum = EarDump.combine(dump, louder, level: +, peak: max)
        #expect(sum.outputBandsDB == zip(dump.outputBandsDB, louder.outputBandsDB).map(+))
        #expect(sum.inputPeakDB == louder.inputPeakDB && sum.outputRMSDB == dump.outputRMSDB + louder.outputRMSDB)
    }

    /// An ear is one flat JSON object with exactly the documented keys (docs/dump-format.md),
    /// though its fields are declared in two parts.
    @Test func anEarIsOneFlatObjectWithTheDocumentedKeys() throws {
        let builder = DumpFrameBuilder(ears: [.left], sampleRate: rate)
        builder.append(ear: 0, input: tone, output: tone)
        let frame = builder.frame(
            time: 0.05, latencyFrames: 96, xruns: 0, output: .processing, prescription: nil,
            filters: .delay(96, channelCount: 1, fftLength: 256), fitting: nil, limitedSamples: 0, droppedFrames: 0)
        let object = try #require(try JSONSerialization.jsonObject(with: frame.jsonLine()) as? [String: Any])
        let ear = try #require((object["ears"] as? [String: Any])?["left"] as? [String: Any])
        #expect(
            ear.keys.sorted() == [
                "appliedGainDB", "audiogram", "combinationWindowDB", "inputBandsDB", "inputPeakDB", "inputRMSDB", "inputSpectrumDB",
                "outputBandsDB", "outputPeakDB", "outputRMSDB", "outputSpectrumDB", "targetGainDB",
            ])
        #expect(try JSONDecoder().decode(DumpFrame.self, from: frame.jsonLine()) == frame)
    }
}
