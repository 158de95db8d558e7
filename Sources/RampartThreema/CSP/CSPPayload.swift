// The chat-server protocol's payloads (`container.type` and `container.data`) a messaging client
// needs; every other type travels as opaque bytes.

import Rampart

extension CSP {
    /// An end-to-end message as the chat server carries it (`legacy-message` or
    /// `message-with-metadata-box`): the envelope bytes as received, and their parsed header for
    /// routing by receiver (server) or sender (client). Nothing is decrypted here.
    public struct Message: Sendable, Hashable {
        /// The envelope bytes exactly as they travel.
        public let bytes: [UInt8]
        /// The parsed envelope.
        public let envelope: MessageEnvelope

        /// Parses envelope bytes.
        ///
        /// - Throws: ``ThreemaError/malformedEnvelope(_:)``.
        public init(_ bytes: [UInt8]) throws(ThreemaError) {
            envelope = try MessageEnvelope(parsing: bytes)
            self.bytes = bytes
        }

        /// A message from a parsed envelope (its encoding).
        public init(_ envelope: MessageEnvelope) {
            self.envelope = envelope
            bytes = envelope.encoded
        }

        /// The sender.
        public var sender: ThreemaID { envelope.sender }
        /// The receiver.
        public var receiver: ThreemaID { envelope.receiver }
        /// The message ID.
        public var messageID: UInt64 { envelope.messageID }
    }

    /// `message-ack`: the identity (the receiver of an outgoing message, the sender of an
    /// incoming one) and the message ID.
    public struct MessageAck: Sendable, Hashable {
        /// The other party of the acknowledged message.
        public var identity: ThreemaID
        /// The acknowledged message's ID.
        public var messageID: UInt64

        /// An acknowledgement.
        public init(identity: ThreemaID, messageID: UInt64) {
            self.identity = identity
            self.messageID = messageID
        }

        /// The 16 bytes `identity ‖ u64-le(message ID)`.
        public var encoded: [UInt8] { identity.bytes + withUnsafeBytes(of: messageID.littleEndian) { Array($0) } }

        init(decoding data: [UInt8], type: UInt8) throws(ThreemaError) {
            guard data.count == 16, let id = try? ThreemaID(bytes: data[0..<8]) else {
                throw .csp(.malformedPayload(type: type))
            }
            identity = id
            messageID = le64(data, 8)
        }
    }

    /// A payload (`container`) after the handshake. The container's three reserved bytes are
    /// written as zeros and ignored on reading.
    public enum Payload: Sendable, Hashable {
        /// `0x00` echo-request (either direction).
        case echoRequest([UInt8])
        /// `0x80` echo-response (either direction).
        case echoResponse([UInt8])
        /// `0x01` an end-to-end message from the client to the server.
        case outgoingMessage(Message)
        /// `0x81` the server's acknowledgement of an outgoing message (receiver ‖ message ID).
        case outgoingMessageAck(MessageAck)
        /// `0x02` an end-to-end message from the server to the client.
        case incomingMessage(Message)
        /// `0x82` the client's acknowledgement of an incoming message (sender ‖ message ID).
        case incomingMessageAck(MessageAck)
        /// `0xd0` queue-send-complete: the server sent every queued message (no data).
        case queueSendComplete
        /// `0xe0` close-error: whether the client may reconnect automatically, and a UTF-8 message.
        case closeError(canReconnect: Bool, message: String)
        /// `0xe1` alert: a UTF-8 message to show the user.
        case alert(String)
        /// Any other container type, its data unparsed.
        case opaque(type: UInt8, data: [UInt8])

        /// The container type byte.
        public var type: UInt8 {
            switch self {
            case .echoRequest: return 0x00
            case .echoResponse: return 0x80
            case .outgoingMessage: return 0x01
            case .outgoingMessageAck: return 0x81
            case .incomingMessage: return 0x02
            case .incomingMessageAck: return 0x82
            case .queueSendComplete: return 0xD0
            case .closeError: return 0xE0
            case .alert: return 0xE1
            case .opaque(let type, _): return type
            }
        }

        /// The container data.
        public var data: [UInt8] {
            switch self {
            case .echoRequest(let d), .echoResponse(let d): return d
            case .outgoingMessage(let m), .incomingMessage(let m): return m.bytes
            case .outgoingMessageAck(let a), .incomingMessageAck(let a): return a.encoded
            case .queueSendComplete: return []
            case .closeError(let canReconnect, let message): return [canReconnect ? 1 : 0] + Array(message.utf8)
            case .alert(let message): return Array(message.utf8)
            case .opaque(_, let data): return data
            }
        }

        /// The container types with a case of their own (``opaque(type:data:)`` never carries one
        /// of them when decoded).
        public static let knownTypes: Set<UInt8> = [0x00, 0x80, 0x01, 0x81, 0x02, 0x82, 0xD0, 0xE0, 0xE1]

        /// Decodes a container's type and data.
        ///
        /// - Throws: ``CSPFault/malformedPayload(type:)`` for data that does not fit a known type
        ///   (an envelope that does not parse, an acknowledgement other than 16 bytes with a valid
        ///   identity, data after queue-send-complete, text that is not UTF-8, an empty close-error).
        public init(type: UInt8, data: [UInt8]) throws(ThreemaError) {
            func text(_ bytes: ArraySlice<UInt8>) throws(ThreemaError) -> String {
                guard let s = String(validating: bytes, as: UTF8.self) else { throw .csp(.malformedPayload(type: type)) }
                return s
            }
            switch type {
            case 0x00: self = .echoRequest(data)
            case 0x80: self = .echoResponse(data)
            case 0x01, 0x02:
                let message: Message
                do { message = try Message(data) } catch { throw .csp(.malformedPayload(type: type)) }
                self = type == 0x01 ? .outgoingMessage(message) : .incomingMessage(message)
            case 0x81: self = .outgoingMessageAck(try MessageAck(decoding: data, type: type))
            case 0x82: self = .incomingMessageAck(try MessageAck(decoding: data, type: type))
            case 0xD0:
                guard data.isEmpty else { throw .csp(.malformedPayload(type: type)) }
                self = .queueSendComplete
            case 0xE0:
                guard let flag = data.first else { throw .csp(.malformedPayload(type: type)) }
                self = .closeError(canReconnect: flag != 0, message: try text(data.dropFirst()))
            case 0xE1: self = .alert(try text(data[...]))
            default: self = .opaque(type: type, data: data)
            }
        }

        /// Whether a client may send this payload (server-only types are refused by
        /// ``Client/send(_:)``).
        public var clientMaySend: Bool {
            switch self {
            case .outgoingMessageAck, .incomingMessage, .queueSendComplete, .closeError, .alert: return false
            case .opaque(let type, _): return !Payload.knownTypes.contains(type)
            default: return true
            }
        }

        /// Whether a server may send this payload (client-only types are refused by
        /// ``Server/send(_:)``).
        public var serverMaySend: Bool {
            switch self {
            case .outgoingMessage, .incomingMessageAck: return false
            case .opaque(let type, _): return !Payload.knownTypes.contains(type)
            default: return true
            }
        }
    }
}
