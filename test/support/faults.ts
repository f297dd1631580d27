import { randomBytes, randomUUID } from "node:crypto"

/**
 * What fault tests share: a client of a running server that keeps every answer, the checks every
 * answer must pass while a store misbehaves, load loops that sign in, refresh, change passwords
 * and sign out meanwhile, and a ledger of what the service acknowledged, checked once the store
 * is back.
 */

const authPrefix = "/api/v1/auth"

/** The store timeout (5 s) plus a little: no request may take longer, whatever a store does. */
export const answerWithinMs = 7_000

/** A request still unanswered after this is given up and counted as hung. */
const abandonAfterMs = 20_000

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A client address of its own per request (through the trusted proxy header): a random /64, so
 * that the rate limits, which stay on, count every request and never refuse the load.
 */
const clientAddress = () => `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::1`

export interface Answer {
  readonly method: string
  readonly path: string
  /** 0 when no HTTP answer came: connection refused or reset, or given up as hung. */
  readonly status: number
  readonly ms: number
  readonly headers: Headers
  readonly body: Record<string, unknown> | undefined
  readonly error?: string
}

export interface CallOptions {
  readonly json?: unknown
  readonly token?: string
}

/** A client of a running server; every answer it receives is kept in `answers`. */
export class Client {
  readonly answers: Array<Answer> = []
  constructor(readonly url: string) {}

  async call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { "x-forwarded-for": clientAddress() }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    if (options.json !== undefined) headers["content-type"] = "application/json"
    const started = performance.now()
    let answer: Answer
    try {
      const response = await fetch(this.url + path, {
        method,
        headers,
        ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
        signal: AbortSignal.timeout(abandonAfterMs)
      })
      const text = await response.text()
      let body: Record<string, unknown> | undefined
      try {
        body = text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>)
      } catch {
        body = undefined
      }
      answer = {
        method,
        path,
        status: response.status,
        ms: performance.now() - started,
        headers: response.headers,
        body
      }
    } catch (error) {
      answer = {
        method,
        path,
        status: 0,
        ms: performance.now() - started,
        headers: new Headers(),
        body: undefined,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      }
    }
    this.answers.push(answer)
    return answer
  }

  /** A call under the auth prefix. */
  auth(method: string, path: string, options: CallOptions = {}) {
    return this.call(method, authPrefix + path, options)
  }
}

/**
 * An answer that does not tell whether the request took effect: a 503, or none at all (a fault of
 * its own, reported by `faultsIn`); what it asked for may have happened or not.
 */
const inDoubt = (answer: Answer) => answer.status === 0 || answer.status >= 500

const describeAnswer = (answer: Answer) =>
  `${answer.method} ${answer.path} → ${answer.status === 0 ? `no answer (${answer.error})` : answer.status}` +
  `${typeof answer.body?.code === "string" ? ` ${answer.body.code}` : ""} in ${Math.round(answer.ms)} ms`

/**
 * What is wrong with the answers, whatever the fault: none may be missing (a crash, a hang), none
 * a 5xx other than 503, every 503 an RFC 9457 problem with a Retry-After, none later than
 * `answerWithinMs`.
 */
export const faultsIn = (answers: ReadonlyArray<Answer>): Array<string> =>
  answers.flatMap((answer) => {
    const faults: Array<string> = []
    if (answer.status === 0 || (answer.status >= 500 && answer.status !== 503)) faults.push("no acceptable answer")
    if (answer.status === 503) {
      if (answer.headers.get("content-type") !== "application/problem+json")
        faults.push("a 503 that is no problem+json")
      if (!/^[1-9]\d*$/.test(answer.headers.get("retry-after") ?? "")) faults.push("a 503 without Retry-After")
      if (answer.body?.code !== "ServiceUnavailableError")
        faults.push("a 503 whose code is not ServiceUnavailableError")
    }
    if (answer.ms > answerWithinMs) faults.push(`answered after more than ${answerWithinMs} ms`)
    return faults.map((fault) => `${fault}: ${describeAnswer(answer)}`)
  })

export interface Tokens {
  readonly access: string
  /** Undefined once a refresh of it went unanswered: it may have been rotated, so it is not presented again. */
  readonly refresh: string | undefined
}

const tokensOf = (answer: Answer): Tokens => ({
  access: String(answer.body?.access_token),
  refresh: String(answer.body?.refresh_token)
})

/** The session (refresh-token family) an access token belongs to. */
export const familyOf = (access: string) =>
  String(
    (JSON.parse(Buffer.from(access.split(".")[1] ?? "", "base64url").toString()) as { family_id: unknown }).family_id
  )

export const newPassword = () => `password ${randomUUID()}`

export interface Account {
  readonly email: string
  /** The password of the last acknowledged registration, change or reset. */
  password: string
  /** Passwords an acknowledged change or reset replaced: none may sign in again. */
  readonly retired: Array<string>
  /** A change left in doubt (503): it may or may not have happened, and nothing changes the password afterwards. */
  pending: string | undefined
}

