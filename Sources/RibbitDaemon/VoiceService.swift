import Foundation
import RibbitControl
import RibbitVoice

/// The voice exercises' input: while a client listens to the voice stream, the dump tap's
/// microphone samples (the two inputs averaged: one voice reaches both) go through the voice
/// analysis here, on the control thread, and each 10 ms frame goes to every voice client as a
/// JSON line. The audio thread only copies, as it does for the dump; the hearing aid keeps
/// running (a therapist who wants it off pauses it).
final class VoiceService: DaemonService {
    let name = "voice"
    private let audio: AudioService
    private let control: ControlService
    private let dump: DumpService
    /// The microphone's dB SPL at 0 dBFS, when a calibration profile says it (else levels in dBFS).
    private let microphoneDBSPL: Double?
    private var analyzer: VoiceAnalyzer?
    private let encoder = JSONEncoder()
    private(set) var listeners = 0

    init(audio: AudioService, control: ControlService, dump: DumpService, microphoneDBSPL: Double?) {
        self.audio = audio
        self.control = control
        self.dump = dump
        self.microphoneDBSPL = microphoneDBSPL
        encoder.outputFormatting = [.sortedKeys]
    }

    func tick(now: Double) {
        listeners = control.server?.subscriberCount(.voice) ?? 0
        let rate = Double(audio.session?.sampleRate ?? 0)
        guard listeners > 0, rate > 0 else {
            analyzer = nil
            dump.inputTaps["voice"] = nil
            return
        }
        if analyzer?.sampleRate != rate {
            analyzer = VoiceAnalyzer(sampleRate: rate, dBSPLAtZeroDBFS: microphoneDBSPL)
            dump.inputTaps["voice"] = { [unowned self] channels in analyse(channels) }
        }
    }

    private func analyse(_ channels: [[Float]]) {
        guard var analyzer, let server = control.server, channels.count == 2 else { return }
        let (left, right) = (channels[0], channels[1])
        var mono = [Float](repeating: 0, count: min(left.count, right.count))
        for index in mono.indices { mono[index] = 0.5 * (left[index] + right[index]) }
        let frames = analyzer.append(mono)
        self.analyzer = analyzer
        guard !frames.isEmpty else { return }
        var lines = Data()
        for frame in frames {
            guard let line = try? encoder.encode(frame) else { continue }
            lines.append(line)
            lines.append(0x0A)
        }
        server.broadcast(lines, to: .voice, now: MonotonicClock.seconds())
    }

    func stop(deadline: Double) {
        dump.inputTaps["voice"] = nil
        analyzer = nil
    }
}
