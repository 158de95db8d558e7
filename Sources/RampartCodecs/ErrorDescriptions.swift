// The codecs' errors in plain sentences, for people (the CLI, the servers' logs).

extension DeflateError: CustomStringConvertible {
    /// The error in a plain sentence.
    public var description: String {
        switch self {
        case .truncated: return "the compressed data ends too early"
        case .invalidBlockType: return "a DEFLATE block has the reserved type 3"
        case .storedLengthMismatch: return "a stored block's length check does not match"
        case .invalidCodeLengths: return "a block's Huffman code lengths are invalid"
        case .overSubscribedCode: return "a Huffman code is over-subscribed"
        case .incompleteCode: return "a Huffman code is incomplete"
        case .missingEndOfBlock: return "a block has no end-of-block code"
        case .invalidSymbol: return "the data holds an invalid Huffman symbol"
        case .distanceTooFarBack: return "a match refers back before the start of the output"
        case .outputLimitExceeded(let n): return "the output would exceed \(n) bytes"
        case .trailingData: return "bytes follow the end of the compressed stream"
        case .invalidHeader: return "not a zlib or gzip header"
        case .unsupportedMethod: return "the compression method is not DEFLATE with a 32 KiB window"
        case .unsupportedFlags: return "the header sets flags this decoder does not support"
        case .headerChecksumMismatch: return "the gzip header checksum does not match"
        case .checksumMismatch: return "the checksum of the output does not match"
        case .sizeMismatch: return "the gzip trailer's size does not match the output"
        }
    }
}

extension JSONError: CustomStringConvertible {
    /// The error in a plain sentence with its byte offset.
    public var description: String {
        let what: String
        switch kind {
        case .unexpectedEnd: what = "the JSON ends inside a value"
        case .unexpectedByte(let b):
            what = b >= 0x21 && b < 0x7F ? "unexpected character '\(Character(Unicode.Scalar(b)))'" : "unexpected byte 0x\(String(b, radix: 16))"
        case .invalidNumber: what = "an invalid number"
        case .invalidEscape: what = "an invalid escape in a string"
        case .loneSurrogate: what = "a lone UTF-16 surrogate in a string"
        case .invalidUTF8: what = "a string that is not UTF-8"
        case .controlCharacter: what = "an unescaped control character in a string"
        case .duplicateKey(let k): what = "the key \"\(k)\" appears twice"
        case .tooDeep: what = "arrays and objects nested too deeply"
        case .tooLarge: what = "the JSON is too large"
        }
        return "\(what) at byte \(offset)"
    }
}
