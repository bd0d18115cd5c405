import Glibc
import TartilCore
import TartilNet
import TartilSystem

/// The global options every command shares, each also settable by an environment variable, with defaults
/// under the XDG base directories.
///
/// | option | variable | default |
/// |---|---|---|
/// | `--mirrors FILE` | `TARTIL_MIRRORS` | `$XDG_CONFIG_HOME/tartil/mirrors.json` if present, else the bundled one |
/// | `--tables DIR` | `TARTIL_TABLES` | `$XDG_DATA_HOME/tartil/reciter-tables`, then the bundled tables |
/// | `--cache-dir DIR` | `TARTIL_CACHE_DIR` | `$XDG_CACHE_HOME/tartil` |
/// | `--journal FILE` | `TARTIL_JOURNAL` | `$XDG_DATA_HOME/tartil/journal.sqlite` |
/// | `--ca-bundle FILE` | `SSL_CERT_FILE`, `CURL_CA_BUNDLE` | libcurl's default CA bundle |
/// | `--no-mpris` | `TARTIL_MPRIS=0` | MPRIS on when a session bus is reachable |
/// | `--json` | | off |
///
/// The config file (`$XDG_CONFIG_HOME/tartil/config`, or `TARTIL_CONFIG`) sets the same things below the
/// environment: command line > environment > config file > default.
public struct Settings: Sendable {
    /// Print one JSON value per command instead of text.
    public var json = false
    /// Explicit values from options (nil: use the variable or the default).
    public var mirrorsOption: String?
    public var tablesOption: String?
    public var cacheDirectoryOption: String?
    public var journalOption: String?
    public var socketOption: String?
    public var caBundleOption: String?
    /// `--no-mpris`: do not appear on the session bus.
    public var noMPRIS = false
    /// The config file, when there is one.
    public var config: ConfigFile?

    /// The process environment (injectable for tests).
    public let environment: Environment
    /// The directory holding the bundled `mirrors.json` and `reciter-tables/`, if found.
    public let bundledDataDirectory: String?

    public init(environment: Environment, bundledDataDirectory: String?) {
        self.environment = environment
        self.bundledDataDirectory = bundledDataDirectory
    }

    // MARK: - XDG base directories

