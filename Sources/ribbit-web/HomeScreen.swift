import Foundation
import Hummingbird
import RibbitControl

/// The Home screen: the active prescription, play/pause, bypass, volume, program and the
/// system's state, polled from /api/status; and the control requests its buttons send.
enum HomeScreen {
    static let path = "/"
    static let script = "/app.js"

    static var html: String {
        Assets.screen(path: path, script: script, file: main)
    }

    /// Each a control request, answered with the daemon's new status.
    static func addRoutes<Context: RequestContext>(to router: Router<Context>, daemon: DaemonBridge) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }

        router.get("/api/status") { _, _ in await WebApp.reply(daemon.send(.status)) }
        router.post("/api/pause") { _, _ in await WebApp.reply(daemon.send(.pause(lease: nil))) }
        router.post("/api/resume") { _, _ in await WebApp.reply(daemon.send(.resume)) }
        // A trial: keep it, or go back now (what `ribbitd keep` and `ribbitd revert` do).
        router.post("/api/keep") { _, _ in await WebApp.reply(daemon.send(.keep)) }
        router.post("/api/revert") { _, _ in await WebApp.reply(daemon.send(.revert)) }
        router.post("/api/bypass") { request, context in
            let body = try await WebApp.decode(BypassBody.self, from: request, context: context)
            return await WebApp.reply(daemon.send(.bypass(on: body.on)))
        }
        router.post("/api/volume") { request, context in
            let body = try await WebApp.decode(VolumeBody.self, from: request, context: context)
            return await WebApp.send(daemon) { () throws(RequestError) in
                .volume(try VolumeChange(levelDB: body.volumeDB, stepDB: body.stepDB))
            }
        }
        router.post("/api/program") { request, context in
            let body = try await WebApp.decode(ProgramBody.self, from: request, context: context)
            return await WebApp.send(daemon) { () throws(RequestError) in .program(try ProgramChoice(body.program)) }
        }
    }

    struct BypassBody: Decodable { var on: Bool }
    struct VolumeBody: Decodable {
        var volumeDB: Double?
        var stepDB: Double?
    }
    struct ProgramBody: Decodable { var program: String }

    static let main = Web.text(PackageResources.home_html)

    static let javaScript = Web.text(PackageResources.home_js)
}
