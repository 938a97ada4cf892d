// ribbit-bench: engine throughput against the bare FFTW cost of the same frames, measured in
// the same run, plus latency and worst gain error per configuration. Run with `make bench`
// (a release build). Figures are printed, never asserted: see Tests/ for the promises.
import CFFTW
import Foundation
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitMonitor
import RibbitPrescription
import RibbitSignals
import RibbitVoice

func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// The least CPU time of `repeats` runs of `body` (the least is the least disturbed).
func bestOf(_ repeats: Int, _ body: () -> Void) -> Double {
    (0..<repeats).map { _ in
        let start = threadCPUSeconds()
        body()
        return threadCPUSeconds() - start
    }.min()!
}

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let samples = ["normal-hearing", "mild-presbycusis", "moderate-flat", "moderate-flat-music", "ski-slope", "asymmetric"]
let prescriptions = samples.map { name in
    try! Prescription.parse(try! Data(contentsOf: packageRoot.appendingPathComponent("Prescriptions/\(name).rx")))
}

/// Worst |designed response - target| in dB over the samples, both ears, 250-6000 Hz; and at 250 Hz.
func gainErrors(_ geometry: EngineGeometry, sampleRate: Double) -> (all: Double, at250: Double) {
    var all = 0.0, at250 = 0.0
    for rx in prescriptions {
        let fitting = try! Fitting(prescription: rx, sampleRate: sampleRate, geometry: geometry)
        for ear in Ear.allCases {
            let taps = LinearPhaseFIR.design(
                taps: geometry.filterLength, sampleRate: sampleRate, amplitude: fitting.curve(for: ear).amplitude)
            for f in [250.0, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000] {
                let error = abs(
                    20 * log10(LinearPhaseFIR.magnitude(taps, atHz: f, sampleRate: sampleRate)) - fitting.targetGainDB(for: ear, atHz: f))
                all = max(all, error)
                if f == 250 { at250 = max(at250, error) }
            }
        }
    }
    return (all, at250)
}

struct Row {
    var label: String
    var geometry: EngineGeometry
    var sampleRate: Double
}

let rows = [
    Row(label: "default 48k", geometry: .standard(sampleRate: 48000), sampleRate: 48000),
    Row(label: "short", geometry: EngineGeometry(fftLength: 128, hopSize: 32), sampleRate: 48000),
    Row(label: "long", geometry: EngineGeometry(fftLength: 512, hopSize: 64), sampleRate: 48000),
    Row(label: "long, big hop", geometry: EngineGeometry(fftLength: 512, hopSize: 128), sampleRate: 48000),
    Row(label: "default 44.1k", geometry: .standard(sampleRate: 44100), sampleRate: 44100),
    Row(label: "default 96k", geometry: .standard(sampleRate: 96000), sampleRate: 96000),
]

