// How the arm64 kernels present themselves to the registries: on arm64 as themselves; on other
// processors, where their sources run on emulated instructions (ARMv8Emulated.swift), as test-only
// implementations that need no feature and are never selected.

import Swift

/// The registry name of an arm64 kernel: its own on arm64; elsewhere, where its sources run on the
/// emulated instructions, `name-emulated` (Platform/Registry.swift never selects those: they are neither
/// fast nor constant time; the tests pin them).
public func armImplementationName(_ name: String) -> String {
    #if arch(arm64)
    return name
    #else
    return name + "-emulated"
    #endif
}

/// The features an arm64 kernel needs: its own on arm64, none where it runs emulated.
public func armImplementationRequires(_ features: KernelFeatures) -> KernelFeatures {
    #if arch(arm64)
    return features
    #else
    return []
    #endif
}
