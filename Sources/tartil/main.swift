import FoundationEssentials
import Glibc
import TartilShell

exit(Tartil.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
