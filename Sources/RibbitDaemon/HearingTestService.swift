import Foundation
import Logging
import RibbitAudiometry
import RibbitControl
import RibbitDSP
import RibbitPrescription
import RibbitSettings
import RibbitStore

/// The pure-tone hearing test (`hearing-test-*` requests): starts a `HearingTestSession`,
/// carries out what it asks (pulsed tones, silence between them, the end), meters the room
/// through the dump's input tap, and stores the result in the history's SQLite file. Its
/// tones are converted through the calibration and the headphones' RETSPL table, never above
/// the self-test ceiling, 1 dB under the output ceiling in force and 1 dB under full scale.
final class HearingTestService: DaemonService {
    let name = "hearing test"
    private let audio: AudioService
    private let fitting: FittingService
    private let dump: DumpService
    private let log: Logger
    private let paths: RibbitPaths
    /// The calibration in use (nil: uncalibrated), and as the status reports it.
    private let calibration: CalibrationProfile?
    private let calibrationStatus: DaemonStatus.Calibration
    /// Where finished tests go.
    private let records: HearingTestRecords
    /// The test running, or the last one (its status stays until the next).
    private var session: HearingTestSession?
    /// The number of the tone presented last (`AudioService.playTone`), whose start is awaited.
    private var presentedTone: Int?
    /// The microphone's octave bands (left and right input) while a test runs.
    private var noiseMeters: [OctaveBandMeter] = []
    /// Ties the test to the connection that started it (a lease): it stops when that closes.
    var hold: (_ connection: Int32) -> Void = { _ in }
    /// The reply to a request that changed the state: the daemon's, with its status.
    var reply: () -> ControlReply = { ControlReply(ok: true) }
    /// The status changed without a request (the test ended): systemd's line follows.
    var statusChanged: () -> Void = {}

    init(
        audio: AudioService, fitting: FittingService, dump: DumpService, paths: RibbitPaths, calibration: CalibrationProfile?,
        calibrationStatus: DaemonStatus.Calibration, log: Logger
    ) {
        self.audio = audio
        self.fitting = fitting
        self.dump = dump
        self.paths = paths
        self.calibration = calibration
        self.calibrationStatus = calibrationStatus
        self.log = log
        records = HearingTestRecords(path: PrescriptionStore.path(dataDirectory: paths.dataDirectory))
    }

    /// The audio thread began a tone (`AudioService.onToneStarted`): the presented one opens
    /// its response window there.
    func toneStarted(number: Int, atSeconds: Double) {
        guard let session, !session.isOver, number == presentedTone else { return }
        perform(session.toneStarted(at: atSeconds), now: Daemon.now())
    }

    /// Whether a test holds the output now.
    var isRunning: Bool { session.map { !$0.isOver } ?? false }

    /// The test running, or the last one, for `status`.
    func status(now: Double) -> HearingTestStatus? { session?.status(now: now) }

