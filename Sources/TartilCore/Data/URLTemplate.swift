import Glibc

/// A mirror's URL template: an http(s) URL with `{surah3}{ayah3}` (everyayah naming, `036001`) or `{global}`
/// (1…6236, unpadded, as cdn.islamic.network names files) for a reciter of one file per ayah; `{surah3}` (`036`)
/// or `{surah}` (`36`, unpadded) and no ayah placeholder for a reciter of one file per surah (and for the URLs of
/// published timing files).
///
/// ```swift
/// try URLTemplate("https://everyayah.com/data/x/{surah3}{ayah3}.mp3").url(for: AyahRef(36, 1))   // …/036001.mp3
/// try URLTemplate("https://server8.mp3quran.net/afs/{surah3}.mp3", layout: .surah).url(forSurah: 36)   // …/036.mp3
/// ```
public struct URLTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The placeholders a template may use.
    public static let placeholders = ["{surah3}", "{surah}", "{ayah3}", "{global}"]

    public let text: String
    /// `text` cut at its placeholders, so that `url(for:)` is one pass of appends.
    private let parts: [Part]

    private enum Part: Sendable, Hashable {
        case literal(String)
        case surah3, surah, ayah3, global
    }

    /// Throws `TartilError` (`.invalidData`) naming the problem: scheme, unknown placeholder, or a naming that
    /// cannot tell the files of `layout` apart (ayat for `.ayah`, surahs for `.surah`; a surah file's template
    /// names no ayah).
    public init(_ text: String, layout: FileLayout = .ayah) throws(TartilError) {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw TartilError(.invalidData, "'\(text)' is not an http or https URL")
        }
        guard !text.contains(where: { $0 == " " || $0 == "\n" || $0 == "\t" }) else {
            throw TartilError(.invalidData, "'\(text)' contains white space")
        }
        if let byte = text.utf8.first(where: { $0 < 0x21 || $0 >= 0x7F }) {
            let what = byte >= 0x7F ? "a non-ASCII character (percent-encode it)" : "a control character (byte \(byte))"
            throw TartilError(.invalidData, "'\(text.controlCharactersShown)' contains \(what)")
        }
        try Self.checkAuthority(of: text)
        var parts: [Part] = []
        var rest = text[...]
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw TartilError(.invalidData, "'\(text)' has a '{' without a closing '}'")
            }
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            switch rest[open...close] {
            case "{surah3}": parts.append(.surah3)
            case "{surah}": parts.append(.surah)
            case "{ayah3}": parts.append(.ayah3)
            case "{global}": parts.append(.global)
            case let placeholder:
                let allowed = layout == .ayah
                    ? "{surah3}{ayah3} (everyayah naming) or {global}" : "{surah3} or {surah} (one file per surah)"
                throw TartilError(.invalidData, "'\(text)' uses \(placeholder); allowed are \(allowed)")
            }
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        let namesSurah = parts.contains(.surah3) || parts.contains(.surah)
        let namesAyah = parts.contains(.ayah3) || parts.contains(.global)
        switch layout {
        case .ayah:
            guard (namesSurah && parts.contains(.ayah3)) || parts.contains(.global) else {
                throw TartilError(
                    .invalidData,
                    "'\(text)' names no ayah: use {surah3}{ayah3} (everyayah naming) or {global} (1-6236)")
            }
        case .surah:
            guard !namesAyah else {
                let used = parts.contains(.ayah3) ? "{ayah3}" : "{global}"
                throw TartilError(
                    .invalidData,
                    "'\(text)' uses \(used), but the files are whole surahs (\"files\": \"surah\"): use {surah3} or {surah} alone")
            }
            guard namesSurah else {
                throw TartilError(.invalidData, "'\(text)' names no surah: use {surah3} (036) or {surah} (36)")
            }
        }
        self.text = text
        self.parts = parts
    }

    /// The host and port between `://` and the path: a host is required (a name, an IPv4 address or a bracketed
    /// IPv6 address), a port must be 1-65535, and credentials and placeholders do not belong there.
    private static func checkAuthority(of text: String) throws(TartilError) {
        guard let schemeEnd = text.firstRange(ofText: "://") else { return }
        let afterScheme = text[schemeEnd.upperBound...]
        let authority = afterScheme.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        func bad(_ problem: String) -> TartilError { TartilError(.invalidData, "'\(text)': \(problem)") }
        guard !authority.contains("@") else { throw bad("credentials in a mirror URL are not supported") }
        guard !authority.contains("{") && !authority.contains("}") else {
            throw bad("placeholders belong in the path, not in the host")
        }
        var host = authority
        var port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad("an IPv6 host needs its closing ']'") }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw bad("'\(rest)' after the IPv6 host is not a port") }
                port = rest.dropFirst()
            }
            guard host.count > 2, host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw bad("'\(host)' is not an IPv6 address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw bad("the host is missing") }
        if !host.hasPrefix("[") {
            guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" }),
                host.first != ".", host.first != "-"
            else { throw bad("'\(host)' is not a host name") }
        }
        if let port {
            guard NumberText.whole(port, in: 1...65535) != nil else { throw bad("the port '\(port)' is not a number from 1 to 65535") }
        }
    }

    /// The URL of one ayah's file.
    public func url(for ayah: AyahRef) -> String { expanded(surah: ayah.surah, ayah: ayah) }

    /// The URL of one surah's file (a template of a surah-file reciter, or of its timing files).
    public func url(forSurah surah: Int) -> String { expanded(surah: surah, ayah: nil) }

    /// `parts` with the surah's and, when given, the ayah's placeholders filled in (a surah template has no ayah
    /// placeholder: they are refused when it is made).
    private func expanded(surah: Int, ayah: AyahRef?) -> String {
        var url = ""
        url.reserveCapacity(text.utf8.count + 8)
        for part in parts {
            switch part {
            case .literal(let literal): url += literal
            case .surah3: url += AyahRef.pad3(surah)
            case .surah: url += String(surah)
            case .ayah3: if let ayah { url += AyahRef.pad3(ayah.ayah) }
            case .global: if let ayah { url += String(ayah.global) }
            }
        }
        return url
    }

    /// The scheme and host (`https://everyayah.com`), for messages about a mirror.
    public var origin: String {
        guard let schemeEnd = text.firstRange(ofText: "://") else { return text }
        let afterScheme = text[schemeEnd.upperBound...]
        let hostEnd = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        return String(text[..<hostEnd])
    }

    public var description: String { text }
}
