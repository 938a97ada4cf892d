import Foundation
import Hummingbird
import RibbitControl
import RibbitPlot
import RibbitStore
import RibbitVoice

/// The Voice games screen, for the therapist: pick or add a child, set the child's ranges and
/// durations, start one of the five games (VoicePlay.swift runs them), see the child's progress
/// and download it as CSV. Everything stays in voice.sqlite on this machine.
enum VoiceScreen {
    static let path = "/voice"
    static let script = "/voice.js"

    static var html: String {
        Assets.screen(path: path, script: script, file: main)
    }

    /// One settings field as the form shows it: VoiceSettings' key, its label and unit
    /// ("level": on the stream's scale, named from the daemon's calibration), and the input's step.
    struct Field: Encodable {
        var key: String
        var label: String
        var unit: String
        var step: Double
    }

    static let fields: [Field] = [
        Field(key: "quietDB", label: "Quiet under", unit: "level", step: 1),
        Field(key: "targetLowDB", label: "Target range from", unit: "level", step: 1),
        Field(key: "targetHighDB", label: "Target range to", unit: "level", step: 1),
        Field(key: "tooLoudDB", label: "Too loud from", unit: "level", step: 1),
        Field(key: "shortestSeconds", label: "Shortest sound", unit: "s", step: 0.05),
        Field(key: "syllableMaxSeconds", label: "Longest syllable", unit: "s", step: 0.05),
        Field(key: "cloudSeconds", label: "Voice per cloud", unit: "s", step: 0.05),
        Field(key: "longestSeconds", label: "Longest sound", unit: "s", step: 0.5),
        Field(key: "clouds", label: "Clouds to lift", unit: "", step: 1),
        Field(key: "dogJumps", label: "Dog's jumps to the bone", unit: "", step: 1),
        Field(key: "flightSeconds", label: "Airplane's flight", unit: "s", step: 0.5),
        Field(key: "balloonHoldSeconds", label: "Balloon's hold", unit: "s", step: 0.5),
        Field(key: "pitchLowHz", label: "Pitch band from", unit: "Hz", step: 5),
        Field(key: "pitchHighHz", label: "Pitch band to", unit: "Hz", step: 5),
        Field(key: "pitchHoldSeconds", label: "Pitch hold", unit: "s", step: 0.5),
    ]

    /// GET /api/voice/children: the children and the level scale the settings are on.
    struct Children: Encodable {
        /// "dB SPL" or "dBFS (no calibration)"; nil when the daemon does not answer.
        var scale: String?
        var calibrated: Bool?
        /// A new child's settings on this scale.
        var standard: VoiceSettings?
        var fields: [Field]
        var games: [String]
        var children: [VoiceChild]
    }