    /// Starts a test (the request's fields were checked when it was read).
    func start(_ request: HearingTestRequest, connection: Int32) throws(RequestFailure) -> ControlReply {
        let now = Daemon.now()
        if isRunning { throw RequestFailure("a hearing test is already running; stop it first") }
        guard audio.isConnected else {
            throw RequestFailure("no JACK session (\(audio.problem(now: now) ?? "not connected")); the test's tones play through JACK")
        }
        guard !fitting.state.paused else { throw RequestFailure("the output is paused; `ribbitd resume` first") }
        let transducer = request.transducer
        var table = RETSPLTable.standard(transducer)
        // Consumer headphones: a normal-hearing listener's thresholds as 0 dB HL, when one was stored.
        var reference: [Int: Double]?
        if transducer == .consumer {
            do { reference = try HearingReference.load(paths: paths) } catch { throw RequestFailure("\(error)") }
            if let reference { table = table.biologicallyCalibrated(referenceThresholdsDBHL: reference) }
        }
        let frequencies = request.frequenciesHz
        // The ASHA rule may add a half-octave between two octaves the plan has: its levels too,
        // where a consumer headphone's biological calibration covers it (else it plays off the
        // placeholder table, up to 10 dB away from its neighbours).
        let interOctaves = HearingTest.Plan.interOctaves.filter {
            frequencies.contains($0.below) && frequencies.contains($0.above) && (reference == nil || reference?[$0.hz] != nil)
        }.map(\.hz)
        let ceiling = fitting.state.filterChoice.ceilingDBFS(calibration: audio.calibration)
        let highest = min(ceiling - ControlProtocol.toneHeadroomDB, -ControlProtocol.toneHeadroomDB)
        let cal = calibrationStatus
        var levels: [Ear: ToneLevels] = [:]
        var maximum: [Ear: [Int: Int]] = [:]
        for ear in request.ears {
            let response = (ear == .left ? calibration?.responseLeft : calibration?.responseRight) ?? [:]
            let tone = ToneCalibration(dBSPLAtZeroDBFS: ear == .left ? cal.outputLeftDBSPL : cal.outputRightDBSPL, responseDB: response)
            let earLevels = ToneLevels(table: table, calibration: tone, highestPlayedDBFS: highest)
            levels[ear] = earLevels
            maximum[ear] = Dictionary(
                uniqueKeysWithValues: Set(frequencies + interOctaves).compactMap { hz in
                    earLevels.maximumDBHL(frequencyHz: hz).map { (hz, $0) }
                })
        }
        var plan = HearingTest.Plan(maximumDBHL: maximum)
        // Masking noise where both ears are tested: at most what each headphone plays under the limits.
        if request.ears.count == 2 {
            for (ear, earLevels) in levels {
                plan.maximumMaskingDBEM[ear] = Dictionary(
                    uniqueKeysWithValues: Set(frequencies + interOctaves).compactMap { hz in
                        earLevels.maximumMaskingDBEM(frequencyHz: hz, peakOverSineDB: NarrowBandNoise.peakOverSineDB).map { (hz, $0) }
                    })
            }
        }
        plan.interauralAttenuationDB = transducer.interauralAttenuationDB
        plan.ears = request.ears
        plan.frequenciesHz = frequencies
        plan.addsInterOctaves = true
        plan.answersNameTheEar = request.answersNameTheEar
        let session = HearingTestSession(
            plan: plan, levels: levels, transducer: transducer, ceilingDBHL: ToneLevels.selfTestCeilingDBHL,
            seed: request.seed ?? UInt64.random(in: 0...UInt64.max), now: now
        ) { [unowned self] hz, levelDBHL in judgeNoise(frequencyHz: hz, levelDBHL: levelDBHL, transducer: transducer) }
        guard session.test.progress.total > 0 else {
            throw RequestFailure("no frequency can be played with this calibration and ceiling; check `ribbitd status`")
        }
        session.biologicalReferenceDBHL = reference
        session.startsAreTold = true  // ribbit-audio tells each tone's real onset (`toneStarted`)
        self.session = session
        let rate = Double(audio.session?.sampleRate ?? 48000)
        noiseMeters = [OctaveBandMeter(sampleRate: rate), OctaveBandMeter(sampleRate: rate)]
        dump.inputTaps["noise"] = { [unowned self] channels in
            for (index, samples) in channels.enumerated() where index < noiseMeters.count { noiseMeters[index].append(samples) }
        }
        perform(session.startActions, now: now)
        hold(connection)
        log.info(
            "hearing test started: \(transducer.rawValue) headphones, \(request.ears.map(\.rawValue).joined(separator: " then ")) ear, \(session.test.progress.total) frequencies; the hearing aid is off meanwhile"
        )
        return reply()
    }

    func answer(ear: Ear?) throws(RequestFailure) -> ControlReply {
        guard let session, !session.isOver else {
            throw RequestFailure("no hearing test is running; `ribbitd hearing-test` starts one")
        }
        let now = Daemon.now()
        audio.receiveToneStarts(now: now)  // a start the audio process told meanwhile, before the press is judged
        perform(session.answer(ear: ear, now: now), now: now)
        return reply()
    }

    /// `hearing-test-stop`.
    func stopRequest() throws(RequestFailure) -> ControlReply {
        guard isRunning else { throw RequestFailure("no hearing test is running") }
        stopTest(why: "stopped before the end")
        return reply()
    }

