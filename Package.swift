// swift-tools-version:6.0
// tartil — a Qur'an recitation audio engine for Linux. No package dependencies: only the toolchain and
// system C libraries, each behind one C target that exactly one Swift module imports.
import Foundation
import PackageDescription

/// One `[system]` target per C library, found through pkg-config, with the Debian package that provides it.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// A release build links libstdc++, which the Swift runtime uses for a few dozen functions, from its static
/// archive: the shared library's load costs every start of tartil about 2M instructions (1,700 symbol bindings and
/// 2,700 relocations) for those (a short play's whole process: 22.9M → 20.8M). `tools/link` holds only
/// `libstdc++.a`, a link to Debian 12's (libstdc++-12-dev, which Swift needs anyway), so that the linker finds it
/// before the shared one; where that archive is not there, libstdc++ is linked as a shared library.
let staticLibstdcxx: [LinkerSetting] = {
    let directory = Context.packageDirectory + "/tools/link"
    guard FileManager.default.fileExists(atPath: directory + "/libstdc++.a") else { return [] }
    return [.unsafeFlags(["-L", directory], .when(configuration: .release))]
}()

/// Links a C library's static archive (from its Debian -dev package) into whatever links the target: the linker
/// takes only the archive's objects tartil calls, and binds them when tartil is linked instead of at every start.
/// `--exclude-libs` keeps the archive's symbols out of the executable's dynamic symbol table (the Swift runtime
/// links executables with -export-dynamic), so a shared library loaded later (libcurl's libcrypto.so.3) keeps its
/// own functions.
func staticArchive(_ archive: String) -> [LinkerSetting] {
    [.unsafeFlags(["-Xlinker", "-l:" + archive, "-Xlinker", "--exclude-libs=" + archive])]
}

