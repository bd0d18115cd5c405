import FoundationEssentials
import Glibc

/// A mirror's URL template: an http(s) URL with `{surah3}{ayah3}` (everyayah naming, `036001`) or `{global}`
/// (1…6236, unpadded, as cdn.islamic.network names files).
public struct URLTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The placeholders a template may use.
    public static let placeholders = ["{surah3}", "{ayah3}", "{global}"]

    public let text: String
    /// `text` cut at its placeholders, so that `url(for:)` is one pass of appends.
    private let parts: [Part]

    private enum Part: Sendable, Hashable {
        case literal(String)
        case surah3, ayah3, global
    }

    /// Throws `TartilError` (`.invalidData`) naming the problem: scheme, unknown placeholder, or a naming that
    /// cannot tell ayat apart.
    public init(_ text: String) throws(TartilError) {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw TartilError(.invalidData, "'\(text)' is not an http or https URL")
        }
        guard !text.contains(where: { $0 == " " || $0 == "\n" || $0 == "\t" }) else {
            throw TartilError(.invalidData, "'\(text)' contains white space")
        }
        var parts: [Part] = []
        var rest = text[...]
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw TartilError(.invalidData, "'\(text)' has a '{' without a closing '}'")
            }
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            switch rest[open...close] {
            case "{surah3}": parts.append(.surah3)
            case "{ayah3}": parts.append(.ayah3)
            case "{global}": parts.append(.global)
            case let placeholder:
                throw TartilError(
                    .invalidData,
                    "'\(text)' uses \(placeholder); allowed are {surah3}{ayah3} (everyayah naming) or {global}")
            }
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        let hasEveryAyah = text.contains("{surah3}") && text.contains("{ayah3}")
        let hasGlobal = text.contains("{global}")
        guard hasEveryAyah || hasGlobal else {
            throw TartilError(
                .invalidData,
                "'\(text)' names no ayah: use {surah3}{ayah3} (everyayah naming) or {global} (1-6236)")
        }
        self.text = text
        self.parts = parts
    }

    /// The URL of one ayah's file.
    public func url(for ayah: AyahRef) -> String {
        var url = ""
        url.reserveCapacity(text.utf8.count + 8)
        for part in parts {
            switch part {
            case .literal(let literal): url += literal
            case .surah3: url += AyahRef.pad3(ayah.surah)
            case .ayah3: url += AyahRef.pad3(ayah.ayah)
            case .global: url += String(ayah.global)
            }
        }
        return url
    }

    /// The scheme and host (`https://everyayah.com`), for messages about a mirror.
    public var origin: String {
        guard let schemeEnd = text.firstRange(of: "://") else { return text }
        let afterScheme = text[schemeEnd.upperBound...]
        let hostEnd = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        return String(text[..<hostEnd])
    }

    public var description: String { text }
}
