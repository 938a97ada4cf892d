import Glibc
import RibbitAudioLink
import RibbitDSP
import RibbitJack
import RibbitRealtime
import RibbitWisdomFile

/// The audio process: holds the JACK client and the engine, plays the filters the daemon
/// sends, and reports counters and (while asked) the dump's samples. It decides nothing:
/// when the server goes away or changes its rate it says so and exits; the daemon starts a
/// new one. When the daemon goes away (the link closes) it closes its client and exits.
struct AudioHost {
    let link: AudioLinkSocket
    let options: AudioOptions
    /// The compressor that plays and the detector totals at the previous stats, for the
    /// band levels the stats carry (the automatic program's input).
    private let levels = InputLevels()

    private final class InputLevels {
        var plan: CompressorPlan?
        var previous = InputLevelTotals()
        /// What the stages did over the last whole second (`status`): the totals at its start,
        /// the stats sent since, and the second before's result.
        var secondStart = InputLevelTotals()
        var statsThisSecond = 0
        var activity: StageActivity?
    }

    /// Runs until stopped; the exit status for the process.
    func run() -> Int32 {
        // Before the engine plans: with the wisdom its plans are the measured ones at once.
        let wisdom = options.wisdom.map { WisdomFile(path: $0) }
        let loaded = wisdom?.load()
        JackClient.showLibraryMessages(options.showLibraryMessages)
        let client: JackClient
        do { client = try JackClient(name: options.clientName) } catch {
            link.send(.failed(error.description))
            return drain(status: 1)
        }
        let rate = client.sampleRate
        link.send(.connected(client: client.name, sampleRate: Int(rate), period: client.bufferSize))
        // Nothing plays until the daemon says what: it designs the filters for this rate.
        var paused = false
        // Asked for before sound flows: applied once it does (dropped here, a voice or dump
        // client that listened across a JACK restart would never hear from this process).
        var dumping = false
        // The wearer's volume, sent with the first filters: the engine starts at it.
        var trim = 0.0
        var first: FilterSet?
        var firstCompressor: CompressorPlan?
        var ceiling = 0.0
        while first == nil {
            link.wait(milliseconds: 100)
            for message in link.receive() {
                switch message {
                case .filters(let dBFS, let fftLength, let taps):
                    first = FilterSet(taps: taps, fftLength: fftLength, ceilingDBFS: dBFS)
                    ceiling = dBFS
                case .compressor(let plan):
                    firstCompressor = plan
                    levels.plan = plan
                case .trim(let dB): trim = dB
                case .paused(let on): paused = on
                case .dump(let on): dumping = on
                case .stop: return close(client, status: 0)
                default: break
                }
            }
            if link.isClosed { return close(client, status: 0) }
        }
        let processor: RealtimeProcessor
        let tone = ToneRenderer(sampleRate: rate)
        tone.warmUp(frameCount: client.bufferSize)
        do {
            // Until the compressor comes the linear filters play, and the wearer's volume is the
            // compressor's trim: turned down, they are turned down with it (never up).
            let quieter = pow(10, min(trim, 0) / 20)
            let starting =
                quieter < 1
                ? FilterSet(taps: first!.taps.map { $0.map { $0 * quieter } }, fftLength: first!.fftLength, ceilingDBFS: ceiling) : first!
            // The compressor follows (its tables are built once JACK runs); the FFT plans are
            // timed after the start.
            let engine = try OverlapSaveEngine(
                playing: starting, compressor: nil, geometry: .standard(sampleRate: rate), sampleRate: rate, blockSize: client.bufferSize)
            engine.startAtTrim(dB: trim)
            processor = RealtimeProcessor(engine: engine, period: client.bufferSize)  // its guard at the filters' ceiling
            processor.paused.store(paused, ordering: .relaxed)
            processor.dumpEnabled.store(dumping, ordering: .relaxed)
            try client.activate(with: processor)
        } catch {
            link.send(.failed("JACK runs at \(Int(rate)) Hz: \(error)"))
            return close(client, status: 1)
        }
        log(
            .info,
            "JACK: client \(client.name), \(Int(rate)) Hz, period \(client.bufferSize), added latency \(processor.latencyFrames) frames (\(milliseconds(processor.latencyFrames, rate)) ms)"
        )
        wire(client)
        link.send(.running(latencyFrames: processor.latencyFrames))
        link.flush()
        // The compressor, when it came with the first filters, once the sound flows: its tables
        // take tens of milliseconds to build, and the ports wait for nothing the filters need.
        if let plan = firstCompressor {
            do { try processor.engine.publish(plan: plan) } catch {
                log(.error, "internal error: the compressor does not fit the engine (\(error))")
            }
        }
        // After the sound started, for the next start: the measured plans (0.2 ms when the
        // wisdom had them; else timed here, beside the audio thread, never on it) saved.
        if let wisdom {
            _ = RealFFT(length: processor.engine.geometry.fftLength, planning: .measure)
            if let error = wisdom.saveIfNew() { log(.warning, "FFTW wisdom: \(error); the next start plans again") }
        }
        if let loaded, case .otherVersion(let version) = loaded { log(.info, "FFTW wisdom from \(version) ignored; planned again") }
        if loaded == .damaged { log(.warning, "FFTW wisdom file \(options.wisdom ?? "") was damaged; planned again and rewrote it") }
        return serve(client, processor, tone)
    }