let package = Package(
    name: "tartil",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tartil", targets: ["tartil"]),
        .library(name: "TartilCore", targets: ["TartilCore"]),
    ],
    targets: [
        // MARK: C libraries (each imported by exactly one Swift module)
        // Loading a library on first use (dlopen, its functions, its preparation, once): for the C targets below that
        // load theirs so. Imported by no Swift module.
        .target(name: "CLoad", linkerSettings: [.linkedLibrary("dl")]),
        // TartilNet. A C target, not a system library: it loads libcurl.so.4 on first use (see its header), and
        // needs only curl.h from libcurl4-openssl-dev to build.
        .target(name: "CCurl", dependencies: ["CLoad"]),
        systemLibrary("CMpg123", pkgConfig: "libmpg123", apt: "libmpg123-dev"),  // TartilAudio
        // TartilAudio: loaded on first use like libcurl (see its header); needs only the headers of libasound2-dev.
        .target(name: "CALSA", dependencies: ["CLoad"]),
        // TartilAudio: pitch-preserving speed. libsonic-dev has no pkg-config file: the module map links it.
        .systemLibrary(name: "CSonic", providers: [.apt(["libsonic-dev"])]),
        // TartilSQLite: linked from libsqlite3-dev's static archive (see its header).
        .target(name: "CSQLite", linkerSettings: staticArchive("libsqlite3.a")),
        // TartilCache: SHA-256, linked from libssl-dev's static libcrypto.a; the shared libcrypto libcurl uses is
        // prepared on first use like libcurl (see its header).
        .target(name: "CCrypto", dependencies: ["CLoad"], linkerSettings: staticArchive("libcrypto.a")),
        // TartilShell: libedit for the prompt, loaded on first use like libcurl.
        .target(name: "CEdit", linkerSettings: [.linkedLibrary("dl")]),
        // TartilMPRIS: sd-bus from libsystemd, loaded on first use like libcurl (a machine without libsystemd or a
        // session bus still runs tartil); needs only the headers of libsystemd-dev to build.
        .target(name: "CSdBus", dependencies: ["CLoad"]),
        .systemLibrary(name: "CSystem"),  // TartilCache: Linux calls Glibc does not declare (syncfs, O_DIRECT, O_TMPFILE, OFD locks)

        // MARK: Swift modules
        .target(name: "TartilCore"),
        // Threads, locks, files, clocks and the system-call funnel: what TartilCore, being pure, leaves out.
        .target(name: "TartilSystem", dependencies: ["TartilCore"]),
        .target(name: "TartilSQLite", dependencies: ["CSQLite"]),
        .target(name: "TartilJournal", dependencies: ["TartilCore", "TartilSystem", "TartilSQLite"]),
        .target(name: "TartilCache", dependencies: ["TartilCore", "TartilSystem", "CCrypto", "CSystem", "TartilSQLite"]),
        .target(name: "TartilNet", dependencies: ["TartilCore", "TartilSystem", "CCurl", "TartilCache"]),
        .target(name: "TartilAudio", dependencies: ["TartilCore", "TartilSystem", "CMpg123", "CALSA", "CSonic"]),
        .target(
            name: "TartilPlayer",
            dependencies: ["TartilCore", "TartilSystem", "TartilAudio", "TartilNet", "TartilCache"]),
        // The session: the one owner of playback, the journal writer and events; every front end is its client.
        .target(
            name: "TartilSession",
            dependencies: ["TartilCore", "TartilSystem", "TartilPlayer", "TartilAudio", "TartilNet", "TartilCache", "TartilJournal"]),
        // The control socket: a front end of the session (server), and how another process reaches it (client).
        .target(name: "TartilControl", dependencies: ["TartilCore", "TartilSystem", "TartilSession"]),
        .target(name: "TartilMPRIS", dependencies: ["TartilCore", "TartilSystem", "TartilSession", "CSdBus"]),
        .target(
            name: "TartilCLI",
            dependencies: [
                "TartilCore", "TartilSystem", "TartilSession", "TartilControl", "TartilMPRIS",
            ]),
        // The shell: tartil as a process on a terminal (signals, the prompt's line editing, keys, the live line) and
        // the front ends a playing process serves (the control socket, MPRIS), hosting TartilCLI's command language.
        .target(
            name: "TartilShell",
            dependencies: ["TartilCLI", "TartilCore", "TartilSystem", "TartilSession", "TartilControl", "TartilMPRIS", "CEdit"]),
        // The Swift driver links executables with -export-dynamic; tartil's own symbols need not be in its dynamic
        // symbol table (7,300 of them, which the loader and the runtime's dladdr search at every start).
        .executableTarget(
            name: "tartil", dependencies: ["TartilShell"],
            linkerSettings: staticLibstdcxx + [.unsafeFlags(["-Xlinker", "--no-export-dynamic"])]),

        // MARK: Tests
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "TartilCoreTests", dependencies: ["TartilCore", "TestSupport"]),
        .testTarget(name: "TartilAudioTests", dependencies: ["TartilAudio", "TartilCore", "TestSupport"]),
        .testTarget(name: "TartilCacheTests", dependencies: ["TartilCache", "TartilSystem", "TestSupport"]),
        .testTarget(name: "TartilNetTests", dependencies: ["TartilNet", "TartilCache", "TartilCore", "TartilSystem", "TestSupport"]),
        .testTarget(name: "TartilSQLiteTests", dependencies: ["TartilSQLite", "TartilJournal", "TartilCore", "TartilSystem", "TestSupport"]),
        .testTarget(
            name: "TartilCLITests", dependencies: ["TartilCLI", "TartilCore", "TartilSession", "TartilPlayer", "TestSupport"],
            exclude: ["Golden"]),
        .testTarget(name: "TartilSessionTests", dependencies: ["TartilSession", "TartilControl", "TartilCore", "TartilSystem", "TestSupport"]),
        .testTarget(name: "TartilMPRISTests", dependencies: ["TartilMPRIS", "TartilCore", "TartilPlayer", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TartilCore", "TestSupport"], exclude: ["Golden"]),
        // Fuzzing every parser, in-process and through the built executable (tools/fuzz runs a longer budget).
        .testTarget(
            name: "FuzzTests", dependencies: ["TartilCLI", "TartilControl", "TartilCore", "TartilJournal", "TartilSession", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// tartil's own modules import no `_StringProcessing` (the regex library the compiler otherwise imports into every
// Swift file, where the standard string searching lives): linking it added 421 protocol conformances, which every
// runtime conformance lookup walks, to a binary that uses no regex. Its searching is TartilCore's
// (`firstRange(ofText:)`, `contains(text:)`, `replacingEvery(_:with:)`); a use of it does not compile.
for target in package.targets where target.type == .regular || target.type == .executable {
    guard target.name.hasPrefix("Tartil") || target.name == "tartil" else { continue }
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Xfrontend", "-disable-implicit-string-processing-module-import"])]
}
