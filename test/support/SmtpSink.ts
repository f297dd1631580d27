import PostalMime from "postal-mime"
import { SMTPServer } from "smtp-server"

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  /** The message's header block, as sent. */
  readonly headers: string
  /** The decoded Subject header. */
  readonly subject: string
  /** The text/plain part, transfer encoding undone. */
  readonly text: string
  /** The text/html part, transfer encoding undone; empty when the message has none. */
  readonly html: string
}

/** A real SMTP server on 127.0.0.1 that keeps every message it is given, its MIME parts read. */
export const startSmtpSink = async () => {
  const received: Array<ReceivedMail> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        const raw = Buffer.concat(chunks)
        PostalMime.parse(raw).then(
          (mail) => {
            const text = raw.toString("utf8")
            received.push({
              from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
              to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
              headers: text.slice(0, text.indexOf("\r\n\r\n")),
              subject: mail.subject ?? "",
              text: mail.text ?? "",
              html: mail.html ?? ""
            })
            callback()
          },
          (error: Error) => callback(error)
        )
      })
    }
  })
  // A sender that goes away mid-connection (a server process ended by its suite) resets the
  // socket; smtp-server reports that as an `error` event, which would throw with no listener.
  server.on("error", () => undefined)
  const port = await new Promise<number>((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })
  return {
    port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
