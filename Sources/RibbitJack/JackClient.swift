import CJack
import Glibc
import RibbitRealtime
import Synchronization

public struct JackError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What JACK's non-RT callbacks report, for the control thread to pick up.
public final class JackEvents: Sendable {
    /// The server went away (or threw us out); the client must be closed and reopened.
    public let shutDown = Atomic<Bool>(false)
    public let xruns = Atomic<Int>(0)
    /// The sample rate JACK announced last.
    public let sampleRate = Atomic<Int>(0)
    /// Cycles the process callback did not run for, found by JACK's frame time jumping further
    /// than a period: whatever the xrun notices said, these are where the input skipped.
    public let missedCycles = Atomic<Int>(0)
    /// The JACK frame time of the first callback after each of the last `missedRingSize` gaps
    /// (slot `gap % missedRingSize`), written on the RT thread before `missedGaps` counts it.
    public let missedGaps = Atomic<Int>(0)
    public static let missedRingSize = 256
    /// Written only by the RT thread, read after `missedGaps` (acquiring) says a slot is filled.
    nonisolated(unsafe) let missedAt: UnsafeMutablePointer<UInt32> = .allocate(capacity: JackEvents.missedRingSize)

    public init() { missedAt.initialize(repeating: 0, count: Self.missedRingSize) }
    deinit { missedAt.deallocate() }

    private let reportedGaps = Atomic<Int>(0)

    /// The frame times of the gaps found since the last call, oldest first (the control
    /// thread's, ten times a second: a ring of 256 outlasts 100 ms of 64-frame periods).
    public func takeNewGaps() -> [UInt32] {
        let gaps = missedGaps.load(ordering: .acquiring)
        let from = max(reportedGaps.load(ordering: .relaxed), gaps - Self.missedRingSize)
        reportedGaps.store(gaps, ordering: .relaxed)
        return (from..<gaps).map { missedAt[$0 % Self.missedRingSize] }
    }
}

/// The state the C callbacks get as their argument: plain values and unretained references,
/// so reading it on the RT thread does no reference counting.
struct CallbackContext {
    var ports: (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) = (nil, nil, nil, nil)
    var processor: Unmanaged<RealtimeProcessor>? = nil
    var events: Unmanaged<JackEvents>
    var client: OpaquePointer? = nil
    /// The frame time the next callback should have (nil before the first): the RT thread's alone.
    var nextFrameTime: UInt32? = nil
}

/// A JACK client with two inputs and two outputs (one per ear) running a RealtimeProcessor.
/// Use from one control thread; the callbacks run on JACK's threads.
public final class JackClient {
    public static let portNames = ["in_left", "in_right", "out_left", "out_right"]

    public let name: String
    public let events = JackEvents()
    private let client: OpaquePointer
    private let context: UnsafeMutablePointer<CallbackContext>
    private var processor: RealtimeProcessor?
    private var closed = false

    /// Whether libjack's own messages go to stderr. Off by default: while the daemon retries
    /// a missing server, libjack would print four lines per attempt.
    public static func showLibraryMessages(_ show: Bool) {
        jack_set_error_function(show ? JackCallbacks.message : JackCallbacks.silence)
        jack_set_info_function(show ? JackCallbacks.message : JackCallbacks.silence)
    }

