import Glibc

/// One place a reciter's files can be downloaded from.
public struct Mirror: Sendable, Hashable {
    /// A short label for messages (`everyayah`, `jsdelivr`).
    public let name: String
    public let template: URLTemplate

    public init(name: String, template: URLTemplate) {
        self.name = name
        self.template = template
    }
}

/// How a reciter's recording is cut into files (`"files"` in `mirrors.json`).
public enum FileLayout: String, Sendable, Hashable, CaseIterable, Codable {
    /// One file per ayah (`SSSAAA.mp3`, everyayah naming): the default.
    case ayah
    /// One file per surah (`SSS.mp3`), with a timing table saying where each ayah starts and ends in it.
    case surah
}

/// Where a surah-file reciter's published ayah timings are: one file per surah, in a known shape.
public struct TimingsSource: Sendable, Hashable {
    /// Over `{surah3}` or `{surah}`.
    public let template: URLTemplate
    public let format: SurahTimings.Format

    public init(template: URLTemplate, format: SurahTimings.Format) {
        self.template = template
        self.format = format
    }
}

/// A reciter as `mirrors.json` describes it. All mirrors of one reciter serve byte-identical files.
public struct Reciter: Sendable, Hashable, Identifiable {
    /// The recitation styles `mirrors.json` accepts.
    public static let styles = ["murattal", "mujawwad", "muallim"]

    public let id: ReciterID
    public let name: String
    /// `murattal`, `mujawwad` or `muallim`.
    public let style: String
    public let bitrateKbps: Int?
    /// The table's file name inside the tables directory (`<id>.tsv` unless `mirrors.json` names another).
    public let tableFile: String
    /// Where the entry came from, for people reading the file (free text).
    public let note: String?
    /// In order of preference.
    public let mirrors: [Mirror]
    /// The fastest this recitation may be played (`max_speed`: 1 to 2, in `PlaybackSpeed`'s steps), for a
    /// recitation whose publisher asks that it not be hurried; nil: up to `PlaybackSpeed.range`'s top.
    public let maximumSpeed: Double?
    /// One file per ayah (the default) or per surah (`"files": "surah"`).
    public let files: FileLayout
    /// Where a surah-file reciter's ayah timings are published (`"timings"`, `"timings_format"`); nil when they
    /// are not (its table then holds them), and always for a per-ayah reciter.
    public let timings: TimingsSource?

    public init(
        id: ReciterID, name: String, style: String, bitrateKbps: Int?, tableFile: String?, note: String?,
        mirrors: [Mirror], maximumSpeed: Double? = nil, files: FileLayout = .ayah, timings: TimingsSource? = nil
    ) {
        self.id = id
        self.name = name
        self.style = style
        self.bitrateKbps = bitrateKbps
        self.tableFile = tableFile ?? "\(id.rawValue).tsv"
        self.note = note
        self.mirrors = mirrors
        self.maximumSpeed = maximumSpeed
        self.files = files
        self.timings = timings
    }
}

/// The contents of `mirrors.json` (format version 1): which reciters exist and where their files are.
///
/// ```json
/// { "version": 1,
///   "reciters": [ { "id": "alafasy-128", "name": "Mishary Rashid Alafasy", "style": "murattal",
///                   "bitrate_kbps": 128,
///                   "mirrors": [ { "name": "everyayah",
///                                  "url": "https://everyayah.com/data/Alafasy_128kbps/{surah3}{ayah3}.mp3" } ] } ] }
/// ```
///
/// A reciter whose recording is one file per surah says so, with mirrors over `{surah3}` or `{surah}` and, when
/// its ayah timings are published, where and in which shape:
///
/// ```json
/// { "id": "x", "name": "X", "style": "murattal", "files": "surah",
///   "timings": "https://example.org/timings/x_{surah}.json", "timings_format": "quranstatic",
///   "mirrors": [ { "name": "gtaf", "url": "https://static.gtaf.org/v1/quran/audio-url/x/{surah3}.mp3" } ] }
/// ```
public struct MirrorList: Sendable {
    /// The only format version this build reads.
    public static let formatVersion = 1

    public let reciters: [Reciter]

