import TartilSession
import Glibc
import TartilCore
import TartilMPRIS

/// Commands that describe tartil and the Qur'an: `help`, `version`, `surahs`, `reciters`, `quit`.
enum InfoCommands {
    static let help = CommandSpec(
        path: ["help"], overview: "Show help for tartil or for one command.",
        arguments: [.init(name: "command", help: "The command to explain (e.g. resolve, table build).", repeating: true, optional: true)],
        examples: ["tartil help", "tartil help table build"],
        run: { invocation, context in
            if invocation.arguments.isEmpty {
                if context.settings.json {
                    context.console.json(.array(context.table.commands.filter { !$0.hidden }.map(Help.json)))
                } else {
                    context.console.writeOut(Help.main(context.table, width: Help.width(for: context.console)))
                }
                return
            }
            guard let (command, used) = context.table.find(invocation.arguments), used == invocation.arguments.count else {
                throw UsageError(
                    message: "no command '\(invocation.arguments.joined(separator: " "))'"
                        + Suggestion.hint(for: invocation.arguments[0], among: context.table.topLevelNames)
                        + " (commands: \(context.table.topLevelNames.joined(separator: ", ")))",
                    command: invocation.command)
            }
            if context.settings.json {
                context.console.json(Help.json(command))
            } else {
                context.console.writeOut(Help.command(command, table: context.table, width: Help.width(for: context.console)))
            }
        })

