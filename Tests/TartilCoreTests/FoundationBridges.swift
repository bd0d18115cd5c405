import Foundation
import TartilCore

// The library takes bytes as [UInt8] (it links no Foundation); these tests hold Data.
extension MirrorList {
    static func parse(_ data: Data, file: String) throws(TartilError) -> MirrorList { try parse(bytes: Array(data), file: file) }
}
