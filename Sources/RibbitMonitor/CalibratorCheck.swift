import Glibc

/// Whether the microphone hears a sound calibrator: a steady 1 kHz tone well above the room.
/// Judged on the dump's third-octave input bands (`EarDump.inputBandsDB`, dBFS RMS), frame by
/// frame, so `ribbitd calibrate --microphone` never stores the room's level as the calibrator's
/// (a calibrator left off, or not on the microphone, gives 40-60 dB more gain).
public struct CalibratorCheck: Sendable {
    /// The tone's band must be this far above the rest of the spectrum taken together.
    public static let minimumToneAboveRoomDB = 20.0
    /// A calibrator holds its level within +-0.3 dB (IEC 60942 class 1); the room and a hand
    /// moving it by a few dB do not.
    public static let maximumSwingDB = 1.0
    /// Frames to judge: half a second of the dump's 20 a second.
    public static let frames = 10
    /// Frames left out of the judgement, the worst first: one lost period of sound (an xrun of a
    /// busy sound card or JACK server) clicks through the frames whose windows hold it, its splatter
    /// 15-20 dB below the tone (15.7 in a CI run). The room fails every frame, so it still fails.
    public static let spoiledFramesAllowed = 2

    /// Per frame, the tone's band level (dBFS) and how far above the other bands it stood.
    public private(set) var toneDB: [Double] = []
    public private(set) var aboveRoomDB: [Double] = []

    public init() {}

    /// Takes one frame's input bands (one ear; the louder ear's when the microphone feeds both).
    public mutating func add(inputBandsDB bands: [Double]) {
        let centres = DumpAnalyzer.bandCentersHz
        guard bands.count == centres.count, let tone = centres.firstIndex(of: 1000) else { return }
        // Hann leakage puts a pure tone in its neighbours too: 800 and 1250 Hz belong to it.
        var room = 0.0
        for (index, centre) in centres.enumerated() where centre < 800 || centre > 1250 { room += power(bands[index]) }
        toneDB.append(bands[tone])
        aboveRoomDB.append(bands[tone] - 10 * log10(max(room, 1e-30)))
    }

    /// Why this is not a calibrator's tone, in the user's terms; nil when it is.
    public var problem: String? {
        guard toneDB.count >= Self.frames else {
            return "the daemon sent too little of the microphone's sound to judge; is it running and the microphone connected?"
        }
        // The frames judged: all but the few that stand least above the room.
        let kept = aboveRoomDB.indices.sorted { aboveRoomDB[$0] > aboveRoomDB[$1] }.prefix(toneDB.count - Self.spoiledFramesAllowed)
        let tones = kept.map { toneDB[$0] }
        guard let lowest = tones.min(), let highest = tones.max(), let above = kept.map({ aboveRoomDB[$0] }).min() else { return nil }
        if above < Self.minimumToneAboveRoomDB {
            return "the microphone hears no steady 1 kHz tone well above the room (the tone is \(Self.one(above)) dB above the rest, "
                + "at least \(Int(Self.minimumToneAboveRoomDB)) needed); put the calibrator on the microphone, switch it on and try again"
        }
        if highest - lowest > Self.maximumSwingDB {
            return
                "the 1 kHz tone varies by \(Self.one(highest - lowest)) dB (a calibrator holds within \(Self.one(Self.maximumSwingDB))); "
                + "hold the calibrator firmly on the microphone and try again"
        }
        return nil
    }

    private func power(_ dB: Double) -> Double { dB.isFinite ? pow(10, dB / 10) : 0 }

    private static func one(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }
}
