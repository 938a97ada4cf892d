import Glibc
import RibbitAudioLink
import RibbitDSP
import Testing

@Suite struct AudioLinkTests {
    var stats: AudioStats {
        var s = AudioStats()
        (s.cycles, s.busyNanoseconds, s.longestNanoseconds, s.period, s.latencyFrames, s.xruns, s.limitedSamples, s.dumpFramesDropped) =
            (1, 2, 3, 64, 96, 5, 6, 7)
        (s.missedCycles, s.missedAtFrameTimes, s.guardedSamples) = (3, [4_294_967_040, 256], 9)
        s.dspLoadPercent = 1.25
        (s.inputLeftDBFS, s.inputRightDBFS, s.toneMode) = (-23.5, -200, true)
        (s.bandLevelsDBSPL, s.broadbandDBSPL) = ([55.5, 61.25, -200], 66.125)
        s.activity = StageActivity(
            inputDBSPL: [55.5, 61.25, -200], compressionDB: [-3.5, 0, 0], followingSpeech: [1, 0.25, 0], noiseReductionDB: [-12, -0.5, 0],
            outputLimitDB: [0, -1.5, 0])
        return s
    }

    var plan: CompressorPlan {
        let bands = [
            CompressorBand(
                centreHz: 500, gainDB: 12.5, kneeDBSPL: 45, ratio: 2.5, expansionKneeDBSPL: 38, expansionRatio: 2, limitDBSPL: 111,
                steadyNoiseKneeDBSPL: 31.5),
            .linear(centreHz: 2000, gainDB: -3),
        ]
        return CompressorPlan(
            settings: [
                CompressorSettings(
                    bands: bands, attackMs: 5, releaseMs: 70,
                    steadyNoise: SteadyNoiseDetector(slowMs: 1000, followAboveDB: 20, blendMs: 200, floorWithinDB: 10)),
                CompressorSettings(bands: bands, attackMs: 50, releaseMs: 1000),
            ],
            bandTaps: [[[0.25, 0.5, 0.25], [0, 1, 0]], [[1e-9, -2, 1e-9], [0, 0, 0]]],
            calibration: Calibration(
                inputDBSPLAtFullScale: 104.5, outputDBSPLAtFullScale: [98, 101.25], outputResponseDB: [[250: -1, 4000: 2.5], [:]]),
            transitionHz: 746,
            noiseReduction: NoiseReductionSettings(strength: 0.5))
    }

    /// `plan` with the right ear lowered (the link carries the sub-band filters as designed).
    /// Bands with a maximum gain (the daemon's plans all have one).
    var capped: CompressorPlan {
        var capped = plan
        for c in capped.settings.indices {
            for b in capped.settings[c].bands.indices { capped.settings[c].bands[b].maximumGainDB = 12.5 - Double(b) }
        }
        return capped
    }

    var lowered: CompressorPlan {
        var lowered = plan
        lowered.lowering = [
            nil,
            LoweringPlan(
                cutoffHz: 2000, ratio: 2.5, taps: [[0.25, 0.5, 0.25], [1e-9, 1, 1e-9]], hilbertTaps: [[-0.5, 0, 0.5], [-1, 0, 1]],
                centreAmplitudes: [1, 2.5]),
        ]
        return lowered
    }

    var everyMessage: [AudioMessage] {
        [
            .filters(ceilingDBFS: -3, fftLength: 256, taps: [[0.5, -0.25, 1e-9], [1, 0, 0]]), .paused(true), .dump(false), .stop,
            .compressor(nil), .compressor(plan), .compressor(lowered), .compressor(capped), .trim(-4.5),
            .tone(frequencyHz: 1000, levelDBFS: -30, left: false, right: true, seconds: 12.5),
            .masker(centerHz: 2000, levelDBFS: -42.5, left: true, right: false, seconds: 8),
            .masker(centerHz: 250, levelDBFS: -200, left: false, right: false, seconds: 0),
            .tone(frequencyHz: 4000, levelDBFS: -50, left: true, right: false, seconds: 0.2, pulses: 3, offSeconds: 0.2),
            .tone(
                frequencyHz: 8000, levelDBFS: -3, left: false, right: true, seconds: 0.2, pulses: 3, offSeconds: 0.2, hearingTest: true,
                number: 41),
            .toneStarted(number: 41, atSeconds: 12345.678_901_234),
            .connected(client: "ribbit-ü", sampleRate: 48000, period: 64), .running(latencyFrames: 96), .stats(stats), .stats(AudioStats()),
            .samples(frameCount: 2, channels: [1, 2, 3, 4, 5, 6, 7, -.infinity], xruns: 3, droppedFrames: 128),
            .log(level: .warning, text: "3 xruns"),
            .failed("JACK server not found"), .gone(reason: "the JACK server went away", sampleRateChanged: false),
        ]
    }

    @Test func everyMessageSurvivesTheTripEvenByteByByte() {
        let bytes = everyMessage.flatMap { $0.encoded() }
        var whole = bytes
        #expect(AudioMessage.decode(from: &whole) == everyMessage)
        #expect(whole.isEmpty)
        var buffer: [UInt8] = []
        var received: [AudioMessage] = []
        for byte in bytes {
            buffer.append(byte)
            received += AudioMessage.decode(from: &buffer) ?? []
        }
        #expect(received == everyMessage)
    }

    @Test func garbageClosesTheLinkInsteadOfBeingTrusted() {
        var unknownType: [UInt8] = [1, 0, 0, 0, 99]
        #expect(AudioMessage.decode(from: &unknownType) == nil)
        var huge: [UInt8] = [0xff, 0xff, 0xff, 0x7f, 1]
        #expect(AudioMessage.decode(from: &huge) == nil)
        // A filter message claiming more taps than it carries.
        var short = AudioMessage.filters(ceilingDBFS: 0, fftLength: 256, taps: [[1, 2, 3]]).encoded()
        short.removeLast(8)
        short[0] -= 8
        #expect(AudioMessage.decode(from: &short) == nil)
    }

    @Test func aSocketPairCarriesMessagesBothWays() throws {
        let (a, b) = try #require(AudioLinkSocket.pair())
        let daemon = AudioLinkSocket(fd: a)
        let audio = AudioLinkSocket(fd: b)
        daemon.send(.paused(true))
        audio.wait(milliseconds: 1000)
        #expect(audio.receive() == [.paused(true)])
        audio.send(.running(latencyFrames: 96))
        daemon.wait(milliseconds: 1000)
        #expect(daemon.receive() == [.running(latencyFrames: 96)])
        #expect(!daemon.isClosed)
    }
}
