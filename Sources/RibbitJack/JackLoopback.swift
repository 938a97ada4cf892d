import CJack
import Glibc
import Synchronization

/// A JACK client that plays a signal into two ports and records two others, sample-aligned by
/// JACK cycle: `ribbitd verify --live` measures the running hearing aid with it, as a test box
/// drives an aid and records its output. Use from one thread; the process callback touches
/// only buffers made before a run starts and hands them back by an atomic phase.
public final class JackLoopback {
    public static let portNames = ["out_left", "out_right", "in_left", "in_right"]

    public let name: String
    private let client: OpaquePointer
    private let context: UnsafeMutablePointer<LoopbackContext>
    private let state = LoopbackState()
    private var closed = false

    /// Opens and activates a client on the running server (never starts one).
    public init(name: String) throws(JackError) {
        var status = jack_status_t(rawValue: 0)
        guard let client = ribbit_jack_client_open(name, JackNoStartServer, &status) else {
            throw JackError(JackOpenStatus.openFailure(status.rawValue, clientName: name))
        }
        self.client = client
        self.name = String(cString: jack_get_client_name(client))
        context = .allocate(capacity: 1)
        context.initialize(to: LoopbackContext(state: .passUnretained(state)))
        var ports = [OpaquePointer]()
        for (index, portName) in Self.portNames.enumerated() {
            let flags = UInt(index < 2 ? JackPortIsOutput.rawValue : JackPortIsInput.rawValue)
            // On a throw from here on, deinit closes the client and frees the context.
            guard let port = jack_port_register(client, portName, JACK_DEFAULT_AUDIO_TYPE, flags, 0) else {
                throw JackError("JACK refused to register the port \(portName)")
            }
            ports.append(port)
        }
        context.pointee.ports = (ports[0], ports[1], ports[2], ports[3])
        jack_set_process_callback(client, LoopbackCallbacks.process, context)
        jack_set_xrun_callback(client, LoopbackCallbacks.xrun, context)
        guard jack_activate(client) == 0 else { throw JackError("JACK refused to activate the client \(name)") }
    }

    deinit {
        close()
        freeBuffers()
        context.deallocate()
    }

    public var sampleRate: Double { Double(jack_get_sample_rate(client)) }
    public var bufferSize: Int { Int(jack_get_buffer_size(client)) }
    /// Full names of the ports that play (left, right) and record (left, right).
    public var playPorts: [String] { Self.portNames[0..<2].map { "\(name):\($0)" } }
    public var recordPorts: [String] { Self.portNames[2..<4].map { "\(name):\($0)" } }

    public func connect(_ source: String, _ destination: String) throws(JackError) {
        let result = jack_connect(client, source, destination)
        guard result == 0 || result == EEXIST else { throw JackError("cannot connect \(source) to \(destination)") }
    }

    public func disconnect(_ source: String, _ destination: String) {
        _ = jack_disconnect(client, source, destination)
    }

    /// The ports connected to a port, by full name (none when it does not exist).
    public func connections(of portName: String) -> [String] {
        guard let port = jack_port_by_name(client, portName), let names = jack_port_get_all_connections(client, port) else { return [] }
        defer { jack_free(names) }
        var result: [String] = []
        var i = 0
        while let cName = names[i] {
            result.append(String(cString: cName))
            i += 1
        }
        return result
    }

