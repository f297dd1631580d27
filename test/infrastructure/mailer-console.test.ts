import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { Mailer } from "../../application/ports/Mailer.js"
import * as MailerConsole from "../../infrastructure/mail/MailerConsole.js"

/**
 * MAILER=console prints a mail as a person reads it (issue 54: it was one escaped JSON string in a
 * log line), on its own stream, and leaves the log one JSON line that carries no token.
 */

const mail = {
  to: "ada@example.com",
  subject: "Verify your email address",
  text: "Hello,\n\nOpen this link to verify ada@example.com:\nhttp://localhost:8000/verify-email?token=abc.def\n\nabc.def\n",
  html: "<p>ignored</p>"
}

const sent = (message: typeof mail) =>
  Effect.gen(function* () {
    const printed: Array<string> = []
    const logged: Array<unknown> = []
    yield* Mailer.pipe(
      Effect.flatMap((mailer) => mailer.send(message)),
      Effect.provideService(
        Mailer,
        MailerConsole.make((text) => printed.push(text))
      ),
      Effect.provide(
        Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ message }) => logged.push(message))
        )
      )
    )
    return { printed, logged }
  })

describe("the console mailer", () => {
  it.effect("prints the text part as lines, headers first, in one write between two rules", () =>
    Effect.gen(function* () {
      const { printed } = yield* sent(mail)
      expect(printed).toHaveLength(1)
      const lines = (printed[0] ?? "").split("\n")
      expect(lines[0]).toMatch(/^┌─+$/)
      expect(lines).toContain("  To:      ada@example.com")
      expect(lines).toContain("  Subject: Verify your email address")
      // The link on a line of its own, as the mail has it: nothing escaped, nothing around it.
      expect(lines).toContain("http://localhost:8000/verify-email?token=abc.def")
      expect(lines.at(-2)).toMatch(/^└─+$/)
      expect(printed[0]).not.toContain("\\n")
      expect(printed[0]).not.toContain("<p>")
    })
  )

  it.effect("logs that a mail went, to whom and about what, never its text", () =>
    Effect.gen(function* () {
      const { logged } = yield* sent(mail)
      expect(logged).toHaveLength(1)
      const entry = JSON.stringify(logged[0])
      expect(entry).toContain("ada@example.com")
      expect(entry).toContain("Verify your email address")
      expect(entry).not.toContain("abc.def")
    })
  )

  it.effect("shows a terminal's control characters instead of sending them to it", () =>
    Effect.gen(function* () {
      const { printed } = yield* sent({ ...mail, text: "client: evil\u001b]0;pwned\u0007\rover\n" })
      for (const control of ["\u001b", "\u0007", "\r"]) expect(printed[0]).not.toContain(control)
      expect(printed[0]).toContain("client: evil\ufffd]0;pwned\ufffd\ufffdover")
    })
  )
})