    public init(reciters: [Reciter]) { self.reciters = reciters }

    /// The reciter with exactly `id` (ids found in files: the cache, the journal), or a usage error suggesting the
    /// closest ids that exist. What people type goes through `reciter(named:)`.
    public func reciter(_ id: ReciterID) throws(TartilError) -> Reciter {
        if let reciter = reciters.first(where: { $0.id == id }) { return reciter }
        let hint = Suggestion.hint(for: id.rawValue, among: reciters.map(\.id.rawValue))
        throw TartilError(.usage, "no reciter '\(id)' in mirrors.json\(hint) (`tartil reciters` lists them)")
    }

    /// The reciter a person means by `text`, forgivingly:
    /// 1. its id, in any case (`Alafasy-128`);
    /// 2. the start of exactly one id (`alafasy` when only `alafasy-128` starts so);
    /// 3. the words of exactly one reciter's id or name (`akhdar`, `ibrahim akhdar`, `Al-Akhdar`).
    /// When several match, a usage error lists them ("did you mean alafasy-128, alafasy-64?"); when none does,
    /// the ids within the allowed edit distance are suggested.
    public func reciter(named text: String) throws(TartilError) -> Reciter {
        let typed = text.trimmedWhitespace.lowercased()
        guard !typed.isEmpty else { throw .usage("the reciter is empty: `tartil reciters` lists them") }
        guard typed.utf8.count <= 64 else { throw .usage("no reciter is named like that (\(typed.utf8.count) bytes): `tartil reciters` lists them") }
        if let exact = reciters.first(where: { $0.id.rawValue == typed }) { return exact }
        func ambiguous(_ matches: [Reciter]) -> TartilError {
            .usage("'\(text)' could be \(matches.count) reciters; did you mean \(matches.map(\.id.rawValue).joined(separator: ", "))?")
        }
        let prefixed = reciters.filter { $0.id.rawValue.hasPrefix(typed) }
        if prefixed.count == 1 { return prefixed[0] }
        if let base = Self.base(of: prefixed) { return base }
        if prefixed.count > 1 { throw ambiguous(prefixed) }
        let wanted = Self.words(typed)
        let named = reciters.filter { reciter in
            let words = Set(Self.words(reciter.id.rawValue) + Self.words(reciter.name))
            return !wanted.isEmpty && wanted.allSatisfy(words.contains)
        }
        if named.count == 1 { return named[0] }
        if let base = Self.base(of: named) { return base }
        if named.count > 1 { throw ambiguous(named) }
        let hint = Suggestion.hint(for: typed, among: reciters.map(\.id.rawValue))
        throw TartilError(.usage, "no reciter '\(text)' in mirrors.json\(hint) (`tartil reciters` lists them)")
    }

    /// Of several reciters a name fits, the one the others are variants of: its id followed by `-` begins each
    /// of theirs (`emad-al-mansary` of `emad-al-mansary-gapless`), so `emad` keeps meaning the reciter it meant
    /// before a variant was listed; nil when there is no such one.
    static func base(of matches: [Reciter]) -> Reciter? {
        guard matches.count > 1 else { return nil }
        let bases = matches.filter { base in
            matches.allSatisfy { $0.id == base.id || $0.id.rawValue.hasPrefix(base.id.rawValue + "-") }
        }
        return bases.count == 1 ? bases[0] : nil
    }

    /// The lowercase words of an id or a name (`Ibrahim Al-Akhdar` → ibrahim, al, akhdar).
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    // MARK: - Parsing

