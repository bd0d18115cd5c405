import TartilSession
import TartilCore
import Testing

@testable import TartilCLI

/// The command-line habits of getopt_long, curl and git, in the one parser every command goes through: attached
/// short values, `--opt=value`, `--` ending options, old spellings with a note, and did-you-mean.
@Suite struct CommandParsingTests {
    /// Parses `line` (split as the shell would) with the standard table.
    func parse(_ line: String) throws -> Invocation {
        let words = try CommandLineSplitter.split(line)[0]
        let (command, used) = try #require(CommandTable.standard.find(words))
        var settings = Settings(environment: [:], bundledDataDirectory: nil)
        return try command.parse(Array(words[used...]), settings: &settings)
    }

    @Test(arguments: [
        // Short options: separate, attached, attached with =.
        ("prefetch 1 -j 4", "--jobs", "4"),
        ("prefetch 1 -j4", "--jobs", "4"),
        ("prefetch 1 -j=4", "--jobs", "4"),
        ("prefetch 1 -j16", "--jobs", "16"),
        // Long options: separate and with =.
        ("prefetch 1 --jobs 4", "--jobs", "4"),
        ("prefetch 1 --jobs=4", "--jobs", "4"),
        ("prefetch 1 --reciter=ibrahim-alakhdar", "--reciter", "ibrahim-alakhdar"),
        ("resolve 1 --reciter=a=b", "--reciter", "a=b"),
        // A file name, every way.
        ("render 1 -o out.wav", "--to", "out.wav"),
        ("render 1 -oout.wav", "--to", "out.wav"),
        ("render 1 -o/tmp/a.wav", "--to", "/tmp/a.wav"),
        ("render 1 -o=/tmp/a.wav", "--to", "/tmp/a.wav"),
        ("render 1 --to /tmp/a.wav", "--to", "/tmp/a.wav"),
        ("render 1 --to=/tmp/a.wav", "--to", "/tmp/a.wav"),
        ("render 1 -o -", "--to", "-"),
        ("table build /d --reciter x -o t.tsv", "--to", "t.tsv"),
        ("table build /d --reciter x -ot.tsv", "--to", "t.tsv"),
        // Values that start with a dash.
        ("play 1 --from -10", "--from", "-10"),
        ("play 1 --pause=-1", "--pause", "-1"),
        // Optional values.
        ("play 1 --stepped", "--stepped", ""),
        ("play 1 --stepped window=3", "--stepped", "window=3"),
        ("play 1 --stepped=window=3", "--stepped", "window=3"),
        // Surah names and durations are values like any other (checked where used).
        ("positions --surah yasin", "--surah", "yasin"),
        ("play 36 --cycle-pause=1:30", "--cycle-pause", "1:30"),
        // Flags.
        ("play 1 --events", "--events", ""),
        ("journal sync /d --watch --interval 5m", "--interval", "5m"),
    ])
    func optionForms(line: String, option: String, value: String) throws {
        let invocation = try parse(line)
        #expect(invocation.value(option) == value, "\(line)")
        #expect(invocation.notes.isEmpty)
    }

    @Test func doubleDashEndsOptions() throws {
        let invocation = try parse("resolve --reciter x -- -j4 --jobs")
        #expect(invocation.arguments == ["-j4", "--jobs"])
        #expect(invocation.value("--reciter") == "x")
        let seek = try parse("seek -- -10")
        #expect(seek.arguments == ["-10"])
        let negative = try parse("seek -1:30")
        #expect(negative.arguments == ["-1:30"], "a negative time is a value, not an option")
    }

    @Test func globalOptionsAttachToo() throws {
        let words = ["--cache-dir=/tmp/c", "--json"]
        let (command, _) = try #require(CommandTable.standard.find(["surahs"]))
        var settings = Settings(environment: [:], bundledDataDirectory: nil)
        _ = try command.parse(words, settings: &settings)
        #expect(settings.cacheDirectoryOption == "/tmp/c")
        #expect(settings.json)
    }

    /// `render --output FILE` (and `table build --output FILE`) still work, with a note: `--output` is play's
    /// sink, and render's file is `--to`/`-o`.
    @Test(arguments: ["render 1 --output a.wav", "render 1 --output=a.wav", "table build /d --reciter x --output a.wav"])
    func formerNameWorksWithANote(line: String) throws {
        let invocation = try parse(line)
        #expect(invocation.value("--to") == "a.wav")
        #expect(invocation.notes.count == 1)
        #expect(invocation.notes.first?.contains("--output is now -o/--to") == true)
    }

