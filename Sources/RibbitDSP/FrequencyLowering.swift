import Glibc

/// Where frequency lowering moves sound, at one engine geometry: nonlinear frequency
/// compression above a cut-off, f -> fc (f / fc)^(1 / ratio) (Simpson et al. 2005), made of
/// sub-bands that each move down by a whole number of FFT bins.
///
/// Why whole bins, and why sub-bands. Inside the overlap-save pass a spectrum moved down by m
/// bins (W[k] = Z[k + m]) transforms back to e^(-2 pi i m n / N) z[n] on the frame's samples n:
/// an exact single-sideband shift by m fs / N Hz of the complex (analytic) signal z, if z is a
/// filter's output that fits the zero padding and if each frame is also turned by
/// e^(-2 pi i m t0 / N), t0 the frame's first sample (`CompressorStage` keeps t0 mod N as an
/// integer: no drift, no libm). The shift is a constant, so each sub-band moves rigidly; the
/// compression curve is the staircase of those shifts. `LoweringPlan` designs the sub-bands'
/// analytic filters (the engine's filter length and delay: no added latency); the real part
/// of the moved signal is what plays, its image at f + shift is what the analytic filter's
/// negative-frequency response leaves.
///
/// The layout. The shift the curve asks for, s(f) = f - fc (f / fc)^(1 / ratio), grows
/// with f (its slope 1 - (f / fc)^(1 / ratio - 1) / ratio lies between 1 - 1 / ratio and 1).
/// Sub-band i (i = 1, 2, ...) is centred where s is exactly i * `stepBins` bins and moves by
/// that much; on the axis u(f) = s(f) / (stepBins fs / N) its weight is the raised cosine
/// cos^2(pi / 2 (u - i)) for |u - i| < 1, and the unmoved part is 1 below the cut-off and
/// cos^2(pi / 2 u) from there to the first centre. The weights sum to 1 up to the last
/// centre, so a tone between two centres comes out as two tones `stepBins` bins apart, each
/// within `stepBins` / 2 bins of where the curve puts it (one bin at the default step), and
/// the stronger one within that (exactly in the middle they are equal, -6 dB each). Two bins
/// per step is what a `taps`-long filter resolves: 375 to 1125 Hz apart at 48 kHz and 256
/// points, against the filter's 497 Hz main lobe; one bin per step would need sub-bands
/// narrower than the filter can make.
///
/// The top. Sub-bands reach to `highestSourceHz` (10 kHz, or 0.4 fs at low rates; at most
/// `maxSubbands`): the last one falls to 0 over one more step above its centre, and sound
/// above that is not played while lowering is on.
public struct LoweringLayout: Sendable, Equatable {
    public let cutoffHz: Double
    public let ratio: Double
    public let sampleRate: Double
    public let fftLength: Int
    /// The moved sub-bands' shifts in bins (stepBins, 2 stepBins, ...), ascending.
    public let shiftsBins: [Int]
    /// Where each sub-band's weight is 1 (Hz): its shift is exactly the curve's there.
    public let centresHz: [Double]

    public static let stepBins = 2
    public static let highestSourceHz = 10000.0
    public static let maxSubbands = 32
    /// The allowed settings (the prescription's ranges).
    public static let cutoffRangeHz = 1500.0...6000.0
    public static let ratioRange = 1.5...4.0

    public init(cutoffHz: Double, ratio: Double, sampleRate: Double, fftLength: Int) {
        precondition(Self.cutoffRangeHz.contains(cutoffHz) && Self.ratioRange.contains(ratio), "lowering outside its ranges")
        self.cutoffHz = cutoffHz
        self.ratio = ratio
        self.sampleRate = sampleRate
        self.fftLength = fftLength
        let top = min(Self.highestSourceHz, 0.4 * sampleRate)
        let step = Double(Self.stepBins) * sampleRate / Double(fftLength)
        let shiftAtTop = top - cutoffHz * pow(top / cutoffHz, 1 / ratio)
        let count = min(Self.maxSubbands, max(1, Int((shiftAtTop / step).rounded(.up))), (fftLength / 2 - 1) / Self.stepBins)
        shiftsBins = (1...count).map { $0 * Self.stepBins }
        centresHz = (1...count).map { i in Self.frequency(whereShiftIs: Double(i) * step, cutoffHz: cutoffHz, ratio: ratio) }
    }