    static let version = CommandSpec(
        path: ["version"], overview: "Show tartil's version, the libraries it uses and the files it reads.",
        options: [OutputFormat.option()],
        run: { invocation, context in
            let settings = context.settings
            let format = try OutputFormat.chosen(invocation, context)
            let mirrors = try? settings.mirrorsFile()
            let installed = Session.libraries()
            let caBundle = settings.caBundle.map { "\($0.path) (CA bundle from \($0.source))" }
                ?? installed.defaultCABundle.map { "\($0) (CA bundle: libcurl's default)" } ?? "libcurl's default CA bundle"
            let certificates = caBundle + (settings.caDirectory.map { "; \($0.path) (CA directory from \($0.source))" } ?? "")
            let proxyVariables = ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]
                .filter { settings.environment[$0]?.isEmpty == false }
            let proxies = proxyVariables.isEmpty ? "none" : proxyVariables.map { "\($0)=\(settings.environment[$0]!)" }.joined(separator: " ")
            let http2 = installed.http2
            let libraries = installed.entries
            let paths: [(String, String)] = [
                ("http2", http2 ? "yes (HTTPS downloads multiplex many requests per connection)" : "no (libcurl without nghttp2: HTTP/1.1 only)"),
                ("certs", certificates),
                ("proxy", proxies),
                ("mirrors", mirrors.map { "\($0.path) (\($0.source))" } ?? "not found"),
                ("tables", settings.tableDirectories.joined(separator: ", ")),
                ("cache", settings.cacheDirectory),
                ("journal", settings.journalFile),
                ("config", settings.config.map { "\($0.file) (\(Plural.count($0.entries.count, "setting")): \($0.entries.keys.sorted().joined(separator: ", ")))" }
                    ?? "\(settings.configFile) (none)"),
                ("reciter", settings.defaultReciter.map { "\($0) (\(settings.environment["TARTIL_RECITER"]?.isEmpty == false ? "TARTIL_RECITER" : settings.config?.location("reciter") ?? ""))" } ?? "none set"),
            ]
            let mpris = MPRISService.availability(environment: settings.environment, enabled: settings.mprisEnabled)
            let fields: Fields = [
                ("version", .string(Help.version)),
                ("libraries", .object(libraries.map { ($0.0, .string($0.1)) })),
                ("http2", .bool(http2)),
                ("ca_bundle", .string(settings.caBundle?.path ?? installed.defaultCABundle)),
                ("ca_bundle_source", .string(settings.caBundle?.source ?? "default")),
                ("ca_directory", .string(settings.caDirectory?.path)),
                ("mirrors", .string(mirrors?.path)),
                ("mirrors_source", .string(mirrors?.source)),
                ("tables", .array(settings.tableDirectories.map(JSONValue.string))),
                ("cache_dir", .string(settings.cacheDirectory)),
                ("journal", .string(settings.journalFile)),
                ("mpris", .string(mpris)),
                ("config", .string(settings.config?.file)),
                ("config_settings", .object((settings.config?.entries ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.value)) })),
                ("reciter", .string(settings.defaultReciter)),
            ]
            context.console.print(report: fields, as: format) {
                context.console.line("tartil \(Help.version)")
                let rows = (libraries + paths + [("mpris", mpris)]).map { (label: "  \($0.0)", value: $0.1) }
                for line in Formatting.labelled(rows, width: context.console.columns()) { context.console.line(line) }
            }
        })

    static let surahs = CommandSpec(
        path: ["surahs"], overview: "List the 114 surahs with their names, ayah counts and where they start.",
        discussion: """
            On a terminal too narrow for the whole table, the least needed columns are left out, in this order: \
            ENGLISH, ARABIC, PAGE, JUZ, PLACE. \
            Fields (json, ndjson, csv): surah, name, name_arabic, name_english, ayat (how many), first_global_ayah, \
            revelation (meccan or medinan), revelation_order, juz and page (where it starts).
            """,
        arguments: [.init(name: "ref", help: "Only the surahs these references touch (e.g. 78-114, juz 30).", repeating: true, optional: true)],
        options: [OutputFormat.option()],
        examples: ["tartil surahs", "tartil surahs juz 30", "tartil surahs --format csv 36"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            var selected = Catalog.surahs
            if !invocation.arguments.isEmpty {
                let references = try ReferenceParser.parse(invocation.arguments)
                let numbers = Set(references.flatMap { Array($0.range.first.surah...$0.range.last.surah) })
                selected = selected.filter { numbers.contains($0.number) }
            }
            let columns = [
                "surah", "name", "name_arabic", "name_english", "ayat", "first_global_ayah", "revelation", "revelation_order", "juz", "page",
            ]
            let listing = Listing(columns: columns, rows: selected.map { surah in
                [
                    ("surah", .int(surah.number)),
                    ("name", .string(surah.nameTransliterated)),
                    ("name_arabic", .string(surah.nameArabic)),
                    ("name_english", .string(surah.nameEnglish)),
                    ("ayat", .int(surah.ayahCount)),
                    ("first_global_ayah", .int(surah.firstGlobalAyah)),
                    ("revelation", .string(surah.revelationPlace.rawValue.lowercased())),
                    ("revelation_order", .int(surah.revelationOrder)),
                    ("juz", .int(Catalog.juz(containing: surah.firstAyah))),
                    ("page", .int(Catalog.page(containing: surah.firstAyah))),
                ]
            })
            context.console.print(listing, as: format) { surahsText(selected, context.console) }
        })

    /// `surahs` for people: a table and a total.
    static func surahsText(_ selected: [Surah], _ console: Console) {
        var rows = [["#", "NAME", "ENGLISH", "AYAT", "PLACE", "JUZ", "PAGE", "ARABIC"]]
        for surah in selected {
            rows.append([
                String(surah.number), surah.nameTransliterated, surah.nameEnglish, String(surah.ayahCount),
                surah.revelationPlace.rawValue, String(Catalog.juz(containing: surah.firstAyah)),
                String(Catalog.page(containing: surah.firstAyah)), surah.nameArabic,
            ])
        }
        // On a narrow terminal the least needed columns go first: the English name, the Arabic, the page, the juz.
        for line in Formatting.table(rows, rightAligned: [0, 3, 5, 6], width: console.columns(), dropping: [2, 7, 6, 5, 4]) {
            console.line(line)
        }
        let ayat = selected.reduce(0) { $0 + $1.ayahCount }
        console.line("\(Plural.count(selected.count, "surah")), \(Plural.count(ayat, "ayah", number: Formatting.grouped(ayat)))")
    }

    static let reciters = CommandSpec(
        path: ["reciters"], overview: "List the reciters in mirrors.json with their mirrors and pinned coverage.",
        discussion: """
            PINNED is how many of the 6236 ayat the reciter's table pins (size, SHA-256 and exact sample count); \
            the others are checked on first download and remembered. On a terminal too narrow for the table, \
            each reciter is a short record instead (its id; its name; style, bitrate, mirrors and pinned), \
            wrapped to the width. Fields (json, ndjson, csv): reciter (the \
            id), name, style, bitrate_kbps, pinned, total, table (its path, or null), mirrors (each name and url).
            """,
        options: [OutputFormat.option()],
        examples: ["tartil reciters", "tartil reciters --json"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let (mirrorsFile, entries) = try context.session.reciters(settings: context.settings)
            let columns = ["reciter", "name", "style", "bitrate_kbps", "pinned", "total", "table", "mirrors"]
            let listing = Listing(columns: columns, rows: entries.map { reciter, table, tablePath in
                [
                    ("reciter", .string(reciter.id.rawValue)),
                    ("name", .string(reciter.name)),
                    ("style", .string(reciter.style)),
                    ("bitrate_kbps", .int(reciter.bitrateKbps)),
                    ("pinned", .int(table?.coverage ?? 0)),
                    ("total", .int(Catalog.totalAyat)),
                    ("table", .string(tablePath)),
                    ("mirrors", .array(reciter.mirrors.map { .object([("name", .string($0.name)), ("url", .string($0.template.text))]) })),
                ]
            })
            context.console.print(listing, as: format) {
                var rows = [["ID", "NAME", "STYLE", "KBPS", "MIRRORS", "PINNED"]]
                for (reciter, table, _) in entries {
                    rows.append([
                        reciter.id.rawValue, reciter.name, reciter.style, reciter.bitrateKbps.map(String.init) ?? "-",
                        String(reciter.mirrors.count), "\(table?.coverage ?? 0)/\(Catalog.totalAyat)",
                    ])
                }
                let table = Formatting.table(rows, rightAligned: [3, 4, 5])
                let width = context.console.columns()
                if let width, table.contains(where: { TerminalText.columns($0) > width }) {
                    // A terminal narrower than the table: each reciter as a short record, wrapped to the width.
                    for (index, (reciter, table, _)) in entries.enumerated() {
                        if index > 0 { context.console.line("") }
                        let facts = [
                            reciter.style, reciter.bitrateKbps.map { "\($0) kbps" }, Plural.count(reciter.mirrors.count, "mirror"),
                            "\(table?.coverage ?? 0)/\(Catalog.totalAyat) pinned",
                        ].compactMap { $0 }.joined(separator: ", ")
                        for (text, indent) in [(reciter.id.rawValue, 0), (reciter.name, 2), (facts, 2)] {
                            for line in TextWrap.lines(text, width: width, indent: indent) { context.console.line(line) }
                        }
                    }
                    context.console.line("")
                } else {
                    for line in table { context.console.line(line) }
                }
                let summary = "\(Plural.count(entries.count, "reciter")) from \(mirrorsFile)"
                for line in width.map({ TextWrap.lines(summary, width: $0) }) ?? [summary] { context.console.line(line) }
            }
        })

    static let quit = CommandSpec(
        path: ["quit"], overview: "Leave the prompt (or end a script).",
        run: { _, _ in throw QuitRequest() })

    static let exit = CommandSpec(path: ["exit"], overview: "Same as quit.", hidden: true, run: { _, _ in throw QuitRequest() })
}

/// Thrown by `quit`: ends the REPL or script with success.
struct QuitRequest: Error {}
