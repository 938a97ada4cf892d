import Glibc

@testable import RibbitVoice

/// Frame sequences for the games' rules, 100 frames a second like the analysis: silence, a
/// voice at a level and f0, a pitch glide, a loud unvoiced clap.
struct VoiceTimeline {
    static let hopSeconds = 0.01
    private(set) var frames: [VoiceFrame] = []
    /// Stream seconds at the end so far.
    var now: Double { Double(frames.count) * Self.hopSeconds }

    func silence(_ seconds: Double) -> Self { adding(seconds) { _ in (VoiceFrame.floorDB, false, nil) } }

    func voice(_ seconds: Double, dB: Double = 65, f0Hz: Double = 250) -> Self { adding(seconds) { _ in (dB, true, f0Hz) } }

    /// A voice whose f0 moves log-linearly from `fromHz` to `toHz`.
    func glide(_ seconds: Double, fromHz: Double, toHz: Double, dB: Double = 65) -> Self {
        adding(seconds) { fraction in (dB, true, fromHz * pow(toHz / fromHz, fraction)) }
    }

    /// A loud unvoiced burst: a clap, a knock on the table.
    func clap(_ seconds: Double = 0.04, dB: Double = 80) -> Self { adding(seconds) { _ in (dB, false, nil) } }

    private func adding(_ seconds: Double, _ frame: (Double) -> (Double, Bool, Double?)) -> Self {
        var copy = self
        let count = Int((seconds / Self.hopSeconds).rounded())
        for index in 0..<count {
            let (levelDB, voiced, f0Hz) = frame(Double(index) / Double(max(1, count - 1)))
            let time = Double(copy.frames.count + 1) * Self.hopSeconds
            copy.frames.append(
                VoiceFrame(time: time, levelDB: levelDB, calibrated: true, clarity: voiced ? 0.9 : 0.1, voiced: voiced, f0Hz: f0Hz))
        }
        return copy
    }
}

/// The events of a game fed with the timeline's frames after `from` seconds (the earlier ones
/// were fed before), each frame's events in order.
func play(_ game: inout some VoiceGame, _ timeline: VoiceTimeline, from seconds: Double = 0) -> [VoiceGameEvent] {
    timeline.frames.filter { $0.time > seconds + 1e-9 }.flatMap { game.step($0) }
}

func kinds(_ events: [VoiceGameEvent]) -> [VoiceGameEvent.Kind] { events.map(\.kind) }

func near(_ a: Double?, _ b: Double, within tolerance: Double = 1e-6) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance
}

let standardSettings = VoiceSettings.standard(calibrated: true)
