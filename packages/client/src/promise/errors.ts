import type { ProblemCode } from "../../../../interfaces/http/problems.js"

/** What `code` of a refusal may be: a problem code of the service, or `UnknownError` for an answer that is no problem. */
export type ErrorCode = ProblemCode | "UnknownError"

/** What a problem+json body (RFC 9457) of the service holds; extension members vary by code. */
export interface ProblemBody {
  readonly type?: string
  readonly title?: string
  readonly status?: number
  readonly detail?: string
  readonly code?: string
  readonly [member: string]: unknown
}

/**
 * A refused request, thrown by the Promise client: the answer's status and its problem's
 * `code` (the kind to branch on: `AuthenticationError`, `RateLimitedError`, …), `title` and
 * `detail`; `retryAfter` holds the seconds of a `Retry-After` header when the answer sent one.
 * `problem` is the whole body, extension members included (`errors` of a ValidationError, …).
 */
export class PortcullisError extends Error {
  override readonly name = "PortcullisError"
  readonly status: number
  readonly code: ErrorCode
  readonly title: string
  readonly detail: string
  readonly retryAfter: number | undefined
  readonly problem: ProblemBody

  constructor(status: number, problem: ProblemBody, retryAfter: number | undefined) {
    const title = typeof problem.title === "string" ? problem.title : `HTTP ${status}`
    const detail = typeof problem.detail === "string" ? problem.detail : title
    super(`${status} ${title}: ${detail}`)
    this.status = status
    // The service's codes are the union; a newer service may answer one this client does not know yet.
    this.code = typeof problem.code === "string" ? (problem.code as ErrorCode) : "UnknownError"
    this.title = title
    this.detail = detail
    this.retryAfter = retryAfter
    this.problem = problem
  }
}

/** Retry-After in seconds; an HTTP date is turned into the seconds left until it. */
const retryAfterOf = (headers: Headers): number | undefined => {
  const value = headers.get("retry-after")
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000))
}

/**
 * The error of a refused answer. A body that is no problem (a proxy's HTML page, an empty 500)
 * still gives an error with the status, so a caller never has to parse anything itself.
 */
export const errorOf = async (response: Response): Promise<PortcullisError> => {
  const text = await response.text().catch(() => "")
  let problem: ProblemBody = {}
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) problem = parsed as ProblemBody
  } catch {
    // Not JSON: the status alone speaks.
  }
  const fallbackTitle = response.statusText === "" ? `HTTP ${response.status}` : response.statusText
  return new PortcullisError(response.status, { title: fallbackTitle, ...problem }, retryAfterOf(response.headers))
}