    /// Parses and validates `mirrors.json` from the file's bytes. `file` names the source in errors, which also
    /// name the reciter and the field: `mirrors.json: reciter 'x' (#3): mirrors[0].url: 'ftp://…' is not an http
    /// or https URL`.
    public static func parse(bytes: [UInt8], file: String) throws(TartilError) -> MirrorList {
        let root: JSONNode
        do {
            root = try JSONNode.parse(bytes)
        } catch {
            throw TartilError(.invalidData, "\(file):\(error.line):\(error.column): not valid JSON: \(error.message)")
        }
        guard let object = root.object else {
            throw TartilError(.invalidData, "\(file): the top level must be an object with \"version\" and \"reciters\"")
        }
        try checkKeys(object, allowed: ["version", "reciters", "comment"], at: "\(file): top level")
        guard let version = object["version"]?.integer(in: 0...999_999) else {
            throw TartilError(.invalidData, "\(file): version: missing or not a whole number (this build reads version \(formatVersion))")
        }
        guard version == formatVersion else {
            throw TartilError(.invalidData, "\(file): version: \(version) is not supported (this build reads version \(formatVersion))")
        }
        guard let entries = object["reciters"]?.array else {
            throw TartilError(.invalidData, "\(file): reciters: missing or not an array")
        }
        var reciters: [Reciter] = []
        // Parsed up to the first reciter that does not parse; a repeated id before it is reported first, as it comes
        // first in the file.
        var failure: TartilError?
        for (index, entry) in entries.enumerated() {
            do throws(TartilError) { reciters.append(try parseReciter(entry, index: index, file: file)) } catch {
                failure = error
                break
            }
        }
        // A repeated id: the first reciter that repeats an earlier one's (ids in order, each compared with the next;
        // not a dictionary of ids, whose first use costs every start a conformance scan).
        let byID = reciters.indices.sorted { (reciters[$0].id.rawValue, $0) < (reciters[$1].id.rawValue, $1) }
        var repeated: (index: Int, earlier: Int)?
        var groupStart = 0
        for position in byID.indices.dropFirst() {
            if reciters[byID[position]].id != reciters[byID[groupStart]].id {
                groupStart = position
            } else if position == groupStart + 1, byID[position] < (repeated?.index ?? Int.max) {
                repeated = (byID[position], byID[groupStart])
            }
        }
        if let (index, earlier) = repeated {
            throw TartilError(
                .invalidData, "\(file): reciter '\(reciters[index].id)' (#\(index + 1)): id: duplicate of reciter #\(earlier + 1)")
        }
        if let failure { throw failure }
        return MirrorList(reciters: reciters)
    }

