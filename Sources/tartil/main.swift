import FoundationEssentials
import Glibc
import TartilCLI

exit(Tartil.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
