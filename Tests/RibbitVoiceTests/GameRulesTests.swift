import Foundation
import Testing

@testable import RibbitVoice

// The thesis's timelines, on the standard calibrated settings: quiet 45, target 55-75, too loud
// 85 dB SPL; shortest 0.15 s, syllable up to 0.6 s, cloud 0.8 s; 5 clouds, 6 jumps; flight 6 s,
// balloon 3 s; pitch band 200-300 Hz held 2 s. Event times are seconds from the game's start.
@Suite struct CloudsRulesTests {
    @Test func aTooShortSoundLiftsNoCloud() {
        var game = CloudsGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().silence(0.5).voice(0.1).silence(0.5))
        #expect(kinds(events) == [.started, .tooShort])
        #expect(near(events.last?.value, 0.1) && near(events.last?.time, 0.7))
        #expect(game.view.done == 0 && game.view.feedback == "too short" && game.summary.attempts == 1)
    }

    @Test func aSecondCloudNeedsSilenceFirst() {
        var game = CloudsGame(settings: standardSettings)
        let timeline = VoiceTimeline().silence(0.5).voice(1).silence(0.15).voice(1).silence(0.5).voice(1).silence(0.5)
        let events = play(&game, timeline)
        #expect(kinds(events) == [.started, .cloudLifted, .notQuietFirst, .cloudLifted])
        // Each cloud rises 0.8 s into its sound; the refused sound is reported when it ends.
        #expect(near(events[1].time, 1.3) && near(events[2].time, 2.75) && near(events[2].value, 1) && near(events[3].time, 3.95))
        #expect(game.view.done == 2 && game.summary.attempts == 3 && game.summary.successes == 2)
    }

    @Test func quietFor0_3SecondsIsEnough() {
        var game = CloudsGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().voice(1).silence(0.3).voice(1).silence(0.3))
        #expect(kinds(events) == [.started, .cloudLifted, .cloudLifted] && near(events[2].time, 2.1))
    }

    @Test func aTooLoudOrTooQuietSoundLiftsNoneAndAClapIsNoAttempt() {
        var game = CloudsGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().voice(1, dB: 90).silence(0.5).voice(1, dB: 50).silence(0.5).clap().silence(0.5))
        #expect(kinds(events) == [.started, .tooLoud, .tooQuiet, .tooShort])
        #expect(events[1].value == 90 && events[2].value == 50 && near(events[3].value, 0.04))
        #expect(game.view.done == 0 && game.summary.attempts == 2)
    }

    @Test func aSoundThatBreaksOutOfTheRangeStartsItsCountAgain() {
        var game = CloudsGame(settings: standardSettings)
        // 0.5 s in range, 0.2 s at 50 dB (under the range, still a sound), 0.8 s in range.
        let events = play(&game, VoiceTimeline().voice(0.5).voice(0.2, dB: 50).voice(0.8).silence(0.5))
        #expect(kinds(events) == [.started, .cloudLifted])
        #expect(near(events[1].time, 1.5))
    }

    @Test func fiveCloudsFinishTheGameOnce() {
        var game = CloudsGame(settings: standardSettings)
        var timeline = VoiceTimeline()
        for _ in 0..<6 { timeline = timeline.voice(1).silence(0.5) }
        let events = play(&game, timeline)
        #expect(kinds(events) == [.started] + Array(repeating: .cloudLifted, count: 5) + [.finished])
        #expect(game.isFinished && game.view.finished && game.view.done == 5 && game.view.goal == 5)
        #expect(near(events.last?.time, 4 * 1.5 + 0.8))
        #expect(game.exit(time: 20).isEmpty)
        let summary = game.summary
        #expect(near(summary.voicedSeconds, 4.8) && near(summary.secondsInTarget, 4.8))
        #expect(summary.attempts == 5 && summary.successes == 5 && summary.f0LowHz == 250 && summary.f0HighHz == 250)
    }
}

@Suite struct AirplaneRulesTests {
    @Test func thePlaneTakesOffAtTheFirstSoundAndLandsAfterTheFlight() {
        var game = AirplaneGame(settings: standardSettings)
        #expect(kinds(play(&game, VoiceTimeline().silence(1))) == [.started])
        #expect(game.view.progress == 0 && game.view.speed == 0)
        let events = play(&game, VoiceTimeline().silence(1).voice(7), from: 1)
        #expect(kinds(events) == [.planeTookOff, .planeLanded, .finished])
        #expect(near(events[0].time, 1.01))
        // Steady voice lands it after flightSeconds plus half the 0.5 s run-up.
        let landing = events[1].time - 1
        print("airplane: landed after \(landing) s of voice (flight 6 s, run-up 0.5 s)")
        #expect(abs(landing - 6.25) <= 0.011)
        #expect(game.view.finished && game.view.progress == 1 && game.view.speed == 0 && game.summary.successes == 1)
    }

