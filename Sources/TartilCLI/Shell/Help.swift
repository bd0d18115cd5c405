import TartilSession
import TartilCore

/// Help pages in the OVERVIEW / USAGE / ARGUMENTS / OPTIONS / SUBCOMMANDS layout, generated from the command
/// table, wrapped to a width (`width(for:)`: the terminal's) by `TextWrap`: between words, option entries in two
/// columns with a hanging indent, or the help under its label when the width is too narrow for two.
enum Help {
    static let version = "0.1.0"
    /// Where the help of an entry starts, when the width leaves room for two columns.
    private static let column = 26

    /// The width help is wrapped to: standard output's when it is a terminal, else 80.
    static func width(for console: Console) -> Int {
        console.outputIsTerminal ? console.columns() ?? 80 : 80
    }

    /// `tartil help` and `tartil --help`.
    static func main(_ table: CommandTable, width: Int = 80) -> String {
        var text = paragraph(
            "OVERVIEW: tartil \(version) — a Qur'an recitation audio engine for Linux terminals and scripts.", width,
            hangingIndent: 10)
        text += "\n" + paragraph(
            "One MP3 per ayah from pinned mirrors, verified against per-reciter tables of sizes, SHA-256 hashes and "
                + "exact sample counts.", width)
        text += "\n" + usage(
            [
                "tartil [<global options>] <command> [<arguments>]",
                "tartil [<global options>] -c \"<command>; <command>; ...\"", "tartil [<global options>]",
            ], width, hangingIndent: 14)
        text += paragraph("(a prompt on a terminal; otherwise commands from standard input)", width, indent: 14)
        text += "\nGLOBAL OPTIONS:\n"
        for option in GlobalOption.all {
            let help = option.variable.map { "\(option.help) [env: \($0)]" } ?? option.help
            text += entry(option.label, help, width)
        }
        text += entry("-c <commands>", "Run commands separated by ';', stopping at the first that fails.", width)
        text += entry("-h, --help", "Show help information (also: tartil help <command>).", width)
        text += entry("--version", "Show the version (same as: tartil version).", width)
        text += "\n" + paragraph(
            "Defaults can also come from $XDG_CONFIG_HOME/tartil/config (option=value lines: reciter=, output=, "
                + "speed=...; TARTIL_CONFIG names another file): the command line beats the environment, which beats "
                + "the file.", width, indent: 2)
        text += "\nSUBCOMMANDS:\n"
        for command in table.commands where !command.hidden && command.path.count == 1 {
            text += entry(command.name, command.overview, width)
        }
        text += "\nREFERENCES:\n"
        for (label, help) in [
            ("36, yasin, al-mulk", "a whole surah (number or name)"), ("78-114", "whole surahs"),
            ("2:255", "one ayah"), ("36:1-12", "ayat of one surah"),
            ("2:284-3:5", "across surahs"), ("#262", "global ayah number (1-6236)"),
            ("juz 30, hizb 5, page 1-3", "divisions of the mushaf; lists are separated by spaces or commas"),
        ] {
            text += entry(label, help, width)
        }
        text += "\nOPTIONS AND VALUES:\n"
        for (label, help) in [
            ("--reciter x, --reciter=x", "a long option's value, separate or after =; -j 4, -j4, -j=4 for a short one"),
            ("--", "ends the options: every word after it is an argument"),
            ("times", "1.5s, 90s, 500ms, 2m, 1h30m, 1:30 or 1:02:03 wherever a time is taken (--pause, --stop-after, "
                + "seek, sleep, ...); a bare number is seconds, for a timer minutes"),
            ("--surah", "a number (36) or a name (yasin), as in references"),
            ("--output", "where the sound goes (play, resume: alsa, wav:PATH, null, silent); a file that a command "
                + "writes is -o/--to (render, table build)"),
        ] {
            text += entry(label, help, width)
        }
        text += "\nEXIT CODES:\n"
        text += paragraph(
            "0 success, 1 failure, 3 nothing is playing (status), 64 usage error (bad command line or input; nothing "
                + "was changed), 130 interrupted (Ctrl-C).", width, indent: 2)
        text += "\n" + paragraph("See 'tartil help <command>' for detailed help.", width)
        return text
    }

    /// `tartil help <command>` and `tartil <command> --help`.
    static func command(_ command: CommandSpec, table: CommandTable, width: Int = 80) -> String {
        var text = paragraph("OVERVIEW: \(command.overview)", width, hangingIndent: 10)
        if let discussion = command.discussion {
            text += "\n" + paragraph(discussion, width)
        }
        let subcommands = table.subcommands(of: command)
        text += "\n" + usage([command.syntax.isGroup ? "tartil \(command.name) <subcommand>" : command.usage], width, hangingIndent: 7)
        if !command.arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in command.arguments { text += entry("<\(argument.name)>", argument.help, width) }
        }
        text += "\nOPTIONS:\n"
        for option in command.options { text += entry(option.label, option.help, width) }
        if command.options.contains(where: { $0.names.contains("--format") }) {
            text += entry("--json", "Same as --format json.", width)
        } else if !command.syntax.isGroup {
            text += entry("--json", "Print one JSON value instead of text.", width)
        }
        text += entry("-h, --help", "Show help information.", width)
        if !subcommands.isEmpty {
            text += "\nSUBCOMMANDS:\n"
            for subcommand in subcommands { text += entry(subcommand.path.last!, subcommand.overview, width) }
        }
        if !command.examples.isEmpty {
            text += "\nEXAMPLES:\n"
            for example in command.examples {
                text += joined(TextWrap.lines(example, width: width, indent: 2, hangingIndent: 4, pieces: .groups))
            }
        }
        text += "\n" + paragraph("See 'tartil help' for the global options.", width)
        return text
    }

    /// A command's description for scripts (`tartil help --json`).
    static func json(_ command: CommandSpec) -> JSONValue {
        .object([
            ("name", .string(command.name)),
            ("overview", .string(command.overview)),
            ("usage", .string(command.syntax.isGroup ? "tartil \(command.name) <subcommand>" : command.usage)),
            ("arguments", .array(command.arguments.map {
                .object([("name", .string($0.name)), ("help", .string($0.help)), ("repeating", .bool($0.repeating)),
                         ("optional", .bool($0.optional))])
            })),
            ("options", .array(command.options.map {
                .object([("names", .array($0.names.map(JSONValue.string))), ("value", .string($0.valueName)),
                         ("help", .string($0.help)), ("required", .bool($0.required))])
            })),
        ])
    }

    /// One help entry: the label in a column, the help wrapped beside it (or under it, when narrow).
    static func entry(_ label: String, _ help: String, _ width: Int) -> String {
        joined(TextWrap.entry(label: label, help: help, width: width, column: column))
    }

    /// `text` wrapped to `width`, each line ended.
    static func paragraph(_ text: String, _ width: Int, indent: Int = 0, hangingIndent: Int? = nil) -> String {
        joined(TextWrap.lines(text, width: width, indent: indent, hangingIndent: hangingIndent))
    }

    /// `USAGE: ` and the usage lines under one another, a bracketed option never broken when it fits.
    static func usage(_ usages: [String], _ width: Int, hangingIndent: Int) -> String {
        var lines: [String] = []
        for usage in usages {
            lines += TextWrap.lines(usage, width: width, indent: 7, hangingIndent: hangingIndent, pieces: .groups)
        }
        if let first = lines.first { lines[0] = "USAGE: " + first.drop { $0 == " " } }
        return joined(lines)
    }

    static func joined(_ lines: [String]) -> String { lines.map { $0 + "\n" }.joined() }
}