    /// Opens a client on the running server (JACK_DEFAULT_SERVER or the default); never
    /// starts a server.
    public init(name: String, registerPorts: Bool = true) throws(JackError) {
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue | JackUseExactName.rawValue)
        guard let client = ribbit_jack_client_open(name, options, &status) else {
            throw JackError(JackOpenStatus.openFailure(status.rawValue, clientName: name))
        }
        self.client = client
        self.name = String(cString: jack_get_client_name(client))
        context = .allocate(capacity: 1)
        context.initialize(to: CallbackContext(events: .passUnretained(events), client: client))
        events.sampleRate.store(Int(jack_get_sample_rate(client)), ordering: .relaxed)
        jack_on_info_shutdown(client, JackCallbacks.shutdown, context)
        guard registerPorts else { return }
        var ports = [OpaquePointer]()
        for (index, portName) in Self.portNames.enumerated() {
            let flags = UInt(index < 2 ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue)
            guard let port = jack_port_register(client, portName, JACK_DEFAULT_AUDIO_TYPE, flags, 0) else {
                close()
                throw JackError("JACK refused to register the port \(portName)")
            }
            ports.append(port)
        }
        context.pointee.ports = (ports[0], ports[1], ports[2], ports[3])
    }

    deinit {
        close()
        context.deallocate()
    }

    public var sampleRate: Double { Double(jack_get_sample_rate(client)) }
    public var bufferSize: Int { Int(jack_get_buffer_size(client)) }
    /// JACK's DSP load estimate for the whole graph, in percent.
    public var dspLoadPercent: Double { Double(jack_cpu_load(client)) }

    /// Installs the callbacks, runs the processor once on silence, and activates. The client
    /// keeps `processor` alive until close().
    public func activate(with processor: RealtimeProcessor) throws(JackError) {
        self.processor = processor
        context.pointee.processor = .passUnretained(processor)
        processor.warmUp(frameCount: bufferSize)
        jack_set_process_callback(client, JackCallbacks.process, context)
        jack_set_buffer_size_callback(client, JackCallbacks.bufferSize, context)
        jack_set_sample_rate_callback(client, JackCallbacks.sampleRate, context)
        jack_set_xrun_callback(client, JackCallbacks.xrun, context)
        jack_set_latency_callback(client, JackCallbacks.latency, context)
        guard jack_activate(client) == 0 else { throw JackError("JACK refused to activate the client") }
    }

    /// Asks JACK to recompute and redistribute latencies (after our own latency changed).
    public func recomputeLatencies() { jack_recompute_total_latencies(client) }

    /// Full names of this client's ports, in portNames order.
    public var ownPorts: [String] { Self.portNames.map { "\(name):\($0)" } }

    /// Connects two ports by full name ("client:port").
    public func connect(_ source: String, _ destination: String) throws(JackError) {
        let result = jack_connect(client, source, destination)
        guard result == 0 || result == EEXIST else {
            throw JackError("cannot connect \(source) to \(destination); `ribbitd ports` lists the ports JACK offers")
        }
    }

    public struct Port: Sendable, Equatable {
        public let name: String
        /// A sound source (capture, or another client's output) rather than a sink.
        public let isSource: Bool
        public let isPhysical: Bool
    }

    /// The audio ports JACK offers, optionally only physical ones of one direction.
    public func ports(physicalSources: Bool? = nil) -> [Port] {
        var flags: UInt = 0
        if let physicalSources {
            flags = UInt(JackPortIsPhysical.rawValue) | UInt(physicalSources ? JackPortIsOutput.rawValue : JackPortIsInput.rawValue)
        }
        guard let names = jack_get_ports(client, nil, JACK_DEFAULT_AUDIO_TYPE, flags) else { return [] }
        defer { jack_free(names) }
        var result = [Port]()
        var i = 0
        while let cName = names[i] {
            let name = String(cString: cName)
            let port = jack_port_by_name(client, cName)
            let portFlags = port.map { jack_port_flags($0) } ?? 0
            result.append(
                Port(
                    name: name, isSource: portFlags & Int32(JackPortIsOutput.rawValue) != 0,
                    isPhysical: portFlags & Int32(JackPortIsPhysical.rawValue) != 0))
            i += 1
        }
        return result
    }

    /// Deactivates and closes (also after the server went away). Idempotent.
    /// Stops the sound, then the client. jack_deactivate cancels the process thread
    /// asynchronously (jack2), wherever it is: first the output ramps to silence (no click) and
    /// the callback stops running the renderers, so the cancel finds the thread waiting in
    /// libjack, not in the middle of ribbit's work.
    public func close() {
        guard !closed else { return }
        closed = true
        if let processor {
            processor.paused.store(true, ordering: .relaxed)
            let period = Double(processor.period.load(ordering: .relaxed)) / processor.sampleRate
            let deadline = Realtime.monotonicNanoseconds() + Int((4 * period + RealtimeProcessor.fadeSeconds) * 1e9)
            while !processor.pauseTookEffect, Realtime.monotonicNanoseconds() < deadline { usleep(1000) }
            processor.stopped.store(true, ordering: .relaxed)
            usleep(useconds_t(2 * period * 1e6))
        }
        jack_deactivate(client)
        jack_client_close(client)
        context.pointee.processor = nil
        processor = nil
    }
}

/// The C callbacks: static members of a non-isolated type (closures in an actor-isolated
/// context crash on JACK's threads), reading only the CallbackContext they are given.
enum JackCallbacks {
    static let message: @convention(c) (UnsafePointer<CChar>?) -> Void = { text in
        guard let text else { return }
        let line = Array("jack: \(String(cString: text))\n".utf8)
        _ = write(2, line, line.count)
    }
    static let silence: @convention(c) (UnsafePointer<CChar>?) -> Void = { _ in }

    static let process: JackProcessCallback = { nframes, arg in
        processPeriod(nframes, arg.unsafelyUnwrapped)
        return 0
    }