    /// Plays `signal` (left, right; equal lengths) and records `frames` frames from the
    /// recording ports, starting in the cycle the signal starts; silence follows the signal.
    /// Returns the recording and the xruns JACK reported meanwhile (a recording with xruns
    /// has lost or repeated periods). Throws when JACK stops calling the client, or when
    /// `stop` says so (checked every 5 ms; the callback lets go of the buffers first).
    public func play(_ signal: [[Float]], recordFrames frames: Int, stop: () -> Bool = { false }) throws(JackError) -> (
        recorded: [[Float]], xruns: Int
    ) {
        precondition(signal.count == 2 && signal[0].count == signal[1].count && frames >= signal[0].count)
        // After a run JACK never finished, the callback may still hold the buffers.
        guard !closed, state.phase.load(ordering: .acquiring) == LoopbackState.idle else {
            throw JackError("\(name) is closed or still busy with an earlier signal")
        }
        // Idle: the callback reads nothing but the phase, so the buffers can be replaced.
        freeBuffers()
        let playing = signal.map { channel in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(channel.count, 1))
            p.initialize(from: channel, count: channel.count)
            return p
        }
        let recording = (0..<2).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(frames, 1))
            p.initialize(repeating: 0, count: frames)
            return p
        }
        context.pointee.play = (playing[0], playing[1])
        context.pointee.record = (recording[0], recording[1])
        context.pointee.playFrames = signal[0].count
        context.pointee.totalFrames = frames
        state.position.store(0, ordering: .relaxed)
        state.xruns.store(0, ordering: .relaxed)
        state.phase.store(LoopbackState.running, ordering: .releasing)

        let timeout = Double(frames) / sampleRate * 4 + 5
        var waited = 0.0
        var stopped = false
        while state.phase.load(ordering: .acquiring) != LoopbackState.done {
            // Left running (JACK gone): deinit frees the buffers once the client is closed.
            guard waited < timeout else { throw JackError("JACK stopped calling \(name) (is the server running?)") }
            if !stopped && stop() {
                stopped =
                    state.phase.compareExchange(
                        expected: LoopbackState.running, desired: LoopbackState.stopping, ordering: .acquiringAndReleasing
                    ).exchanged
            }
            usleep(5000)
            waited += 0.005
        }
        // JACK reports an xrun after the cycle it broke: give it two periods to arrive.
        usleep(UInt32(2 * Double(bufferSize) / sampleRate * 1_000_000))
        let recorded = recording.map { Array(UnsafeBufferPointer(start: $0, count: frames)) }
        let xruns = state.xruns.load(ordering: .relaxed)
        state.phase.store(LoopbackState.idle, ordering: .releasing)
        if stopped { throw JackError("stopped") }
        return (recorded, xruns)
    }

    private func freeBuffers() {
        let buffers = [context.pointee.play.0, context.pointee.play.1, context.pointee.record.0, context.pointee.record.1]
        for buffer in buffers { buffer?.deallocate() }
        context.pointee.play = (nil, nil)
        context.pointee.record = (nil, nil)
    }

    /// Deactivates and closes. Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        jack_deactivate(client)
        jack_client_close(client)
    }
}

/// The run's phase and counters, shared with the callbacks.
final class LoopbackState: Sendable {
    static let idle = 0
    static let running = 1
    static let done = 2
    /// Asked to stop: the callback answers with done at its next cycle.
    static let stopping = 3
    let phase = Atomic<Int>(LoopbackState.idle)
    let position = Atomic<Int>(0)
    let xruns = Atomic<Int>(0)
}

/// What the callbacks read: plain pointers, written only while the phase is idle.
struct LoopbackContext {
    var ports: (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) = (nil, nil, nil, nil)
    var play: (UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?) = (nil, nil)
    var record: (UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?) = (nil, nil)
    var playFrames = 0
    var totalFrames = 0
    var state: Unmanaged<LoopbackState>
}

/// No allocation, lock or I/O: the callbacks run on JACK's real-time thread like the hearing aid's.
enum LoopbackCallbacks {
    static let process: JackProcessCallback = { nframes, arg in
        let context = arg.unsafelyUnwrapped.assumingMemoryBound(to: LoopbackContext.self)
        let ports = context.pointee.ports
        let n = Int(nframes)
        let outLeft = buffer(ports.0, nframes), outRight = buffer(ports.1, nframes)
        outLeft.update(repeating: 0, count: n)
        outRight.update(repeating: 0, count: n)
        context.pointee.state._withUnsafeGuaranteedRef { state in
            let phase = state.phase.load(ordering: .acquiring)
            if phase == LoopbackState.stopping { state.phase.store(LoopbackState.done, ordering: .releasing) }
            guard phase == LoopbackState.running else { return }
            let at = state.position.load(ordering: .relaxed)
            let count = min(n, context.pointee.totalFrames - at)
            let fromSignal = max(0, min(count, context.pointee.playFrames - at))
            if fromSignal > 0 {
                outLeft.update(from: context.pointee.play.0.unsafelyUnwrapped + at, count: fromSignal)
                outRight.update(from: context.pointee.play.1.unsafelyUnwrapped + at, count: fromSignal)
            }
            (context.pointee.record.0.unsafelyUnwrapped + at).update(from: buffer(ports.2, nframes), count: count)
            (context.pointee.record.1.unsafelyUnwrapped + at).update(from: buffer(ports.3, nframes), count: count)
            state.position.store(at + count, ordering: .relaxed)
            if at + count >= context.pointee.totalFrames { state.phase.store(LoopbackState.done, ordering: .releasing) }
        }
        return 0
    }

    static func buffer(_ port: OpaquePointer?, _ nframes: jack_nframes_t) -> UnsafeMutablePointer<Float> {
        jack_port_get_buffer(port, nframes).unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
    }

    static let xrun: JackXRunCallback = { arg in
        let context = arg.unsafelyUnwrapped.assumingMemoryBound(to: LoopbackContext.self)
        context.pointee.state._withUnsafeGuaranteedRef { state in
            // Also just after the run: JACK reports an xrun after the cycle it broke.
            if state.phase.load(ordering: .relaxed) != LoopbackState.idle { _ = state.xruns.add(1, ordering: .relaxed) }
        }
        return 0
    }
}
