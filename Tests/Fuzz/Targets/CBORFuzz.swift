// libFuzzer target: SSOCore's CBOR decoder (RFC 8949, the subset WebAuthn
// uses) and COSE_Key parsing on the same bytes.
// Oracles: no crash, no hang, only CBORError (decoding) and WebAuthnError
// (COSE) thrown; a decoded item re-encodes (CTAP2 canonical) in no more
// bytes than it was read from, that encoding decodes to the same value and
// encodes to itself, and nests no deeper than the limit; the whole-input
// decode succeeds exactly when the item is all of the input.
import SSOCore

enum FuzzCBOR {
    static func depth(_ value: CBORValue) -> Int {
        switch value {
        case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
        case .map(let entries): 1 + (entries.values.map(depth).max() ?? 0)
        default: 1
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCBOR(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole: CBORValue?
    do {
        whole = try CBOR.decode(bytes)
    } catch is CBORError {
        whole = nil
    } catch {
        preconditionFailure("CBOR.decode threw \(error)")
    }
    do {
        let (value, rest) = try CBOR.decodeItem(bytes[...])
        let consumed = bytes.count - rest.count
        precondition(consumed > 0 && rest.endIndex == bytes.endIndex, "rest is not a suffix")
        precondition((whole != nil) == rest.isEmpty, "decode and decodeItem disagree on trailing bytes")
        if let whole { precondition(whole == value, "decode and decodeItem disagree") }
        precondition(FuzzCBOR.depth(value) <= CBOR.defaultMaximumDepth, "nested deeper than the limit")
        let encoded = value.encoded
        precondition(encoded.count <= consumed, "canonical encoding longer than the input item")
        guard let again = try? CBOR.decode(encoded) else { preconditionFailure("own encoding does not decode") }
        precondition(again == value, "round trip changed the value")
        precondition(again.encoded == encoded, "encoding is not canonical")
    } catch is CBORError {
        precondition(whole == nil, "decode accepted what decodeItem refused")
    } catch {
        preconditionFailure("CBOR.decodeItem threw \(error)")
    }
    do {
        let key = try COSEPublicKey.parse(bytes)
        precondition(whole != nil, "a COSE key that is not one CBOR item")
        _ = key.verify(signature: Array(bytes.suffix(72)), message: bytes)
    } catch is WebAuthnError {
    } catch {
        preconditionFailure("COSEPublicKey.parse threw \(error)")
    }
    return 0
}