    @Test func itSlowsAndSinksWhenTheVoiceStops() {
        var game = AirplaneGame(settings: standardSettings)
        _ = play(&game, VoiceTimeline().voice(2))
        #expect(game.view.speed == 1 && game.view.altitude == 1)
        let flown = game.view.progress
        let timeline = VoiceTimeline().voice(2).silence(3.5)
        _ = play(&game, VoiceTimeline().voice(2).silence(0.75), from: 2)
        #expect(abs(game.view.speed - 0.5) < 0.011 && game.view.altitude == game.view.speed && game.view.progress > flown)
        _ = play(&game, VoiceTimeline().voice(2).silence(2.5), from: 2.75)
        let parked = game.view.progress
        _ = play(&game, timeline, from: 4.5)
        #expect(game.view.speed == 0 && game.view.progress == parked && !game.isFinished)
    }

    @Test func tooLoudIsLoggedOnceAndGivesNoSpeed() {
        var game = AirplaneGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().voice(0.3).voice(0.5, dB: 90))
        #expect(kinds(events) == [.started, .planeTookOff, .tooLoud] && events[2].value == 90)
        #expect(abs(game.view.speed - 0.6) < 1e-9 && game.view.feedback == "too loud")
    }
}

@Suite struct DogRulesTests {
    @Test func eachSyllableMakesTheDogJumpSixFinish() {
        var game = DogGame(settings: standardSettings)
        var timeline = VoiceTimeline()
        for _ in 0..<7 { timeline = timeline.voice(0.3).silence(0.3) }
        let events = play(&game, timeline)
        #expect(kinds(events) == [.started] + Array(repeating: .dogJumped, count: 6) + [.finished])
        #expect(near(events[1].time, 0.4) && near(events[1].value, 0.3))
        #expect(game.isFinished && game.view.done == 6)
    }

    @Test func longLoudShortAndClappedSoundsMakeNoJump() {
        var game = DogGame(settings: standardSettings)
        let timeline = VoiceTimeline().voice(1).silence(0.3).voice(0.3, dB: 90).silence(0.3).voice(0.1).silence(0.3).clap()
            .silence(0.3).voice(0.3, dB: 50).silence(0.3)
        let events = play(&game, timeline)
        #expect(kinds(events) == [.started, .tooLong, .tooLoud, .tooShort, .tooShort, .tooQuiet])
        #expect(near(events[1].value, 1) && game.view.done == 0 && game.summary.attempts == 4)
    }

    @Test func theSummaryCountsVoiceTargetAttemptsAndPitch() {
        var game = DogGame(settings: standardSettings)
        // Two syllables (200 and 300 Hz), a long sound, a syllable at 80 dB (over the target,
        // under too loud: it still jumps).
        let timeline = VoiceTimeline().voice(0.3, f0Hz: 200).silence(0.3).voice(0.3, f0Hz: 300).silence(0.3).voice(1).silence(0.3)
            .voice(0.3, dB: 80).silence(0.3)
        _ = play(&game, timeline)
        let summary = game.summary
        #expect(near(summary.voicedSeconds, 1.9) && near(summary.secondsInTarget, 1.6))
        #expect(summary.attempts == 4 && summary.successes == 3 && summary.f0LowHz == 200 && summary.f0HighHz == 300)
    }
}

@Suite struct BalloonRulesTests {
    @Test func holdingTheRangeFillsTheBalloon() {
        var game = BalloonGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().voice(3.5))
        #expect(kinds(events) == [.started, .finished] && near(events[1].time, 3))
        #expect(game.view.level == 0.5 && game.view.progress == 1 && game.view.done == 1 && game.summary.successes == 1)
    }

    @Test func leavingTheRangeResetsIt() {
        var game = BalloonGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().voice(2).voice(0.2, dB: 50).voice(3.5).silence(0.5))
        #expect(kinds(events) == [.started, .balloonLeftRange, .finished])
        #expect(events[1].value == 50 && near(events[1].time, 2.01) && near(events[2].time, 5.2))
        var soft = BalloonGame(settings: standardSettings)
        _ = play(&soft, VoiceTimeline().voice(2).voice(0.2, dB: 50))
        #expect(soft.view.feedback == "louder", "a child's words, not \"out of range\"")
        var loud = BalloonGame(settings: standardSettings)
        _ = play(&loud, VoiceTimeline().voice(2).voice(0.2, dB: standardSettings.targetHighDB + 5))
        #expect(loud.view.feedback == "softer")
        var stopped = BalloonGame(settings: standardSettings)
        let stop = play(&stopped, VoiceTimeline().voice(2).silence(0.5))
        #expect(kinds(stop) == [.started, .balloonLeftRange] && stop[1].value == nil && stopped.view.progress == 0)
        #expect(stopped.view.feedback == "keep going", "a breath is not leaving the range")
    }

    @Test func tooLoudPopsItUntilTheNextSoundInRange() {
        var clapped = BalloonGame(settings: standardSettings)
        #expect(kinds(play(&clapped, VoiceTimeline().clap(0.05, dB: 95).silence(0.5))) == [.started] && !clapped.view.popped)
        var game = BalloonGame(settings: standardSettings)
        var events = play(&game, VoiceTimeline().voice(1).voice(0.1, dB: 90).voice(1))
        #expect(kinds(events) == [.started, .balloonPopped] && events[1].value == 90)
        #expect(game.view.popped && game.view.progress == 0 && game.view.feedback == "too loud")
        events = play(&game, VoiceTimeline().voice(1).voice(0.1, dB: 90).voice(1).silence(0.5).voice(3.5), from: 2.1)
        #expect(kinds(events) == [.finished] && near(events[0].time, 5.6) && !game.view.popped)
    }
}

