import Foundation
import TartilCache

// The library takes bytes as [UInt8] (it links no Foundation); these tests hold Data.
extension SHA256 {
    static func hash(_ data: Data) throws(CacheError) -> String { try hash(Array(data)) }
    func update(_ data: Data) throws(CacheError) { try update(Array(data)) }
}