let seconds = 20.0
let repeats = 5
print("ribbit-bench: \(Int(seconds)) s of stereo noise per configuration, best of \(repeats) runs, thread CPU time")
print("gain error: the designed filters against the targets of \(samples.count) sample prescriptions, both ears, 250-6000 Hz")
print("")
let header = [
    "configuration", "fft/hop/taps", "latency", "gain err", "@250Hz", "audio s/CPU s", "us/stereo hop", "FFTW us/hop", "ratio",
    "us per 64 st.",
]
let widths = [14, 13, 17, 9, 8, 14, 14, 12, 6, 13]
func line(_ cells: [String]) -> String {
    zip(cells, widths).map { cell, width in cell.count >= width ? cell + " " : cell + String(repeating: " ", count: width - cell.count) }
        .joined()
}
print(line(header))
for row in rows {
    let g = row.geometry
    let frames = Int(seconds * row.sampleRate) / g.hopSize * g.hopSize
    let hops = frames / g.hopSize

    // The engine on the default prescription, stereo, blocks of one hop (JACK-like).
    let fitting = try! Fitting(prescription: prescriptions[1], sampleRate: row.sampleRate, geometry: g)
    let engine = try! OverlapSaveEngine(
        geometry: g, sampleRate: row.sampleRate, filters: fitting.filterSet(ears: [.left, .right]), blockSize: g.hopSize)
    let input = [Signals.whiteNoise(count: frames, rms: 0.01, seed: 1), Signals.whiteNoise(count: frames, rms: 0.01, seed: 2)]
    let inBuffers = input.map { channel -> UnsafeMutablePointer<Float> in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        p.initialize(from: channel, count: frames)
        return p
    }
    let outBuffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
    let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
    let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
    let engineSeconds = bestOf(repeats) {
        var at = 0
        while at < frames {
            for c in 0..<2 {
                inputs[c] = UnsafePointer(inBuffers[c] + at)
                outputs[c] = outBuffers[c] + at
            }
            engine.process(inputs: inputs, outputs: outputs, frameCount: g.hopSize)
            at += g.hopSize
        }
    }

    // The floor: the same r2c + c2r per hop and channel, nothing else.
    let fft = RealFFT(length: g.fftLength)
    let real = RealFFT.allocateReal(g.fftLength)
    let complex = RealFFT.allocateComplex(fft.complexCount)
    let back = RealFFT.allocateReal(g.fftLength)
    for i in 0..<g.fftLength { real[i] = input[0][i] }
    let fftwSeconds = bestOf(repeats) {
        for _ in 0..<hops {
            for _ in 0..<2 {
                fft.forward(real, complex)
                fft.inverse(complex, back)
            }
        }
    }

    let perHop = engineSeconds / Double(hops) * 1e6
    let floorPerHop = fftwSeconds / Double(hops) * 1e6
    let per64 = engineSeconds / (Double(frames) / 64) * 1e6
    let latency = g.filterDelayFrames
    let (all, at250) = gainErrors(g, sampleRate: row.sampleRate)
    print(
        line([
            row.label, "\(g.fftLength)/\(g.hopSize)/\(g.filterLength)",
            "\(latency) (\(String(format: "%.2f", Double(latency) / row.sampleRate * 1000)) ms)",
            String(format: "%.2f dB", all), String(format: "%.2f", at250),
            String(format: "%.0f", Double(frames) / row.sampleRate / engineSeconds),
            String(format: "%.2f", perHop), String(format: "%.2f", floorPerHop), String(format: "%.2fx", perHop / floorPerHop),
            String(format: "%.2f", per64),
        ]))
    for p in inBuffers + outBuffers { p.deallocate() }
    inputs.deallocate()
    outputs.deallocate()
    for p in [real, complex, back] { RealFFT.free(p) }
}
// Preparing a prescription (off the RT thread): fit both ears' filters and their spectra.
for row in [rows[0], rows[5]] {
    let fitting = try! Fitting(prescription: prescriptions[4], sampleRate: row.sampleRate, geometry: row.geometry)
    let seconds = bestOf(repeats) { _ = fitting.filterSet(ears: [.left, .right]) }
    print(String(format: "prepare a stereo prescription (%@, %@): %.2f ms CPU", row.label, row.geometry.description, seconds * 1000))
}