    // MARK: Audio thread

    /// The process callback's body: the four port buffers, then the processor (or silence).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    static func processPeriod(_ nframes: jack_nframes_t, _ arg: UnsafeMutableRawPointer) {
        let context = arg.assumingMemoryBound(to: CallbackContext.self)
        let ports = context.pointee.ports
        let frames = Int(nframes)
        // libjack's buffer lookup is C (no lock, no allocation): the compiler cannot see it.
        var buffers: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
        buffers = (nil, nil, nil, nil)
        _unsafePerformance {
            buffers = (
                jack_port_get_buffer(ports.0, nframes), jack_port_get_buffer(ports.1, nframes),
                jack_port_get_buffer(ports.2, nframes), jack_port_get_buffer(ports.3, nframes)
            )
        }
        let inLeft = buffers.0.unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
        let inRight = buffers.1.unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
        let outLeft = buffers.2.unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
        let outRight = buffers.3.unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
        countMissedCycles(context, nframes)
        if let processor = context.pointee.processor {
            processor._withUnsafeGuaranteedRef {
                $0.render(inLeft: inLeft, inRight: inRight, outLeft: outLeft, outRight: outRight, frameCount: frames)
            }
        } else {
            zeroFloats(outLeft, frames)
            zeroFloats(outRight, frames)
        }
    }

    /// Compares this cycle's frame time with the one the last callback led to expect.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    static func countMissedCycles(_ context: UnsafeMutablePointer<CallbackContext>, _ nframes: jack_nframes_t) {
        var now: jack_nframes_t = 0
        // libjack reads the frame timer from shared memory (no lock, no allocation).
        _unsafePerformance { now = jack_last_frame_time(context.pointee.client) }
        if let expected = context.pointee.nextFrameTime, now != expected, nframes > 0 {
            context.pointee.events._withUnsafeGuaranteedRef { events in
                let gap = events.missedGaps.load(ordering: .relaxed)
                events.missedAt[gap % JackEvents.missedRingSize] = now
                events.missedGaps.store(gap + 1, ordering: .releasing)
                let skipped = Int(Int32(bitPattern: now &- expected)) / Int(nframes)  // negative: the timer went back
                _ = events.missedCycles.add(max(1, skipped), ordering: .relaxed)
            }
        }
        context.pointee.nextFrameTime = now &+ nframes
    }

    static let bufferSize: JackBufferSizeCallback = { nframes, arg in
        let context = arg.unsafelyUnwrapped.assumingMemoryBound(to: CallbackContext.self)
        if let processor = context.pointee.processor {
            processor._withUnsafeGuaranteedRef { $0.period.store(Int(nframes), ordering: .relaxed) }
        }
        return 0
    }

    static let sampleRate: JackSampleRateCallback = { rate, arg in
        let context = arg.unsafelyUnwrapped.assumingMemoryBound(to: CallbackContext.self)
        context.pointee.events._withUnsafeGuaranteedRef { $0.sampleRate.store(Int(rate), ordering: .relaxed) }
        return 0
    }

    static let xrun: JackXRunCallback = { arg in
        let context = arg.unsafelyUnwrapped.assumingMemoryBound(to: CallbackContext.self)
        context.pointee.events._withUnsafeGuaranteedRef { _ = $0.xruns.add(1, ordering: .relaxed) }
        return 0
    }

    static let shutdown: JackInfoShutdownCallback = { _, _, arg in
        let context = arg.unsafelyUnwrapped.assumingMemoryBound(to: CallbackContext.self)
        context.pointee.events._withUnsafeGuaranteedRef { $0.shutDown.store(true, ordering: .releasing) }
    }

    /// Our ports add our own delay to the latency that passes through them: capture latency
    /// flows input -> output, playback latency output -> input.
    static let latency: JackLatencyCallback = { mode, arg in
        let context = arg.unsafelyUnwrapped.assumingMemoryBound(to: CallbackContext.self)
        guard let processor = context.pointee.processor else { return }
        let own = UInt32(processor._withUnsafeGuaranteedRef { $0.latencyFrames })
        let ports = context.pointee.ports
        for (input, output) in [(ports.0, ports.2), (ports.1, ports.3)] {
            var range = jack_latency_range_t()
            if mode == JackCaptureLatency {
                jack_port_get_latency_range(input, mode, &range)
                range.min += own
                range.max += own
                jack_port_set_latency_range(output, mode, &range)
            } else {
                jack_port_get_latency_range(output, mode, &range)
                range.min += own
                range.max += own
                jack_port_set_latency_range(input, mode, &range)
            }
        }
    }
}
