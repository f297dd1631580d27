import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import type { TokenEndpointError } from "../../../../application/oidc/TokenAnswers.js"
import type { PresentedClient } from "../../../../domain/oidc/Client.js"
import { oauthError } from "../../oauthAnswers.js"
import { firstValues } from "./browser.js"

/** How the client presented itself: `Authorization: Basic` (both parts form-decoded) and the form's fields. */
export const presentedClient = (
  request: HttpServerRequest.HttpServerRequest,
  form: Readonly<Record<string, string | undefined>>
): PresentedClient | undefined => {
  const header = request.headers.authorization
  let basic: PresentedClient["basic"]
  if (header !== undefined && /^basic /i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon === -1) return undefined
    try {
      const part = (text: string) => decodeURIComponent(text.replace(/\+/g, " "))
      basic = { client_id: part(decoded.slice(0, colon)), client_secret: part(decoded.slice(colon + 1)) }
    } catch {
      return undefined
    }
  }
  return { basic, client_id: form.client_id, client_secret: form.client_secret }
}

const isForm = (request: HttpServerRequest.HttpServerRequest) =>
  /^application\/x-www-form-urlencoded\s*(;|$)/i.test(request.headers["content-type"]?.trim() ?? "")

/** The form body of a POST, every value of every field; none when it is not a form. */
export const formParamsOf = (request: HttpServerRequest.HttpServerRequest) =>
  isForm(request)
    ? Effect.map(Effect.orDie(request.text), (text) => new URLSearchParams(text))
    : Effect.succeed(undefined)

/** The form body of a POST (first value of each field), or none when it is not a form. */
export const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(formParamsOf(request), (params) => (params === undefined ? undefined : firstValues(params)))

export const notAForm = oauthError(400, "invalid_request", "send the parameters as application/x-www-form-urlencoded")

export const tokenError = (error: TokenEndpointError, basic: boolean) =>
  oauthError(
    error.error === "invalid_client" ? 401 : 400,
    error.error,
    error.error_description,
    error.error === "invalid_client" && basic ? { "www-authenticate": 'Basic realm="oauth2"' } : {}
  )

export const unavailable = oauthError(503, "temporarily_unavailable", "the service cannot reach its store; try again")

export const bearerChallenge = (error: string, description: string) =>
  `Bearer error="${error}", error_description="${description.replace(/"/g, "'")}"`

/** The access token of a UserInfo request: the Authorization header, or the form's `access_token` on POST. */
export const bearerOf = (
  request: HttpServerRequest.HttpServerRequest,
  form: Readonly<Record<string, string | undefined>>
) => {
  const header = request.headers.authorization
  if (header !== undefined && /^bearer /i.test(header)) return header.slice(7).trim()
  return form.access_token
}
