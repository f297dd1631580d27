import { HttpApiBuilder, type HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { Accounts, Registration } from "../../../application/Accounts.js"
import { Sessions } from "../../../application/Sessions.js"
import type { ClientInfo } from "../../../application/Tokens.js"
import type { PortcullisApi } from "../Api.js"
import { CurrentPrincipal } from "../Authentication.js"
import { SessionTransport } from "../cookies.js"

const USER_AGENT_MAX = 512

/**
 * What a session records about the client that opened it. `remoteAddress` is the client address
 * the protections middleware resolved (TRUSTED_PROXY_HEADERS, else the socket's peer).
 */
export const clientInfo = (request: HttpServerRequest.HttpServerRequest): ClientInfo => ({
  ip_address: Option.getOrNull(request.remoteAddress),
  user_agent: request.headers["user-agent"]?.slice(0, USER_AGENT_MAX) ?? null
})

const accepted = { detail: "If the address can be registered, the account has been created." }

export const AuthHandlers = (api: PortcullisApi) =>
  HttpApiBuilder.group(api, "auth", (handlers) =>
    Effect.gen(function* () {
      const accounts = yield* Accounts
      const sessions = yield* Sessions
      const transport = yield* SessionTransport
      return handlers
        .handle("register", ({ payload: { email, password, ...extra } }) =>
          accounts
            .register(email, password, extra)
            .pipe(Effect.map(Registration.$match({ Accepted: () => accepted, Created: ({ user }) => user })))
        )
        .handle("login", ({ payload, request }) =>
          sessions
            .login(payload.identifier, payload.password, clientInfo(request))
            .pipe(Effect.flatMap(transport.deliver))
        )
        .handle("refresh", ({ payload, request }) =>
          transport.refresh(request, payload?.refresh_token, (token) => sessions.refresh(token, clientInfo(request)))
        )
        .handle("logout", () =>
          Effect.flatMap(CurrentPrincipal, sessions.logout).pipe(Effect.zipRight(transport.clear))
        )
    })
  )
