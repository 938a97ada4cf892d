import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import RibbitAudiogramReport
import RibbitAudiometry
import RibbitControl
import RibbitStore

/// A stored hearing test for the person and their doctor, as `ribbitd audiogram list`, `report`,
/// `fhir` and `fit --trial` give it: the printable report, the FHIR bundle, a 15-minute trial of
/// the fitting proposed from it, and the list of earlier tests to get back to one.
enum HearingTestResultsRoutes {
    static let trialSeconds = 15 * 60

    static func addRoutes<Context: RequestContext>(to router: Router<Context>, daemon: DaemonBridge, tests: HearingTestBridge) {
        router.get("/api/hearing-test/list") { _, _ in
            switch await tests.run({ try $0.all() }) {
            case .success(let records): return WebApp.json(HistoryEntry.json(records.prefix(50).map(ListEntry.init)))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        router.get("/hearing-test/report/:id") { _, context in
            switch await find(context, tests) {
            case .success(let record): return report(AudiogramReportHTML.render(record))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        router.get("/api/hearing-test/fhir/:id") { _, context in
            switch await find(context, tests) {
            case .success(let record):
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                guard let data = try? encoder.encode(FHIRAudiogram.bundle(record, patientName: nil)) else {
                    return WebApp.plain(.internalServerError, "internal error: cannot encode the FHIR bundle")
                }
                var headers = HTTPFields()
                headers[.contentType] = "application/fhir+json"
                headers[.contentDisposition] = "attachment; filename=\"ribbit-hearing-test-\(record.id ?? 0).json\""
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data + Data("\n".utf8))))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        // `ribbitd audiogram fit ID --trial 15m`: camfit (above the maximum gain a band plays at it), unsigned; the daemon's checks decide.
        router.post("/api/hearing-test/fit") { request, context in
            let body = try await WebApp.decode(PrescriptionsScreen.HistoryIDBody.self, from: request, context: context)
            let found = await tests.run { store in try store.find(id: body.id) }
            let record: HearingTestRecord
            switch found {
            case .success(let value): record = value
            case .failure(let failure): return WebApp.plain(failure)
            }
            let fitting: ProposedFitting
            do throws(FittingRefusal) { fitting = try record.proposedFitting(rule: .camfit) } catch {
                // The CLI's way round a refusal is not the web app's: take the test again.
                let message = error.description.replacingOccurrences(of: ", or --force to fit it anyway", with: "")
                return WebApp.plain(.conflict, message + "; nothing changed")
            }
            return await WebApp.send(daemon) { () throws(RequestError) in
                .load(
                    PrescriptionUpload(
                        text: fitting.prescription.text, source: "hearing test \(body.id)", trial: try TrialLength(seconds: trialSeconds)))
            }
        }
    }

    /// One row of /api/hearing-test/list (newest first): the date in UTC, the page shows it local.
    struct ListEntry: Encodable {
        var id: Int64
        var date: String
        var transducer: String
        var flags: [String]
        var unreliable: Bool
        /// Thresholds the other ear may have heard: a fitting is refused (`HearingTestFindings`).
        var crossHeard: Bool
        var seeADoctor: Bool

        init(_ record: HearingTestRecord) {
            id = record.id ?? 0
            date = record.date
            transducer = record.transducer.rawValue
            flags = record.result.flags.map(\.rawValue)
            unreliable = record.result.isUnreliable
            let findings = record.findings
            crossHeard = !findings.crossHeard.isEmpty
            seeADoctor = findings.seeADoctor
        }
    }

    static func find<Context: RequestContext>(_ context: Context, _ tests: HearingTestBridge) async -> Result<
        HearingTestRecord, HistoryBridge.Failure
    > {
        guard let id = context.parameters.get("id").flatMap({ Int64($0) }), id > 0 else {
            return .failure(.notFound("ask for a hearing test by its number (from /api/hearing-test/list)"))
        }
        return await tests.run { store in try store.find(id: id) }
    }

    /// The report is the CLI's self-contained page: its own <style> and one style attribute. The
    /// app's CSP allows no inline style, so this page alone gets one that allows exactly those
    /// (by hash) and nothing else: no script, no other origin.
    static func report(_ html: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[HTTPField.Name("Content-Security-Policy")!] = reportPolicy(html)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func reportPolicy(_ html: String) -> String {
        func hash(_ text: String) -> String { "'sha256-" + Data(BoringSSL.sha256(Array(text.utf8))).base64EncodedString() + "'" }
        var blocks: [String] = []
        var rest = html[...]
        while let open = rest.range(of: "<style>"), let close = rest.range(of: "</style>", range: open.upperBound..<rest.endIndex) {
            blocks.append(hash(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        var attributes: Set<String> = []
        rest = html[...]
        while let open = rest.range(of: " style=\""), let close = rest.range(of: "\"", range: open.upperBound..<rest.endIndex) {
            attributes.insert(hash(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        let style = (blocks + (attributes.isEmpty ? [] : ["'unsafe-hashes'"] + attributes.sorted())).joined(separator: " ")
        return "default-src 'none'; style-src \(style); img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }
}

/// The hearing tests in the history's SQLite file, read as `ribbitd audiogram` reads them (no lock,
/// so it works while the daemon runs), on a serial queue of its own: SQLite blocks.
final class HearingTestBridge: Sendable {
    let storePath: String
    private let queue = DispatchQueue(label: "ribbit-web.hearing-tests")

    init(storePath: String) { self.storePath = storePath }

    func run<T: Sendable>(_ body: @escaping @Sendable (HearingTestStore) throws -> T) async -> Result<T, HistoryBridge.Failure> {
        await withCheckedContinuation { continuation in
            queue.async { [storePath] in
                let store: HearingTestStore
                do { store = try HearingTestStore(path: storePath) } catch {
                    continuation.resume(returning: .failure(.unavailable("cannot read the hearing tests in \(storePath) (\(error))")))
                    return
                }
                do { continuation.resume(returning: .success(try body(store))) } catch {
                    // HearingTestStore.find's one line: "no hearing test N is stored ..." or the record is damaged.
                    let message = "\(error)"
                    continuation.resume(returning: .failure(message.hasPrefix("no hearing test") ? .notFound(message) : .refused(message)))
                }
            }
        }
    }
}
