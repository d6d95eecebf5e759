/// Which of the languages Gatehouse has a catalogue for a request gets.
///
/// OpenID Connect Core 1.0 §3.1.2.1: `ui_locales` is the "End-User's
/// preferred languages and scripts for the user interface, represented as a
/// space-separated list of BCP47 [RFC5646] language tag values, ordered by
/// preference". It comes first; then the browser's `Accept-Language`
/// (RFC 9110 §12.5.4), highest weight first; then the deployment's default.
/// Matching is RFC 4647 §3.4 "Lookup": a range that names no catalogue is
/// shortened from the end ("de-CH-1996" → "de-CH" → "de") before the next
/// range is tried.
public enum LanguagePreferences {
    /// At most this many ranges are read from either source: a header of a
    /// thousand tags costs no more than one of sixteen.
    static let maximumRanges = 16

    /// A BCP 47 tag as catalogue files and ranges use it: a 2–3 letter
    /// primary language, then subtags of 1–8 letters or digits. Lowercased.
    public static func normalisedTag(_ text: some StringProtocol) -> String? {
        let lower = text.lowercased()
        let subtags = lower.split(separator: "-", omittingEmptySubsequences: false)
        guard let primary = subtags.first, (2...3).contains(primary.utf8.count),
              primary.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }), subtags.count <= 8 else { return nil }
        for subtag in subtags.dropFirst() {
            guard (1...8).contains(subtag.utf8.count),
                  subtag.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) }) else { return nil }
        }
        return lower
    }

    /// `ui_locales`: space-separated tags in order of preference; a tag that
    /// is not a language tag is skipped, not an error (§3.1.2.1 makes the
    /// parameter a hint: "An error SHOULD NOT result if some or all of the
    /// requested locales are not supported").
    public static func ranges(uiLocales: String?) -> [String] {
        guard let uiLocales else { return [] }
        return uiLocales.split(separator: " ").prefix(maximumRanges).compactMap { normalisedTag($0) }
    }

    /// `Accept-Language: da, en-GB;q=0.8, en;q=0.7`: the ranges by weight,
    /// ties in the order sent; `q=0` means "not acceptable" and `*` names no
    /// language of its own, so both are left out.
    public static func ranges(acceptLanguage: String?) -> [String] {
        weightedRanges(acceptLanguage).filter { $0.weight > 0 }
            .sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.position < $1.position }.map(\.range)
    }

    /// The tags `Accept-Language` refuses: RFC 9110 §12.4.2, "A weight of 0
    /// means 'not acceptable'" (`de;q=0`). Only an explicit zero counts; a
    /// weight that is no qvalue (`q=2`) leaves its range out of `ranges`
    /// but refuses nothing.
    public static func refused(acceptLanguage: String?) -> Set<String> {
        Set(weightedRanges(acceptLanguage).filter(\.explicitZero).map(\.range))
    }

    /// One range of `Accept-Language` (a language tag; `*` is skipped): its
    /// weight in thousandths (1000 without `q`, 0 for a malformed one), its
    /// place in the header, and whether the weight was written as zero.
    struct WeightedRange {
        let range: String
        var weight = 1000
        let position: Int
        var explicitZero = false
    }

    static func weightedRanges(_ acceptLanguage: String?) -> [WeightedRange] {
        guard let acceptLanguage else { return [] }
        var weighted: [WeightedRange] = []
        for (position, member) in acceptLanguage.split(separator: ",").prefix(maximumRanges).enumerated() {
            let parts = member.split(separator: ";")
            guard let first = parts.first, let tag = normalisedTag(first.trimmingASCIIWhitespace()) else { continue }
            var range = WeightedRange(range: tag, position: position)
            for parameter in parts.dropFirst() {
                let pair = parameter.trimmingASCIIWhitespace()
                if pair.hasPrefix("q=") || pair.hasPrefix("Q=") {
                    let value = qvalue(pair.dropFirst(2))
                    range.weight = value ?? 0
                    range.explicitZero = value == 0
                }
            }
            weighted.append(range)
        }
        return weighted
    }

    /// RFC 9110 §12.4.2: `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`,
    /// as thousandths; anything else is nil.
    static func qvalue(_ text: Substring) -> Int? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == 0x30 || first == 0x31 else { return nil }
        var value = Int(first - 0x30) * 1000
        if bytes.count == 1 { return value }
        guard bytes[1] == 0x2E, bytes.count <= 5 else { return nil }
        var scale = 100
        for digit in bytes[2...] {
            guard digit >= 0x30 && digit <= 0x39 else { return nil }
            value += Int(digit - 0x30) * scale
            scale /= 10
        }
        return value <= 1000 ? value : nil
    }

    /// The language of a page: `ui_locales`, then `Accept-Language` (RFC
    /// 4647 lookup over `available`), then `defaultLanguage` unless the
    /// header refuses it (`en;q=0`), in which case the first other language
    /// (in tag order) it does not refuse. RFC 9110 §12.5.4 lets a server
    /// "disregard the header field" rather than answer 406, so when every
    /// language is refused the default is still the answer.
    /// `NginxLanguageMaps` makes the same choice for the static pages.
    public static func choose(uiLocales: String?, acceptLanguage: String?, available: Set<String>, defaultLanguage: String) -> String {
        if let found = lookup(ranges(uiLocales: uiLocales) + ranges(acceptLanguage: acceptLanguage), in: available) { return found }
        let refused = refused(acceptLanguage: acceptLanguage)
        guard refused.contains(defaultLanguage) else { return defaultLanguage }
        return available.sorted().first { !refused.contains($0) } ?? defaultLanguage
    }

    /// RFC 4647 §3.4 Lookup over `ranges` among `available` (normalised
    /// tags); nil when nothing matches.
    public static func lookup(_ ranges: [String], in available: Set<String>) -> String? {
        for range in ranges {
            var candidate = Substring(range)
            while true {
                if available.contains(String(candidate)) { return String(candidate) }
                guard let dash = candidate.lastIndex(of: "-") else { break }
                candidate = candidate[..<dash]
                // §3.4: "If the resulting range ends in a single-letter or
                // digit subtag ... that subtag is also removed."
                if let next = candidate.lastIndex(of: "-"), candidate.distance(from: next, to: candidate.endIndex) == 2 {
                    candidate = candidate[..<next]
                }
            }
        }
        return nil
    }
}
