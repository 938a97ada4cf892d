/// A sound the child made: voiced frames at or over `quietDB`, ended by a short gap.
public struct VoiceSound: Codable, Sendable, Equatable {
    /// The thesis's duration classes (the settings' shortest, syllable and longest durations).
    public enum DurationClass: String, Codable, Sendable, CaseIterable {
        case tooShort = "too-short", syllable, sustained, tooLong = "too-long"
    }
    /// Stream seconds (`VoiceFrame.time`'s clock): the first voiced hop's start, the last one's end.
    public var start: Double
    public var end: Double
    public var peakDB: Double
    public var meanF0Hz: Double?
    public var lowF0Hz: Double?
    public var highF0Hz: Double?
    public var durationClass: DurationClass
    /// At or over `tooLoudDB` at its peak.
    public var tooLoud: Bool
    /// Never reached `targetLowDB`.
    public var tooQuiet: Bool

    public var duration: Double { end - start }
}

/// A loud unvoiced burst (a clap, a knock, a cough's noise): never a sound.
public struct NoiseBurst: Codable, Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var peakDB: Double

    public var duration: Double { end - start }
}

/// Cuts the frame stream into sounds and noise bursts. A sound starts on a voiced frame at or
/// over `quietDB` and ends once `gapSeconds` pass without one, so the short unvoiced stretches
/// inside a word (a consonant, a pitch-tracker dropout) do not split it. A noise burst is the
/// same for unvoiced frames at or over `targetLowDB` while no sound runs; a voiced frame
/// during a burst drops it (a plosive before a vowel is the sound's start, not a clap).
public struct SoundDetector: Sendable {
    /// What one frame did.
    public struct Step: Sendable, Equatable {
        /// The frame's hop length: the time since the previous frame (10 ms for the first one
        /// and after a jump in time).
        public var hopSeconds = 0.01
        /// A sound started on this frame (its `start`, stream seconds).
        public var onset: Double?
        /// This frame is voiced at or over `quietDB` (it belongs to the running sound).
        public var active = false
        /// A sound runs (its voiced frames and the gap after them).
        public var inSound = false
        public var ended: VoiceSound?
        public var noise: NoiseBurst?
    }

    public static let gapSeconds = 0.1
    /// Slack for comparing times built from 10 ms hops.
    static let epsilon = 1e-6

    public let settings: VoiceSettings
    private var lastTime: Double?
    private var sound: Running?
    private var burst: NoiseBurst?
    private var burstLast = 0.0

    private struct Running {
        var start: Double
        var last: Double
        var peakDB: Double
        var f0Sum = 0.0
        var f0Count = 0
        var lowF0Hz: Double?
        var highF0Hz: Double?

        mutating func add(_ frame: VoiceFrame) {
            last = frame.time
            peakDB = max(peakDB, frame.levelDB)
            if let f0 = frame.f0Hz {
                f0Sum += f0
                f0Count += 1
                lowF0Hz = min(lowF0Hz ?? f0, f0)
                highF0Hz = max(highF0Hz ?? f0, f0)
            }
        }
    }

    public init(settings: VoiceSettings) { self.settings = settings }

    /// Feeds one frame (in time order).
    public mutating func step(_ frame: VoiceFrame) -> Step {
        var step = Step()
        if let lastTime, frame.time > lastTime, frame.time - lastTime <= 0.1 { step.hopSeconds = frame.time - lastTime }
        lastTime = frame.time
        let dt = step.hopSeconds
        let active = frame.voiced && frame.levelDB >= settings.quietDB
        step.active = active
        if active {
            burst = nil
            if var running = sound {
                running.add(frame)
                sound = running
            } else {
                var running = Running(start: frame.time - dt, last: frame.time, peakDB: frame.levelDB)
                running.add(frame)
                sound = running
                step.onset = running.start
            }
        } else if let running = sound, frame.time - running.last >= Self.gapSeconds - Self.epsilon {
            step.ended = finish(running)
            sound = nil
        }
        step.inSound = sound != nil || step.ended != nil
        if sound == nil && !active && step.ended == nil {
            trackNoise(frame, dt: dt, into: &step)
        }
        return step
    }

    private mutating func trackNoise(_ frame: VoiceFrame, dt: Double, into step: inout Step) {
        if !frame.voiced && frame.levelDB >= settings.targetLowDB {
            if var current = burst {
                current.end = frame.time
                current.peakDB = max(current.peakDB, frame.levelDB)
                burst = current
            } else {
                burst = NoiseBurst(start: frame.time - dt, end: frame.time, peakDB: frame.levelDB)
            }
            burstLast = frame.time
        } else if let current = burst, frame.time - burstLast >= Self.gapSeconds - Self.epsilon {
            step.noise = current
            burst = nil
        }
    }

    private func finish(_ running: Running) -> VoiceSound {
        let duration = running.last - running.start
        let durationClass: VoiceSound.DurationClass
        if duration < settings.shortestSeconds - Self.epsilon {
            durationClass = .tooShort
        } else if duration <= settings.syllableMaxSeconds + Self.epsilon {
            durationClass = .syllable
        } else if duration <= settings.longestSeconds + Self.epsilon {
            durationClass = .sustained
        } else {
            durationClass = .tooLong
        }
        return VoiceSound(
            start: running.start, end: running.last, peakDB: running.peakDB,
            meanF0Hz: running.f0Count > 0 ? running.f0Sum / Double(running.f0Count) : nil, lowF0Hz: running.lowF0Hz,
            highF0Hz: running.highF0Hz, durationClass: durationClass, tooLoud: running.peakDB >= settings.tooLoudDB,
            tooQuiet: running.peakDB < settings.targetLowDB)
    }
}
