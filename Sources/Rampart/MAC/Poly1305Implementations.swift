// Poly1305's implementations as the registry sees them (Platform/Registry.swift): the portable code,
// the known-answer self-test and the fault switch's corrupted form. The kernels declare their own
// conformances in their modules (RampartAccelIFMA, RampartAccelAVX2).

internal import RampartKernelSupport

/// The portable Poly1305 blocks (MAC/Poly1305.swift's radix-2^64 code), one block a group.
enum Poly1305Portable: Poly1305Implementation {
    static let name = "portable"
    static let requires: KernelFeatures = []
    static let groupBlocks = 1

    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ groups: Int) {
        let r0 = state[0], r1 = state[1], s1 = state[2]
        var h0 = state[3], h1 = state[4], h2 = state[5]
        var p = data
        var n = groups
        while n > 0 {
            poly1305Block(&h0, &h1, &h2, m0: p.loadLE64(0), m1: p.loadLE64(8), hibit: 1, r0: r0, r1: r1, s1: s1)
            p += 16
            n &-= 1
        }
        state[3] = h0; state[4] = h1; state[5] = h2
    }
}

/// RFC 8439 Appendix A.3 test vector #3 (the 375-byte IETF text, r ≠ 0) and NaCl's one-time
/// authenticator test (131 bytes, libsodium onetimeauth.c): their whole groups of full blocks through
/// `impl` (two groups of eight and one, five groups of four and two), the rest and the tag through the
/// portable code, against the published tags.
func poly1305SelfTest(_ impl: any Poly1305Implementation.Type) -> Bool {
    let ietf = Array(("Any submission to the IETF intended by the Contributor for publication as all or part of an IETF "
        + "Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an "
        + "\"IETF Contribution\". Such statements include oral statements in IETF sessions, as well as written and "
        + "electronic communications made at any time or place, which are addressed to").utf8)
    let nacl = publishedBytes(
        "8e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c972"
            + "71d2c20f9b928fe2270d6fb863d51738b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da"
            + "99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5")
    let cases: [(key: String, message: [UInt8], tag: String)] = [
        ("36e5f6b5c5e06070f0efca96227a863e00000000000000000000000000000000", ietf, "f3477e7cd95417af89a6b8794c310cf0"),
        ("eea6a7251c1e72916d11c2cb214d3c252539121d8e234e652d651fa4c8cff880", nacl, "f3ffc7703f9400e52a7dfb4b3d3305d9"),
    ]
    for c in cases {
        var st = publishedBytes(c.key).withUnsafeBytes { Poly1305State(key: $0.baseAddress!, backend: .portable) }
        var tag = [UInt8](repeating: 0, count: 16)
        c.message.withUnsafeBytes { m in
            let groups = m.count / 16 / impl.groupBlocks
            var words = SIMD8<UInt64>(st.r0, st.r1, st.s1, st.h0, st.h1, st.h2, 0, 0)
            if groups > 0 {
                withUnsafeMutableBytes(of: &words) { impl.blocks($0.baseAddress!.assumingMemoryBound(to: UInt64.self), m.baseAddress!, groups) }
            }
            st.h0 = words[3]; st.h1 = words[4]; st.h2 = words[5]
            let done = 16 * groups * impl.groupBlocks
            st.update(m.baseAddress! + done, m.count - done)
        }
        tag.withUnsafeMutableBytes { st.finalize(into: $0.baseAddress!) }
        guard tag == publishedBytes(c.tag) else { return false }
    }
    return true
}

/// The implementation with one accumulator bit flipped after every call.
enum FaultyPoly1305<Base: Poly1305Implementation>: Poly1305Implementation {
    static var name: String { Base.name }
    static var requires: KernelFeatures { Base.requires }
    static var groupBlocks: Int { Base.groupBlocks }
    static func blocks(_ state: UnsafeMutablePointer<UInt64>, _ data: UnsafeRawPointer, _ groups: Int) {
        Base.blocks(state, data, groups)
        state[3] ^= 1
    }
}

func faultyPoly1305(_ b: any Poly1305Implementation.Type) -> any Poly1305Implementation.Type {
    func wrap<B: Poly1305Implementation>(_: B.Type) -> any Poly1305Implementation.Type { FaultyPoly1305<B>.self }
    return wrap(b)
}
