import ArgumentParser

/// The one operand of `keys retire` and `sessions revoke`. Kids and sids
/// are base64url, so one in 64 begins with "-": they are parsed with
/// `.allUnrecognized` so that such a value is not taken for an unknown
/// option, which also hands over a "--" among the values.
enum IdentifierOperand {
    /// POSIX utility guideline 10: "The first -- argument that is not an
    /// option-argument should be accepted as a delimiter indicating the end
    /// of options. Any following arguments should be treated as operands,
    /// even if they begin with the '-' character."
    static func single(_ values: [String], naming what: String) throws -> String {
        let operands = values.first == "--" ? Array(values.dropFirst()) : values
        guard operands.count == 1 else { throw ValidationError("name exactly one \(what)") }
        return operands[0]
    }
}
