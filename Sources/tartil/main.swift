import Glibc
import TartilShell

Tartil.traceMain()

exit(Tartil.run(arguments: Array(CommandLine.arguments.dropFirst())))
