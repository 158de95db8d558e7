// Base64 lives in RampartEncoding, below Rampart, so that PEM and the codecs share one constant-time
// implementation; this module re-exports it (`import RampartCodecs` still brings `Base64`).
@_exported import RampartEncoding