    private static func parseReciter(_ entry: JSONNode, index: Int, file: String) throws(TartilError) -> Reciter {
        guard let object = entry.object else {
            throw TartilError(.invalidData, "\(file): reciter #\(index + 1): must be an object")
        }
        let rawID = object["id"]?.string
        let place = "\(file): reciter '\(rawID ?? "?")' (#\(index + 1))"
        func fail(_ field: String, _ problem: String) -> TartilError {
            TartilError(.invalidData, "\(place): \(field): \(problem)")
        }
        try checkKeys(
            object, allowed: ["id", "name", "style", "bitrate_kbps", "table", "note", "max_speed", "files", "timings", "timings_format", "mirrors"],
            at: place)
        guard let rawID else { throw fail("id", "missing or not a string") }
        if let problem = ReciterID.problem(with: rawID) { throw fail("id", "'\(rawID)' is not valid: \(problem)") }
        let id = try ReciterID(rawID)
        guard let name = object["name"]?.string, !name.isEmpty else { throw fail("name", "missing or empty") }
        guard let style = object["style"]?.string else { throw fail("style", "missing or not a string") }
        guard Reciter.styles.contains(style) else {
            throw fail("style", "'\(style)' is not one of \(Reciter.styles.joined(separator: ", "))")
        }
        var bitrate: Int?
        if let value = object["bitrate_kbps"] {
            guard let number = value.integer(in: 8...320) else {
                throw fail("bitrate_kbps", "must be a whole number of kbit/s from 8 to 320\(Self.given(value))")
            }
            bitrate = number
        }
        var table: String?
        if let value = object["table"] {
            guard let name = value.string, name.hasSuffix(".tsv"), !name.contains("/"), name.count > 4 else {
                throw fail("table", "must be a file name ending in .tsv, without a directory")
            }
            table = name
        }
        var maximumSpeed: Double?
        if let value = object["max_speed"] {
            guard let number = value.number(in: 1...PlaybackSpeed.range.upperBound),
                let speed = try? PlaybackSpeed.checked(number, for: "max_speed")
            else {
                throw fail(
                    "max_speed",
                    "must be a number from 1 to \(NumberText.format(PlaybackSpeed.range.upperBound)) in steps of \(NumberText.format(PlaybackSpeed.step))\(Self.given(value))")
            }
            maximumSpeed = speed
        }
        var note: String?
        if let value = object["note"] {
            guard let text = value.string else { throw fail("note", "must be a string") }
            note = text
        }
        var files = FileLayout.ayah
        if let value = object["files"] {
            let allowed = FileLayout.allCases.map(\.rawValue).joined(separator: " or ")
            guard let text = value.string else { throw fail("files", "must be a string: \(allowed)") }
            guard let layout = FileLayout(rawValue: text) else {
                throw fail("files", "'\(text)' is not allowed (allowed: \(allowed); the default is ayah)")
            }
            files = layout
        }
        var timings: TimingsSource?
        if files == .ayah, let field = ["timings", "timings_format"].first(where: { object[$0] != nil }) {
            throw fail(field, "only a reciter of one file per surah (\"files\": \"surah\") has ayah timings")
        }
        switch (object["timings"], object["timings_format"]) {
        case (nil, nil): break
        case (nil, _?):
            throw fail("timings_format", "given without \"timings\" (the URL template of the timing files)")
        case (let value?, let format):
            guard let url = value.string else { throw fail("timings", "must be a string: a URL template over {surah3} or {surah}") }
            let template: URLTemplate
            do {
                template = try URLTemplate(url, layout: .surah)
            } catch {
                throw fail("timings", error.message)
            }
            let formats = SurahTimings.Format.allCases.map(\.rawValue).joined(separator: " or ")
            guard let format else { throw fail("timings_format", "missing: \"timings\" needs its shape, \(formats)") }
            guard let text = format.string, let shape = SurahTimings.Format(rawValue: text) else {
                throw fail("timings_format", "\(format.string.map { "'\($0)'" } ?? "this value") is not allowed (allowed: \(formats))")
            }
            timings = TimingsSource(template: template, format: shape)
        }
        guard let mirrorEntries = object["mirrors"]?.array else { throw fail("mirrors", "missing or not an array") }
        guard !mirrorEntries.isEmpty else { throw fail("mirrors", "needs at least one mirror") }
        var mirrors: [Mirror] = []
        for (mirrorIndex, mirrorEntry) in mirrorEntries.enumerated() {
            let field = "mirrors[\(mirrorIndex)]"
            guard let mirrorObject = mirrorEntry.object else {
                throw fail(field, "must be an object with \"name\" and \"url\"")
            }
            try checkKeys(mirrorObject, allowed: ["name", "url"], at: "\(place): \(field)")
            guard let mirrorName = mirrorObject["name"]?.string, !mirrorName.isEmpty else {
                throw fail("\(field).name", "missing or empty")
            }
            if let first = mirrors.firstIndex(where: { $0.name == mirrorName }) {
                // Messages, `cache choose --mirror` and the cache's marks name a mirror by its name.
                throw fail("\(field).name", "'\(mirrorName)' is already the name of mirrors[\(first)]: each mirror of a reciter needs a name of its own")
            }
            guard let url = mirrorObject["url"]?.string else { throw fail("\(field).url", "missing or not a string") }
            let template: URLTemplate
            do {
                template = try URLTemplate(url, layout: files)
            } catch {
                throw fail("\(field).url", error.message)
            }
            if mirrors.contains(where: { $0.template == template }) {
                throw fail("\(field).url", "'\(url)' is listed twice")
            }
            mirrors.append(Mirror(name: mirrorName, template: template))
        }
        return Reciter(
            id: id, name: name, style: style, bitrateKbps: bitrate, tableFile: table, note: note, mirrors: mirrors,
            maximumSpeed: maximumSpeed, files: files, timings: timings)
    }

    /// `, not 1e+308` for a number given where another was wanted (nothing for other kinds of value).
    static func given(_ value: JSONNode) -> String {
        guard case .number(let number) = value else { return "" }
        return ", not \(NumberText.format(number))"
    }

    private static func checkKeys(_ object: JSONNode.Object, allowed: [String], at place: String) throws(TartilError) {
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw TartilError(
                .invalidData,
                "\(place): unknown field '\(unknown)' (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
    }
}
