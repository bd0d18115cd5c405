import Foundation
import TestSupport
import Testing

@testable import TartilCore

@Suite struct MirrorListTests {
    func parse(_ json: String) throws(TartilError) -> MirrorList {
        try MirrorList.parse(Data(json.utf8), file: "m.json")
    }

    /// A reciter entry with one field replaced (or removed with nil).
    func document(_ changes: [String: String?] = [:], extraReciter: String? = nil) -> String {
        var fields: [(String, String?)] = [
            ("id", #""alafasy-128""#), ("name", #""Mishary Alafasy""#), ("style", #""murattal""#),
            ("bitrate_kbps", "128"),
            ("mirrors", #"[{"name": "everyayah", "url": "https://everyayah.com/data/Alafasy_128kbps/{surah3}{ayah3}.mp3"}]"#),
        ]
        for (key, value) in changes {
            if let index = fields.firstIndex(where: { $0.0 == key }) { fields[index].1 = value } else { fields.append((key, value)) }
        }
        let body = fields.compactMap { key, value in value.map { "\"\(key)\": \($0)" } }.joined(separator: ", ")
        let reciters = ["{\(body)}"] + (extraReciter.map { [$0] } ?? [])
        return #"{"version": 1, "reciters": ["# + reciters.joined(separator: ", ") + "]}"
    }

    @Test func parsesAValidFile() throws {
        let list = try parse(document(["table": #""alafasy.tsv""#, "note": #""from everyayah""#]))
        let reciter = try list.reciter(try ReciterID("alafasy-128"))
        #expect(reciter.name == "Mishary Alafasy")
        #expect(reciter.bitrateKbps == 128)
        #expect(reciter.tableFile == "alafasy.tsv")
        #expect(reciter.mirrors[0].template.url(for: try AyahRef(36, 1))
            == "https://everyayah.com/data/Alafasy_128kbps/036001.mp3")
    }

    @Test func tableDefaultsToTheID() throws {
        #expect(try parse(document()).reciters[0].tableFile == "alafasy-128.tsv")
    }

    @Test func maxSpeedIsOptionalAndOnTheSpeedGrid() throws {
        #expect(try parse(document()).reciters[0].maximumSpeed == nil)
        #expect(try parse(document(["max_speed": "1.25"])).reciters[0].maximumSpeed == 1.25)
        #expect(try parse(document(["max_speed": "1"])).reciters[0].maximumSpeed == 1)
        #expect(try parse(document(["max_speed": "2"])).reciters[0].maximumSpeed == 2)
    }

    @Test(arguments: [
        (#"{"reciters": []}"#, "m.json: version: missing or not a whole number (this build reads version 1)"),
        (#"{"version": 2, "reciters": []}"#, "m.json: version: 2 is not supported (this build reads version 1)"),
        (#"{"version": true, "reciters": []}"#, "m.json: version: missing or not a whole number (this build reads version 1)"),
        (#"{"version": 1e308, "reciters": []}"#, "m.json: version: missing or not a whole number (this build reads version 1)"),
        (#"{"version": 1e999, "reciters": []}"#, "m.json:1:13: not valid JSON: number '1e999' is out of range"),
        (#"{"version": 1}"#, "m.json: reciters: missing or not an array"),
        (#"[1, 2]"#, #"m.json: the top level must be an object with "version" and "reciters""#),
        (#"{"version": 1, "reciters": [], "extra": 1}"#, "m.json: top level: unknown field 'extra' (allowed: comment, reciters, version)"),
        (#"{"version": 1, "reciters": [7]}"#, "m.json: reciter #1: must be an object"),
    ])
    func invalidTopLevel(json: String, message: String) {
        #expect(throws: TartilError(.invalidData, message)) { try parse(json) }
    }

    @Test(arguments: [
        (["id": #""Alafasy""#], "m.json: reciter 'Alafasy' (#1): id: 'Alafasy' is not valid: 'A' is not allowed (use a-z, 0-9, '.', '_' and '-')"),
        (["id": #""-x""#], "m.json: reciter '-x' (#1): id: '-x' is not valid: it must start with a letter or digit"),
        (["id": #""a/b""#], "m.json: reciter 'a/b' (#1): id: 'a/b' is not valid: '/' is not allowed (use a-z, 0-9, '.', '_' and '-')"),
        (["id": nil], "m.json: reciter '?' (#1): id: missing or not a string"),
        (["name": #""""#], "m.json: reciter 'alafasy-128' (#1): name: missing or empty"),
        (["style": #""fast""#], "m.json: reciter 'alafasy-128' (#1): style: 'fast' is not one of murattal, mujawwad, muallim"),
        (["bitrate_kbps": "true"], "m.json: reciter 'alafasy-128' (#1): bitrate_kbps: must be a whole number of kbit/s from 8 to 320"),
        (["bitrate_kbps": "1000"], "m.json: reciter 'alafasy-128' (#1): bitrate_kbps: must be a whole number of kbit/s from 8 to 320, not 1000"),
        // Numbers out of any range (found by fuzzing: `max_speed: 1e308` trapped): a message, never a crash.
        (["bitrate_kbps": "1e308"], "m.json: reciter 'alafasy-128' (#1): bitrate_kbps: must be a whole number of kbit/s from 8 to 320, not 1e+308"),
        (["bitrate_kbps": "-9223372036854775809"],
         "m.json: reciter 'alafasy-128' (#1): bitrate_kbps: must be a whole number of kbit/s from 8 to 320, not -9.223372036854776e+18"),
        (["bitrate_kbps": "64.5"], "m.json: reciter 'alafasy-128' (#1): bitrate_kbps: must be a whole number of kbit/s from 8 to 320, not 64.5"),
        (["max_speed": "1e308"], "m.json: reciter 'alafasy-128' (#1): max_speed: must be a number from 1 to 2 in steps of 0.05, not 1e+308"),
        (["max_speed": "-1e308"], "m.json: reciter 'alafasy-128' (#1): max_speed: must be a number from 1 to 2 in steps of 0.05, not -1e+308"),
        (["max_speed": "5e-324"], "m.json: reciter 'alafasy-128' (#1): max_speed: must be a number from 1 to 2 in steps of 0.05, not 5e-324"),
        (["table": #""../x.tsv""#], "m.json: reciter 'alafasy-128' (#1): table: must be a file name ending in .tsv, without a directory"),
        (["mirrors": "[]"], "m.json: reciter 'alafasy-128' (#1): mirrors: needs at least one mirror"),
        (["mirrors": nil], "m.json: reciter 'alafasy-128' (#1): mirrors: missing or not an array"),
        (["mirrors": #"[{"name": "x", "url": "ftp://h/{surah3}{ayah3}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'ftp://h/{surah3}{ayah3}.mp3' is not an http or https URL"),
        (["mirrors": #"[{"name": "x", "url": "https://h/{surah3}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/{surah3}.mp3' names no ayah: use {surah3}{ayah3} (everyayah naming) or {global} (1-6236)"),
        (["mirrors": #"[{"name": "x", "url": "https://h/{surah}{ayah}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/{surah}{ayah}.mp3' uses {ayah}; allowed are {surah3}{ayah3} (everyayah naming) or {global}"),
        (["mirrors": #"[{"name": "x", "url": "https://h/{surah}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/{surah}.mp3' names no ayah: use {surah3}{ayah3} (everyayah naming) or {global} (1-6236)"),
        // A surah-file reciter: "files", its templates, and the timings that only it may have.
        (["files": #""ayat""#], "m.json: reciter 'alafasy-128' (#1): files: 'ayat' is not allowed (allowed: ayah or surah; the default is ayah)"),
        (["files": "2"], "m.json: reciter 'alafasy-128' (#1): files: must be a string: ayah or surah"),
        (["files": #""surah""#],
         #"m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://everyayah.com/data/Alafasy_128kbps/{surah3}{ayah3}.mp3' uses {ayah3}, but the files are whole surahs ("files": "surah"): use {surah3} or {surah} alone"#),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/{global}.mp3"}]"#],
         #"m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/{global}.mp3' uses {global}, but the files are whole surahs ("files": "surah"): use {surah3} or {surah} alone"#),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/all.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/all.mp3' names no surah: use {surah3} (036) or {surah} (36)"),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/{ayah}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/{ayah}.mp3' uses {ayah}; allowed are {surah3} or {surah} (one file per surah)"),
        (["timings": #""https://h/{surah}.json""#, "timings_format": #""quranstatic""#],
         #"m.json: reciter 'alafasy-128' (#1): timings: only a reciter of one file per surah ("files": "surah") has ayah timings"#),
        (["timings_format": #""quranstatic""#],
         #"m.json: reciter 'alafasy-128' (#1): timings_format: only a reciter of one file per surah ("files": "surah") has ayah timings"#),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/{surah3}.mp3"}]"#, "timings": #""https://h/{surah}.json""#],
         #"m.json: reciter 'alafasy-128' (#1): timings_format: missing: "timings" needs its shape, quranstatic or mp3quran"#),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/{surah3}.mp3"}]"#, "timings_format": #""mp3quran""#],
         #"m.json: reciter 'alafasy-128' (#1): timings_format: given without "timings" (the URL template of the timing files)"#),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/{surah3}.mp3"}]"#, "timings": #""https://h/{surah}.json""#,
          "timings_format": #""quran.com""#],
         "m.json: reciter 'alafasy-128' (#1): timings_format: 'quran.com' is not allowed (allowed: quranstatic or mp3quran)"),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/{surah3}.mp3"}]"#, "timings": #""https://h/{surah}/{ayah3}.json""#,
          "timings_format": #""mp3quran""#],
         #"m.json: reciter 'alafasy-128' (#1): timings: 'https://h/{surah}/{ayah3}.json' uses {ayah3}, but the files are whole surahs ("files": "surah"): use {surah3} or {surah} alone"#),
        (["files": #""surah""#, "mirrors": #"[{"name": "x", "url": "https://h/{surah3}.mp3"}]"#, "timings": "7", "timings_format": #""mp3quran""#],
         "m.json: reciter 'alafasy-128' (#1): timings: must be a string: a URL template over {surah3} or {surah}"),
        (["mirrors": #"[{"name": "x", "url": "https://h/{global}.mp3\u0000"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/{global}.mp3\\u{0}' contains a control character (byte 0)"),
        (["mirrors": #"[{"name": "x", "url": "https:///{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https:///{global}.mp3': the host is missing"),
        (["mirrors": #"[{"name": "x", "url": "https://:443/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://:443/{global}.mp3': the host is missing"),
        (["mirrors": #"[{"name": "x", "url": "https://h:99999/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h:99999/{global}.mp3': the port '99999' is not a number from 1 to 65535"),
        (["mirrors": #"[{"name": "x", "url": "https://h:/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h:/{global}.mp3': the port '' is not a number from 1 to 65535"),
        (["mirrors": #"[{"name": "x", "url": "https://u:p@h/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://u:p@h/{global}.mp3': credentials in a mirror URL are not supported"),
        (["mirrors": #"[{"name": "x", "url": "https://{global}.h/a.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://{global}.h/a.mp3': placeholders belong in the path, not in the host"),
        (["mirrors": #"[{"name": "x", "url": "https://h\u00e9/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://hé/{global}.mp3' contains a non-ASCII character (percent-encode it)"),
        (["mirrors": #"[{"name": "x", "url": "https://h/{global.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].url: 'https://h/{global.mp3' has a '{' without a closing '}'"),
        (["mirrors": #"[{"name": "", "url": "https://h/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0].name: missing or empty"),
        (["mirrors": #"[{"name": "a", "url": "https://h/{global}.mp3"}, {"name": "b", "url": "https://h/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[1].url: 'https://h/{global}.mp3' is listed twice"),
        (["mirrors": #"[{"name": "a", "url": "https://h/{global}.mp3"}, {"name": "b", "url": "https://i/{global}.mp3"}, {"name": "a", "url": "https://j/{global}.mp3"}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[2].name: 'a' is already the name of mirrors[0]: each mirror of a reciter needs a name of its own"),
        (["mirrors": #"[{"name": "a", "url": "https://h/{global}.mp3", "sha": 1}]"#],
         "m.json: reciter 'alafasy-128' (#1): mirrors[0]: unknown field 'sha' (allowed: name, url)"),
        (["speed": "1"], "m.json: reciter 'alafasy-128' (#1): unknown field 'speed' (allowed: bitrate_kbps, files, id, max_speed, mirrors, name, note, style, table, timings, timings_format)"),
        (["max_speed": "0.9"], "m.json: reciter 'alafasy-128' (#1): max_speed: must be a number from 1 to 2 in steps of 0.05, not 0.9"),
        (["max_speed": "2.5"], "m.json: reciter 'alafasy-128' (#1): max_speed: must be a number from 1 to 2 in steps of 0.05, not 2.5"),
        (["max_speed": "1.33"], "m.json: reciter 'alafasy-128' (#1): max_speed: must be a number from 1 to 2 in steps of 0.05, not 1.33"),
        (["max_speed": #""1.5""#], "m.json: reciter 'alafasy-128' (#1): max_speed: must be a number from 1 to 2 in steps of 0.05"),
    ] as [([String: String?], String)])
    func invalidReciter(changes: [String: String?], message: String) {
        #expect(throws: TartilError(.invalidData, message)) { try parse(document(changes)) }
    }

    @Test func duplicateIDsAreRefused() {
        let duplicate = #"{"id": "alafasy-128", "name": "B", "style": "murattal", "mirrors": [{"name": "x", "url": "https://h/{global}.mp3"}]}"#
        #expect(throws: TartilError(.invalidData, "m.json: reciter 'alafasy-128' (#2): id: duplicate of reciter #1")) {
            try parse(document(extraReciter: duplicate))
        }
    }

    /// The first reciter (in the file's order) whose id an earlier one has is named, with the first that has it;
    /// a reciter that does not parse after it does not hide it, one before it does.
    @Test(arguments: [
        (["a", "b", "c", "b", "a"], "reciter 'b' (#4): id: duplicate of reciter #2"),
        (["a", "b", "a", "b", "b"], "reciter 'a' (#3): id: duplicate of reciter #1"),
        (["z", "y", "x", "y", "!bad"], "reciter 'y' (#4): id: duplicate of reciter #2"),
        (["a", "!bad", "a"], "reciter '!bad' (#2): id: '!bad' is not valid"),
    ] as [([String], String)])
    func theFirstRepeatedIDIsNamed(ids: [String], message: String) throws {
        let entries = ids.map { #"{"id": "\#($0)", "name": "N", "style": "murattal", "mirrors": [{"name": "x", "url": "https://h/{global}.mp3"}]}"# }
        let text = #"{"version": 1, "reciters": ["# + entries.joined(separator: ", ") + "]}"
        do {
            _ = try MirrorList.parse(bytes: Array(text.utf8), file: "m.json")
            Issue.record("accepted")
        } catch {
            #expect(error.message.hasPrefix("m.json: " + message), "\(error.message)")
        }
    }

    @Test func syntaxErrorsSayWhere() {
        do {
            _ = try parse("{\"version\": 1,\n  , }")
            Issue.record("expected an error")
        } catch {
            #expect(error.message == "m.json:2:3: not valid JSON: expected a \"key\"", "\(error.message)")
        }
    }

    @Test func unknownReciterSuggestsClosestIDs() throws {
        let list = try parse(document())
        #expect(throws: TartilError(.usage, "no reciter 'alafasy-12' in mirrors.json; did you mean alafasy-128? (`tartil reciters` lists them)")) {
            try list.reciter(try ReciterID("alafasy-12"))
        }
    }

    @Test func templatesFillPlaceholders() throws {
        for accepted in ["http://127.0.0.1:8080/{global}.mp3", "https://[::1]:443/a/{global}", "https://a-b.c_d.example/{surah3}{ayah3}.mp3?x=1#f"] {
            #expect(throws: Never.self) { try URLTemplate(accepted) }
        }
        let everyayah = try URLTemplate("https://h/x/{surah3}{ayah3}.mp3")
        let global = try URLTemplate("https://cdn/q/{global}.mp3")
        #expect(everyayah.url(for: try AyahRef(2, 5)) == "https://h/x/002005.mp3")
        #expect(global.url(for: try AyahRef(112, 1)) == "https://cdn/q/6222.mp3")
        #expect(global.origin == "https://cdn")
        #expect(throws: TartilError.self) { try URLTemplate("https://h/a b/{global}.mp3") }
    }

    @Test func surahFileReciters() throws {
        let list = try parse(document([
            "files": #""surah""#, "timings": #""https://t/x_{surah}.json""#, "timings_format": #""quranstatic""#,
            "mirrors": #"[{"name": "a", "url": "https://h/{surah3}.mp3"}, {"name": "b", "url": "https://g/s/{surah}.mp3"}]"#,
        ]))
        let reciter = list.reciters[0]
        #expect(reciter.files == .surah)
        #expect(reciter.timings?.format == .quranstatic)
        #expect(reciter.timings?.template.url(forSurah: 7) == "https://t/x_7.json")
        #expect(reciter.mirrors.map { $0.template.url(forSurah: 36) } == ["https://h/036.mp3", "https://g/s/36.mp3"])
        // Per-ayah stays the default, and "files": "ayah" says so; a surah reciter may have no published timings.
        #expect(try parse(document()).reciters[0].files == .ayah)
        #expect(try parse(document(["files": #""ayah""#])).reciters[0].timings == nil)
        let bare = try parse(document(["files": #""surah""#, "mirrors": #"[{"name": "a", "url": "https://h/{surah}.mp3"}]"#])).reciters[0]
        #expect(bare.files == .surah && bare.timings == nil)
        // {surah} is unpadded in a per-ayah template too.
        #expect(try URLTemplate("https://h/{surah}/{ayah3}.mp3").url(for: AyahRef(2, 5)) == "https://h/2/005.mp3")
    }

    // MARK: - The committed mirrors.json

    @Test func committedMirrorsFileIsValidAndReal() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.repository + "/mirrors.json"))
        let list = try MirrorList.parse(data, file: "mirrors.json")
        #expect(list.reciters.count >= 18)
        let everyayah = list.reciters.filter { $0.mirrors.contains { $0.template.text.hasPrefix("https://everyayah.com/data/") } }
        #expect(everyayah.count >= 15)
        for reciter in everyayah {
            #expect(reciter.mirrors.contains { $0.template.text.hasPrefix("https://mirrors.quranicaudio.com/everyayah/") })
        }
        let commits = [
            "ibrahim-alakhdar": "quranstatic/ibrahim-alakhdar-2", "ahmed-allhdan": "quranstatic/ahmed-allhdan-1",
            "emad-al-mansary": "quranstatic/emad-al-mansary-1",
        ]
        for (id, repository) in commits {
            let reciter = try list.reciter(try ReciterID(id))
            #expect(reciter.mirrors.count == 2)
            #expect(reciter.mirrors[0].template.text.hasPrefix("https://raw.githubusercontent.com/\(repository)/"))
            #expect(reciter.mirrors[1].template.text.hasPrefix("https://cdn.jsdelivr.net/gh/\(repository)@"))
        }
    }

    /// The gapless surah-file reciters: their audio and timing templates are those of the published timing files
    /// in ../shared/real/timings (the CSV's audio URLs, and its timing files at their commit on jsDelivr).
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real"))
    func gaplessRecitersAreThePublishedTimingsOnes() throws {
        let real = try #require(TestPaths.sharedReal)
        let list = try MirrorList.parse(try Data(contentsOf: URL(fileURLWithPath: TestPaths.repository + "/mirrors.json")), file: "mirrors.json")
        let csv = try String(contentsOfFile: real + "/timings/quranstatic-gapless-surah-timings.csv", encoding: .utf8)
        for (id, source) in [("ibrahim-alakhdar-gapless", "ibrahim-alakhdar-2"), ("ahmed-allhdan-gapless", "ahmed-allhdan-1"), ("emad-al-mansary-gapless", "emad-al-mansary-1")] {
            let reciter = try list.reciter(try ReciterID(id))
            #expect(reciter.files == .surah)
            let timings = try #require(reciter.timings)
            #expect(timings.format == .quranstatic)
            for surah in [113, 114] {
                let row = try #require(csv.split(separator: "\n").first { $0.hasPrefix("\(source),\(surah),1,") })
                let fields = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                #expect(reciter.mirrors.map { $0.template.url(forSurah: surah) } == [fields[3]], "\(id)")
                #expect(timings.template.url(forSurah: surah).hasSuffix("/" + fields[9]))
                #expect(timings.template.url(forSurah: surah).contains("@" + fields[10] + "/"))
            }
        }
    }

    /// The pinned reciters' mirrors name the commit the recordings' README names.
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real recordings beside the checkout)"))
    func pinnedMirrorsNameTheRecordingsCommit() throws {
        let real = try #require(TestPaths.sharedReal)
        let list = try MirrorList.parse(try Data(contentsOf: URL(fileURLWithPath: TestPaths.repository + "/mirrors.json")), file: "mirrors.json")
        for id in ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary"] {
            let readme = try String(contentsOfFile: "\(real)/audio/\(id)/README.md", encoding: .utf8)
            for mirror in try list.reciter(try ReciterID(id)).mirrors {
                let commit = mirror.template.text.split(whereSeparator: { $0 == "/" || $0 == "@" })
                    .first { $0.count == 40 && $0.allSatisfy(\.isHexDigit) }
                #expect(commit != nil && readme.contains(String(commit!)))
            }
        }
    }
}

@Suite struct JSONNodeTests {
    @Test func parsesEveryKindOfValue() throws {
        let node = try JSONNode.parse(Array(#"{"a": [1, -2.5e1, true, false, null, "x\"\\\/\n\u00e9\ud83c\udf19"], "b": {}}"#.utf8))
        #expect(node == .object([
            "a": .array([.number(1), .number(-25), .bool(true), .bool(false), .null, .string("x\"\\/\né🌙")]),
            "b": .object([:]),
        ]))
        #expect(JSONNode.number(3).integer == 3)
        #expect(JSONNode.number(3.5).integer == nil)
        #expect(JSONNode.bool(true).integer == nil)
    }

    @Test(arguments: [
        ("{\"a\": 1,\n  , }", 2, 3, "expected a \"key\""),
        ("[1, 2", 1, 6, "expected ',' or ']'"),
        ("{\"a\" 1}", 1, 6, "expected ':' after \"a\""),
        ("\"open", 1, 6, "unterminated string"),
        ("tru", 1, 1, "expected true"),
        ("{\"a\": 1, \"a\": 2}", 1, 15, "\"a\" appears twice in one object"),
        ("[1] 2", 1, 5, "unexpected text after the JSON value"),
        ("", 1, 1, "unexpected end of the file"),
        ("[01]", 1, 2, "invalid number '01'"),
        ("[1.]", 1, 2, "invalid number '1.'"),
    ])
    func syntaxErrorsNameLineAndColumn(text: String, line: Int, column: Int, message: String) {
        #expect(throws: JSONNode.SyntaxError(line: line, column: column, message: message)) { try JSONNode.parse(Array(text.utf8)) }
    }

    /// A `\u` escape is four hex digits, exactly: no sign, no space (found by the control reply fuzz target, where
    /// `JSONDecoder` refused `"\u+5e9"` and this parser read it as U+05E9).
    @Test(arguments: [
        (#""\u05e9""#, "\u{05E9}"), (#""\u05E9\uFFFF""#, "\u{05E9}\u{FFFF}"), (#""\u+5e9""#, nil), (#""\u-5e9""#, nil), (#""\u 5e9""#, nil),
        (#""\u5e9""#, nil), (#""\u05g9""#, nil), (#""\u0x59""#, nil),
    ] as [(String, String?)])
    func unicodeEscapesAreFourHexDigits(text: String, expected: String?) {
        #expect((try? JSONNode.parse(Array(text.utf8)))?.string == expected, "\(text)")
    }
}

@Suite struct PathTextTests {
    @Test func pathsJoinAndSplit() {
        #expect(Path.join("/a/b", "c.mp3") == "/a/b/c.mp3")
        #expect(Path.join("/a/b/", "c") == "/a/b/c")
        #expect(Path.join("/a", "/abs") == "/abs")
        #expect(Path.parent("/a/b/c.mp3") == "/a/b")
        #expect(Path.parent("/a/b/") == "/a")
        #expect(Path.parent("c") == ".")
        #expect(Path.parent("/c") == "/")
        #expect(Path.name("/a/b/c.mp3") == "c.mp3")
        #expect(Path.name("c") == "c")
    }

    @Test func textHelpers() {
        #expect("  a b \t\r\n".trimmedWhitespace == "a b")
        #expect("   ".trimmedWhitespace == "")
        #expect("aXbXXc".replacingEvery("X", with: "--") == "a--b----c")
        #expect("{s}{s}".replacingEvery("{s}", with: "1") == "11")
    }
}
