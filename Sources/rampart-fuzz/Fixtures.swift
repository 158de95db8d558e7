// Fixed inputs shared by the targets: test-only keys (generated for the fuzzer with
// `openssl genrsa -traditional`; never used anywhere else), an auth key, NaCl keys.

import Rampart
import RampartMTProto
import RampartTestSupport

enum Fixtures {
    /// The 2048-bit RSA key of the handshake targets' server.
    static let rsa2048PEM = """
-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAoNYlzZ69VWFx76kf6qU5bCrNTbZdSIi4Nb0ruRXvD13Oit8+
CazKzF7EHj05m61R2qP0Ki850U84ixuLH+xBCbw1xBRN8xdkjszhn/OHxUpsULCR
YFmjg15GVDtj/BCyv9F6R1zdS7sWH4mNYyoXJjpRxFgDoP+IgZBSsjYeMJCa1xiN
Rty113EXPxzDZr4/nTwWZ5tDMT0pAcdptxqUIqGUk6Gkv7aSZDK3kAiIy4kRV7Sd
p2x6jMa1C1jhQTcmRYlh6h6pfDnmH+KOoGG9VTDbywVypA9Df8TXk0RO0+fA9WDk
ffdQ/YKaLMsnXxmtAhK+9SktOKK97WlEd/BGUwIDAQABAoIBAENFftdTq2ZwVRsE
VrSquetbtbZo7fh+MupLPuPx4CVBu7eLK2QZkVNM2eO6AQPzyPZVuDUCvsCkzYYl
lZnbE9LyFVz3jyj7olQ2LrLbxfCHselICO5PX9x9DJaDpszR4SnpAKejmG3qCRVU
z73n53nWT8f7dj0bVGm4x1YB27u8vkAI1Jrbs5plmhudOidBjli3C6Z8ZJStdUCk
7oA44eUfOVIb9M4nqBPwOLTHc6qs9LI/uZxBI1h5L9osD8i5qFACPtGfm7moiupS
pOXo+zB7VPVM6DzQ9TfKDPDJc3jIU/FlPIv5mcIbv1rx18tX9i1HMjQep41uuRdK
/Gz4jdUCgYEAy8Q7brjXYq64iAT3h9wsF9vH8VLgsegNuMZrXUbHrtLClLfcs263
EPdkYHQye158FvB7btsGOE2EZc+NaK8/t4Hcob9Cbt/PsLeGWZoZq+wVNL/QyWyq
urpJZxSKMrjBtX/0JWL6PS2S0LjjpmOAltyxUw8QZzc8FdND7LUXe5cCgYEAyhC4
O6wmk8ViGP3UgdZSzV+hvpaVo9GaEswkgxKPVAlwVfUmiGiixAMirRNYawfy2TD5
Fu2CUm0XMAhlyptzc5Yi95iy2nBLU/sJHCnJEGSY1cHHJlqrZQv/48UGFNG/3PFn
qqL/c7f6HvvISRdIEIa6c6SHJ+gsY7YfdjdrEqUCgYEAqnbNaYFE3o9gXJobIhM0
5/i7Oc2ln++LmyqTIwNVhZFXquZtwcY7a/wqgu5yVPbkRKSF/mVIvM1Ml4ecuxjw
6um+06mXP/4IV8QQpuDd3Q+xZeGaHwfDhFbXlV5/hpM9qkMS0jwNMCTyD569A7N2
Hb8esWeGx3JT18ZXqqyMqp0CgYBL6X4dRO51Q4k4FFw6rvcKmuvb+xyan8r/Vtw8
tcNM8gLW+DOSuaS0eO0VEph8FU9h0ykxOOdl6f/1FqKPPFliSjw2wpImyFs0YLIq
d3RHCVP1skgMG7IaUyi+PC2tsqMe8T5d98B6i9qWu0aiVvHG66aufVgdYPcUOr6V
HfrG1QKBgATJBu+RIcKzP8SFBKeaeKhierkhJywtT6ePYiSMknTFjZP8qER8b0fJ
N0eemzBnWmEQ2dL3rN2daRd6/tfDK0z2nCa2CNgf1i11jyN2uJUdXMr7cuinDVek
PTlPmst3MWXMSmvMzCxXyqiFnphODdlxh/XnZEPb6ddf5rOgDHFm
-----END RSA PRIVATE KEY-----
"""

