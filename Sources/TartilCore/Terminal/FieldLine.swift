/// A line of fields for a given number of columns, such as the live line (`playing  36:12  3:20 / 21:45  [bar]
/// Ya-Sin`) or the prefetch bar: the fields are taken in order of importance, each only when it fits whole beside
/// those taken before it, and shown in their own order, two spaces apart. A field is never cut: one that does not
/// fit is left out, and a less important one after it may still fit. An elastic field (a bar) counts at its
/// least width, then takes the room left over, up to its greatest.
///
/// ```swift
/// let fields: [FieldLine.Field] = [
///     .text("playing", importance: 0), .text("112:2", importance: 1), .text("0:05 / 0:20", importance: 2),
///     .elastic(minimum: 10, importance: 3) { width in String(repeating: "=", count: width) },
///     .text("Al-Ikhlas", importance: 4),
/// ]
/// FieldLine.render(fields, room: 39)  // "playing  112:2  0:05 / 0:20  ==========": no room for the name
/// ```
public enum FieldLine {
    /// The two spaces between fields.
    public static let separator = "  "

    /// One field: fixed text, or an elastic one drawn for the width it gets.
    public struct Field: Sendable {
        public enum Content: Sendable {
            case text(String)
            /// Drawn by the closure for the width given (which it must fill exactly).
            case elastic(@Sendable (Int) -> String)
        }

        public let content: Content
        /// The least and the greatest columns it takes (the same for text).
        public let minimum: Int
        public let maximum: Int
        /// 0 is the most important; among equals, the earlier field comes first.
        public let importance: Int

        /// A field of text, as wide as the text.
        public static func text(_ text: String, importance: Int) -> Field {
            let columns = TerminalText.columns(text)
            return Field(content: .text(text), minimum: columns, maximum: columns, importance: importance)
        }

        /// A field from `minimum` to `maximum` columns wide, drawn by `render` for the width it gets.
        public static func elastic(
            minimum: Int, maximum: Int = .max, importance: Int, render: @escaping @Sendable (Int) -> String
        ) -> Field {
            Field(
                content: .elastic(render), minimum: max(1, minimum), maximum: max(1, minimum, maximum),
                importance: importance)
        }
    }

    /// The columns each field gets in `room` columns (`separator` columns between two fields), in the fields'
    /// order; nil for a field left out. Empty text is always left out.
    public static func widths(_ fields: [Field], room: Int, separator: Int = separator.count) -> [Int?] {
        let order = fields.indices.sorted { (fields[$0].importance, $0) < (fields[$1].importance, $1) }
        var widths = [Int?](repeating: nil, count: fields.count)
        var used = 0
        for index in order where fields[index].minimum > 0 {
            let needed = fields[index].minimum + (used == 0 ? 0 : separator)
            guard used + needed <= room else { continue }
            widths[index] = fields[index].minimum
            used += needed
        }
        var spare = room - used
        for index in order where spare > 0 {
            guard let width = widths[index] else { continue }
            let grown = min(spare, fields[index].maximum - width)
            widths[index] = width + grown
            spare -= grown
        }
        return widths
    }

    /// The fields that fit in `room` columns, drawn and joined by two spaces.
    public static func render(_ fields: [Field], room: Int) -> String {
        zip(fields, widths(fields, room: room)).compactMap { field, width -> String? in
            guard let width else { return nil }
            switch field.content {
            case .text(let text): return text
            case .elastic(let render): return render(width)
            }
        }.joined(separator: separator)
    }
}