@Suite struct PitchRulesTests {
    @Test func holdingTheBandFinishes() {
        var game = PitchGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().voice(2.5, f0Hz: 250))
        #expect(kinds(events) == [.started, .pitchInBand, .finished] && events[1].value == 250 && near(events[2].time, 2))
        #expect(near(game.view.pitch, PitchGame.display(250)) && near(PitchGame.display(600), 1) && near(PitchGame.display(60), 0))
        #expect(game.view.bandLow < game.view.pitch! && game.view.pitch! < game.view.bandHigh)
        #expect(near(game.summary.secondsInTarget, 2))
    }

    @Test func leavingTheBandResetsTheHold() {
        var game = PitchGame(settings: standardSettings)
        let events = play(&game, VoiceTimeline().voice(1.5, f0Hz: 250).voice(0.2, f0Hz: 350).voice(2.5, f0Hz: 250))
        #expect(kinds(events) == [.started, .pitchInBand, .pitchLeftBand, .pitchInBand, .finished])
        #expect(events[2].value == 350 && near(events[4].time, 3.7))
        var stopped = PitchGame(settings: standardSettings)
        let stop = play(&stopped, VoiceTimeline().voice(1.5, f0Hz: 250).silence(0.5))
        #expect(kinds(stop) == [.started, .pitchInBand, .pitchLeftBand] && stop[2].value == nil && stopped.view.progress == 0)
        #expect(stopped.view.pitch == nil && stopped.view.feedback == "keep going")
        var high = PitchGame(settings: standardSettings)
        _ = play(&high, VoiceTimeline().voice(1.5, f0Hz: 250).voice(0.2, f0Hz: 350))
        #expect(high.view.feedback == "lower")
        var low = PitchGame(settings: standardSettings)
        _ = play(&low, VoiceTimeline().voice(1.5, f0Hz: 250).voice(0.2, f0Hz: 150))
        #expect(low.view.feedback == "higher")
    }

    @Test func theGlideGoesUpAndDownThroughTheBandInOneSound() {
        var glide = standardSettings
        glide.pitchExercise = .glide
        var game = PitchGame(settings: glide)
        let events = play(&game, VoiceTimeline().glide(1, fromHz: 150, toHz: 400).glide(1, fromHz: 400, toHz: 150))
        #expect(kinds(events) == [.started, .pitchInBand, .pitchLeftBand, .pitchInBand, .pitchLeftBand, .finished])
        #expect(game.view.progress == 1 && game.view.finished && game.view.feedback == nil, "over the band on purpose: no word")

        var upOnly = PitchGame(settings: glide)
        _ = play(&upOnly, VoiceTimeline().glide(1, fromHz: 150, toHz: 400))
        #expect(near(upOnly.view.progress, 0.5))
        _ = play(&upOnly, VoiceTimeline().glide(1, fromHz: 150, toHz: 400).silence(0.5), from: 1)
        #expect(upOnly.view.progress == 0 && !upOnly.isFinished)

        // Starting in the band does not count: the glide must start under it.
        var inside = PitchGame(settings: glide)
        _ = play(&inside, VoiceTimeline().glide(1, fromHz: 250, toHz: 400).glide(1, fromHz: 400, toHz: 150))
        #expect(!inside.isFinished)
    }
}

@Suite struct VoiceGamesTests {
    @Test func theFactoryMakesEachGameAndExitEndsIt() {
        for kind in VoiceGameKind.allCases {
            var game = VoiceGames.make(kind, settings: standardSettings)
            #expect(game.kind == kind && game.view.game == kind)
            var events: [VoiceGameEvent] = []
            let timeline = VoiceTimeline().silence(1).voice(1)
            for frame in timeline.frames.prefix(100) { events += game.step(frame) }
            #expect(kinds(events) == [.started])
            let exited = game.exit(time: 1)
            #expect(kinds(exited) == [.exited] && near(exited.first?.time, 1) && game.isFinished && !game.view.finished)
            #expect(game.exit(time: 2).isEmpty && game.step(timeline.frames[100]).isEmpty)
        }
    }

    @Test func settingsStoredBeforeThePitchExerciseStillDecode() throws {
        var glide = standardSettings
        glide.pitchExercise = .glide
        let decoded = try JSONDecoder().decode(VoiceSettings.self, from: JSONEncoder().encode(glide))
        #expect(decoded == glide)
        var old = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(standardSettings)) as? [String: Any])
        old["pitchExercise"] = nil
        let oldDecoded = try JSONDecoder().decode(VoiceSettings.self, from: JSONSerialization.data(withJSONObject: old))
        #expect(oldDecoded == standardSettings && oldDecoded.pitchExercise == .hold)
    }
}
