// libFuzzer target: FormParser.parse (application/x-www-form-urlencoded,
// used for query strings and POST bodies).
// Oracles: no crash; every accepted form respects its limits; and
// encode(parse(x)) parses back to the same pairs (the encoder and the
// strict decoder agree).
import SSOCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = FormLimits.standard
    guard let form = try? FormParser.parse(bytes, limits: limits) else { return 0 }
    precondition(form.pairs.count <= limits.maximumParameters, "more parameters than the limit")
    for pair in form.pairs {
        precondition(pair.value.utf8.count <= limits.maximumValueBytes, "value over the limit")
        precondition(pair.name.utf8.count <= 256, "name over 256 bytes")
        _ = try? form.single(pair.name)
    }
    // Round trip, with limits wide enough for the re-encoded (longer) text.
    let encoded = FormParser.encode(form.pairs.map { ($0.name, $0.value) })
    let wide = FormLimits(maximumBytes: Int.max, maximumParameters: Int.max, maximumValueBytes: Int.max / 4)
    guard let again = try? FormParser.parse(Array(encoded.utf8), limits: wide) else {
        preconditionFailure("re-encoded form does not parse: \(encoded.debugDescription)")
    }
    precondition(again.pairs.map(\.name) == form.pairs.map(\.name) && again.pairs.map(\.value) == form.pairs.map(\.value),
                 "round trip changed the form: \(encoded.debugDescription)")
    return 0
}
