import Hummingbird

/// The Clinic screen: the way to the screens the wearer does not need (Fitting, Live, Voice
/// games), so that the wearer's navigation holds only theirs. Static: no script, no API.
enum ClinicScreen {
    static let path = "/clinic"
    /// The screens it leads to, which the navigation marks as Clinic's.
    static let screens = [FittingScreen.path, LiveScreen.path, VoiceScreen.path]

    static var html: String {
        Assets.screen(path: path, script: nil, file: main)
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
    }

    static let main = Web.text(PackageResources.clinic_html)
}