// The multi-band compressor (11 bands, 125 Hz - 8 kHz, ratio 3, both ears) beside the linear
// engine and bare FFTW, the same noise, in the same run: CPU per stereo hop.
do {
    let rate = 48000.0
    let g = EngineGeometry.standard(sampleRate: rate)
    let frames = Int(seconds * rate) / g.hopSize * g.hopSize
    let hops = frames / g.hopSize
    let fitting = try! Fitting(prescription: prescriptions[1], sampleRate: rate, geometry: g)
    let filters = fitting.filterSet(ears: [.left, .right])
    let ear = CompressorSettings(
        bands: BandSplit.audiometricCentresHz.map {
            CompressorBand(centreHz: $0, gainDB: 0, kneeDBSPL: 50, ratio: 3, expansionKneeDBSPL: 35, expansionRatio: 2, limitDBSPL: 110)
        }, attackMs: 5, releaseMs: 70)
    var compressor: CompressorConfig?
    let prepare = bestOf(repeats) {
        compressor = CompressorConfig(
            settings: [ear, ear], amplitude: [.left, .right].map { fitting.curve(for: $0).amplitude }, calibration: .uncalibrated,
            taps: g.filterLength, fftLength: g.fftLength, hopSize: g.hopSize, sampleRate: rate)
    }
    // The same compressor with noise reduction at its default strength.
    var denoising: CompressorConfig?
    let prepareDenoising = bestOf(repeats) {
        denoising = CompressorConfig(
            settings: [ear, ear], amplitude: [.left, .right].map { fitting.curve(for: $0).amplitude }, calibration: .uncalibrated,
            taps: g.filterLength, fftLength: g.fftLength, hopSize: g.hopSize, sampleRate: rate, noiseReduction: .default)
    }
    // The same with noise reduction and the steady-noise detector, as programs noisy and
    // outdoor run a compressing fitting (the knees at a 40 dB SPL floor: the noise, at ~60 dB
    // SPL per band, keeps it engaged).
    var following = ear
    following.steadyNoise = .standard
    for b in following.bands.indices { following.bands[b].steadyNoiseKneeDBSPL = 40 }
    var everything: CompressorConfig?
    let prepareEverything = bestOf(repeats) {
        everything = CompressorConfig(
            settings: [following, following], amplitude: [.left, .right].map { fitting.curve(for: $0).amplitude },
            calibration: .uncalibrated, taps: g.filterLength, fftLength: g.fftLength, hopSize: g.hopSize, sampleRate: rate,
            noiseReduction: .default)
    }
    // The same compressor with frequency lowering on both ears: the layout the worked example
    // uses (1500 Hz, 3: 16 sub-bands) and the most sub-bands the ranges allow (1500 Hz, 4).
    let loweringSettings = [(1500.0, 3.0), (1500, 4)]
    var lowering: [CompressorConfig] = []
    var prepareLowering: [Double] = []
    for (cutoff, ratio) in loweringSettings {
        var made: CompressorConfig?
        prepareLowering.append(
            bestOf(repeats) {
                made = CompressorConfig(
                    settings: [ear, ear], amplitude: [.left, .right].map { fitting.curve(for: $0).amplitude }, calibration: .uncalibrated,
                    taps: g.filterLength, fftLength: g.fftLength, hopSize: g.hopSize, sampleRate: rate,
                    lowering: [(cutoff, ratio), (cutoff, ratio)])
            })
        lowering.append(made!)
    }
    let linear = try! OverlapSaveEngine(geometry: g, sampleRate: rate, filters: filters, blockSize: g.hopSize)
    let compressing = try! OverlapSaveEngine(geometry: g, sampleRate: rate, filters: filters, blockSize: g.hopSize)
    try! compressing.publish(compressor!)
    let reducing = try! OverlapSaveEngine(geometry: g, sampleRate: rate, filters: filters, blockSize: g.hopSize)
    try! reducing.publish(denoising!)
    let input = [Signals.whiteNoise(count: frames, rms: 0.03, seed: 1), Signals.whiteNoise(count: frames, rms: 0.03, seed: 2)]
    let inBuffers = input.map { channel -> UnsafeMutablePointer<Float> in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        p.initialize(from: channel, count: frames)
        return p
    }
    let outBuffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
    let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
    let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
    func run(_ engine: OverlapSaveEngine) -> Double {
        bestOf(repeats) {
            var at = 0
            while at < frames {
                for c in 0..<2 {
                    inputs[c] = UnsafePointer(inBuffers[c] + at)
                    outputs[c] = outBuffers[c] + at
                }
                engine.process(inputs: inputs, outputs: outputs, frameCount: g.hopSize)
                at += g.hopSize
            }
        }
    }
    let linearSeconds = run(linear)
    let compressorSeconds = run(compressing)
    let reducingSeconds = run(reducing)
    let followingEngine = try! OverlapSaveEngine(geometry: g, sampleRate: rate, filters: filters, blockSize: g.hopSize)
    try! followingEngine.publish(everything!)
    let followingSeconds = run(followingEngine)
    let loweringSeconds = lowering.map { config -> Double in
        let engine = try! OverlapSaveEngine(geometry: g, sampleRate: rate, filters: filters, blockSize: g.hopSize)
        try! engine.publish(config)
        return run(engine)
    }
    let fft = RealFFT(length: g.fftLength)
    let real = RealFFT.allocateReal(g.fftLength)
    let complex = RealFFT.allocateComplex(fft.complexCount)
    let back = RealFFT.allocateReal(g.fftLength)
    for i in 0..<g.fftLength { real[i] = input[0][i] }
    let fftwSeconds = bestOf(repeats) {
        for _ in 0..<hops {
            for _ in 0..<2 {
                fft.forward(real, complex)
                fft.inverse(complex, back)
            }
        }
    }
    print("")
    print(
        String(
            format:
                "compressor (%d bands, %@, stereo): %.2f us per stereo hop; linear engine %.2f us; bare FFTW %.2f us; compressor - linear %.2f us; prepare %.1f ms CPU",
            BandSplit.audiometricCentresHz.count, g.description, compressorSeconds / Double(hops) * 1e6, linearSeconds / Double(hops) * 1e6,
            fftwSeconds / Double(hops) * 1e6, (compressorSeconds - linearSeconds) / Double(hops) * 1e6, prepare * 1000))
    print(
        String(
            format:
                "compressor + noise reduction (%d bands, %@, stereo, strength %.0f): %.2f us per stereo hop; linear engine %.2f us; bare FFTW %.2f us; + noise reduction - compressor %.2f us; prepare %.1f ms CPU",
            BandSplit.audiometricCentresHz.count, g.description, NoiseReductionSettings.default.strength,
            reducingSeconds / Double(hops) * 1e6, linearSeconds / Double(hops) * 1e6, fftwSeconds / Double(hops) * 1e6,
            (reducingSeconds - compressorSeconds) / Double(hops) * 1e6, prepareDenoising * 1000))
    print(
        String(
            format:
                "compressor + noise reduction + steady-noise detector (%d bands, %@, stereo): %.2f us per stereo hop; linear engine %.2f us; bare FFTW %.2f us; + detector - noise reduction %.2f us; prepare %.1f ms CPU",
            BandSplit.audiometricCentresHz.count, g.description, followingSeconds / Double(hops) * 1e6, linearSeconds / Double(hops) * 1e6,
            fftwSeconds / Double(hops) * 1e6, (followingSeconds - reducingSeconds) / Double(hops) * 1e6, prepareEverything * 1000))
    for (i, (cutoff, ratio)) in loweringSettings.enumerated() {
        print(
            String(
                format:
                    "compressor + lowering %.0f Hz / %.0f (%d sub-bands, %@, stereo): %.2f us per stereo hop; + lowering - compressor %.2f us; prepare %.1f ms CPU",
                cutoff, ratio, lowering[i].lowering[0]?.taps.count ?? 0, g.description, loweringSeconds[i] / Double(hops) * 1e6,
                (loweringSeconds[i] - compressorSeconds) / Double(hops) * 1e6, prepareLowering[i] * 1000))
    }
    for p in inBuffers + outBuffers { p.deallocate() }
    inputs.deallocate()
    outputs.deallocate()
    for p in [real, complex, back] { RealFFT.free(p) }
}
print("")
print("latency: the engine's own delay when the host's period is a multiple of the hop (JACK adds its own periods on top).")
print("ratio: engine CPU per hop / bare FFTW r2c+c2r per hop for the same frames, stereo. 'us per 64 st.': per 64 stereo samples.")

