/// ribbit's version, for `--version`, `status` and the package.
public enum RibbitVersion {
    public static let current = "0.1.0"
}
