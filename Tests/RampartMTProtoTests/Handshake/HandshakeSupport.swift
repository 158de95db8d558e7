// Auth-key handshake: the official sample replayed byte for byte through the client (randomness
// injected), RSA_PAD and temporary-key vectors (Docs/MTProto.md §10.G), client↔server round trips (permanent,
// temporary, legacy RSA padding, dh_gen_retry), and every bad-input path.

import Foundation
import Testing
@testable import RampartMTProto

/// A 2048-bit RSA key made for these tests only (`openssl genrsa -traditional 2048`).
let handshakeTestKeyPEM = """
-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAp1GufBGaCmEbEr37inpzWnhrs9OGh1zl4uNZQS7OcYAezBwE
Paoyy5kwSgvvdPt7tO5xhEJ09LSEPZA0XHE9WqaVbh3qK6nnV0Or8hzSz5j33sOf
OIHSy6kBUGCez4mkvw7egvrNVhiiwnSuz5De691K9JKNPPIE8VrfI8PILLW+qiKZ
dxXvuQQl4VE84pqZEJxsdjqIYZIWz7vWCdFgHIogtAdy4dLTpPocpNPc8YBcmFH+
5GRpSvRZR8C/9UNP7/ltWmGAyvvWTZ35eM3eUNdrqrLQsa7CVTGa37Z5IKCcy/mn
yktyq+JiUTzOJdkQ8dflhqf/RCgBh6pdYuPWSwIDAQABAoIBAAYM/CRcdpedf18k
I66UUwuYgzyTj6/heibEVfv3d1u/aF21PaoFN6UJOyfSWqx+U7DtVomT5arbxFR9
nIcjSTa4A3th9Y/yqv0K43Lz++OqAny50k4206qtx/BiLhwPPDf0j7No4ngUl/40
PgYflRAuhoFls1na3rbjtGIUuG51bR//680V6OJ29Iuby1QI2yLs4KuUVdCrEfuP
XZmI+9SZQZXlDUh9dwrQGUJnK2dcUiNSD3tCI+dUkf6TtYeDC35Ddtd9GexHSVpr
c3ndosr0h/QlsO6R+A+D2HqQqjBGQ4VqATyWcFPOCjXPjnJMofhYcEzN1FNj+AZ3
DzXSp+ECgYEA1SYLgAywSqb0Hxvj+aqBdU7PVm7B517oPBvkJWkpjp7U3Lam3ehx
8R7esYW6m82KeyTQSzTcvtp1hmgembTdE/8AEfAbDt/fkiTdMAqjsNWrd7yaYSdC
npbHwLFhf1ppxVHbZA0UbltF23OR/mtr4aSS0DdJVRw1ovpN3/4M/nkCgYEAyPT2
f+xDuxDIoE9viaok5SGAp17bNKtKTA1Z1UGJpGKWIwc++C7fv0fEIgxB48Gx4lqk
LkAY7lTKuXlD8nzTp5nPHHJGSuIfVJwHOaAqG0U8fUEXPS027Vvph2VMCXF66hc5
2L0Ir9HCjBEbxPEuuM9HLIHoX0bOyXEo5JAPeeMCgYAgdVay/TurYpkyU5D36Bsm
vgWc5+jnTvCWlri7abRGX7GSms32ZPtU+Jp49iBgsYAxGH4PtdEXzzSubxSZ24z/
Con8MVAth7IIE00Lj9M1jpQ5+6KWwN/IPrXUhi6OsjoBLmH2bnd6BrQwovzMfZdE
GUeyJXkpWM5iLzPEtG9OIQKBgQCVNOzhRndzqZ6NCO3z9RS33Aw+OTvg+12K4k7U
/HhKSbjYAUVL2OHgkFScQyWZCfQd8Nb+UDEypFpxJAzDOtOcGaOhp2dxqjtBAyiK
LNWWse2bwnySu8OQsTHPifLPACcXMG+O8axFfyVIAlvv+nOKXLyn2zzBoT1gbFjE
fAJBqQKBgQCRlUo9WZNQ3FZbHWJJocRv+61E7MLf/RkZBxFiz2k333yPqw4wB9nm
/Z4WyGcN23/HcxchKaJ5LPM3LTvfjnkPW0cW5OIGvgf+4iTWGXTHM4DqKLEOpNV6
Jw8CGHG2tJrQE7SMpxmOs0fwsa3g7o9hQiPVUWA+hDqv8+o5Gm/5hw==
-----END RSA PRIVATE KEY-----
"""

/// Telegram's production key (Docs/MTProto.md §3.6), from the module.
let telegramProductionKeyPEM = TelegramPublicKeys.productionPEM