    /// The table names each command by its own path (it makes a command only when asked for it, by the path it
    /// lists), every path once; `find` takes the longest path a command line starts with.
    @Test func eachEntrysPathIsItsCommands() throws {
        let entries = CommandTable.standard.entries
        for entry in entries { #expect(entry.spec().path == entry.path, "\(entry.path)") }
        #expect(Set(entries.map { $0.path.joined(separator: " ") }).count == entries.count)
        let (cacheLs, used) = try #require(CommandTable.standard.find(["cache", "ls", "--json"]))
        #expect(cacheLs.path == ["cache", "ls"] && used == 2)
        let (cache, usedByGroup) = try #require(CommandTable.standard.find(["cache", "lsx"]))
        #expect(cache.path == ["cache"] && usedByGroup == 1)
        #expect(CommandTable.standard.find(["nosuch"]) == nil)
        #expect(CommandTable.standard.subcommands(of: cache).map(\.name) == ["cache ls", "cache du", "cache verify", "cache choose", "cache pin", "cache unpin", "cache import"])
    }

    /// One meaning per option name: `--output` is a sink wherever it is shown, a file name never; `--to` is a file.
    @Test func oneMeaningPerOptionName() {
        var meanings: [String: Set<String>] = [:]
        for command in CommandTable.standard.commands {
            for option in command.options {
                for name in option.names { meanings[name, default: []].insert(option.valueName ?? "") }
            }
        }
        #expect(meanings["--output"] == ["alsa|wav:path|null|silent"])
        #expect(meanings["-o"] == meanings["--to"])
        for (name, values) in meanings where name != "--format" && name != "-o" && name != "--to" {
            #expect(values.count == 1, "\(name) takes \(values.sorted()) in different commands")
        }
    }

    @Test(arguments: [
        ("prefetch 1 -x4", "unknown option '-x4' for 'prefetch'"),
        ("prefetch 1 -j", "-j needs a value <n>"),
        ("prefetch 1 --jobs", "--jobs needs a value <n>"),
        ("prefetch 1 -j=", "-j needs a non-empty value"),
        ("play 1 --events=yes", "--events takes no value"),
        ("play 1 --json=1", "--json takes no value"),
        ("play 1 --evnts", "unknown option '--evnts' for 'play'; did you mean --events?"),
        ("play 1 --speeed 1", "unknown option '--speeed' for 'play'; did you mean --speed?"),
        ("play 1 --kind x", "unknown option '--kind' for 'play' (options:"),
        ("render 1", "render needs --to <file.wav>"),
        ("render 1 -o", "-o needs a value <file.wav>"),
        ("play 1 --stepped windw=3", "--stepped takes [window=n], not 'windw=3'; did you mean window=3?"),
    ])
    func badForms(line: String, message: String) throws {
        do {
            _ = try parse(line)
            Issue.record("\(line) was accepted")
        } catch let error as UsageError {
            #expect(error.message.hasPrefix(message), "\(line): \(error.message)")
        }
    }

    /// `-j` takes a value, so `-j4` is `-j 4`; `-h` takes none, so `-hx` is no option at all.
    @Test func attachedValuesOnlyForOptionsThatTakeOne() {
        let takes: (String) -> Bool = { $0 == "-j" || $0 == "-o" }
        #expect(CommandSpec.splitAttached("-j4", takesValue: takes) == ("-j", "4"))
        #expect(CommandSpec.splitAttached("-j=4", takesValue: takes) == ("-j", "4"))
        #expect(CommandSpec.splitAttached("-hx", takesValue: takes) == ("-hx", nil))
        #expect(CommandSpec.splitAttached("-h", takesValue: takes) == ("-h", nil))
        #expect(CommandSpec.splitAttached("--jobs=4", takesValue: takes) == ("--jobs", "4"))
        #expect(CommandSpec.splitAttached("--jobs=", takesValue: takes) == ("--jobs", ""))
        #expect(CommandSpec.splitAttached("--jobs", takesValue: takes) == ("--jobs", nil))
    }

    /// A span ago is counted back from the time it is given (the session clock's wall time), not the system's.
    @Test func sinceASpanAgoCountsBackFromTheGivenTime() throws {
        let now: Int64 = 1_700_000_000_000
        #expect(try JournalCommands.parseSince("7d", nowMs: now) == now - 7 * 86_400_000)
        #expect(try JournalCommands.parseSince("12h", nowMs: now) == now - 12 * 3_600_000)
        #expect(try JournalCommands.parseSince("30m", option: "--until", nowMs: now) == now - 30 * 60_000)
        #expect(try JournalCommands.parseSince("2023-11-14T22:13:20Z", nowMs: 0) == now)
    }
}
