/** One message as the fake SMTP server received it. */
export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
}

/**
 * A minimal SMTP server on loopback (plain, no auth) that keeps what it is sent,
 * so tests exercise the real SMTP transport end to end.
 */
export function startSmtpServer() {
  const received: ReceivedMail[] = [];
  const server = Bun.listen<{ buffer: string; mail: ReceivedMail; inData: boolean }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { buffer: "", mail: { from: "", to: [], data: "" }, inData: false };
        socket.write("220 test ESMTP\r\n");
      },
      data(socket, chunk) {
        const state = socket.data;
        state.buffer += chunk.toString();
        let end = state.buffer.indexOf("\r\n");
        while (end !== -1) {
          const line = state.buffer.slice(0, end);
          state.buffer = state.buffer.slice(end + 2);
          if (state.inData) {
            if (line === ".") {
              state.inData = false;
              received.push(state.mail);
              state.mail = { from: "", to: [], data: "" };
              socket.write("250 queued\r\n");
            } else {
              state.mail.data += `${line.startsWith("..") ? line.slice(1) : line}\n`;
            }
          } else {
            const command = line.slice(0, 4).toUpperCase();
            if (command === "EHLO" || command === "HELO") socket.write("250 test\r\n");
            else if (command === "MAIL") {
              state.mail.from = line;
              socket.write("250 ok\r\n");
            } else if (command === "RCPT") {
              state.mail.to.push(line);
              socket.write("250 ok\r\n");
            } else if (command === "DATA") {
              state.inData = true;
              socket.write("354 go ahead\r\n");
            } else if (command === "QUIT") {
              socket.write("221 bye\r\n");
              socket.end();
            } else socket.write("250 ok\r\n");
          }
          end = state.buffer.indexOf("\r\n");
        }
      },
    },
  });
  server.unref();
  return { port: server.port, received };
}
