import SSOCore

extension MessageCatalogue {
    /// The language a sign-in or getting-in page posted or linked with
    /// (`lang`), so the next page stays in it. Only a language there are
    /// pages in counts; anything else is ignored (then Accept-Language).
    func pageLanguage(_ parameters: FormParameters) -> String? {
        guard let given = (try? parameters.single("lang")) ?? nil, let tag = LanguagePreferences.normalisedTag(given),
              available.contains(tag) else { return nil }
        return tag
    }
}
