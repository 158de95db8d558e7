// Hooks filled in by later families (BLAKE2b, scrypt).

extension SharedVectors {
    static func extraRFCStandard(_ name: String, _ d: [String: Any], _ options: VectorOptions) throws -> [VectorResult] { [] }
}
