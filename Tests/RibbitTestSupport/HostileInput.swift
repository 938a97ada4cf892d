import Foundation
import RibbitSignals

/// The inputs that must never get past the output ceiling: full scale, DC, NaN, infinities and
/// the largest floats, one segment each, in this order.
public enum HostileInput {
    public static let segmentNames = [
        "full-scale square", "DC +1", "DC -1", "NaN", "+Inf", "-Inf", "+-3e38 square", "full-scale noise",
    ]

    /// `segmentFrames` samples of each kind in turn.
    public static func signal(segmentFrames: Int, seed: UInt64 = 7) -> [Float] {
        var random = SeededRandom(seed: seed)
        var out = [Float]()
        out.reserveCapacity(segmentFrames * segmentNames.count)
        for segment in segmentNames.indices {
            for n in 0..<segmentFrames {
                let square: Float = (n / 24) % 2 == 0 ? 1 : -1  // 1 kHz at 48 kHz
                let x: Float =
                    switch segment {
                    case 0: square
                    case 1: 1
                    case 2: -1
                    case 3: .nan
                    case 4: .infinity
                    case 5: -.infinity
                    case 6: 3e38 * square
                    default: Float.random(in: -1...1, using: &random)
                    }
                out.append(x)
            }
        }
        return out
    }

    /// The name of the segment sample `index` belongs to.
    public static func segment(at index: Int, segmentFrames: Int) -> String {
        segmentNames[min(segmentNames.count - 1, index / segmentFrames)]
    }
}