    /// A 1024-bit RSA key (private-key seeds; cheap raw private operations).
    static let rsa1024PEM = """
-----BEGIN RSA PRIVATE KEY-----
MIICXQIBAAKBgQCzm2Q3H/NJYbRLKMYVhxPw+iUzSSPAwhbZkNXP6G5gI/fZsPyn
KNGMrjpKgf1CPIiGAQg5MEPDMBlII09aQSWmZ05mUptyxUSU2ngYXkO2ba3FOM/4
6iY0nDclGmGA8na2t1HzNNYXWyJiqaGVkthsWQe0Y3jitK9ycjS3CCgp5QIDAQAB
AoGAVnxvJ3RFLILV1JNPvzIKUjHCFA4WH03WvvFVZAYikD0BrlvhbYTkUv/apeIu
V+TaQNziXtd06dqRcgE+xtE0FTyHptDVJH3Ou166Sq1j6LoxZ99dp1+54Ia+D7E2
D+j14mcD6+1rqsTtlwjcxC0b6AXR9cXNZTAPhK/3L9HnLMkCQQDY5VGRQVQOjbX7
WIjXIqtwmjZsWjanDNCDkDzfNU3TTK3iciMSknwuKOjZQsshiYj3wNjK1fyiI0pg
JUw/kN6fAkEA0/0Irj2J4eSYxYpmscLgmBzesjJwZn1xZSCqW7yFKJ/gEb6UE9xB
0yOHbBtjMYfTWlEZN597zx1KjQo1/2uc+wJBALJFOZe0JEyZ+VuPV1nMKzEv7097
jrQa+j9IjF/BxifIPJuEyIL5V4vxIAGCvsbf7m4EWavN2gnCC92eil8syW0CQHoR
mLAMy5sCMV5+5ceyufWdmjbuiH7b+TIMb0zH772G4lYVcdtF17mnGdIMqz/YQMIf
NPAsq/SFn2o72QAtjYUCQQCW4GwG8uWqSbMbO9khbhGFjvLiso70KBLztltwpYaU
RKD2eHgPlXXi197FWcU0MQravS17p840evC+0y8GzP9d
-----END RSA PRIVATE KEY-----
"""

    static let rsa2048: RSA.PrivateKey = {
        guard let k = try? RSA.PrivateKey(pemRepresentation: rsa2048PEM) else { FuzzCheck.fail("fixture key does not parse") }
        return k
    }()

    static let rsa1024: RSA.PrivateKey = {
        guard let k = try? RSA.PrivateKey(pemRepresentation: rsa1024PEM) else { FuzzCheck.fail("fixture key does not parse") }
        return k
    }()

    /// 256 bytes from a fixed seed.
    static let authKeyBytes: [UInt8] = { var r = SplitMix64(seed: 0xA07E); return r.packedBytes(256) }()
    static let authKey: AuthKey = {
        guard let k = try? AuthKey(authKeyBytes) else { FuzzCheck.fail("fixture auth key") }
        return k
    }()

    /// A second auth key (the permanent key of temp-key binding).
    static let permanentAuthKey: AuthKey = {
        var r = SplitMix64(seed: 0xBEEF)
        guard let k = try? AuthKey(r.packedBytes(256)) else { FuzzCheck.fail("fixture auth key") }
        return k
    }()

    /// A 32-byte symmetric key from a fixed seed.
    static func key(_ seed: UInt64, bytes: Int = 32) -> SymmetricKey {
        var r = SplitMix64(seed: seed)
        return SymmetricKey(data: r.packedBytes(bytes))
    }

    static let naclKey = key(0x5EC2E7)
    static let aliceNaCl: Curve25519.KeyAgreement.PrivateKey = {
        var r = SplitMix64(seed: 0xA11CE)
        return Curve25519.KeyAgreement.PrivateKey(using: &r)
    }()
    static let bobNaCl: Curve25519.KeyAgreement.PrivateKey = {
        var r = SplitMix64(seed: 0xB0B)
        return Curve25519.KeyAgreement.PrivateKey(using: &r)
    }()

    /// The 16-byte MTProxy secret key of the obfuscated2 and fake-TLS targets.
    static let proxySecret = key(0x5EC7E7, bytes: 16)
}