    /// The loop while sound flows: messages in, counters and dump samples out.
    private func serve(_ client: JackClient, _ processor: RealtimeProcessor, _ tone: ToneRenderer) -> Int32 {
        var period = client.bufferSize
        var nextStats = 0.0
        /// While the tone mode runs: when its tone ends (monotonic seconds).
        var toneUntil: Double?
        var channels = [[Float]](repeating: [], count: SampleRing.channels)
        /// Dump frames the link dropped (its queue long: the daemon reads too slowly), counted
        /// beside the ring's so a dump frame never claims a whole window it did not get.
        var droppedOnTheLink = 0
        /// A pause or resume the daemon waits to hear has taken effect (nil: none waits).
        var confirming: Bool?
        /// The last tone the daemon numbered, and the last whose start it was told.
        var (toneAsked, toneToldStarted) = (0, 0)
        while true {
            let waitingForTone = toneAsked != toneToldStarted
            link.wait(milliseconds: confirming != nil ? 1 : waitingForTone ? 5 : processor.dumpEnabled.load(ordering: .relaxed) ? 10 : 50)
            for message in link.receive() {
                switch message {
                case .filters(let ceiling, let fftLength, let taps):
                    // The engine's ceiling and the output guard's: the guard (after every renderer)
                    // is what holds for anything that plays instead of the hearing aid.
                    do { try processor.publish(FilterSet(taps: taps, fftLength: fftLength, ceilingDBFS: ceiling)) } catch {
                        log(.error, "internal error: the new filters do not fit the engine (\(error))")
                    }
                case .compressor(let plan):
                    levels.plan = plan
                    // Built here, off the audio thread (tables of a few hundred kB), published
                    // before the filters that follow it.
                    do {
                        try processor.engine.publish(plan: plan)
                    } catch {
                        log(.error, "internal error: the new compressor does not fit the engine (\(error))")
                    }
                case .trim(let dB): processor.engine.setTrim(dB: dB)
                case .paused(let on):
                    processor.paused.store(on, ordering: .relaxed)
                    confirming = on
                case .connect(let connections): connect(connections, client, processor)
                case .dump(let on):
                    if on { processor.dumpRing.discard() }
                    processor.dumpEnabled.store(on, ordering: .relaxed)
                case .tone(let hz, let level, let left, let right, let length, let pulses, let off, let hearingTest, let number):
                    tone.play(
                        frequencyHz: hz, levelDBFS: level, ceilingDBFS: processor.outputCeilingDBFS, left: left, right: right,
                        seconds: length, pulses: pulses,
                        offSeconds: off, limitDBFS: hearingTest ? ToneRenderer.hearingTestMaxLevelDBFS : ToneRenderer.maxLevelDBFS,
                        number: number)
                    // A stop has no start to tell, and the tone it stops may never begin.
                    if length > 0 { toneAsked = number } else { toneToldStarted = toneAsked }
                    if toneUntil == nil, length > 0 {
                        switchRenderers(processor, to: [processor.hearingAid, tone])
                        log(.info, "calibration tone mode: the hearing aid is off")
                    }
                    if toneUntil != nil || length > 0 {
                        let pattern = ToneRenderer.patternSeconds(seconds: max(length, 0), pulses: pulses, offSeconds: max(off, 0))
                        toneUntil =
                            seconds() + min(pattern, ToneRenderer.maxSeconds + ToneRenderer.rampSeconds)
                            + (hearingTest && length > 0 ? ToneRenderer.hearingTestHoldSeconds : 0)
                    }
                case .masker(let hz, let level, let left, let right, let length):
                    // Only beside a hearing test's tones: never instead of the hearing aid by itself.
                    guard toneUntil != nil else { break }
                    tone.playMasker(
                        centerHz: hz, levelDBFS: level, ceilingDBFS: processor.outputCeilingDBFS, left: left, right: right, seconds: length)
                case .stop: return close(client, status: 0)
                default: break
                }
            }
            if link.isClosed { return close(client, status: 0) }
            if let on = confirming, processor.pauseTookEffect {
                link.send(.pauseTookEffect(on))
                confirming = nil
            }
            // When the audio thread began the tone asked last: the hearing test's window opens then.
            if let started = tone.lastStart, started.number == toneAsked, started.number != toneToldStarted {
                link.send(.toneStarted(number: started.number, atSeconds: started.atSeconds))
                toneToldStarted = started.number
            }
            if let until = toneUntil, seconds() >= until, !tone.sounding.load(ordering: .relaxed) {
                switchRenderers(processor, to: [processor.hearingAid])
                toneUntil = nil
                // What is left of a masker must not come back with the next tone mode.
                tone.cutMasker()
                log(.info, "calibration tone mode over: the hearing aid plays again")
            }
            processor.collectRetired()
            tone.collectRetired()
            if client.events.shutDown.load(ordering: .acquiring) {
                link.send(.gone(reason: "the JACK server went away", sampleRateChanged: false))
                return drain(status: 0)
            }
            if client.events.sampleRate.load(ordering: .relaxed) != Int(processor.sampleRate) {
                link.send(.gone(reason: "JACK changed its sample rate", sampleRateChanged: true))
                return close(client, status: 0)
            }
            let now = seconds()
            let announced = processor.period.load(ordering: .relaxed)
            if announced != period {
                period = announced
                client.recomputeLatencies()
                log(.notice, "JACK period is now \(period) frames; latency \(processor.latencyFrames) frames")
                nextStats = 0  // the new latency at once
            }
            if processor.dumpEnabled.load(ordering: .relaxed) {
                for index in channels.indices { channels[index].removeAll(keepingCapacity: true) }
                processor.dumpRing.drain(into: &channels)
                let frames = channels[0].count
                if frames > 0 {
                    let message = AudioMessage.samples(
                        frameCount: frames, channels: channels.flatMap { $0 }, xruns: client.events.xruns.load(ordering: .relaxed),
                        droppedFrames: processor.dumpRing.dropped.load(ordering: .relaxed) + droppedOnTheLink)
                    if !link.send(message, droppable: true) { droppedOnTheLink += frames }
                }
            }
            if now >= nextStats {
                var current = stats(client, processor)
                current.dumpFramesDropped += droppedOnTheLink
                if toneUntil != nil {
                    current.toneMode = true
                    (current.inputLeftDBFS, current.inputRightDBFS) = tone.inputLevelDBFS
                }
                link.send(.stats(current))
                nextStats = now + 0.1
            }
            link.flush()
        }
    }

