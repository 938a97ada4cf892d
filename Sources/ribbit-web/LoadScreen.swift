import Dispatch
import Foundation
import Hummingbird
import RibbitControl
import RibbitIntake
import RibbitSettings

/// The Load screen: a photo of a prescription's QR code or its .rx file, checked and shown
/// (POST /api/preview) before Load sends it to the daemon (POST /api/load) as `ribbitd load`
/// does. Nothing is kept between the two: the page sends the bytes again, so the server holds
/// no upload once it has answered.
enum LoadScreen {
    static let path = "/load"
    static let script = "/load.js"
    static let previewPath = "/api/preview"
    static let loadPath = "/api/load"
    static var html: String {
        Assets.screen(path: path, script: script, file: main)
    }

    static func addRoutes<Context: RequestContext>(
        to router: Router<Context>, daemon: DaemonBridge, intake: IntakeBridge
    ) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(PrescriptionView.javaScript + javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.post(RouterPath(stringLiteral: previewPath)) { request, context in
            let (bytes, file) = try await upload(request, context: context)
            switch await intake.preview(bytes, file: file) {
            case .success(let (accepted, input)):
                do {
                    let report = try PrescriptionReport(accepted)
                    return PrescriptionView(report, rx: accepted.prescription, trusted: accepted.isTrusted, file: file, kind: input.kind)
                        .response
                } catch {
                    return WebApp.plain(.unprocessableContent, "\(file): \(error); the prescription was not used")
                }
            case .failure(let refusal): return refusal.response
            }
        }
        router.post(RouterPath(stringLiteral: loadPath)) { request, context in
            let (bytes, file) = try await upload(request, context: context)
            var trial: TrialLength?
            if let given = request.uri.queryParameters["trial"] {
                let range = TrialLength.range
                let refusal = "trial=SECONDS takes \(range.lowerBound) to \(range.upperBound) (\(TrialLength.rangeText)); nothing changed"
                guard let seconds = Int(given) else { return WebApp.plain(.badRequest, refusal) }
                do { trial = try TrialLength(seconds: seconds) } catch { return WebApp.plain(.badRequest, refusal) }
            }
            switch await intake.preview(bytes, file: file) {
            case .success(let (accepted, _)):
                return await WebApp.reply(
                    daemon.send(.load(PrescriptionUpload(text: accepted.payload, source: "web upload: \(file)", trial: trial))))
            case .failure(let refusal): return refusal.response
            }
        }
    }

    /// The raw body and the file's name from `?name=` (its last path component, printable, at
    /// most 100 characters: it goes into messages and the history's source).
    static func upload(_ request: Request, context: some RequestContext) async throws -> (Data, String) {
        var request = request
        let buffer = try await request.collectBody(upTo: WebSecurity.uploadMaxBytes)
        let given = request.uri.queryParameters["name"].map(String.init) ?? ""
        let name = String(
            (given.split(separator: "/").last ?? "").filter { !$0.isNewline && $0.asciiValue.map { $0 >= 32 } ?? true }.prefix(100))
        guard buffer.readableBytes > 0 else {
            throw HTTPError(.badRequest, message: "the upload is empty: choose a photo of the QR code or the .rx file")
        }
        return (Data(buffer.readableBytesView), name.isEmpty ? "upload" : name)
    }

    static let main = Web.text(PackageResources.load_html)

    static let javaScript = Web.text(PackageResources.load_js)
}

/// Reads and checks uploads as `ribbitd load` does (RibbitIntake: the file or the QR code in a
/// picture, the text format, the signature against the trusted keys and the require-signed
/// policy, read afresh each time). The QR scan blocks for up to its time limit, so checks run
/// one at a time on a queue of their own, never on the server's threads.
final class IntakeBridge: Sendable {
    let paths: RibbitPaths
    private let queue = DispatchQueue(label: "ribbit-web.intake")

    init(paths: RibbitPaths) { self.paths = paths }

    /// The CLI's one line, as a 4xx (or a 503 for a config that cannot be read).
    struct Refusal: Error {
        var status: HTTPResponse.Status
        var message: String
        var response: Response { WebApp.plain(status, message) }
    }

    func preview(_ bytes: Data, file: String) async -> Result<(Intake.Accepted, PrescriptionInput), Refusal> {
        await withCheckedContinuation { continuation in
            queue.async { [paths] in
                let config: DaemonConfig
                do throws(ConfigError) { config = try DaemonConfig.load(paths: paths) } catch {
                    continuation.resume(returning: .failure(Refusal(status: .serviceUnavailable, message: error.description)))
                    return
                }
                let intake = Intake.load(paths: paths, config: config)
                do throws(IntakeError) {
                    let input = try PrescriptionInput.read(bytes, path: file)
                    continuation.resume(returning: .success((try intake.take(input), input)))
                } catch {
                    continuation.resume(
                        returning: .failure(
                            Refusal(
                                status: error.kind == .storage ? .serviceUnavailable : .unprocessableContent, message: error.description)))
                }
            }
        }
    }
}
