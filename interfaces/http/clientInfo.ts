import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Option } from "effect"
import type { ClientInfo } from "../../domain/Session.js"

const USER_AGENT_MAX = 512

/**
 * What a session records about the client that opened it. `remoteAddress` is the client address
 * the pipeline's first step resolved (TRUSTED_PROXY_HEADERS, else the socket's peer).
 */
export const clientInfo = (request: HttpServerRequest.HttpServerRequest): ClientInfo => ({
  ip_address: Option.getOrNull(request.remoteAddress),
  user_agent: request.headers["user-agent"]?.slice(0, USER_AGENT_MAX) ?? null
})