/** A session whose ending the service acknowledged: neither of its tokens may ever be accepted again. */
interface Ended {
  readonly why: string
  readonly tokens: Tokens
}

/**
 * A session whose ending was left in doubt: ended or not, but never half. Its access token may not
 * be accepted once its refresh side is ended, nor once `ifPassword` is the account's password (the
 * change or reset that ends it happened).
 */
interface Uncertain {
  readonly why: string
  readonly tokens: Tokens
  readonly ifPassword?: { readonly account: Account; readonly password: string }
}

/** What the service acknowledged during a test, and what it did wrong as seen so far. */
export class Ledger {
  readonly accounts: Array<Account> = []
  readonly ended: Array<Ended> = []
  readonly uncertain: Array<Uncertain> = []
  readonly problems: Array<string> = []

  constructor(readonly client: Client) {}

  /** Records a problem unless the answer's status is one of `allowed`. */
  check(answer: Answer, allowed: ReadonlyArray<number>, what: string) {
    if (!allowed.includes(answer.status)) {
      this.problems.push(`${what}: expected ${allowed.join(" or ")}, got ${describeAnswer(answer)}`)
    }
  }

  /** Registers a new account; tracked when acknowledged (201), undefined otherwise. */
  async register(label: string, allowed: ReadonlyArray<number> = [201, 503]) {
    const account: Account = {
      email: `${label}-${randomUUID()}@example.com`,
      password: newPassword(),
      retired: [],
      pending: undefined
    }
    const answer = await this.client.auth("POST", "/register", {
      json: { email: account.email, password: account.password }
    })
    this.check(answer, allowed, `registration of ${account.email}`)
    if (answer.status !== 201) return undefined
    this.accounts.push(account)
    return account
  }

  /** A new session of an account; undefined when the store was unusable. */
  async signIn(account: Account, allowed: ReadonlyArray<number> = [200, 503]) {
    const answer = await this.client.auth("POST", "/login", {
      json: { email: account.email, password: account.password }
    })
    if (answer.status === 401)
      this.problems.push(`the acknowledged account ${account.email} could not sign in: ${describeAnswer(answer)}`)
    else this.check(answer, allowed, `sign-in of ${account.email}`)
    return answer.status === 200 ? tokensOf(answer) : undefined
  }

  /** Refreshes a session; answers its tokens now (the refresh token forgotten when the answer leaves it in doubt). */
  async refresh(tokens: Tokens, allowed: ReadonlyArray<number> = [200, 503]) {
    if (tokens.refresh === undefined) return tokens
    const answer = await this.client.auth("POST", "/refresh", { json: { refresh_token: tokens.refresh } })
    this.check(answer, allowed, "refresh of a live session")
    if (answer.status === 200) return tokensOf(answer)
    return inDoubt(answer) ? { access: tokens.access, refresh: undefined } : tokens
  }

  /** Records the outcome of an attempt to end `tokens`' session that the service acknowledges with `acknowledged`. */
  ending(
    answer: Answer,
    acknowledged: number,
    why: string,
    tokens: ReadonlyArray<Tokens>,
    ifPassword?: Uncertain["ifPassword"]
  ) {
    this.check(answer, [acknowledged, 503], why)
    for (const session of tokens) {
      if (answer.status === acknowledged) this.ended.push({ why, tokens: session })
      else if (inDoubt(answer))
        this.uncertain.push({ why, tokens: session, ...(ifPassword === undefined ? {} : { ifPassword }) })
    }
  }

  async logout(tokens: Tokens, why: string) {
    this.ending(await this.client.auth("POST", "/logout", { token: tokens.access }), 204, why, [tokens])
  }

  /** Changes the password from the caller's session, which ends `others`. */
  async changePassword(account: Account, caller: Tokens, others: ReadonlyArray<Tokens>, why: string) {
    if (account.pending !== undefined) return
    const next = newPassword()
    const answer = await this.client.auth("POST", "/change-password", {
      token: caller.access,
      json: { current_password: account.password, new_password: next }
    })
    this.passwordOutcome(account, next, answer, 200)
    this.ending(answer, 200, why, others, { account, password: next })
  }

  /** Records what an answer to a password change or reset means for the account's password. */
  passwordOutcome(account: Account, next: string, answer: Answer, acknowledged: number) {
    if (answer.status === acknowledged) {
      account.retired.push(account.password)
      account.password = next
    } else if (inDoubt(answer)) {
      account.pending = next
    }
  }

