/**
 * The NotificationResponse messages ('A') in a run of PostgreSQL backend protocol
 * messages: each message is a type byte and a big-endian length that counts itself.
 * A NotificationResponse body is the sender's pid, then the channel and the payload
 * as NUL-terminated strings.
 */
export function* notificationsIn(bytes: Uint8Array): Generator<{ channel: string; payload: string }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder();
  let at = 0;
  while (at + 5 <= bytes.length) {
    const type = bytes[at];
    const length = view.getInt32(at + 1);
    const end = at + 1 + length;
    if (length < 4 || end > bytes.length) return;
    if (type === 0x41) {
      const channelStart = at + 9;
      const channelEnd = bytes.indexOf(0, channelStart);
      const payloadEnd = bytes.indexOf(0, channelEnd + 1);
      if (channelEnd >= 0 && payloadEnd >= 0 && payloadEnd < end) {
        yield {
          channel: decoder.decode(bytes.subarray(channelStart, channelEnd)),
          payload: decoder.decode(bytes.subarray(channelEnd + 1, payloadEnd)),
        };
      }
    }
    at = end;
  }
}
