import Foundation
import RibbitSignals
import Testing

@testable import RibbitMonitor

/// `calibrate --microphone` keeps a reading only when the microphone hears a sound calibrator:
/// a steady 1 kHz tone at least 20 dB above everything else. Judged here on frames the dump's
/// own analyser makes from generated sound.
@Suite struct CalibratorCheckTests {
    /// `frames` dump frames of `signal` (48 kHz), each over the newest 4096 samples.
    func check(_ signal: [Float], frames: Int = CalibratorCheck.frames) -> CalibratorCheck {
        let analyzer = DumpAnalyzer()
        var check = CalibratorCheck()
        for frame in 0..<frames {
            let end = 4096 + frame * 2400
            let window = Array(signal[(end - 4096)..<end])
            check.add(
                inputBandsDB: analyzer.analyze(
                    input: window, output: window, recentInput: window[...], recentOutput: window[...], sampleRate: 48000
                ).inputBandsDB)
        }
        return check
    }

    let count = 4096 + CalibratorCheck.frames * 2400

    @Test func aCalibratorInAQuietRoomPasses() {
        let tone = Signals.sine(count: count, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.1)
        let room = Signals.whiteNoise(count: count, rms: 0.001, seed: 4)  // -60 dBFS against the tone's -23
        let result = check(zip(tone, room).map { $0 + $1 })
        #expect(result.problem == nil, "\(result.aboveRoomDB)")
        #expect(result.aboveRoomDB.allSatisfy { $0 > 30 })
    }

    @Test func theRoomAloneFails() {
        let result = check(Signals.whiteNoise(count: count, rms: 0.005, seed: 5))  // -46 dBFS of room noise
        #expect(result.problem?.contains("no steady 1 kHz tone well above the room") == true, "\(result.problem ?? "none")")
    }

    /// A 1 kHz tone drowned in the room (10 dB above it over the whole band) is no calibrator either.
    @Test func aToneBarelyAboveTheRoomFails() {
        let tone = Signals.sine(count: count, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.01)
        let room = Signals.whiteNoise(count: count, rms: 0.0023, seed: 6)
        #expect(check(zip(tone, room).map { $0 + $1 }).problem?.contains("well above the room") == true)
    }

    /// One period of 256 frames lost (an xrun: silence where the calibrator's tone was) clicks
    /// through the frame whose window holds it, its splatter less than 20 dB below the tone;
    /// the calibrator is still taken. Three lost periods in half a second are more than a
    /// steady calibrator gives.
    @Test func oneLostPeriodIsForgivenThreeAreNot() {
        let tone = Signals.sine(count: count, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.1)
        // Silence a period in the middle of frame `frame`'s window.
        func losing(_ frames: [Int]) -> [Float] {
            var signal = tone
            for frame in frames { for index in (frame * 2400 + 1920)..<(frame * 2400 + 2176) { signal[index] = 0 } }
            return signal
        }
        let once = check(losing([4]))
        #expect(once.aboveRoomDB.filter { $0 < CalibratorCheck.minimumToneAboveRoomDB }.count == 1, "\(once.aboveRoomDB)")
        #expect(once.problem == nil, "\(once.problem ?? "")")
        let thrice = check(losing([1, 4, 7]))
        #expect(thrice.problem?.contains("well above the room") == true, "\(thrice.aboveRoomDB)")
    }

    /// A tone that swells by 3 dB during the half second (a hand moving the calibrator) fails.
    @Test func anUnsteadyToneFails() {
        var tone = Signals.sine(count: count, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.1)
        for index in tone.indices { tone[index] *= Float(pow(10, 3 * Double(index) / Double(count) / 20)) }
        #expect(check(tone).problem?.contains("varies by") == true)
    }

    @Test func tooFewFramesSayWhy() {
        let tone = Signals.sine(count: count, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.1)
        #expect(check(tone, frames: 3).problem?.contains("too little") == true)
    }
}