    public var subbandCount: Int { shiftsBins.count }
    public var binHz: Double { sampleRate / Double(fftLength) }

    /// Where the curve puts a sound at `hz`: itself up to the cut-off, fc (hz / fc)^(1 / ratio) above.
    public func mappedHz(_ hz: Double) -> Double { hz <= cutoffHz ? hz : cutoffHz * pow(hz / cutoffHz, 1 / ratio) }

    /// Where sub-band `index` (0-based) puts its centre: the curve's own value there.
    public func destinationHz(subband index: Int) -> Double { centresHz[index] - Double(shiftsBins[index]) * binHz }

    /// s(f) in steps: 0 at and below the cut-off, i at sub-band i's centre.
    func position(_ hz: Double) -> Double {
        hz <= cutoffHz ? 0 : (hz - mappedHz(hz)) / (Double(Self.stepBins) * binHz)
    }

    /// The share of a sound at `hz` that stays where it is.
    public func unmovedWeight(atHz hz: Double) -> Double {
        let u = position(hz)
        return u >= 1 ? 0 : Self.raisedCosine(u)
    }

    /// The share of a sound at `hz` that sub-band `index` (0-based) moves.
    public func subbandWeight(_ index: Int, atHz hz: Double) -> Double {
        let u = position(hz) - Double(index + 1)
        return abs(u) >= 1 ? 0 : Self.raisedCosine(u)
    }

    static func raisedCosine(_ u: Double) -> Double {
        let c = cos(Double.pi / 2 * u)
        return c * c
    }

