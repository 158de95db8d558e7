// The Ibex hash-chain ratchet (Docs/Threema.md §1.3): a chain key and a counter, the next chain key
// BLAKE2b(key = CK, salt "kdf-ck", personal "3ma-e2e"), the message key BLAKE2b(key = CK, salt
// "kdf-aek", personal "3ma-e2e").

import Rampart

/// Namespace of the Ibex forward-secrecy subprotocol (Docs/Threema.md §1).
public enum Ibex {
    /// The BLAKE2b personalisation of every Ibex derivation.
    public static let personal = "3ma-e2e"
}

extension Ibex {
    /// One direction of one DH mode (2DH or 4DH): a chain key and the counter of the message it
    /// would encrypt next. Each chain key is released (and so wiped by ``SymmetricKey``) as soon
    /// as the ratchet turns past it; the ratchet only turns forward.
    public struct KDFRatchet: Sendable {
        /// The most steps one catch-up may turn (Android and iOS `MAX_COUNTER_INCREMENT`; one
        /// passage of the protocol text says 1000, the rest and the apps 25000, §7.3).
        public static let maxCounterIncrement: UInt64 = 25000

        /// The counter of the current chain key (the counter a message encrypted now carries).
        public private(set) var counter: UInt64
        private var chainKey: SymmetricKey

        /// A ratchet at `counter` (1 for a fresh root key, §1.3) with `chainKey`.
        ///
        /// - Throws: ``ThreemaError/invalidArgument(_:)`` unless the chain key has 32 bytes.
        public init(counter: UInt64 = 1, chainKey: SymmetricKey) throws(ThreemaError) {
            guard chainKey.byteCount == 32 else { throw .invalidArgument("an Ibex chain key has 32 bytes") }
            self.counter = counter
            self.chainKey = chainKey
        }

        /// The counter (uint64) and the chain key (32 bytes), for snapshots.
        func write(to w: inout SnapshotWriter) {
            w.uint64(counter)
            chainKey.withUnsafeBytes { w.fixed($0) }
        }

        /// Reads ``write(to:)``.
        init(reading r: inout SnapshotReader) throws(RampartError) {
            let counter = try r.uint64()
            let key = try r.secret(32)
            // At least 1, and far enough below 2^64 that turning ahead (snapshot(sendingAhead:)) and
            // catching up cannot overflow the counter.
            guard counter >= 1, counter <= UInt64.max / 2 else { throw .invalidSnapshot(.invalidField("ratchet counter")) }
            self.counter = counter
            chainKey = key.withUnsafeBytes { SymmetricKey(data: $0) }
        }

        /// The message key `XDHMK` for the current counter.
        public var currentEncryptionKey: SymmetricKey { Self.derive(chainKey, Self.saltAEK) }

        /// Calls `body` with the 32 bytes of ``currentEncryptionKey`` in temporary memory, wiped
        /// afterwards (the send path: no key object is allocated per message).
        func withCurrentEncryptionKey<T>(_ body: (UnsafeRawPointer) -> T) -> T {
            var digest = try! BLAKE2b(outputByteCount: 32, key: chainKey, salt: Self.saltAEK, personal: Self.personal16).finalize()
            defer { withUnsafeMutableBytes(of: &digest) { secureZero($0) } }
            return digest.withUnsafeBytes { body($0.baseAddress!) }
        }

        /// Replaces the chain key by its successor and increments the counter.
        public mutating func turn() {
            // The successor is written over the old chain key when this ratchet owns it alone (no
            // allocation, no old key left for a later wipe); otherwise a new key is made.
            var digest = try! BLAKE2b(outputByteCount: 32, key: chainKey, salt: Self.saltCK, personal: Self.personal16).finalize()
            defer { withUnsafeMutableBytes(of: &digest) { secureZero($0) } }
            let replaced = digest.withUnsafeBytes { d in
                chainKey.replaceBytesIfUniquelyOwned { $0.baseAddress!.copyMemory(from: d.baseAddress!, byteCount: 32) }
            }
            if !replaced { chainKey = digest.withUnsafeBytes { SymmetricKey(data: $0) } }
            counter &+= 1
        }

        // The BLAKE2b parameters, zero-padded to 16 bytes once (ThreemaKDF pads per call).
        private static let saltAEK = ThreemaKDF.padded16("kdf-aek"), saltCK = ThreemaKDF.padded16("kdf-ck"),
                           personal16 = ThreemaKDF.padded16(Ibex.personal)

        /// BLAKE2b-256 keyed with `key`, no input: ThreemaKDF's derivation with fixed parameters.
        private static func derive(_ key: SymmetricKey, _ salt: [UInt8]) -> SymmetricKey {
            let h = try! BLAKE2b(outputByteCount: 32, key: key, salt: salt, personal: personal16)
            return h.finalize().withUnsafeBytes { SymmetricKey(data: $0) }
        }

        /// Turns until the counter equals `target` and returns the number of steps taken.
        ///
        /// - Throws: ``ThreemaError/ibex(_:)`` with ``IbexFault/counterInPast(ratchet:message:)``
        ///   when `target` is below the counter, or ``IbexFault/counterTooFarAhead(ratchet:message:)``
        ///   when it is more than ``maxCounterIncrement`` ahead. The ratchet is unchanged then.
        @discardableResult
        public mutating func turn(until target: UInt64) throws(ThreemaError) -> UInt64 {
            guard target >= counter else { throw .ibex(.counterInPast(ratchet: counter, message: target)) }
            let steps = target - counter
            guard steps <= Self.maxCounterIncrement else {
                throw .ibex(.counterTooFarAhead(ratchet: counter, message: target))
            }
            for _ in 0..<steps { turn() }
            return steps
        }

        @_spi(Testing) public var chainKeyForTesting: SymmetricKey { chainKey }
    }
}
