/// The bar `prefetch` draws: `[########----------------]`, the share of files settled, `inner` columns between
/// its brackets.
public enum ProgressBar {
    /// The narrowest bar drawn, and the widest, between the brackets.
    public static let minimumInner = 5
    public static let maximumInner = 24

    /// `done` of `total` (all of it when `total` is 0), `inner` columns between the brackets.
    public static func rendered(done: Int, total: Int, inner: Int) -> String {
        let inner = max(1, inner)
        let filled = total <= 0 ? inner : min(inner, max(0, inner * done / total))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: inner - filled) + "]"
    }

    /// The bar as a field of a `FieldLine`: from `minimumInner` to `maximumInner` columns between its brackets.
    public static func field(done: Int, total: Int, importance: Int) -> FieldLine.Field {
        .elastic(minimum: minimumInner + 2, maximum: maximumInner + 2, importance: importance) { width in
            rendered(done: done, total: total, inner: width - 2)
        }
    }
}
