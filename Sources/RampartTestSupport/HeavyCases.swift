// Whether tests run their heavy cases (RFC 7748's million X25519 iterations, 16.7 M PBKDF2 iterations,
// scrypt at N = 2^20, Threema's 64 MiB scrypt): in release builds, unless `RAMPART_SKIP_HEAVY=1` (the
// sanitizer runs set it; CI runs those cases through `rampart vectors` in the plain release build).
// This module is built in the same configuration as the tests, so `DEBUG` is theirs.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if DEBUG
public let runsHeavyCases = false
#else
public let runsHeavyCases: Bool = {
    guard let v = getenv("RAMPART_SKIP_HEAVY") else { return true }
    return String(cString: v) != "1"
}()
#endif