    struct ChildBody: Decodable {
        var nickname: String
        var ageYears: Int?
        /// nil: the standard settings for the daemon's scale (adding), or unchanged (updating).
        var settings: VoiceSettings?
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>, daemon: DaemonBridge, voice: VoiceBridge) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }

        router.get("/api/voice/children") { _, _ in
            let calibrated = await self.calibrated(daemon)
            switch await voice.run({ try $0.children() }) {
            case .success(let children):
                return encoded(
                    Children(
                        scale: calibrated.map { $0 ? "dB SPL" : "dBFS (no calibration)" }, calibrated: calibrated,
                        standard: calibrated.map { VoiceSettings.standard(calibrated: $0) }, fields: fields,
                        games: VoiceGameKind.allCases.map(\.rawValue), children: children))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        router.post("/api/voice/children") { request, context in
            let body = try await WebApp.decode(ChildBody.self, from: request, context: context)
            var settings = body.settings
            if settings == nil {
                guard let calibrated = await self.calibrated(daemon) else {
                    return WebApp.plain(
                        .serviceUnavailable, "the daemon does not answer, so the level scale is unknown: start it, then add the child")
                }
                settings = VoiceSettings.standard(calibrated: calibrated)
            }
            if let problem = settings!.problems.first { return WebApp.plain(.badRequest, "settings not saved: \(problem)") }
            let chosen = settings!
            return reply(await voice.run { try $0.addChild(nickname: body.nickname, ageYears: body.ageYears, settings: chosen) })
        }
        router.post("/api/voice/children/:id") { request, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            let body = try await WebApp.decode(ChildBody.self, from: request, context: context)
            if let problem = body.settings?.problems.first { return WebApp.plain(.badRequest, "settings not saved: \(problem)") }
            return reply(
                await voice.run { store in
                    var child = try store.child(id: id)
                    child.nickname = body.nickname
                    child.ageYears = body.ageYears
                    if let settings = body.settings { child.settings = settings }
                    try store.updateChild(child)
                    return try store.child(id: id)
                })
        }
        router.post("/api/voice/children/:id/archive") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            return reply(
                await voice.run {
                    try $0.archiveChild(id: id); return ["archived": id]
                })
        }
        router.get("/api/voice/children/:id/sessions") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            return reply(
                await voice.run { store in
                    _ = try store.child(id: id); return try store.sessions(childID: id)
                })
        }
        addProgressRoutes(to: router, voice: voice)
        router.get("/api/voice/children/:id/events") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            return reply(
                await voice.run { store in
                    _ = try store.child(id: id); return try store.events(childID: id)
                })
        }
    }

    /// The progress chart and the two CSV files, dates in this machine's time zone.
    static func addProgressRoutes<Context: RequestContext>(to router: Router<Context>, voice: VoiceBridge) {
        let offset = TimeZone.current.secondsFromGMT()
        router.get("/api/voice/children/:id/progress.svg") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            switch await voice.run({ store in (try store.child(id: id), try store.progress(childID: id, utcOffsetSeconds: offset)) }) {
            case .success(let (child, weeks)):
                guard !weeks.isEmpty else {
                    return WebApp.plain(.notFound, "\(child.nickname) has no sessions yet: the chart starts with the first")
                }
                return Assets.response(VoiceProgressChart.svg(weeks: weeks, childName: child.nickname), type: "image/svg+xml")
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        for file in ["events", "sessions"] {
            router.get(RouterPath(stringLiteral: "/api/voice/children/:id/\(file).csv")) { _, context in
                guard let id = childID(context) else {
                    return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
                }
                switch await voice.run({ store in
                    _ = try store.child(id: id); return try store.csv(childID: id, utcOffsetSeconds: offset)
                }) {
                case .success(let csv):
                    var headers = HTTPFields()
                    headers[.contentType] = "text/csv; charset=utf-8"
                    headers[.contentDisposition] = "attachment; filename=\"ribbit-voice-\(id)-\(file).csv\""
                    let text = file == "events" ? csv.events : csv.sessions
                    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
                case .failure(let failure): return WebApp.plain(failure)
                }
            }
        }
    }

    static func childID(_ context: some RequestContext) -> Int64? {
        context.parameters.get("id").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether the voice stream's levels are dB SPL: only with a calibration profile (the
    /// documented defaults measured nothing, so the stream stays in dBFS); nil without a daemon.
    static func calibrated(_ daemon: DaemonBridge) async -> Bool? {
        guard case .success(let status) = await daemon.send(.status) else { return nil }
        return status.calibration?.profile != nil
    }

    static func encoded<T: Encodable>(_ value: T) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else {
            return WebApp.plain(.internalServerError, "internal error: cannot encode the answer")
        }
        return WebApp.json(data)
    }

    static func reply<T: Encodable>(_ result: Result<T, HistoryBridge.Failure>) -> Response {
        switch result {
        case .success(let value): return encoded(value)
        case .failure(let failure): return WebApp.plain(failure)
        }
    }

    static let main = Web.text(PackageResources.voice_html)

    static let css = Web.text(PackageResources.voice_css)

    static let javaScript = Web.text(PackageResources.voice_js)
}
