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
        Assets.screen(
            path: path, title: "ribbit: load a prescription", script: script, connecting: "Choose a prescription", main: main)
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
            var trial: Int?
            if let given = request.uri.queryParameters["trial"] {
                guard let seconds = Int(given), ControlProtocol.trialSeconds.contains(seconds) else {
                    let range = ControlProtocol.trialSeconds
                    return WebApp.plain(.badRequest, "trial=SECONDS takes \(range.lowerBound) to \(range.upperBound); nothing changed")
                }
                trial = seconds
            }
            switch await intake.preview(bytes, file: file) {
            case .success(let (accepted, _)):
                return await WebApp.reply(
                    daemon.send(
                        ControlRequest(command: .load, prescription: accepted.payload, source: "web upload: \(file)", trialSeconds: trial)))
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

    static let main = #"""
        <main class="rx-screen">
          <h2 class="screen-title">Load a prescription</h2>
          <label class="file-label" for="file">A photo or screenshot of its QR code, or the .rx file</label>
          <input type="file" id="file" accept="image/*,.rx,text/plain" aria-describedby="file-hint">
          <p class="hint" id="file-hint">On a phone this can take the photo with the camera: hold the code straight, filling a good part
          of the picture. The prescription is checked and shown here first; nothing changes until you press Load.</p>
          <section id="preview" aria-labelledby="preview-title" hidden>
            <h2 id="preview-title" class="screen-title" tabindex="-1">Check it, then load it</h2>
            <div id="rx-view" class="rx-view"></div>
            <div class="actions">
              <button type="button" id="load" class="use">Load</button>
              <button type="button" id="trial">Load as a trial for 15 min</button>
              <button type="button" id="cancel">Cancel</button>
            </div>
          </section>
        </main>

        """#

    static let javaScript = #"""
        "use strict";
        // The Load screen: the chosen file goes to /api/preview as it is; Load sends it again to
        // /api/load (the server keeps nothing between the two), with ?trial=900 for a trial.
        let chosen = null;
        let busy = false;

        function upload(path, file, extra) {
          return session.api(path + "?name=" + encodeURIComponent(file.name) + (extra || ""), {
            method: "POST",
            headers: { "Content-Type": "application/octet-stream" },
            body: file,
          });
        }

        function setStatus(text, down) {
          $("connection").textContent = text;
          $("connection").classList.toggle("down", !!down);
        }

        async function preview(file) {
          chosen = null;
          $("preview").hidden = true;
          showMessage("");
          if (!file) return;
          setStatus("Checking " + file.name + "…");
          try {
            const response = await upload("/api/preview", file);
            if (!response.ok) {
              setStatus("Not loaded", true);
              showMessage((await response.text()).trim());
              return;
            }
            const data = await response.json();
            chosen = file;
            showPrescription($("rx-view"), data);
            $("preview").hidden = false;
            setStatus("Checked: " + data.prescription.name);
            // Focus moves to what came, so a screen reader reads on from there; it starts the screen.
            $("preview-title").focus({ preventScroll: true });
            $("preview-title").scrollIntoView({ block: "start" });
          } catch (error) {
            showMessage(unreachable);
          }
        }

        async function load(trial) {
          if (busy || !chosen) return;
          busy = true;
          try {
            const response = await upload("/api/load", chosen, trial ? "&trial=900" : "");
            if (!response.ok) {
              showMessage((await response.text()).trim());
              return;
            }
            const status = await response.json();
            const name = status.prescription ? status.prescription.name : chosen.name;
            showMessage("");
            setStatus("Now using " + name + (trial ? " for 15 min: Home shows the trial" : ""));
            $("preview").hidden = true;
            $("file").value = "";
            chosen = null;
          } catch (error) {
            showMessage(unreachable);
          } finally {
            busy = false;
          }
        }

        $("file").addEventListener("change", () => preview($("file").files[0]));
        $("load").addEventListener("click", () => load(false));
        $("trial").addEventListener("click", () => load(true));
        $("cancel").addEventListener("click", () => { $("file").value = ""; preview(null); setStatus("Choose a prescription"); $("file").focus(); });

        """#
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
