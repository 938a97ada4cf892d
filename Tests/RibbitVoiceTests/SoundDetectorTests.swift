import Testing

@testable import RibbitVoice

@Suite struct SoundDetectorTests {
    private func sounds(_ timeline: VoiceTimeline) -> (sounds: [VoiceSound], noise: [NoiseBurst]) {
        var detector = SoundDetector(settings: standardSettings)
        var sounds: [VoiceSound] = []
        var noise: [NoiseBurst] = []
        for frame in timeline.frames {
            let step = detector.step(frame)
            if let ended = step.ended { sounds.append(ended) }
            if let burst = step.noise { noise.append(burst) }
        }
        return (sounds, noise)
    }

    @Test func soundsAreClassedByDuration() {
        // Shortest 0.15 s, syllable up to 0.6 s, longest 8 s.
        let timeline = VoiceTimeline().silence(0.5).voice(0.1).silence(0.5).voice(0.3).silence(0.5).voice(2).silence(0.5)
            .voice(9).silence(0.5)
        let found = sounds(timeline).sounds
        #expect(found.map(\.durationClass) == [.tooShort, .syllable, .sustained, .tooLong])
        #expect(near(found[0].start, 0.5) && near(found[0].end, 0.6))
        #expect(zip(found.map(\.duration), [0.1, 0.3, 2, 9]).allSatisfy { near($0, $1) })
        #expect(sounds(VoiceTimeline().voice(0.15).silence(0.2)).sounds.map(\.durationClass) == [.syllable])
        #expect(sounds(VoiceTimeline().voice(0.6).silence(0.2)).sounds.map(\.durationClass) == [.syllable])
        #expect(sounds(VoiceTimeline().voice(0.61).silence(0.2)).sounds.map(\.durationClass) == [.sustained])
    }

    @Test func aShortGapDoesNotSplitASoundALongerOneDoes() {
        let joined = sounds(VoiceTimeline().voice(0.3).silence(0.09).voice(0.3).silence(0.2)).sounds
        #expect(joined.count == 1 && near(joined.first?.duration, 0.69))
        #expect(sounds(VoiceTimeline().voice(0.3).silence(0.1).voice(0.3).silence(0.2)).sounds.count == 2)
        // Voiced but under quietDB (45 dB SPL) is no sound.
        #expect(sounds(VoiceTimeline().voice(1, dB: 40).silence(0.2)).sounds.isEmpty)
    }

    @Test func aSoundEndsAfterTheGapWithItsPeakAndPitch() {
        var detector = SoundDetector(settings: standardSettings)
        var ends: [Double] = []
        for frame in VoiceTimeline().voice(0.2, dB: 60, f0Hz: 200).voice(0.2, dB: 70, f0Hz: 300).silence(0.3).frames {
            let step = detector.step(frame)
            if let sound = step.ended {
                ends.append(frame.time)
                #expect(sound.peakDB == 70 && sound.lowF0Hz == 200 && sound.highF0Hz == 300 && near(sound.meanF0Hz, 250))
                #expect(!sound.tooLoud && !sound.tooQuiet)
            }
        }
        // The last voiced hop ends at 0.4 s; 0.1 s later the sound is over.
        #expect(ends.count == 1 && near(ends.first, 0.5))
        let loudAndQuiet = sounds(VoiceTimeline().voice(0.3, dB: 90).silence(0.3).voice(0.3, dB: 50).silence(0.3)).sounds
        #expect(loudAndQuiet.map(\.tooLoud) == [true, false] && loudAndQuiet.map(\.tooQuiet) == [false, true])
    }

    @Test func aClapIsNoSoundButAPlosiveBeforeAVowelIsTheSoundsStart() {
        let clap = sounds(VoiceTimeline().silence(0.3).clap(0.04, dB: 80).silence(0.3))
        #expect(clap.sounds.isEmpty && clap.noise.count == 1)
        #expect(near(clap.noise.first?.duration, 0.04) && clap.noise.first?.peakDB == 80)
        let word = sounds(VoiceTimeline().silence(0.3).clap(0.03, dB: 70).voice(0.3).silence(0.3))
        #expect(word.noise.isEmpty && word.sounds.count == 1)
        // Unvoiced noise under the target range (breath) is neither.
        let breath = sounds(VoiceTimeline().clap(0.5, dB: 50).silence(0.3))
        #expect(breath.noise.isEmpty && breath.sounds.isEmpty)
    }
}