    /// The f above the cut-off where the shift f - mapped(f) is `shiftHz` (it grows with f).
    static func frequency(whereShiftIs shiftHz: Double, cutoffHz: Double, ratio: Double) -> Double {
        var (low, high) = (cutoffHz, cutoffHz)
        while high - cutoffHz * pow(high / cutoffHz, 1 / ratio) < shiftHz { high *= 2 }
        for _ in 0..<100 {
            let middle = (low + high) / 2
            if middle - cutoffHz * pow(middle / cutoffHz, 1 / ratio) < shiftHz { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }
}

/// One ear's frequency lowering as the daemon designs it and the audio process runs it (plain
/// values, so it crosses the link inside `CompressorPlan`): the setting and, per moved
/// sub-band, the analytic filter h + i h~ (the engine's filter length, both centred on its
/// middle tap). Sub-band i's target is the ear's amplitude at the destination times the
/// sub-band's weight, a(f - m_i fs / N) W_i(f): moved sound gets the gain shape of where it is
/// heard. The compressor's own band filters then carry a(f) times the unmoved weight.
public struct LoweringPlan: Sendable, Equatable {
    public var cutoffHz: Double
    public var ratio: Double
    /// [sub-band]: symmetric taps h_i (`LinearPhaseFIR.design`).
    public var taps: [[Double]]
    /// [sub-band]: their Hilbert partners h~_i (`LinearPhaseFIR.designHilbert`).
    public var hilbertTaps: [[Double]]
    /// The ear's amplitude a(f) at each compressor band centre: the reference of each band's
    /// output limit (the band filters above the cut-off no longer carry it).
    public var centreAmplitudes: [Double]

    public init(cutoffHz: Double, ratio: Double, taps: [[Double]], hilbertTaps: [[Double]], centreAmplitudes: [Double]) {
        self.cutoffHz = cutoffHz
        self.ratio = ratio
        self.taps = taps
        self.hilbertTaps = hilbertTaps
        self.centreAmplitudes = centreAmplitudes
    }

    /// Designs the sub-band filters for one ear whose (unlowered) amplitude is `amplitude`.
    public static func design(
        cutoffHz: Double, ratio: Double, sampleRate: Double, fftLength: Int, taps: Int, centresHz: [Double],
        amplitude: @escaping (Double) -> Double
    ) -> LoweringPlan {
        let layout = LoweringLayout(cutoffHz: cutoffHz, ratio: ratio, sampleRate: sampleRate, fftLength: fftLength)
        var symmetric: [[Double]] = []
        var hilbert: [[Double]] = []
        for i in 0..<layout.subbandCount {
            let shiftHz = Double(layout.shiftsBins[i]) * layout.binHz
            let target = { (hz: Double) in layout.subbandWeight(i, atHz: hz) * amplitude(max(hz - shiftHz, 0)) }
            symmetric.append(LinearPhaseFIR.design(taps: taps, sampleRate: sampleRate, amplitude: target))
            hilbert.append(LinearPhaseFIR.designHilbert(taps: taps, sampleRate: sampleRate, amplitude: target))
        }
        return LoweringPlan(
            cutoffHz: cutoffHz, ratio: ratio, taps: symmetric, hilbertTaps: hilbert, centreAmplitudes: centresHz.map(amplitude))
    }

    /// What the compressor's band filters split when the ear is lowered: the amplitude times
    /// the unmoved weight.
    public static func unmovedAmplitude(
        cutoffHz: Double, ratio: Double, sampleRate: Double, fftLength: Int, amplitude: @escaping (Double) -> Double
    ) -> (Double) -> Double {
        let layout = LoweringLayout(cutoffHz: cutoffHz, ratio: ratio, sampleRate: sampleRate, fftLength: fftLength)
        return { hz in amplitude(hz) * layout.unmovedWeight(atHz: hz) }
    }
}

/// The lowering's runtime tables inside a `CompressorConfig` (built off the audio thread,
/// only read by `CompressorStage`). Per channel c and moved sub-band i, with N the FFT length:
///
/// ```
/// moved[c][i][k]  P = (A_i + A~_i) / 2N    what moves down by shift m_i (positive frequencies)
/// image[c][i][k]  Q = (A_i - A~_i) / 2N    the negative-frequency rest (it moves up: the image)
/// ```
///
/// so that, with X' = X e^(-2 pi i k D / N) the input spectrum in the filters' common linear
/// phase and c = G_i e^(-2 pi i m t0 / N), the real output's half spectrum gains
///
/// ```
/// Y[k] += c (k + m <= N/2 ? X'[k+m] P[k+m] : conj(X'[N-k-m] Q[N-k-m]))
///       + conj(c) (k >= m ? X'[k-m] Q[k-m] : conj(X'[m-k] P[m-k]))
/// ```
///
/// which is Re(e^(-2 pi i m t / N) (h_i + i h~_i) * x) sample for sample on the kept hop
/// (the two conj terms are the spectrum's mirror). G_i = sum_b gainWeights[i][b] g_b, the
/// band gains interpolated at the sub-band's destination: moved sound gets the gain of where
/// it is heard. The detectors read the lowered input (lowering comes before compression, as in
/// a hearing aid): band b's weights times the unmoved weight squared, plus, per pair (i, b),
/// band b's weights moved up by m_i times sub-band i's weight squared. The output limit reads
/// the moved output the same way with P^2. Both are sharpened, w - a (w[k-1] - 2 w[k] +
/// w[k+1]) (at least 0): a tone's Hann power lies on 3 to 4 bins with a second moment of
/// about 1/3 bin^2, so bin by bin a curved weight reads its smoothed value, about w + w'' / 6,
/// and sub-bands are only 2 to 6 bins wide. Measured with tones moved to sub-band centres at
/// 20 dB over a 90 dB SPL limit, against an unlowered tone at the destination: unsharpened
/// they played 0.5 to 1 dB louder than it; with a = 1/6, 0.1 to 0.5; with a = 1/4 (the output
/// weights; the input's keep 1/6), 0.0 to 0.3. Taking the largest value within 2 bins instead
/// read the neighbours' slopes as power and held them 2 to 4 dB below.
struct LoweringTables {
    /// [channel]: moved sub-bands, 0 when the channel is not lowered.
    let counts: UnsafeMutablePointer<Int>
    /// [channel][maxSubbands]: shifts in bins.
    let shifts: UnsafeMutablePointer<Int>
    /// [channel][maxSubbands][bins]: P and Q above.
    let moved: UnsafeMutablePointer<Float>
    let image: UnsafeMutablePointer<Float>
    /// [channel][maxSubbands][bands]: the band weights at each sub-band's destination.
    let gainWeights: UnsafeMutablePointer<Float>
    /// [channel][band][bins]: the detector's weights times the unmoved weight squared.
    let detector: UnsafeMutablePointer<Float>
    /// [channel * (bands + 1) + band]: the first pair of (channel, band); pairs of one channel
    /// and band are contiguous.
    let pairStart: UnsafeMutablePointer<Int>
    let pairs: UnsafeMutablePointer<LoweringPair>
    let pairInput: UnsafeMutablePointer<Float>
    let pairOutput: UnsafeMutablePointer<Float>
    /// [q][2]: cos and sin of -2 pi q / N, q = 0..<N.
    let rotation: UnsafeMutablePointer<Float>
    let bandCount: Int
    let bins: Int
    let hopSize: Int
    let fftLength: Int

    static let stride = LoweringLayout.maxSubbands
    /// Pairs per channel at most.
    static let maxPairs = LoweringLayout.maxSubbands * CompressorStage.maxBands

    /// None lowered (compression off).
    init(channelCount: Int) {
        self.init(
            [], channelCount: channelCount, centresHz: [], transitionHz: 0, detector: [], detectorRange: [], fftLength: 2, hopSize: 1,
            sampleRate: 1)
    }

    init(
        _ plans: [LoweringPlan?], channelCount: Int, centresHz: [Double], transitionHz: Double, detector rows: [[Float]],
        detectorRange: [(Int, Int)], fftLength n: Int, hopSize: Int, sampleRate: Double
    ) {
        let bands = centresHz.count
        let bins = n / 2 + 1
        let stride = Self.stride
        bandCount = bands
        self.bins = bins
        self.hopSize = hopSize
        fftLength = n
        let anyLowered = plans.contains { $0 != nil }
        func allocate<T>(_ count: Int, _ value: T) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocate(capacity: max(count, 1))
            p.initialize(repeating: value, count: max(count, 1))
            return p
        }
        counts = allocate(channelCount, 0)
        shifts = allocate(anyLowered ? channelCount * stride : 0, 0)
        moved = allocate(anyLowered ? channelCount * stride * bins : 0, Float(0))
        image = allocate(anyLowered ? channelCount * stride * bins : 0, Float(0))
        gainWeights = allocate(anyLowered ? channelCount * stride * bands : 0, Float(0))
        detector = allocate(anyLowered ? channelCount * bands * bins : 0, Float(0))
        pairStart = allocate(channelCount * (bands + 1), 0)
        rotation = allocate(anyLowered ? 2 * n : 0, Float(0))
        var pairList: [LoweringPair] = []
        var inputs: [Float] = []
        var outputs: [Float] = []
        if anyLowered {
            for q in 0..<n {
                let angle = -2 * Double.pi * Double(q) / Double(n)
                rotation[2 * q] = Float(cos(angle))
                rotation[2 * q + 1] = Float(sin(angle))
            }
        }
        let binHz = sampleRate / Double(n)
        for c in 0..<channelCount {
            guard c < plans.count, let plan = plans[c] else {
                for b in 0...bands { pairStart[c * (bands + 1) + b] = pairList.count }
                continue
            }
            let layout = LoweringLayout(cutoffHz: plan.cutoffHz, ratio: plan.ratio, sampleRate: sampleRate, fftLength: n)
            precondition(
                layout.subbandCount == plan.taps.count && plan.taps.count == plan.hilbertTaps.count, "a lowering plan for another geometry")
            let count = layout.subbandCount
            counts[c] = count
            var p = [[Double]](repeating: [], count: count)
            for i in 0..<count {
                shifts[c * stride + i] = layout.shiftsBins[i]
                p[i] = (0..<bins).map { k in
                    let f = Double(k) / Double(n)
                    return BandSplit.amplitude(of: plan.taps[i], cyclesPerSample: f)
                }
                for k in 0..<bins {
                    let f = Double(k) / Double(n)
                    let a = p[i][k]
                    let h = BandSplit.hilbertAmplitude(of: plan.hilbertTaps[i], cyclesPerSample: f)
                    p[i][k] = (a + h) / (2 * Double(n))
                    moved[(c * stride + i) * bins + k] = Float(p[i][k])
                    image[(c * stride + i) * bins + k] = Float((a - h) / (2 * Double(n)))
                }
                let destination = layout.destinationHz(subband: i)
                for b in 0..<bands {
                    gainWeights[(c * stride + i) * bands + b] = Float(
                        BandSplit.weight(band: b, centres: centresHz, transitionHz: transitionHz, hz: destination))
                }
            }
            for b in 0..<bands {
                for k in 0..<bins {
                    let u = layout.unmovedWeight(atHz: Double(k) * binHz)
                    detector[(c * bands + b) * bins + k] = rows[b][k] * Float(u * u)
                }
            }
            // Weights sharpened against the Hann smoothing (above).
            func sharpened(_ w: [Double], by alpha: Double = 1.0 / 6) -> [Double] {
                w.indices.map { k in max(0, w[k] - alpha * ((k > 0 ? w[k - 1] : w[k]) - 2 * w[k] + (k + 1 < w.count ? w[k + 1] : w[k]))) }
            }
            let outputWeights = p.map { response in sharpened(response.map { $0 * $0 }, by: 0.25) }
            let inputWeights = (0..<count).map { i in
                sharpened((0..<bins).map { pow(layout.subbandWeight(i, atHz: Double($0) * binHz), 2) })
            }
            // Pairs (sub-band, band): where band b's detector, moved up by the shift, meets the
            // sub-band's support: its weight, or its filter's power above -30 dB of its peak (the
            // filter's far sidelobes, -80 dB and less in power, would only cost time: these sums
            // are most of the lowering's CPU), a bin wider for the sharpening.
            for b in 0..<bands {
                pairStart[c * (bands + 1) + b] = pairList.count
                for i in 0..<count {
                    let m = layout.shiftsBins[i]
                    let peak = outputWeights[i].max() ?? 0
                    let support = (0..<bins).filter {
                        layout.subbandWeight(i, atHz: Double($0) * binHz) > 0 || p[i][$0] * p[i][$0] >= 1e-3 * peak
                    }
                    guard let inner = support.first, let outer = support.last else { continue }
                    let (first, last) = (max(inner - 1, 0), min(outer + 1, bins - 1))
                    let lo = max(first, detectorRange[b].0 + m)
                    let hi = min(last + 1, detectorRange[b].1 + m, bins)
                    guard lo < hi else { continue }
                    pairList.append(LoweringPair(subband: i, firstBin: lo, endBin: hi, weightsAt: inputs.count))
                    for j in lo..<hi {
                        let w = Double(rows[b][j - m])
                        inputs.append(Float(w * inputWeights[i][j]))
                        outputs.append(Float(w * outputWeights[i][j]))
                    }
                }
            }
            pairStart[c * (bands + 1) + bands] = pairList.count
            precondition(pairStart[c * (bands + 1) + bands] - pairStart[c * (bands + 1)] <= Self.maxPairs)
        }
        pairs = allocate(pairList.count, LoweringPair(subband: 0, firstBin: 0, endBin: 0, weightsAt: 0))
        pairs.update(from: pairList, count: pairList.count)
        pairInput = allocate(inputs.count, Float(0))
        pairInput.update(from: inputs, count: inputs.count)
        pairOutput = allocate(outputs.count, Float(0))
        pairOutput.update(from: outputs, count: outputs.count)
    }

    func deallocate() {
        counts.deallocate()
        shifts.deallocate()
        moved.deallocate()
        image.deallocate()
        gainWeights.deallocate()
        detector.deallocate()
        pairStart.deallocate()
        pairs.deallocate()
        pairInput.deallocate()
        pairOutput.deallocate()
        rotation.deallocate()
    }
}

/// Where a band's detector meets a moved sub-band (`LoweringTables.pairs`): the sub-band, the
/// bins `firstBin..<endBin` they share, and where their weights start in `pairInput` and
/// `pairOutput`.
struct LoweringPair {
    let subband: Int
    let firstBin: Int
    let endBin: Int
    let weightsAt: Int
}
