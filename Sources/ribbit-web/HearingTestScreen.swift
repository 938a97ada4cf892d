import Foundation
import Hummingbird
import RibbitAudiogramReport
import RibbitAudiometry
import RibbitControl
import RibbitPlot
import RibbitPrescription

/// The Hearing test screen: the daemon runs the test (`hearing-test-start`, `-answer`, `-stop`);
/// the page only forwards the listener's presses and draws `status.hearingTest`, polled from
/// /api/status. The status never says when a tone plays, and neither does the page.
enum HearingTestScreen {
    static let path = "/hearing-test"
    static let script = "/hearing-test.js"

    static var html: String {
        Assets.screen(path: path, script: script, file: main)
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>, daemon: DaemonBridge) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        let owner = TestOwner()
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.post("/api/hearing-test/start") { request, context in
            let body = try await WebApp.decode(StartBody.self, from: request, context: context)
            switch body.request() {
            case .success(let control):
                let (answer, lease) = await daemon.hold(control)
                if let lease { owner.hold(lease) }
                return WebApp.reply(answer)
            case .failure(let failure): return WebApp.plain(.badRequest, failure.message)
            }
        }
        // The page's poll while a test runs: it keeps the test's lease (`TestOwner`).
        router.get("/api/hearing-test/status") { _, _ in
            let answer = await owner.asking { await daemon.send(.status) }
            if case .success(let status) = answer, status.hearingTest.map({ $0.state == .finished || $0.state == .stopped }) ?? true {
                owner.release()
            }
            return WebApp.reply(answer)
        }
        router.post("/api/hearing-test/answer") { request, context in
            let body = try await WebApp.decode(AnswerBody.self, from: request, context: context)
            guard let ear = body.ear.map(Ear.init(rawValue:)) else {
                return await WebApp.reply(owner.asking { await daemon.send(.hearingTestAnswer(ear: nil)) })
            }
            guard let ear else { return WebApp.plain(.badRequest, "an answer's ear is \"left\" or \"right\"") }
            return await WebApp.reply(owner.asking { await daemon.send(.hearingTestAnswer(ear: ear)) })
        }
        router.post("/api/hearing-test/stop") { _, _ in
            let answer = await daemon.send(.hearingTestStop)
            owner.release()
            return WebApp.reply(answer)
        }
        // The audiogram so far, drawn by RibbitPlot as the Load and Details screens' is: the page
        // fetches it only when a frequency is added, so polling the status stays small.
        router.get("/api/hearing-test/audiogram") { _, _ in
            let answer = await daemon.send(.status)
            guard case .success(let status) = answer else { return WebApp.reply(answer) }
            return Assets.response(audiogram(status.hearingTest?.frequencies ?? []), type: "image/svg+xml; charset=utf-8")
        }
    }

    struct Failure: Error { var message: String }

    /// The test a page started runs on a daemon connection of ribbit-web's (a lease, so the
    /// test also ends if ribbit-web dies). The page asks for the status every 200 ms while the
    /// test runs (a hidden tab: every second); when it has not asked for `pageGoneSeconds`
    /// (closed, crashed, its machine asleep) the lease is closed, the daemon stops the test and
    /// the hearing aid plays again. Leaving the page normally stops the test at once (pagehide).
    /// The page asks again only once answered, so a request waiting on the daemon counts as the
    /// page being there: a busy daemon (turns of 1–2 s on a loaded machine) is not a gone page.
    final class TestOwner: @unchecked Sendable {
        static let pageGoneSeconds = 3.0
        private let lock = NSLock()
        private var lease: DaemonLease?
        private var lastSeen = 0.0
        private var waiting = 0
        private var watching = false

        func hold(_ lease: DaemonLease) {
            lock.lock()
            let previous = self.lease
            self.lease = lease
            lastSeen = MonotonicClock.seconds()
            let startWatch = !watching
            watching = true
            lock.unlock()
            previous?.close()
            if startWatch { Task.detached { await self.watch() } }
        }

        /// The page's request, passed on to the daemon: the page is there until the reply.
        func asking<Answer>(_ send: () async -> Answer) async -> Answer {
            lock.withLock {
                waiting += 1
                lastSeen = MonotonicClock.seconds()
            }
            let answer = await send()
            lock.withLock {
                waiting -= 1
                lastSeen = MonotonicClock.seconds()
            }
            return answer
        }

        func release() {
            lock.lock()
            let held = lease
            lease = nil
            lock.unlock()
            held?.close()
        }

        /// Closes the lease of a page that went quiet; ends when nothing is held.
        private func watch() async {
            while true {
                try? await Task.sleep(nanoseconds: 250_000_000)
                guard closeIfAbandoned() else { return }
            }
        }

        /// One look: closes an abandoned lease; false once nothing is held (the watch ends).
        private func closeIfAbandoned() -> Bool {
            lock.lock()
            let held = lease
            let abandoned = held != nil && waiting == 0 && MonotonicClock.seconds() - lastSeen > Self.pageGoneSeconds
            if held == nil || abandoned { watching = false }
            if abandoned { lease = nil }
            lock.unlock()
            if abandoned { held?.close() }
            return held != nil && !abandoned
        }
    }

    /// What the page's Start sends: the headphones and the better ear (tested first); the
    /// tests also pass the ears, frequencies and seed to keep a run short and repeatable.
    struct StartBody: Decodable {
        var transducer: String?
        /// "right", "left", or "unknown" (the right ear first).
        var betterEar: String?
        var ears: [String]?
        var frequenciesHz: [Int]?
        var seed: UInt64?

        func request() -> Result<ControlRequest, Failure> {
            let earNames: [String]?
            switch (ears, betterEar ?? "unknown") {
            case (let ears?, _): earNames = ears
            case (nil, "right"): earNames = ["right", "left"]
            case (nil, "left"): earNames = ["left", "right"]
            case (nil, "unknown"): earNames = nil
            case (nil, let other): return .failure(Failure(message: "betterEar '\(other)' is not right, left or unknown; nothing started"))
            }
            do throws(RequestError) {
                return .success(
                    .hearingTestStart(
                        try HearingTestRequest(transducerName: transducer, earNames: earNames, frequenciesHz: frequenciesHz, seed: seed)))
            } catch {
                return .failure(Failure(message: error.description + "; nothing started"))
            }
        }
    }

    struct AnswerBody: Decodable { var ear: String? }

    /// The thresholds measured so far as an audiogram (of the 1 kHz measurement and its retest,
    /// the better; an undetermined frequency has nothing to draw).
    static func audiogram(_ results: [FrequencyResult]) -> String {
        AudiogramSVG.chart(
            right: AudiogramReportHTML.points(results, ear: .right), left: AudiogramReportHTML.points(results, ear: .left),
            title: "Audiogram from this hearing test")
    }

    static let main = Web.text(PackageResources.hearing_test_html)

    static let javaScript = Web.text(PackageResources.hearing_test_js)

    static let css = Web.text(PackageResources.hearing_test_css)
}