    /// Ends a running test (the output paused, its connection closed ...): what was measured
    /// is stored, flagged incomplete, and the hearing aid plays again.
    func stopTest(why: String) {
        guard let session, !session.isOver else { return }
        let now = Daemon.now()
        perform(session.stop(why: why, now: now), now: now)
    }

    func tick(now: Double) {
        guard let session, !session.isOver else { return }
        guard audio.isConnected else {
            perform(session.stop(why: "JACK went away", now: now), now: now)
            return
        }
        perform(session.tick(now: now, toneStartDelay: audio.toneStartDelay(now: now)), now: now)
    }

    func stop(deadline: Double) { stopTest(why: "the daemon stopped") }

    /// Carries out what the test asks; at its end, the hearing aid again and the result stored.
    private func perform(_ actions: [HearingTestSession.Action], now: Double) {
        for action in actions {
            switch action {
            case .play(let hz, let dBFS, let ear, let pulses):
                presentedTone = audio.playTone(
                    frequencyHz: Double(hz), levelDBFS: dBFS, ear: ToneEar(ear), seconds: Double(pulses.pulseMs) / 1000,
                    pulses: (pulses.pulses, Double(pulses.gapMs) / 1000), hearingTest: true, now: now)
            case .mask(let hz, let dBFS, let ear, let seconds):
                audio.playMasker(frequencyHz: hz, levelDBFS: dBFS, ear: ear, seconds: seconds)
            case .holdSilence:
                presentedTone = nil
                audio.playTone(
                    frequencyHz: 1000, levelDBFS: nil, ear: .both, seconds: ControlProtocol.toneMaxSeconds, hearingTest: true, now: now)
            case .end:
                presentedTone = nil
                end(now: now)
            }
        }
    }

    private func end(now: Double) {
        guard let session else { return }
        if audio.isConnected {
            audio.playMasker(frequencyHz: 1000, levelDBFS: nil, ear: Ear.left, seconds: 0)
            audio.playTone(frequencyHz: 1000, levelDBFS: nil, ear: .both, seconds: 0, now: now)
        }
        dump.inputTaps["noise"] = nil
        noiseMeters = []
        let record = session.record(date: Date(), calibration: calibrationStatus)
        if record.result.frequencies.isEmpty {
            log.info("hearing test ended (\(session.problem ?? "finished")) before any frequency was measured; nothing stored")
        } else {
            do {
                session.recordID = try records.save(record)
                log.info(
                    "hearing test \(session.problem == nil ? "finished" : "ended: \(session.problem!)"); stored as \(session.recordID!)")
            } catch {
                session.problem = (session.problem.map { $0 + "; " } ?? "") + "the result could not be stored: \(error)"
                log.error("hearing test result not stored: \(error)")
            }
        }
        statusChanged()
    }

    /// The room against the headphones' maximum permissible ambient noise, each band the louder
    /// of the two inputs. Nil, "not checked", before a reading and while the microphone gives no
    /// signal at all: digital silence is a missing microphone, not a quiet room.
    private func judgeNoise(frequencyHz: Int, levelDBHL: Int, transducer: Transducer) -> HearingTestSession.NoiseReading? {
        let microphone = calibrationStatus.inputDBSPL
        var bands: [Int: Double] = [:]
        for meter in noiseMeters {
            for (band, level) in meter.levelsDBSPL(microphoneDBSPLAtZeroDBFS: microphone) where level.isFinite {
                bands[band] = max(bands[band] ?? level, level)
            }
        }
        guard !bands.isEmpty else { return nil }
        let verdict = AmbientNoiseCheck(transducer: transducer).verdict(
            bandLevelsDBSPL: bands, presentationDBHL: levelDBHL, testFrequencyHz: frequencyHz)
        return HearingTestSession.NoiseReading(
            tooLoud: verdict.tooLoud,
            status: HearingTestStatus.Noise(
                loudBandHz: verdict.tooLoud ? verdict.worstBandHz : nil, levelDBSPL: verdict.worstBandDBSPL,
                limitDBSPL: verdict.worstBandLimitDBSPL, testBandDBSPL: verdict.testBandDBSPL))
    }
}