// The dump's cost on the daemon's control thread, per frame (20 a second while a client listens):
// analysing 50 ms of stereo (both ears' bands and spectra) and encoding the frame as its JSON line.
do {
    let rate = 48000.0
    let fitting = try! Fitting(prescription: prescriptions[1], sampleRate: rate)
    let filters = fitting.filterSet(ears: [.left, .right])
    let hop = Int(DumpFrame.intervalSeconds * rate)
    let noise = Signals.whiteNoise(count: 200 * hop, rms: 0.01, seed: 3)
    let builder = DumpFrameBuilder(ears: [.left, .right], sampleRate: rate)
    var built: DumpFrame?
    let frames = 200
    let analysis = bestOf(repeats) {
        for i in 0..<frames {
            let chunk = noise[(i * hop)..<((i + 1) * hop)]
            for ear in 0..<2 { builder.append(ear: ear, input: chunk, output: chunk) }
            built = builder.frame(
                time: 12.34, latencyFrames: 96, xruns: 0, output: .processing, prescription: nil, filters: filters, fitting: fitting,
                limitedSamples: 0, droppedFrames: 0)
        }
    }
    let frame = built!
    var bytes = 0
    let encoding = bestOf(repeats) {
        for _ in 0..<frames { bytes = frame.jsonLine().count }
    }
    let foundation = bestOf(repeats) { for _ in 0..<frames { _ = ControlProtocol.encode(frame) } }
    let perFrame = (analysis + encoding) / Double(frames)
    print("")
    print(
        String(
            format:
                "dump frame (control thread, stereo 48 kHz): analysis %.0f us + JSON %.0f us (%.1f KiB line) = %.0f us; at 20 frames/s %.2f %% of one core",
            analysis / Double(frames) * 1e6, encoding / Double(frames) * 1e6, Double(bytes) / 1024, perFrame * 1e6, perFrame * 20 * 100))
    print(
        String(
            format: "  the same frame through Foundation's JSONEncoder: %.0f us (%.1fx the direct writer)",
            foundation / Double(frames) * 1e6, foundation / encoding))
}

