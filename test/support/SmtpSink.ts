import { SMTPServer } from "smtp-server"

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly headers: string
  /** The text body, transfer encoding undone. */
  readonly text: string
}

/** Undoes quoted-printable (RFC 2045): soft line breaks, then =XX byte escapes, read as UTF-8. */
const fromQuotedPrintable = (body: string) => {
  const text = body.replace(/=\r?\n/g, "")
  const bytes: Array<number> = []
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === "=" ? /^[0-9A-F]{2}$/i.exec(text.slice(i + 1, i + 3)) : null
    if (hex !== null) {
      bytes.push(Number.parseInt(hex[0], 16))
      i += 2
    } else {
      bytes.push(...Buffer.from(text[i] ?? "", "utf8"))
    }
  }
  return Buffer.from(bytes).toString("utf8")
}

const decode = (raw: string): { headers: string; text: string } => {
  const split = raw.indexOf("\r\n\r\n")
  const headers = raw.slice(0, split)
  const body = raw.slice(split + 4)
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase() ?? "7bit"
  if (encoding === "quoted-printable") return { headers, text: fromQuotedPrintable(body) }
  if (encoding === "base64") return { headers, text: Buffer.from(body, "base64").toString("utf8") }
  return { headers, text: body }
}

/** A real SMTP server on 127.0.0.1 that keeps every message it is given. */
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
        received.push({
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          ...decode(Buffer.concat(chunks).toString("utf8"))
        })
        callback()
      })
    }
  })
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
