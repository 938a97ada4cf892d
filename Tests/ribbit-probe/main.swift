// ribbit-probe: a JACK test client. It plays a known signal into two ports and records two
// ports, sample-aligned by JACK cycle, into one 4-channel WAV (played L, R, recorded L, R).
//
//   ribbit-probe --seconds S --signal noise|sine:HZ|silence|hostile|file:WAV --level DBFS \
//       --to ribbit:in_left,ribbit:in_right --from ribbit:out_left,ribbit:out_right --out FILE.wav
//       [--allocate-in-process]   (malloc+free in every callback: proves the RT audit can fail)
//
// Prints one line: "cycles N xruns N frames N start-ns N" (xruns while recording; CLOCK_MONOTONIC
// when frame 0 was played). Exit 69 when JACK is unreachable.
import CJack
import Foundation
import RibbitAudioFile
import RibbitSignals
import RibbitTestSupport
import Synchronization

struct Options {
    var seconds = 2.0
    var signal = "noise"
    var levelDBFS = -30.0
    var to: [String] = []
    var from: [String] = []
    var out = "probe.wav"
    var allocate = false

    init(_ arguments: [String]) {
        var i = 0
        func value() -> String {
            i += 1
            guard i < arguments.count else { fail("missing value for \(arguments[i - 1])") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--seconds": seconds = Double(value()) ?? 2
            case "--signal": signal = value()
            case "--level": levelDBFS = Double(value()) ?? -30
            case "--to": to = value().split(separator: ",").map(String.init)
            case "--from": from = value().split(separator: ",").map(String.init)
            case "--out": out = value()
            case "--allocate-in-process": allocate = true
            default: fail("unknown argument \(arguments[i])")
            }
            i += 1
        }
    }
}

func fail(_ message: String, code: Int32 = 64) -> Never {
    FileHandle.standardError.write(Data("ribbit-probe: \(message)\n".utf8))
    exit(code)
}

/// Everything the process callback touches, preallocated.
final class Probe: @unchecked Sendable {
    let frames: Int
    let play: [UnsafeMutablePointer<Float>]
    let record: [UnsafeMutablePointer<Float>]
    let position = Atomic<Int>(0)
    let running = Atomic<Bool>(false)
    let cycles = Atomic<Int>(0)
    let xruns = Atomic<Int>(0)
    /// CLOCK_MONOTONIC at the callback that played frame 0, in ns: maps a frame to a time.
    let startNanoseconds = Atomic<Int>(0)
    /// CLOCK_MONOTONIC (ns) of the callback that started at each frame (0 between): when each
    /// period was played and recorded, xruns included.
    let callbackNanoseconds: UnsafeMutablePointer<Int>
    /// JACK's frame time of the callback that started at each frame: a jump of more than a
    /// period between two callbacks is a cycle the probe missed.
    let callbackFrameTimes: UnsafeMutablePointer<UInt32>
    /// Where the recording was (its position) when JACK reported each xrun, the first 1024.
    let xrunPositions: UnsafeMutablePointer<Int>
    static let maxXruns = 1024
    var client: OpaquePointer?
    var ports: [OpaquePointer] = []
    let allocate: Bool

    init(signal: [[Float]], allocate: Bool) {
        frames = signal[0].count
        play = signal.map { s in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: s.count)
            p.initialize(from: s, count: s.count)
            return p
        }
        record = (0..<2).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: signal[0].count)
            p.initialize(repeating: 0, count: signal[0].count)
            return p
        }
        callbackNanoseconds = .allocate(capacity: signal[0].count)
        callbackNanoseconds.initialize(repeating: 0, count: signal[0].count)
        callbackFrameTimes = .allocate(capacity: signal[0].count)
        callbackFrameTimes.initialize(repeating: 0, count: signal[0].count)
        xrunPositions = .allocate(capacity: Self.maxXruns)
        xrunPositions.initialize(repeating: 0, count: Self.maxXruns)
        self.allocate = allocate
    }
}

