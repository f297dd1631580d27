import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scratchDatabase } from "../support/postgres.js"
import { killAll, type RunningServer, startServer, temporaryDatabase } from "../support/processes.js"
import { type ReceivedMail, startSmtpSink } from "../support/SmtpSink.js"

/**
 * Finding 1 of the attack on the address change, replayed on running servers: whoever holds a
 * victim's access and refresh tokens, within the re-authentication window, moves nothing. Without
 * the password the request is refused as change-password refuses; with it, the link to the
 * attacker's address alone leaves the account where it is, and the owner's password and reset
 * still work. A change made with both proofs is undone by the old address's link, which ends
 * whatever the mover held. On SQLite (one process), and on PostgreSQL + Redis with two workers.
 */

const password = "correct horse battery staple"

interface Reply {
  readonly status: number
  readonly body: Record<string, unknown>
}

const stores = [
  { name: "sqlite", enabled: true, workers: "1" },
  {
    name: "postgresql + redis, two workers",
    enabled: process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_REDIS_URL !== undefined,
    workers: "2"
  }
] as const

for (const store of stores) {
  describe.skipIf(!store.enabled)(`a stolen session cannot move the address (${store.name})`, () => {
    let server: RunningServer
    let smtp: Awaited<ReturnType<typeof startSmtpSink>>
    const database = scratchDatabase("portcullis_move")

    beforeAll(async () => {
      smtp = await startSmtpSink()
      if (store.workers === "2") await database.create()
      server = await startServer({
        SERVICE_SECRET_KEY: "address-change-e2e-secret-key-of-32-bytes!!",
        SERVICE_DATABASE_URL: store.workers === "2" ? database.url : temporaryDatabase(),
        ...(store.workers === "2" ? { SERVICE_REDIS_URL: process.env.TEST_REDIS_URL ?? "", SERVICE_WORKERS: "2" } : {}),
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
        SERVICE_LOG_LEVEL: "warning",
        SERVICE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`
      })
    }, 60_000)

    afterAll(async () => {
      await killAll()
      await smtp?.close()
      if (store.workers === "2") await database.drop()
    })

    const call = async (
      method: string,
      path: string,
      init: { body?: unknown; token?: string } = {}
    ): Promise<Reply> => {
      const headers: Record<string, string> = {}
      if (init.body !== undefined) headers["content-type"] = "application/json"
      if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
      const response = await fetch(`${server.url}/api/v1/auth${path}`, {
        method,
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
      })
      return {
        status: response.status,
        body: ((await response.json().catch(() => ({}))) ?? {}) as Record<string, unknown>
      }
    }
    const newEmail = (label: string) => `${label}-${randomBytes(4).toString("hex")}@example.com`
    const mails = (to: string, subject: RegExp) =>
      smtp.received.filter((mail: ReceivedMail) => mail.to.includes(to) && subject.test(mail.subject))
    /** The token of the n-th mail to `to` whose subject matches, waiting for it (up to 5 s). */
    const tokenOf = async (to: string, subject: RegExp, n = 1) => {
      for (let wait = 0; wait < 100; wait++) {
        const token = mails(to, subject)[n - 1]?.text.match(/token=([\w.-]+)/)?.[1]
        if (token !== undefined) return token
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(`no mail #${n} to ${to} matching ${subject}`)
    }
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300))
    const login = (email: string, secret = password) => call("POST", "/login", { body: { email, password: secret } })
    const emailOf = async (token: string) => (await call("GET", "/me", { token })).body.email

    /** A victim with a verified address, signed in now: the tokens an attacker steals. */
    const victim = async () => {
      const email = newEmail("victim")
      expect((await call("POST", "/register", { body: { email, password } })).status).toBe(202)
      const verify = await tokenOf(email, /confirm your email/i)
      expect((await call("POST", "/verify-email/confirm", { body: { token: verify } })).status).toBe(200)
      const signedIn = await login(email)
      expect(signedIn.status).toBe(200)
      return { email, access: String(signedIn.body.access_token), refresh: String(signedIn.body.refresh_token) }
    }

    it("the stolen tokens alone, fresh or refreshed, are refused as change-password refuses", async () => {
      const { email, access, refresh } = await victim()
      const attacker = newEmail("attacker")
      const refreshed = await call("POST", "/refresh", { body: { refresh_token: refresh } })
      expect(refreshed.status).toBe(200)
      for (const token of [access, String(refreshed.body.access_token)]) {
        const asked = await call("POST", "/me/email", { token, body: { new_email: attacker } })
        expect(asked.status).toBe(400)
        expect(asked.body.code).toBe("AuthenticationError")
        const guessed = await call("POST", "/me/email", {
          token,
          body: { new_email: attacker, current_password: "a guess" }
        })
        expect(guessed.status).toBe(400)
      }
      await settle()
      expect(mails(attacker, /./)).toHaveLength(0)
      expect(await emailOf(String(refreshed.body.access_token))).toBe(email)
    }, 60_000)

    it("with the password too, the attacker's own link moves nothing: the old address never approved", async () => {
      const { email, access } = await victim()
      const attacker = newEmail("attacker")
      const asked = await call("POST", "/me/email", {
        token: access,
        body: { new_email: attacker, current_password: password }
      })
      expect(asked.status).toBe(202)
      const attackersLink = await tokenOf(attacker, /confirm your new email/i)
      const used = await call("POST", "/me/email/confirm", { body: { token: attackersLink } })
      expect(used.status).toBe(202)
      expect(used.body.awaiting).toBe("current")
      // The owner was asked, and can still do everything: the account has not moved.
      await tokenOf(email, /approve moving/i)
      expect(await emailOf(access)).toBe(email)
      expect((await login(email)).status).toBe(200)
      expect((await call("POST", "/password-reset/request", { body: { email: attacker } })).status).toBe(202)
      expect((await call("POST", "/password-reset/request", { body: { email } })).status).toBe(202)
      await tokenOf(email, /reset your password/i)
      await settle()
      expect(mails(attacker, /reset/i)).toHaveLength(0)
    }, 60_000)

    it("a change made with both proofs is undone from the old address, ending whatever the mover held", async () => {
      const { email, access, refresh } = await victim()
      const attacker = newEmail("attacker")
      expect(
        (await call("POST", "/me/email", { token: access, body: { new_email: attacker, current_password: password } }))
          .status
      ).toBe(202)
      expect(
        (await call("POST", "/me/email/confirm", { body: { token: await tokenOf(attacker, /confirm your new/i) } }))
          .status
      ).toBe(202)
      const moved = await call("POST", "/me/email/confirm", {
        body: { token: await tokenOf(email, /approve moving/i) }
      })
      expect(moved.status).toBe(200)
      expect(moved.body.email).toBe(attacker)
      // The mover resets the password at the new address and signs in there.
      expect((await call("POST", "/password-reset/request", { body: { email: attacker } })).status).toBe(202)
      const reset = await call("POST", "/password-reset/confirm", {
        body: { token: await tokenOf(attacker, /reset your password/i), new_password: "the mover's passphrase" }
      })
      expect(reset.status).toBe(200)
      const mover = await login(attacker, "the mover's passphrase")
      expect(mover.status).toBe(200)

      const undone = await call("POST", "/me/email/undo", {
        body: { token: await tokenOf(email, /moved to another/i) }
      })
      expect(undone.status).toBe(200)
      expect(undone.body.email).toBe(email)
      expect((await call("GET", "/me", { token: String(mover.body.access_token) })).status).toBe(401)
      expect(
        (await call("POST", "/refresh", { body: { refresh_token: String(mover.body.refresh_token) } })).status
      ).toBe(401)
      expect((await call("POST", "/refresh", { body: { refresh_token: refresh } })).status).toBe(401)
      expect((await login(attacker, "the mover's passphrase")).status).toBe(401)
      expect((await login(email, "the mover's passphrase")).status).toBe(401)

      // The owner takes the account back by a reset to the restored address.
      expect((await call("POST", "/password-reset/request", { body: { email } })).status).toBe(202)
      const back = await call("POST", "/password-reset/confirm", {
        body: { token: await tokenOf(email, /reset your password/i), new_password: "the owner's new passphrase" }
      })
      expect(back.status).toBe(200)
      const owner = await login(email, "the owner's new passphrase")
      expect(owner.status).toBe(200)
      expect(await emailOf(String(owner.body.access_token))).toBe(email)
    }, 60_000)
  })
}
