// Every fuzz target, in the order `rampart-fuzz list` prints them and Scripts/fuzz.sh runs them.
// A new decoder gets a target here and a seed corpus (`rampart-fuzz seed <name> Tests/Fuzz/corpus/<name>`).

let allTargets: [FuzzTarget] = transportTargets + tlTargets + messageTargets + handshakeTargets + symmetricTargets
    + keyTargets + numberTargets + codecTargets + threemaTargets + [safeServerTarget, safeClientResponseTarget, threemaIbexTarget, threemaChatHubTarget, threemaChatJournalTarget, secretChatTLTarget,
                                                                     secretChatCryptoTarget, snapshotNonceStoreTarget, snapshotSealedTarget, snapshotMTProtoSessionTarget, snapshotIbexSessionTarget, snapshotSecretChatTarget, snapshotPairKeyCacheTarget, snapshotMTProtoConnectionTarget]