enum Callbacks {
    static let process: JackProcessCallback = { nframes, arg in
        let probe = Unmanaged<Probe>.fromOpaque(arg!).takeUnretainedValue()
        let n = Int(nframes)
        let outL = jack_port_get_buffer(probe.ports[0], nframes)!.assumingMemoryBound(to: Float.self)
        let outR = jack_port_get_buffer(probe.ports[1], nframes)!.assumingMemoryBound(to: Float.self)
        let inL = jack_port_get_buffer(probe.ports[2], nframes)!.assumingMemoryBound(to: Float.self)
        let inR = jack_port_get_buffer(probe.ports[3], nframes)!.assumingMemoryBound(to: Float.self)
        outL.update(repeating: 0, count: n)
        outR.update(repeating: 0, count: n)
        if probe.allocate { free(malloc(64)) }
        guard probe.running.load(ordering: .acquiring) else { return 0 }
        let at = probe.position.load(ordering: .relaxed)
        let count = min(n, probe.frames - at)
        guard count > 0 else { return 0 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)  // vDSO: no system call, no lock
        probe.callbackNanoseconds[at] = now.tv_sec * 1_000_000_000 + now.tv_nsec
        probe.callbackFrameTimes[at] = jack_last_frame_time(probe.client)
        if at == 0 { probe.startNanoseconds.store(probe.callbackNanoseconds[at], ordering: .relaxed) }
        outL.update(from: probe.play[0] + at, count: count)
        outR.update(from: probe.play[1] + at, count: count)
        (probe.record[0] + at).update(from: inL, count: count)
        (probe.record[1] + at).update(from: inR, count: count)
        probe.position.store(at + count, ordering: .releasing)
        probe.cycles.add(1, ordering: .relaxed)
        return 0
    }