    /// Changes what renders under a pause ramp (5 ms down, the switch, 5 ms up), so neither
    /// the hearing aid nor the tone starts or stops with a click. Keeps the wearer's pause.
    private func switchRenderers(_ processor: RealtimeProcessor, to renderers: [any PeriodRenderer]) {
        let wasPaused = processor.paused.load(ordering: .relaxed)
        processor.paused.store(true, ordering: .relaxed)
        let period = Double(processor.period.load(ordering: .relaxed)) / processor.sampleRate
        usleep(useconds_t((2 * period + 2 * RealtimeProcessor.fadeSeconds) * 1e6))
        processor.run(renderers)
        processor.paused.store(wasPaused, ordering: .relaxed)
    }

    private func stats(_ client: JackClient, _ processor: RealtimeProcessor) -> AudioStats {
        var s = AudioStats()
        s.cycles = processor.cycles.load(ordering: .relaxed)
        s.busyNanoseconds = processor.busyNanoseconds.load(ordering: .relaxed)
        s.longestNanoseconds = processor.longestNanoseconds.load(ordering: .relaxed)
        s.period = processor.period.load(ordering: .relaxed)
        s.latencyFrames = processor.latencyFrames
        s.xruns = client.events.xruns.load(ordering: .relaxed)
        (s.missedCycles, s.missedAtFrameTimes) = (client.events.missedCycles.load(ordering: .relaxed), client.events.takeNewGaps())
        s.limitedSamples = processor.engine.counters.limitedSamples
        s.guardedSamples = processor.guardedSamples.load(ordering: .relaxed)
        s.dumpFramesDropped = processor.dumpRing.dropped.load(ordering: .relaxed)
        s.dspLoadPercent = client.dspLoadPercent
        let totals = processor.engine.inputLevelTotals
        if let plan = levels.plan,
            let mean = totals.meanLevels(
                since: levels.previous, bands: plan.settings.first?.bands.count ?? 0, channels: plan.settings.count,
                inputDBSPLAtFullScale: plan.calibration.inputDBSPLAtFullScale)
        {
            (s.bandLevelsDBSPL, s.broadbandDBSPL) = (mean.bands, mean.broadband)
        }
        levels.previous = totals
        levels.statsThisSecond += 1
        if levels.statsThisSecond >= 10 {
            levels.activity = levels.plan.flatMap { plan in
                totals.activity(
                    since: levels.secondStart, bands: plan.settings.first?.bands.count ?? 0, channels: plan.settings.count,
                    inputDBSPLAtFullScale: plan.calibration.inputDBSPLAtFullScale)
            }
            (levels.secondStart, levels.statsThisSecond) = (totals, 0)
        }
        s.activity = levels.activity
        return s
    }

