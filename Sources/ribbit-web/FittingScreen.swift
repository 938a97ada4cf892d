import Foundation
import Hummingbird
import RibbitControl
import RibbitPrescription
import RibbitStore

/// The Fitting screen, the audiologist's tool: an audiogram per ear and a rule give the target
/// gains (computed here by RibbitFitting, as `ribbitd rx show` does, never in the page); a trial
/// on the wearer through the daemon (`ribbitd load --trial`, `keep`, `revert`); and the signed
/// QR code (`ribbitd rx make --sign`), signed here with a key the browser only knows by name.
enum FittingScreen {
    static let path = "/fitting"
    static let script = "/fitting.js"

    static var html: String {
        Assets.screen(path: path, script: script, file: main)
    }

    static func addRoutes<Context: RequestContext>(
        to router: Router<Context>, daemon: DaemonBridge, history: HistoryBridge, keys: SigningKeys
    ) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.get("/api/fitting/keys") { _, _ in WebApp.json(HistoryEntry.json(keys.list())) }
        router.get("/api/fitting/start") { _, _ in await start(history) }
        router.post("/api/fitting/targets") { request, context in
            let form = try await WebApp.decode(FittingForm.self, from: request, context: context)
            do throws(FittingForm.Failure) {
                return WebApp.json(HistoryEntry.json(try FittingForm.targets(try form.prescription(named: false))))
            } catch {
                return failed(error, then: nil)
            }
        }
        router.post("/api/fitting/trial") { request, context in
            let form = try await WebApp.decode(FittingForm.self, from: request, context: context)
            let minutes = form.minutes ?? 15
            guard (1...120).contains(minutes) else { return WebApp.plain(.badRequest, "a trial lasts 1 to 120 minutes; nothing changed") }
            let rx: Prescription
            do throws(FittingForm.Failure) { rx = try form.prescription(named: true, date: today()) } catch {
                return failed(error, then: "nothing changed")
            }
            // Unsigned, as a trial from `ribbitd load --trial` of an unsigned file: the daemon's checks decide.
            return await WebApp.send(daemon) { () throws(RequestError) in
                .load(
                    PrescriptionUpload(text: rx.text, source: "the web app's Fitting screen", trial: try TrialLength(seconds: minutes * 60))
                )
            }
        }
        router.post("/api/fitting/qr") { request, context in
            let form = try await WebApp.decode(FittingForm.self, from: request, context: context)
            guard let key = form.key, !key.isEmpty else {
                return WebApp.plain(.badRequest, "choose a signing key; nothing made")
            }
            let rx: Prescription
            do throws(FittingForm.Failure) { rx = try form.prescription(named: true, date: today()) } catch {
                return failed(error, then: "nothing made")
            }
            switch await keys.make(rx, keyName: key, passphrase: form.passphrase) {
            case .success(let made): return WebApp.json(HistoryEntry.json(made))
            case .failure(let failure): return failed(failure, then: nil)
            }
        }
    }

    static func failed(_ failure: FittingForm.Failure, then: String?) -> Response {
        WebApp.plain(HTTPResponse.Status(code: failure.status), failure.message + (then.map { "; " + $0 } ?? ""))
    }

    /// The prescription's date, as `rx make --date` takes it: today here.
    static func today() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date())
    }

    /// The form filled from the active prescription (a fitting usually adjusts what the wearer
    /// has); 404 when there is none.
    static func start(_ history: HistoryBridge) async -> Response {
        guard case .success(let entries) = await history.list(), let active = entries.first(where: \.active),
            case .success(let (_, bytes)) = await history.export(id: active.id, as: .rx),
            let rx = try? Prescription.parse(Array(bytes))
        else { return WebApp.plain(.notFound, "no active prescription to start from") }
        struct Start: Encodable {
            var rule: String
            var name, env: String
            var audiologist, patient: String?
            var left, right: [String: Int]?
        }
        func ear(_ ear: Ear) -> [String: Int]? {
            rx.thresholds[ear].map {
                Dictionary(uniqueKeysWithValues: $0.filter { FittingForm.frequencies.contains($0.key) }.map { (String($0.key), $0.value) })
            }
        }
        let rule = FittingForm.rules.contains(rx.rule) ? rx.rule : .camfit
        return WebApp.json(
            HistoryEntry.json(
                Start(
                    rule: rule.rawValue, name: rx.name, env: rx.environment, audiologist: rx.audiologist, patient: rx.patient,
                    left: ear(.left),
                    right: ear(.right))))
    }

    /// The form (fitting.html) has an input per ear at each of `FittingForm.frequencies` and an
    /// option per rule of `FittingForm.rules`; WebFittingTests holds the page to both.
    static let main = Web.text(PackageResources.fitting_html)

    static let javaScript = Web.text(PackageResources.fitting_js)

    static let css = Web.text(PackageResources.fitting_css)
}