    /// Counts xruns from the start of the recording (connecting clients causes some before)
    /// until the client closes: a report can come after the glitch, also after the last frame
    /// (then it is placed at the last frame).
    static let xrun: JackXRunCallback = { arg in
        let probe = Unmanaged<Probe>.fromOpaque(arg!).takeUnretainedValue()
        let at = probe.position.load(ordering: .relaxed)
        if probe.running.load(ordering: .relaxed) {
            let index = probe.xruns.wrappingAdd(1, ordering: .relaxed).oldValue
            if index < Probe.maxXruns { probe.xrunPositions[index] = min(at, probe.frames - 1) }
        }
        return 0
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
guard options.to.count == 2, options.from.count == 2 else { fail("give --to L,R and --from L,R") }

var status = jack_status_t(rawValue: 0)
// A name of its own: JACK2 gives a client's notification socket a path from its name alone
// (/dev/shm/jack_NAME_UID_0), so two probes of one name on two servers of parallel tests took
// each other's socket and a server refused its probe (reproduced: 7 of 300 opens).
let clientName = "ribbit-probe-\(getpid())"
guard let client = ribbit_jack_client_open(clientName, JackNoStartServer, &status) else {
    // jack_status_t's bits say whether the server was missing (0x11) or refused the client.
    fail("JACK did not open the client (status 0x\(String(status.rawValue, radix: 16)))", code: 69)
}
let rate = Double(jack_get_sample_rate(client))
let frames = Int(options.seconds * rate)
let amplitude = pow(10, options.levelDBFS / 20)
let signal: [[Float]]
switch options.signal {
case "noise":
    signal = [Signals.whiteNoise(count: frames, rms: amplitude, seed: 1), Signals.whiteNoise(count: frames, rms: amplitude, seed: 2)]
case "hostile":
    // Full scale, DC, NaN, infinities, +-3e38: what the ceiling must hold against, in equal parts.
    let part = HostileInput.signal(segmentFrames: frames / HostileInput.segmentNames.count)
    let padded = part + [Float](repeating: 0, count: frames - part.count)
    signal = [padded, padded]
case "silence":
    signal = [[Float](repeating: 0, count: frames), [Float](repeating: 0, count: frames)]
case let s where s.hasPrefix("file:"):
    // A WAV at the server's rate, played as it is (--level ignored), its first channel on both
    // ports, padded with silence to --seconds: the voice tests' generated voices.
    guard let reader = try? AudioFileReader(path: String(s.dropFirst(5))), let channels = try? reader.readAll(), let first = channels.first
    else { fail("cannot read \(s.dropFirst(5))") }
    let padded = Array((first + [Float](repeating: 0, count: max(0, frames - first.count))).prefix(frames))
    signal = [padded, padded]
case let s where s.hasPrefix("sine:"):
    let hz = Double(s.dropFirst(5)) ?? 1000
    let sine = Signals.sine(count: frames, frequencyHz: hz, sampleRate: rate, amplitude: amplitude * 2.0.squareRoot())
    signal = [sine, sine]
default: fail("unknown signal \(options.signal)")
}
let probe = Probe(signal: signal, allocate: options.allocate)
probe.client = client
for (name, isOutput) in [("out_1", true), ("out_2", true), ("in_1", false), ("in_2", false)] {
    let flags = UInt(isOutput ? JackPortIsOutput.rawValue : JackPortIsInput.rawValue)
    guard let port = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, flags, 0) else { fail("cannot register \(name)") }
    probe.ports.append(port)
}
let context = Unmanaged.passRetained(probe).toOpaque()
jack_set_process_callback(client, Callbacks.process, context)
jack_set_xrun_callback(client, Callbacks.xrun, context)
guard jack_activate(client) == 0 else { fail("cannot activate") }
let own = ["out_1", "out_2", "in_1", "in_2"].map { "\(String(cString: jack_get_client_name(client))):\($0)" }
for (source, destination) in [(own[0], options.to[0]), (own[1], options.to[1]), (options.from[0], own[2]), (options.from[1], own[3])] {
    guard jack_connect(client, source, destination) == 0 else { fail("cannot connect \(source) -> \(destination)", code: 69) }
}
// Let connections settle for a few cycles, then play and record.
usleep(50_000)
probe.running.store(true, ordering: .releasing)
let deadline = Date().addingTimeInterval(options.seconds * 4 + 5)
var said = false
while probe.position.load(ordering: .acquiring) < frames {
    guard Date() < deadline else { fail("JACK stopped calling the probe", code: 70) }
    // Beside the recording, once the first period has played: a test can act on the signal
    // knowing it is under way, however late a loaded machine started this process.
    if !said && probe.position.load(ordering: .acquiring) > 0 {
        said = FileManager.default.createFile(atPath: options.out + ".playing", contents: nil)
    }
    usleep(10_000)
}
// Reports of an xrun in the last periods arrive late (two non-real-time threads away on a
// loaded machine): listen on for 50 ms and at least four periods before leaving.
usleep(UInt32(max(50_000, 4 * Double(jack_get_buffer_size(client)) / rate * 1e6)))
jack_deactivate(client)
jack_client_close(client)

do {
    let writer = try AudioFileWriter(path: options.out, format: .wav(sampleRate: Int(rate), channelCount: 4))
    try writer.write(channels: [
        signal[0], signal[1],
        Array(UnsafeBufferPointer(start: probe.record[0], count: frames)),
        Array(UnsafeBufferPointer(start: probe.record[1], count: frames)),
    ])
    try writer.close()
    // Beside the recording: "FRAME NANOSECONDS JACK-FRAME-TIME" for each callback, and the
    // position at each xrun JACK reported.
    let times = (0..<frames).filter { probe.callbackNanoseconds[$0] != 0 }.map {
        "\($0) \(probe.callbackNanoseconds[$0]) \(probe.callbackFrameTimes[$0])\n"
    }
    try times.joined().write(toFile: options.out + ".times", atomically: true, encoding: .utf8)
    let reported = min(probe.xruns.load(ordering: .relaxed), Probe.maxXruns)
    let xruns = (0..<reported).map { "\(probe.xrunPositions[$0])\n" }
    try xruns.joined().write(toFile: options.out + ".xruns", atomically: true, encoding: .utf8)
} catch {
    fail("\(error)", code: 73)
}
print(
    "cycles \(probe.cycles.load(ordering: .relaxed)) xruns \(probe.xruns.load(ordering: .relaxed)) frames \(frames)"
        + " start-ns \(probe.startNanoseconds.load(ordering: .relaxed))")
