import TartilSession
import TartilCore
/// Help pages in the OVERVIEW / USAGE / ARGUMENTS / OPTIONS / SUBCOMMANDS layout, generated from the command
/// table.
enum Help {
    static let version = "0.1.0"
    private static let column = 26

    /// `tartil help` and `tartil --help`.
    static func main(_ table: CommandTable) -> String {
        var text = """
            OVERVIEW: tartil \(version) — a Qur'an recitation audio engine for Linux terminals and scripts.

            One MP3 per ayah from pinned mirrors, verified against per-reciter tables of sizes, SHA-256 hashes and
            exact sample counts.

            USAGE: tartil [<global options>] <command> [<arguments>]
                   tartil [<global options>] -c "<command>; <command>; ..."
                   tartil [<global options>]     (a prompt on a terminal; otherwise commands from standard input)

            GLOBAL OPTIONS:

            """
        for option in GlobalOption.all {
            let help = option.variable.map { "\(option.help) [env: \($0)]" } ?? option.help
            text += entry(option.label, help)
        }
        text += entry("-c <commands>", "Run commands separated by ';', stopping at the first that fails.")
        text += entry("-h, --help", "Show help information (also: tartil help <command>).")
        text += entry("--version", "Show the version (same as: tartil version).")
        text += "\n  Defaults can also come from $XDG_CONFIG_HOME/tartil/config (option=value lines: reciter=, output=, speed=...;\n"
        text += "  TARTIL_CONFIG names another file): the command line beats the environment, which beats the file.\n"
        text += "\nSUBCOMMANDS:\n"
        for command in table.commands where !command.hidden && command.path.count == 1 {
            text += entry(command.name, command.overview)
        }
        text += """

            REFERENCES:
              36, yasin, al-mulk     a whole surah (number or name)      78-114       whole surahs
              2:255                  one ayah                            36:1-12      ayat of one surah
              2:284-3:5              across surahs                       #262         global ayah number (1-6236)
              juz 30, hizb 5, page 1-3   divisions of the mushaf; lists are separated by spaces or commas

            OPTIONS AND VALUES:
              --reciter x, --reciter=x   a long option's value, separate or after =; -j 4, -j4, -j=4 for a short one
              --                         ends the options: every word after it is an argument
              times                      1.5s, 90s, 500ms, 2m, 1h30m, 1:30 or 1:02:03 wherever a time is taken (--pause,
                                         --stop-after, seek, sleep, ...); a bare number is seconds, for a timer minutes
              --surah                    a number (36) or a name (yasin), as in references
              --output                   where the sound goes (play, resume: alsa, wav:PATH, null, silent); a file
                                         that a command writes is -o/--to (render, table build)

            EXIT CODES:
              0 success, 1 failure, 64 usage error (bad command line or input; nothing was changed),
              130 interrupted (Ctrl-C).

            See 'tartil help <command>' for detailed help.

            """
        return text
    }

    /// `tartil help <command>` and `tartil <command> --help`.
    static func command(_ command: CommandSpec, table: CommandTable) -> String {
        var text = "OVERVIEW: \(command.overview)\n"
        if let discussion = command.discussion {
            text += "\n" + discussion.split(separator: "\n", omittingEmptySubsequences: false)
                .map { wrap(String($0), width: 110).joined(separator: "\n") }.joined(separator: "\n") + "\n"
        }
        let subcommands = table.subcommands(of: command)
        if command.run == nil {
            text += "\nUSAGE: tartil \(command.name) <subcommand>\n"
        } else {
            text += "\nUSAGE: " + wrap(command.usage, width: 110 - 7).joined(separator: "\n       ") + "\n"
        }
        if !command.arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in command.arguments { text += entry("<\(argument.name)>", argument.help) }
        }
        text += "\nOPTIONS:\n"
        for option in command.options { text += entry(option.label, option.help) }
        if command.options.contains(where: { $0.names.contains("--format") }) {
            text += entry("--json", "Same as --format json.")
        } else if command.run != nil {
            text += entry("--json", "Print one JSON value instead of text.")
        }
        text += entry("-h, --help", "Show help information.")
        if !subcommands.isEmpty {
            text += "\nSUBCOMMANDS:\n"
            for subcommand in subcommands { text += entry(subcommand.path.last!, subcommand.overview) }
        }
        if !command.examples.isEmpty {
            text += "\nEXAMPLES:\n"
            for example in command.examples { text += "  \(example)\n" }
        }
        text += "\nSee 'tartil help' for the global options.\n"
        return text
    }

    /// A command's description for scripts (`tartil help --json`).
    static func json(_ command: CommandSpec) -> JSONValue {
        .object([
            ("name", .string(command.name)),
            ("overview", .string(command.overview)),
            ("usage", .string(command.run == nil ? "tartil \(command.name) <subcommand>" : command.usage)),
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

    /// One help entry: the label in a column, the help wrapped beside it.
    static func entry(_ label: String, _ help: String) -> String {
        let indent = String(repeating: " ", count: column)
        let lines = wrap(help, width: 110 - column)
        var text = "  " + label
        if label.count + 2 >= column {
            text += "\n" + indent
        } else {
            text += String(repeating: " ", count: column - label.count - 2)
        }
        text += lines.joined(separator: "\n" + indent) + "\n"
        return text
    }

    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            if !current.isEmpty && current.count + 1 + word.count > width {
                lines.append(current)
                current = ""
            }
            current += current.isEmpty ? String(word) : " " + word
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}
