/// The rules every screen shares: large type, high contrast (light and dark), big targets, a
/// focus ring that shows on any background.
enum StyleSheet {
    static let shared = Web.text(PackageResources.shared_css)

    /// Dark mode's colours: last, so it overrides every screen's rules.
    static let dark = Web.text(PackageResources.dark_css)
}