  /**
   * Once the stores are back: every acknowledged account signs in with its password and with no
   * password it replaced, no ended session's token is accepted, no uncertain session is half ended.
   */
  async verify(): Promise<Array<string>> {
    const problems: Array<string> = []
    const working = new Map<Account, string | undefined>()
    await inBatches(this.accounts, async (account) => {
      const signsIn = async (password: string) =>
        (await this.client.auth("POST", "/login", { json: { email: account.email, password } })).status === 200
      const candidates = account.pending === undefined ? [account.password] : [account.password, account.pending]
      let found: string | undefined
      for (const candidate of candidates) {
        if (found === undefined && (await signsIn(candidate))) found = candidate
      }
      working.set(account, found)
      if (found === undefined)
        problems.push(`the acknowledged account ${account.email} cannot sign in with its password`)
      for (const old of account.retired.slice(-2)) {
        if (await signsIn(old))
          problems.push(`${account.email} still signs in with a password an acknowledged change replaced`)
      }
    })
    const me = (tokens: Tokens) => this.client.auth("GET", "/me", { token: tokens.access })
    const refresh = (tokens: Tokens) =>
      tokens.refresh === undefined
        ? undefined
        : this.client.auth("POST", "/refresh", { json: { refresh_token: tokens.refresh } })
    await inBatches(this.ended, async ({ why, tokens }) => {
      const access = await me(tokens)
      if (access.status !== 401)
        problems.push(`${why}, acknowledged: its access token is not refused: ${describeAnswer(access)}`)
      const renewed = await refresh(tokens)
      if (renewed !== undefined && renewed.status !== 401) {
        problems.push(`${why}, acknowledged: its refresh token is not refused: ${describeAnswer(renewed)}`)
      }
    })
    await inBatches(this.uncertain, async ({ why, tokens, ifPassword }) => {
      const access = await me(tokens)
      if (access.status === 401) return
      if (ifPassword !== undefined && working.get(ifPassword.account) === ifPassword.password) {
        problems.push(
          `${why}, left in doubt but done (the new password works): its access token is accepted: ${describeAnswer(access)}`
        )
        return
      }
      const renewed = await refresh(tokens)
      if (renewed?.status === 401) {
        problems.push(
          `${why}, left in doubt: its refresh token is refused but its access token accepted: ${describeAnswer(access)}`
        )
      }
    })
    return problems
  }
}

/** Runs `f` over the items four at a time. */
const inBatches = async <A>(items: ReadonlyArray<A>, f: (item: A) => Promise<void>) => {
  for (let i = 0; i < items.length; i += 4) await Promise.all(items.slice(i, i + 4).map(f))
}

/** Something running until told to stop: the promise settles once its last request is answered. */
export interface Running {
  readonly stop: () => Promise<void>
}

const runUntilStopped = (body: (running: () => boolean) => Promise<void>): Running => {
  let running = true
  const done = body(() => running)
  return {
    stop: async () => {
      running = false
      await done
    }
  }
}

interface Prepared {
  readonly account: Account
  readonly caller: Tokens
  readonly other: Tokens
}

/**
 * A client loop of ordinary traffic: registers and signs in twice, and uses an earlier such
 * account: reads /me, refreshes, changes the password from one session (which ends the other) and
 * signs out; over and over, recording in the ledger what the service acknowledged. A few prepared
 * accounts are kept in stock while the service works and used up when it does not, so that a
 * fault always meets sessions to act on.
 */
export const loadLoop = (ledger: Ledger, label: string): Running =>
  runUntilStopped(async (running) => {
    const stock: Array<Prepared> = []
    while (running()) {
      const prepared = await prepare(ledger, label)
      if (prepared !== undefined) stock.push(prepared)
      const next = stock.length > 2 || prepared === undefined ? stock.shift() : undefined
      if (next !== undefined) await use(ledger, next)
      await sleep(100)
    }
  })

const prepare = async (ledger: Ledger, label: string): Promise<Prepared | undefined> => {
  const account = await ledger.register(label)
  if (account === undefined) return undefined
  const caller = await ledger.signIn(account)
  const other = caller === undefined ? undefined : await ledger.signIn(account)
  return caller === undefined || other === undefined ? undefined : { account, caller, other }
}

const use = async (ledger: Ledger, { account, caller, other }: Prepared) => {
  ledger.check(
    await ledger.client.auth("GET", "/me", { token: caller.access }),
    [200, 503],
    "GET /me of a live session"
  )
  const refreshed = await ledger.refresh(caller)
  await ledger.changePassword(
    account,
    refreshed,
    [other],
    `the other session of ${account.email}, ended by a password change`
  )
  await ledger.logout(refreshed, `the session of ${account.email}, ended by logout`)
}

/**
 * Presents the access token of every acknowledged ended session again and again while it runs:
 * any of them accepted, at any moment of the fault, is a problem.
 */
export const watchEnded = (ledger: Ledger): Running =>
  runUntilStopped(async (running) => {
    const reported = new Set<string>()
    while (running()) {
      for (const { why, tokens } of [...ledger.ended]) {
        if (reported.has(tokens.access)) continue
        const answer = await ledger.client.auth("GET", "/me", { token: tokens.access })
        if (answer.status === 200) {
          reported.add(tokens.access)
          ledger.problems.push(`${why}, acknowledged: its access token was accepted again while the fault lasted`)
        }
      }
      await sleep(100)
    }
  })

/** Polls until `f` holds, for at most `withinMs`; answers whether it did. */
export const eventually = async (f: () => Promise<boolean>, withinMs: number) => {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    if (await f()) return true
    await sleep(200)
  }
  return false
}
