// RampartMTProto: Telegram's MTProto 2.0 as a sans-I/O module. Values take bytes (and a clock value
// and a random number generator where needed) and return bytes and events: no sockets, no global
// clock, no hidden state. Layout: TL/ (reader and writer), Message/ (auth key, msg_key, KDF, the
// encrypted envelope), Session/ (msg_id, seq_no, salts, containers, service messages), Handshake/
// (client and server auth-key exchange, temporary keys), Transport/ (framing codecs, obfuscation,
// fake-TLS, server-side detection), Client/ (ClientConnection: transport, handshake and session in
// one). The loopback test server is a separate target, RampartMTProtoServer. Protocol facts:
// Docs/MTProto.md.

@_exported import Rampart
