import AuthServer
import Foundation
import IssuerStorage
import SSOCore

/// The `--json` forms of the list commands: one array of objects, keys in
/// snake_case and sorted, times in seconds since the epoch (null when
/// absent; every key is always present). Never a secret or a hash.
func printJSON<T: Encodable>(_ value: T) {
    print(String(decoding: attempt { try JSON.encode(value) }, as: UTF8.self))
}