    private var home: String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        return "/"
    }

    /// `$NAME` when it is an absolute path (the XDG spec ignores relative ones), else `$HOME/fallback`.
    private func xdg(_ name: String, _ fallback: String) -> String {
        if let value = environment[name], value.hasPrefix("/") { return value }
        return Path.join(home, fallback)
    }

    public var configHome: String { Path.join(xdg("XDG_CONFIG_HOME", ".config"), "tartil") }
    public var dataHome: String { Path.join(xdg("XDG_DATA_HOME", ".local/share"), "tartil") }
    public var stateHome: String { Path.join(xdg("XDG_STATE_HOME", ".local/state"), "tartil") }

    /// Where the config file is read from: `TARTIL_CONFIG`, else `$XDG_CONFIG_HOME/tartil/config`.
    public var configFile: String {
        if let path = environment["TARTIL_CONFIG"], !path.isEmpty { return path }
        return Path.join(configHome, "config")
    }

    /// Reads the config file, when it exists; a usage error (with its line) when it is not right.
    public func loadConfig() throws(TartilError) -> ConfigFile? {
        let path = configFile
        guard FileSystem.exists(path) else {
            if environment["TARTIL_CONFIG"]?.isEmpty == false { throw .usage("TARTIL_CONFIG names \(path), which does not exist") }
            return nil
        }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.read(path)
        } catch {
            throw .usage("the config file \(path) cannot be read: \(error.message)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .usage("\(path): not UTF-8 text") }
        return try ConfigFile.parse(text, file: path)
    }

    /// A command option's default from the config file (`output`, `device`, `speed`…).
    public func configured(_ key: String) -> String? { config?.value(key) }

    // MARK: - Resolved paths

    /// An explicit value: the option, else the environment variable (empty values count as unset).
    private func explicit(_ option: String?, _ variable: String) -> (value: String, source: String)? {
        if let option, !option.isEmpty { return (option, "option") }
        if let value = environment[variable], !value.isEmpty { return (value, variable) }
        let key = Self.configKeys[variable] ?? ""
        if let value = config?.value(key) { return (value, config!.location(key)) }
        return nil
    }

    /// The config file's name for each variable's setting.
    private static let configKeys = [
        "TARTIL_MIRRORS": "mirrors", "TARTIL_TABLES": "tables", "TARTIL_CACHE_DIR": "cache-dir", "TARTIL_JOURNAL": "journal",
        "TARTIL_SOCKET": "socket",
    ]

    /// The mirrors file in use and where that choice came from (`--mirrors`, `TARTIL_MIRRORS`, `user`, `bundled`).
    public func mirrorsFile() throws(TartilError) -> (path: String, source: String) {
        if let chosen = explicit(mirrorsOption, "TARTIL_MIRRORS") {
            return (chosen.value, chosen.source == "option" ? "--mirrors" : chosen.source)
        }
        let user = Path.join(configHome, "mirrors.json")
        if FileSystem.exists(user) { return (user, "user") }
        if let bundled = bundledDataDirectory {
            return (Path.join(bundled, "mirrors.json"), "bundled")
        }
        throw TartilError(
            .notFound,
            "no mirrors.json found: not at \(user), and the bundled data directory was not found (pass --mirrors FILE, or set TARTIL_MIRRORS or TARTIL_DATA_DIR)")
    }

    /// The tables directory given by `--tables` or `TARTIL_TABLES`, if any.
    public var explicitTablesDirectory: String? { explicit(tablesOption, "TARTIL_TABLES")?.value }

    /// Directories searched for reciter tables, in order.
    public var tableDirectories: [String] {
        if let chosen = explicit(tablesOption, "TARTIL_TABLES") { return [chosen.value] }
        var directories = [Path.join(dataHome, "reciter-tables")]
        if let bundled = bundledDataDirectory {
            directories.append(Path.join(bundled, "reciter-tables"))
        }
        return directories
    }

    /// Where `table build` writes by default: the explicit tables directory, else the user's.
    public var tableOutputDirectory: String { tableDirectories[0] }

    public var cacheDirectory: String {
        explicit(cacheDirectoryOption, "TARTIL_CACHE_DIR")?.value
            ?? Path.join(xdg("XDG_CACHE_HOME", ".cache"), "tartil")
    }

    /// The cache directory, checked before anything is written: the path, or the nearest part of it that
    /// exists, must be a directory (a symbolic link to one is fine: caches live on other disks). Anything else is
    /// a usage error naming where the path came from.
    public func checkedCacheDirectory() throws(TartilError) -> String {
        let directory = cacheDirectory
        let source = explicit(cacheDirectoryOption, "TARTIL_CACHE_DIR").map { $0.source == "option" ? "--cache-dir" : $0.source }
            ?? "the cache directory"
        var existing = directory
        var status = stat()
        while stat(existing, &status) != 0 {
            let parent = Path.parent(existing)
            // Permission problems and the like are the cache's to report when it opens the directory.
            let error = Errno.current
            guard error == .noEntry || error == .notDirectory, parent != existing else { return directory }
            existing = parent
        }
        if (status.st_mode & S_IFMT) != S_IFDIR {
            let what = existing == directory ? "is not a directory" : "cannot be made: \(existing) is not a directory"
            throw .usage("\(source) \(directory) \(what) (give a directory, or a path where one can be made)")
        }
        return directory
    }

    /// True when the journal was named (`--journal` or `TARTIL_JOURNAL`): a bad file there is bad input.
    public var journalIsExplicit: Bool { explicit(journalOption, "TARTIL_JOURNAL") != nil }

    public var journalFile: String {
        explicit(journalOption, "TARTIL_JOURNAL")?.value
            ?? Path.join(dataHome, "journal.sqlite")
    }

    /// Whether a player appears on the session bus as an MPRIS media player: not with `--no-mpris` or
    /// `TARTIL_MPRIS=0`.
    public var mprisEnabled: Bool {
        if noMPRIS { return false }
        if let variable = environment["TARTIL_MPRIS"], !variable.isEmpty { return variable != "0" }
        return config?.value("mpris").flatMap(ConfigFile.switchValue) ?? true
    }

    /// The CA certificates downloads trust instead of libcurl's default bundle, and where that choice came from:
    /// `--ca-bundle`, else `SSL_CERT_FILE`, else `CURL_CA_BUNDLE` (the variables OpenSSL's and curl's users
    /// set; libcurl with OpenSSL reads neither itself), else `ca-bundle=` in the config file; nil for the default.
    public var caBundle: (path: String, source: String)? {
        if let option = caBundleOption, !option.isEmpty { return (option, "--ca-bundle") }
        for variable in ["SSL_CERT_FILE", "CURL_CA_BUNDLE"] {
            if let value = environment[variable], !value.isEmpty { return (value, variable) }
        }
        if let value = config?.value("ca-bundle") { return (value, config!.location("ca-bundle")) }
        return nil
    }

    /// A directory of CA certificates downloads trust besides the bundle (`SSL_CERT_DIR`, as OpenSSL reads it: one
    /// directory or several separated by colons, each holding certificates named by their hash), and where it
    /// came from; nil when the variable is not set.
    public var caDirectory: (path: String, source: String)? {
        guard let value = environment["SSL_CERT_DIR"], !value.isEmpty else { return nil }
        return (value, "SSL_CERT_DIR")
    }

    /// `caDirectory`'s path, checked before anything is downloaded: each of its directories exists and can be read.
    public func checkedCADirectory() throws(TartilError) -> String? {
        guard let (path, source) = caDirectory else { return nil }
        for directory in path.split(separator: ":", omittingEmptySubsequences: true).map(String.init) {
            var status = stat()
            let reason: String? =
                stat(directory, &status) != 0 ? Errno.current.description
                : (status.st_mode & S_IFMT) != S_IFDIR ? "not a directory"
                : access(directory, R_OK | X_OK) != 0 ? Errno.current.description : nil
            if let reason {
                throw .usage("the CA directory \(directory) (from \(source)) cannot be used: \(reason) (give directories of CA certificates named by their hash, as openssl rehash makes, separated by colons)")
            }
        }
        return path
    }

    /// The largest CA bundle read (the system's is about 200 KB).
    static let maximumCABundleBytes = 16 << 20

    /// `caBundle`'s path, checked before anything is downloaded: a readable file holding at least one PEM
    /// certificate. Anything else is a usage error naming where the path came from.
    public func checkedCABundle() throws(TartilError) -> String? {
        guard let (path, source) = caBundle else { return nil }
        let bytes: [UInt8]
        do throws(TartilError) {
            var status = stat()
            if stat(path, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG {
                throw TartilError(.usage, "not a regular file")
            }
            if stat(path, &status) == 0, Int(status.st_size) > Self.maximumCABundleBytes {
                throw TartilError(.usage, "larger than \(Self.maximumCABundleBytes >> 20) MiB")
            }
            bytes = try FileSystem.read(path)
        } catch {
            let reason = error.cause.map { "\(error.message): \($0)" } ?? error.message
            throw .usage("the CA bundle \(path) (from \(source)) cannot be used: \(reason) (give a PEM file of CA certificates)")
        }
        guard bytes.count <= Self.maximumCABundleBytes, Self.holdsPEMCertificate(bytes) else {
            throw .usage("the CA bundle \(path) (from \(source)) holds no PEM certificate (-----BEGIN CERTIFICATE-----): give a PEM file of CA certificates")
        }
        return path
    }

    /// Whether `bytes` hold `-----BEGIN CERTIFICATE-----`, searched in the bytes themselves (the system's bundle is
    /// about 200 KB, read on every start of a play: no String is made of it).
    static func holdsPEMCertificate(_ bytes: [UInt8]) -> Bool {
        bytes.contains(bytes: Array("-----BEGIN CERTIFICATE-----".utf8))
    }

    /// The REPL's history file.
    public var historyFile: String { Path.join(stateHome, "history") }

    /// The default reciter for commands that take `--reciter` (`TARTIL_RECITER`).
    public var defaultReciter: String? { environment["TARTIL_RECITER"].flatMap { $0.isEmpty ? nil : $0 } ?? config?.value("reciter") }

    // MARK: - Bundled data

    /// Finds the directory holding the bundled `mirrors.json` and `reciter-tables/`: `$TARTIL_DATA_DIR`, else
    /// `<prefix>/share/tartil` beside an installed executable, else the source checkout the executable was built
    /// in (found by walking up from it).
    public static func findBundledDataDirectory(environment: Environment, executablePath: String?) -> String? {
        if let directory = environment["TARTIL_DATA_DIR"], !directory.isEmpty { return directory }
        guard let executablePath else { return nil }
        let executable = realPath(executablePath)
        var directory = Path.parent(executable)
        let installed = Path.join(Path.parent(directory), "share/tartil")
        if holdsData(installed) { return installed }
        while directory != "/" && !directory.isEmpty {
            if holdsData(directory) && FileSystem.exists(directory + "/Package.swift") {
                return directory
            }
            directory = Path.parent(directory)
        }
        return nil
    }

    /// The canonical path (symbolic links resolved), or `path` itself when it cannot be resolved.
    private static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func holdsData(_ directory: String) -> Bool {
        FileSystem.exists(Path.join(directory, "mirrors.json"))
    }
}

// MARK: - What the settings point at

extension Settings {
    /// Loads `mirrors.json` and locates the tables as the settings say.
    public func library() throws(TartilError) -> ReciterLibrary {
        let mirrors = try mirrorsFile()
        if let tables = explicitTablesDirectory {
            if !FileSystem.exists(tables) {
                throw TartilError(.usage, "the tables directory \(tables) does not exist (--tables or TARTIL_TABLES)")
            }
            // A file here would silently pin nothing: every ayah would be trusted on first use.
            guard FileSystem.isDirectory(tables) else {
                throw TartilError(.usage, "--tables takes a directory of reciter tables, and \(tables) is a file (--tables or TARTIL_TABLES)")
            }
        }
        if FileSystem.isDirectory(mirrors.path) {
            throw TartilError(.usage, "\(mirrors.path) (from \(mirrors.source)) is a directory: give the path of a mirrors.json")
        }
        do {
            return try ReciterLibrary(mirrorsFile: mirrors.path, tableDirectories: tableDirectories, learnedDirectory: cacheDirectory)
        } catch where error.code == .notFound && mirrors.source != "bundled" && mirrors.source != "user" {
            // A file the user named that is not there is bad input, not a failure of tartil's own files.
            throw TartilError(.usage, "\(mirrors.path) (from \(mirrors.source)) does not exist: give the path of a mirrors.json")
        }
    }

    /// The reciter named `name` (`--reciter`), else the default reciter, as mirrors.json spells its id: any case, a
    /// unique prefix of an id or words of a name select one. `command` names the command in the message when
    /// neither is given.
    public func reciterID(named name: String?, for command: String) throws(TartilError) -> ReciterID {
        guard let text = name ?? defaultReciter else {
            throw .usage("\(command) needs --reciter <id> (or a default reciter: TARTIL_RECITER, or reciter= in the config file); `tartil reciters` lists them")
        }
        return try library().reciter(named: text).id
    }

    /// `limits` with the CA certificates to trust (`checkedCABundle`, `checkedCADirectory`), for every command
    /// that downloads.
    public func trusting(_ limits: DownloadLimits) throws(TartilError) -> DownloadLimits {
        var limits = limits
        limits.caBundle = try checkedCABundle()
        limits.caDirectory = try checkedCADirectory()
        return limits
    }

    /// `limits` trusting the CAs (`trusting`), with the config file's `connect-timeout` and `stall-timeout`, and
    /// then `invocation`'s `--connect-timeout` and `--stall-timeout` (which win): what every command that
    /// downloads runs under.
    public func downloadLimits(_ limits: DownloadLimits = DownloadLimits(), options invocation: Invocation? = nil) throws(TartilError) -> DownloadLimits {
        var limits = try trusting(limits).with(
            connectTimeout: configured("connect-timeout").map { ($0, "\(config?.location("connect-timeout") ?? "config"): connect-timeout") },
            stallTimeout: configured("stall-timeout").map { ($0, "\(config?.location("stall-timeout") ?? "config"): stall-timeout") })
        if let invocation { limits = try limits.with(invocation) }
        return limits
    }
}