    /// Connects our ports as configured; a port that cannot be connected is logged, not fatal
    /// (the wearer can wire it by hand, and sound through the others still works).
    private func wire(_ client: JackClient) {
        guard options.connect else { return }
        let sources = options.inputs ?? client.ports(physicalSources: true).prefix(2).map(\.name)
        let sinks = options.outputs ?? client.ports(physicalSources: false).prefix(2).map(\.name)
        let own = client.ownPorts
        if sources.isEmpty { log(.warning, "JACK offers no capture port; connect \(own[0]) and \(own[1]) yourself") }
        if sinks.isEmpty { log(.warning, "JACK offers no playback port; connect \(own[2]) and \(own[3]) yourself") }
        var pairs = [(String, String)]()
        // One source (a mono microphone) feeds both ears; one sink gets the left ear.
        for ear in 0..<2 where !sources.isEmpty { pairs.append((sources[min(ear, sources.count - 1)], own[ear])) }
        for ear in 0..<min(2, sinks.count) { pairs.append((own[2 + ear], sinks[ear])) }
        for (source, destination) in pairs {
            do {
                try client.connect(source, destination)
                log(.info, "connected \(source) -> \(destination)")
            } catch {
                log(.error, error.description)
            }
        }
    }

    /// Puts back connections a live measurement took away, once the engine plays what was sent
    /// before (the wearer's program and volume: a crossfade at the next hop). Waits at most
    /// 0.5 s for the audio thread to take it, and a period more for the fade.
    private func connect(_ connections: [AudioMessage.Connection], _ client: JackClient, _ processor: RealtimeProcessor) {
        let deadline = seconds() + 0.5
        while processor.engine.hasPendingConfigs, seconds() < deadline { usleep(1000) }
        usleep(useconds_t(2 * Double(processor.period.load(ordering: .relaxed)) / processor.sampleRate * 1e6))
        for connection in connections {
            do {
                try client.connect(connection.source, connection.destination)
                log(.info, "connected \(connection.source) -> \(connection.destination) again")
            } catch {
                log(.error, error.description)
            }
        }
    }

    private func log(_ level: AudioMessage.LogLevel, _ text: String) { link.send(.log(level: level, text: text)) }

    private func close(_ client: JackClient, status: Int32) -> Int32 {
        client.close()
        return drain(status: status)
    }

    /// Sends what is queued (at most 1 s), then the status to exit with.
    private func drain(status: Int32) -> Int32 {
        let deadline = seconds() + 1
        while link.hasQueuedOutput, !link.isClosed, seconds() < deadline {
            link.wait(milliseconds: 10)
            link.flush()
        }
        return status
    }

    private func milliseconds(_ frames: Int, _ rate: Double) -> String {
        let hundredths = Int((Double(frames) / rate * 100_000).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

/// Monotonic seconds, for the loop's timers.
private func seconds() -> Double { Double(Realtime.monotonicNanoseconds()) / 1e9 }