// The voice analysis' cost on the daemon's control thread: 10 s of a 48 kHz voice (jitter,
// shimmer, vibrato, noise) in 1024-sample blocks, beside a level-only meter over the same
// samples (the placeholder it replaced: a sum of squares per 10 ms hop).
do {
    let rate = 48000.0
    var spec = VoiceSignals.Voice(startHz: 180, endHz: 260, seconds: 10)
    spec.jitter = 0.01
    spec.shimmer = 0.05
    spec.vibratoHz = 5
    spec.vibratoDepth = 0.02
    spec.snrDB = 20
    let voice = VoiceSignals.voice(spec, sampleRate: rate, seed: 17)
    let blocks = stride(from: 0, to: voice.count, by: 1024).map { Array(voice[$0..<min($0 + 1024, voice.count)]) }
    var frames = 0
    let analysis = bestOf(repeats) {
        var analyzer = VoiceAnalyzer(sampleRate: rate)
        for block in blocks { frames = analyzer.append(block).count }
    }
    var levels = 0.0
    let levelOnly = bestOf(repeats) {
        var sum = 0.0
        var inHop = 0
        for block in blocks {
            for sample in block {
                sum += Double(sample) * Double(sample)
                inHop += 1
                if inHop == 480 {
                    levels += 10 * log10(2 * sum / 480 + 1e-30)
                    sum = 0
                    inHop = 0
                }
            }
        }
    }
    _ = (frames, levels)
    print("")
    print(
        String(
            format: "voice analysis (control thread, mono 48 kHz, 100 frames/s): %.2f ms CPU per second of audio = %.2f %% of one core",
            analysis / spec.seconds * 1000, analysis / spec.seconds * 100))
    print(
        String(
            format: "  beside a level-only meter over the same samples: %.3f ms per second of audio (the analysis is %.0fx)",
            levelOnly / spec.seconds * 1000, analysis / levelOnly))
}

// FFT planning (issue 18): what FFTW_MEASURE costs to plan without wisdom, with it, and against
// FFTW_ESTIMATE; and what each plan costs per r2c + c2r pair. Decides where ribbit measures.
do {
    print("")
    print(
        "| FFT length | plan MEASURE, no wisdom | plan MEASURE, from wisdom | plan ESTIMATE | r2c+c2r MEASURE plan | r2c+c2r ESTIMATE plan | MEASURE saves |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in [128, 256, 512, 1024, 4096] {
        FFTWisdom.forget()
        var start = threadCPUSeconds()
        let measured = RealFFT(length: n)
        let measureSeconds = threadCPUSeconds() - start
        let wisdom = FFTWisdom.export()
        FFTWisdom.forget()
        start = threadCPUSeconds()
        FFTWisdom.import(wisdom)
        _ = RealFFT(length: n)
        let wisdomSeconds = threadCPUSeconds() - start
        FFTWisdom.forget()  // else ESTIMATE takes the measured plan from the wisdom
        start = threadCPUSeconds()
        let estimated = RealFFT(length: n, planning: .estimate)
        let estimateSeconds = threadCPUSeconds() - start
        let real = RealFFT.allocateReal(n)
        let complex = RealFFT.allocateComplex(n / 2 + 1)
        for i in 0..<n { real[i] = Float(i % 7) - 3 }
        let pairs = max(1, 2_000_000 / n)
        func pairMicroseconds(_ fft: RealFFT) -> Double {
            bestOf(repeats) {
                for _ in 0..<pairs {
                    fft.forward(real, complex)
                    fft.inverse(complex, real)
                    for i in 0..<n { real[i] *= 1 / Float(n) }
                }
            } / Double(pairs) * 1e6
        }
        let scale = bestOf(repeats) { for _ in 0..<pairs { for i in 0..<n { real[i] *= 1 / Float(n) } } } / Double(pairs) * 1e6
        let (m, e) = (pairMicroseconds(measured) - scale, pairMicroseconds(estimated) - scale)
        print(
            String(
                format: "| %d | %.1f ms | %.2f ms | %.2f ms | %.3f us | %.3f us | %.0f %% |", n, measureSeconds * 1000,
                wisdomSeconds * 1000,
                estimateSeconds * 1000, m, e, 100 * (e - m) / e))
        RealFFT.free(real)
        RealFFT.free(complex)
    }
    print("plans: thread CPU, both directions. MEASURE pays back its planning after (planning / saving per pair) transforms.")
}
